"""Home Assistant's REST and websocket APIs for Quench's tests (HomeAssistant.swift runs it
with the test venv's Python; stdlib and aiohttp only, both in that venv). One call, one JSON
answer on standard output; a failure exits 1 with the reason on standard error.

  ha_client.py URL onboard                     first user, then a token: prints {"token": ...}
  ha_client.py URL get PATH TOKEN              GET /api/PATH (TOKEN - : none)
  ha_client.py URL post PATH TOKEN JSON        POST /api/PATH with that body
  ha_client.py URL ws TOKEN JSON               one websocket command ({"type": ...}): its result
"""
import asyncio, json, sys, urllib.request, urllib.parse, urllib.error

CLIENT_ID = "http://127.0.0.1/"


def request(url, path, method="GET", body=None, token=None, form=False):
    headers = {}
    data = None
    if token:
        headers["Authorization"] = "Bearer " + token
    if body is not None:
        if form:
            data = urllib.parse.urlencode(body).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        else:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
    req = urllib.request.Request(url + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=20) as r:
            text = r.read().decode()
    except urllib.error.HTTPError as e:
        sys.exit(f"{method} {path}: HTTP {e.code}: {e.read().decode()[:500]}")
    except OSError as e:
        sys.exit(f"{method} {path}: {e}")
    return json.loads(text) if text else None


def onboard(url):
    user = request(url, "/api/onboarding/users", "POST", {
        "client_id": CLIENT_ID, "name": "Test", "username": "test", "password": "test-password", "language": "en"})
    tokens = request(url, "/auth/token", "POST", {
        "grant_type": "authorization_code", "code": user["auth_code"], "client_id": CLIENT_ID}, form=True)
    return {"token": tokens["access_token"]}


async def websocket(url, token, command):
    import aiohttp
    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(url.replace("http", "ws", 1) + "/api/websocket") as ws:
            await ws.receive_json()  # auth_required
            await ws.send_json({"type": "auth", "access_token": token})
            answer = await ws.receive_json()
            if answer.get("type") != "auth_ok":
                sys.exit(f"websocket auth: {answer}")
            await ws.send_json(dict(command, id=1))
            while True:
                answer = await ws.receive_json(timeout=20)
                if answer.get("id") == 1 and answer.get("type") == "result":
                    if not answer.get("success"):
                        sys.exit(f"websocket {command.get('type')}: {answer.get('error')}")
                    return answer.get("result")


def main(argv):
    url, what = argv[1], argv[2]
    if what == "onboard":
        out = onboard(url)
    elif what == "get":
        out = request(url, "/api/" + argv[3], token=None if argv[4] == "-" else argv[4])
    elif what == "post":
        out = request(url, "/api/" + argv[3], "POST", json.loads(argv[5]), token=argv[4])
    elif what == "ws":
        out = asyncio.run(websocket(url, argv[3], json.loads(argv[4])))
    else:
        sys.exit(f"unknown command {what}")
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv)

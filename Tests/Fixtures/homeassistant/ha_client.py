"""Home Assistant's REST and websocket APIs for Quench's tests (HomeAssistant.swift runs it
with the test venv's Python; stdlib and aiohttp only, both in that venv). One call, one JSON
answer on standard output; a failure exits 1 with the reason on standard error.

  ha_client.py URL onboard                     first user, then a token: prints {"token": ...}
  ha_client.py URL get PATH TOKEN              GET /api/PATH (TOKEN - : none)
  ha_client.py URL post PATH TOKEN JSON        POST /api/PATH with that body
  ha_client.py URL ws TOKEN JSON               one websocket command ({"type": ...}): its result
  ha_client.py URL screenshot TOKEN REFRESH CARD_YAML OUT.png
                                               the card as a dashboard, in headless Chromium (chromedriver)
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
    token = tokens["access_token"]
    # The rest of onboarding, so the frontend opens on the dashboards.
    request(url, "/api/onboarding/core_config", "POST", {}, token=token)
    request(url, "/api/onboarding/analytics", "POST", {}, token=token)
    request(url, "/api/onboarding/integration", "POST", {"client_id": CLIENT_ID, "redirect_uri": CLIENT_ID + "?auth_callback=1"}, token=token)
    return {"token": token, "refresh_token": tokens["refresh_token"]}


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


def screenshot(url, token, refresh, card_file, out):
    """Saves the card as the default dashboard's only view, logs the browser in with the token
    (the frontend keeps it in localStorage as hassTokens) and writes a PNG of the dashboard."""
    import base64, socket, subprocess, time, yaml
    card = yaml.safe_load(open(card_file).read())
    asyncio.run(websocket(url, token, {"type": "lovelace/config/save",
                                       "config": {"title": "Quench", "views": [{"title": "Ann", "path": "ann", "cards": [card]}]}}))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # A process group of its own: the browser it starts goes with it.
    driver = subprocess.Popen(["chromedriver", f"--port={port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(50):
            try:
                request(base, "/status")
                break
            except SystemExit:
                time.sleep(0.1)
        session = request(base, "/session", "POST", {"capabilities": {"alwaysMatch": {"goog:chromeOptions": {
            "binary": "/usr/bin/chromium",
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=460,1000",
                     "--force-device-scale-factor=1", "--hide-scrollbars"]}}}})["value"]["sessionId"]
        s = f"/session/{session}"
        request(base, s + "/url", "POST", {"url": url + "/"})
        tokens = {"access_token": token, "token_type": "Bearer", "expires_in": 1800, "hassUrl": url,
                  "clientId": CLIENT_ID, "expires": int(time.time() * 1000) + 1800000, "refresh_token": refresh}
        request(base, s + "/execute/sync", "POST", {"script": "localStorage.setItem('hassTokens', arguments[0]);"
                                                    "localStorage.setItem('dockedSidebar', '\"always_hidden\"');",
                                                    "args": [json.dumps(tokens)]})
        request(base, s + "/url", "POST", {"url": url + "/lovelace/ann"})
        time.sleep(8)
        png = request(base, s + "/screenshot")["value"]
        open(out, "wb").write(base64.b64decode(png))
    finally:
        import os, signal
        os.killpg(driver.pid, signal.SIGKILL)
        driver.wait()
    return {"screenshot": out}


def main(argv):
    url, what = argv[1], argv[2]
    if what == "onboard":
        out = onboard(url)
    elif what == "get":
        out = request(url, "/api/" + argv[3], token=None if argv[4] == "-" else argv[4])
    elif what == "post":
        out = request(url, "/api/" + argv[3], "POST", json.loads(argv[5]), token=argv[4])
    elif what == "screenshot":
        out = screenshot(url, argv[3], argv[4], argv[5], argv[6])
    elif what == "ws":
        out = asyncio.run(websocket(url, argv[3], json.loads(argv[4])))
    else:
        sys.exit(f"unknown command {what}")
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv)

import Foundation
import QuenchTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `quench serve --listen 0.0.0.0:PORT` in a network namespace of the test's
/// own (so nothing is exposed on the machine's network), probed from inside it
/// by Python's urllib: nothing readable or writable without the token; the link
/// sets a cookie once; the cookie then opens everything.
/// What the namespace test needs, and what to install when it is missing.
enum Namespace {
    static let ip = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static let python = ["/usr/bin/python3", "/usr/local/bin/python3"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static var missing: String? {
        if quenchBinary == nil { return "SKIPPED: quench is not built (swift build)" }
        if getuid() != 0 { return "SKIPPED: a network namespace of the test's own needs root (unshare --net); run the tests as root, as CI does" }
        if !FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") || ip == nil || python == nil {
            return "SKIPPED: needs unshare, ip and python3: apt-get install -y util-linux iproute2 python3"
        }
        return nil
    }
}

@Suite(.enabled(if: Namespace.missing == nil, Comment(rawValue: Namespace.missing ?? "")))
struct NetworkListenerTests {
    /// Run inside the namespace: waits for the server, then asks as a phone on the network would.
    static let probe = #"""
        import json, os, sys, time, urllib.request, urllib.error
        base = "http://127.0.0.1:8080"
        class NoRedirect(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *args): return None
        opener = urllib.request.build_opener(NoRedirect)
        def ask(method, path, headers={}, body=None):
            req = urllib.request.Request(base + path, method=method, headers=headers, data=body)
            try:
                r = opener.open(req, timeout=5)
                return r.status, dict(r.headers), r.read().decode()
            except urllib.error.HTTPError as e:
                return e.code, dict(e.headers), e.read().decode()
        for _ in range(200):
            try:
                ask("GET", "/icon.svg"); break
            except Exception:
                time.sleep(0.05)
        token = open(os.environ["TOKEN_FILE"]).read().strip()
        json_post = {"Content-Type": "application/json", "Origin": base}
        out = {}
        for name, (method, path) in {"page": ("GET", "/"), "api": ("GET", "/api/today"), "script": ("GET", "/app.js"),
                                     "events": ("GET", "/api/events"), "chart": ("GET", "/api/chart/week.svg")}.items():
            out[name] = ask(method, path)[0]
        out["write"] = ask("POST", "/api/add", json_post, b'{"amount":"100ml"}')[0]
        out["wrong_link"] = ask("GET", "/?token=" + "0" * 64)[0]
        out["wrong_cookie"] = ask("GET", "/api/today", {"Cookie": "quench_token=" + "0" * 64})[0]
        status, headers, _ = ask("GET", "/?token=" + token)
        out["link"] = status
        out["link_location"] = headers.get("Location")
        cookie = headers.get("Set-Cookie", "")
        out["set_cookie"] = cookie
        jar = {"Cookie": cookie.split(";")[0]}
        out["page_with_cookie"] = ask("GET", "/", jar)[0]
        out["api_with_cookie"] = ask("GET", "/api/today", jar)[0]
        out["write_with_cookie"] = ask("POST", "/api/add", dict(json_post, **jar), b'{"amount":"100ml"}')[0]
        out["cross_site_write_with_cookie"] = ask("POST", "/api/add", dict(json_post, Origin="http://evil.example", **jar), b'{"amount":"100ml"}')[0]
        out["bearer"] = ask("GET", "/api/stats", {"Authorization": "Bearer " + token})[0]
        out["redirects"] = {p: (lambda r: [r[0], r[1].get("Location")])(ask("GET", p + "?token=" + token))
                            for p in ["//evil.com", "/\\evil.com", "/%2F%2Fevil.com", "/%5Cevil.com", "/.//evil.com", "/api/today"]}
        print(json.dumps(out))
        """#

    @Test func withoutTheTokenNothingIsReadableOrWritable() throws {
        let fixture = try WebFixture()
        let probe = fixture.folder + "/probe.py"
        try Self.probe.write(toFile: probe, atomically: true, encoding: .utf8)
        let tokenFile = fixture.folder + "/web-token"
        // The script is constant; paths come in through the environment.
        let script = """
            set -e
            "$IP" link set lo up
            "$QUENCH" serve --db "$DB" --listen 0.0.0.0:8080 > "$DIR/serve.log" 2>&1 &
            server=$!
            "$PYTHON" "$DIR/probe.py"
            kill -TERM $server
            wait $server
            """
        let before = try #require(fixture.json(["today"])["intake_ml"] as? Double)
        let r = try runProgram("/usr/bin/unshare", ["--net", "--", "/bin/sh", "-c", script], environment: [
            "IP": Namespace.ip!, "QUENCH": quenchBinary!, "DB": fixture.database, "DIR": fixture.folder, "PYTHON": Namespace.python!,
            "TOKEN_FILE": tokenFile,
        ])
        let log = (try? String(contentsOfFile: fixture.folder + "/serve.log", encoding: .utf8)) ?? ""
        #expect(r.status == 0, "\(r.stderr)\n\(log)")
        let out = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], "\(r.stdout)\n\(r.stderr)")
        for key in ["page", "api", "script", "events", "chart", "write", "wrong_link", "wrong_cookie"] {
            #expect(out[key] as? Int == 401, "\(key): \(out[key] ?? "nothing")")
        }
        #expect(out["link"] as? Int == 303)
        #expect(out["link_location"] as? String == "/", "the token leaves the address bar")
        let cookie = out["set_cookie"] as? String ?? ""
        #expect(cookie.hasPrefix("quench_token=") && cookie.contains("HttpOnly") && cookie.lowercased().contains("samesite=lax"), "\(cookie)")
        #expect(out["page_with_cookie"] as? Int == 200)
        #expect(out["api_with_cookie"] as? Int == 200)
        #expect(out["write_with_cookie"] as? Int == 200)
        #expect(out["cross_site_write_with_cookie"] as? Int == 403)
        #expect(out["bearer"] as? Int == 200)
        // The link's redirect stays on this server, whatever path it came with.
        let redirects = out["redirects"] as? [String: [Any]] ?? [:]
        #expect(redirects.count == 6, "\(out["redirects"] ?? "nothing")")
        for (path, answer) in redirects {
            let location = answer.count == 2 ? answer[1] as? String : nil
            #expect(answer.first as? Int == 303 && location == (path == "/api/today" ? "/api/today" : "/"), "\(path): \(answer)")
        }
        #expect(log.contains("it asks for the access token"), "\(log)")
        // Exactly the one write with the cookie reached the store.
        #expect(try fixture.json(["today"])["intake_ml"] as? Double == before + 100)
    }

    /// A listen name that reads like loopback but resolves to the home network
    /// (here 127.quench.test → 10.77.0.1, through the namespace's own /etc/hosts):
    /// the address bound decides, so the token is asked for, whatever Host a
    /// phone on the network sends.
    @Test func aNameThatLooksLikeLoopbackIsJudgedByItsAddress() throws {
        let fixture = try WebFixture(days: 2)
        let probe = fixture.folder + "/probe.py"
        try #"""
            import json, time, urllib.request, urllib.error
            def ask(path, host):
                req = urllib.request.Request("http://10.77.0.1:8080" + path, headers={"Host": host})
                try:
                    return urllib.request.urlopen(req, timeout=5).status
                except urllib.error.HTTPError as e:
                    return e.code
            for _ in range(200):
                try:
                    ask("/icon.svg", "127.0.0.1:8080"); break
                except Exception:
                    time.sleep(0.05)
            print(json.dumps({"loopback_host": ask("/api/today", "127.0.0.1:8080"), "its_name": ask("/api/today", "127.quench.test:8080"),
                              "page": ask("/", "localhost:8080")}))
            """#.write(toFile: probe, atomically: true, encoding: .utf8)
        let script = """
            set -e
            "$IP" link set lo up
            "$IP" addr add 10.77.0.1/32 dev lo
            printf '10.77.0.1 127.quench.test\n' > "$DIR/hosts"
            mount --bind "$DIR/hosts" /etc/hosts
            "$QUENCH" serve --db "$DB" --listen 127.quench.test:8080 > "$DIR/serve.log" 2>&1 &
            server=$!
            "$PYTHON" "$DIR/probe.py"
            kill -TERM $server
            wait $server
            """
        let r = try runProgram("/usr/bin/unshare", ["--net", "--mount", "--", "/bin/sh", "-c", script], environment: [
            "IP": Namespace.ip!, "QUENCH": quenchBinary!, "DB": fixture.database, "DIR": fixture.folder, "PYTHON": Namespace.python!,
        ])
        let log = (try? String(contentsOfFile: fixture.folder + "/serve.log", encoding: .utf8)) ?? ""
        #expect(r.status == 0, "\(r.stderr)\n\(log)")
        let out = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], "\(r.stdout)\n\(r.stderr)")
        for key in ["loopback_host", "its_name", "page"] {
            #expect(out[key] as? Int == 401, "\(key): \(out[key] ?? "nothing")")
        }
        #expect(log.contains("Quench is serving 10.77.0.1:8080; it asks for the access token"), "\(log)")
    }
}

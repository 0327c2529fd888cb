import Foundation
import NIOCore
import NIOPosix
import QuenchTestSupport
@testable import QuenchWeb
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Idle connections never take the server off the air: `quench serve` under a
/// low `ulimit -n` (so its cap is small: `ulimit -n` minus the reserve) and a
/// 1 s header timeout, probed by Python's sockets:
/// - connections that send nothing or half a request are closed (their sockets read EOF);
/// - as many of them as the server may open descriptors (at least four times its
///   cap) leave room for the page, a token holder's request and a live stream;
/// - a cap full of allowed connections idle between requests makes way for a new
///   one; live streams take at most the cap less 8: those past it are refused
///   (503, closed), the ones open are kept, and the page still loads;
/// - the server still answers and stops cleanly (a crash, such as libdispatch's
///   SIGILL when the descriptors ran out, would show in its exit status).
@Suite(.serialized)
struct ConnectionLimitTests {
    /// The cap the tests give the server: a `ulimit -n` this much above the reserve.
    static let cap = 32
    static var fileLimit: Int { WebServer.ConnectionLimits.reservedFiles + cap }
    /// The flood: as many idle connections as the server may open descriptors (at least four
    /// times the cap), so that without the cap they would exhaust them.
    static var flood: Int { fileLimit }

    static var pythonMissing: String? {
        if quenchBinary == nil { return "SKIPPED: quench is not built (swift build)" }
        if Namespace.python == nil { return "SKIPPED: the probe needs python3: apt-get install -y python3" }
        return nil
    }

    /// BASE, COUNT (the cap), MANY (the flood: more than the server's descriptors, had it no cap),
    /// TOKEN (empty on loopback). Prints what it saw as JSON.
    static let probe = #"""
        import json, os, select, socket, time, urllib.request, urllib.error
        base = os.environ["BASE"]; count = int(os.environ["COUNT"]); flood = int(os.environ["MANY"]); token = os.environ.get("TOKEN", "")
        host, port = base.split("//")[1].split(":"); port = int(port)
        def ask(path, headers={}):
            req = urllib.request.Request(base + path, headers=headers)
            try:
                r = urllib.request.urlopen(req, timeout=5)
                return r.status, dict(r.headers)
            except urllib.error.HTTPError as e:
                return e.code, dict(e.headers)
            except Exception as e:
                return repr(e), {}
        for _ in range(200):
            try:
                socket.create_connection((host, port), timeout=1).close(); break
            except OSError:
                time.sleep(0.05)
        def idle(n):
            out = []
            for i in range(n):
                s = socket.create_connection((host, port), timeout=5)
                if i % 2: s.sendall(b"GET /api/today HTTP/1.1\r\nHost: " + host.encode() + b"\r\n")  # half a request
                out.append(s)
            return out
        def closed(s):
            # EOF (or a reset) means the server closed it; still open means silence.
            ready, _, _ = select.select([s], [], [], 0)
            if not ready: return False
            try: return s.recv(4096) == b""
            except OSError: return True
        def wait_closed(socks, seconds=15):
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline and not all(closed(s) for s in socks): time.sleep(0.05)
            return sum(1 for s in socks if closed(s))
        auth = {"Authorization": "Bearer " + token} if token else {}
        bearer = "Authorization: Bearer " + token + "\r\n" if token else ""
        cookie = "Cookie: quench_token=" + token + "\r\n" if token else ""
        def request(path, until, credential):
            # A raw keep-alive request, read until `until` arrives (or the server closes); the socket stays open.
            s = socket.create_connection((host, port), timeout=5)
            s.sendall(("GET %s HTTP/1.1\r\nHost: %s:%d\r\n%s\r\n" % (path, host, port, credential)).encode())
            got = b""
            while until not in got:
                chunk = s.recv(65536)
                if not chunk: break
                got += chunk
            return s, got
        out = {}
        # Fewer than the cap: only the header timeout can close them.
        few = idle(count // 2)
        out["few"] = len(few)
        out["few_closed"] = wait_closed(few)
        # Past the cap (and past the descriptor limit): the first ones make way, the rest time out;
        # the people allowed still get in.
        many = idle(flood)
        out["many"] = len(many)
        out["page"] = ask("/", auth)[0]
        out["api"] = ask("/api/today", auth)[0]
        stream, got = request("/api/events", b"retry:", cookie)
        out["stream_head"] = got.split(b"\r\n")[0].decode(errors="replace")
        out["stream_first_event"] = b"retry:" in got
        if token:
            status, headers = ask("/api/today")
            out["anonymous"] = status
            out["anonymous_connection"] = headers.get("Connection")
        out["many_closed"] = wait_closed(many)
        out["stream_still_open"] = not closed(stream)
        out["after"] = ask("/api/today", auth)[0]
        # The cap full of allowed connections idle between requests: the one idle longest makes way.
        kept = [request("/icon.svg", b"</svg>", bearer)[0] for _ in range(count)]
        out["kept"] = len(kept)
        out["page_past_kept"] = ask("/", auth)[0]
        out["kept_closed"] = sum(1 for s in kept if closed(s))
        for s in kept: s.close()
        # As many live streams as the cap (the one above among them): those past the cap less 8 are
        # refused and closed, none of the others is let go, and the page and its API still answer.
        opened = [request("/api/events", b"retry:", cookie) for _ in range(count - 1)]
        streams = [stream] + [s for s, _ in opened]
        time.sleep(0.2)
        out["streams"] = len(streams)
        out["streams_refused"] = [got.split(b"\r\n")[0].decode(errors="replace") for _, got in opened].count("HTTP/1.1 503 Service Unavailable")
        out["past_streams"] = ask("/api/today", auth)[0]
        out["page_past_streams"] = ask("/", auth)[0]
        out["streams_closed"] = sum(1 for s in streams if closed(s))
        print(json.dumps(out))
        """#

    /// What every run of the probe must show.
    static func expectServed(_ out: [String: Any], token: Bool) {
        #expect(out["few"] as? Int == cap / 2)
        #expect(out["few_closed"] as? Int == cap / 2, "connections that sent nothing or half a head are closed after the header timeout")
        #expect(out["many"] as? Int == flood)
        #expect(out["page"] as? Int == 200, "\(out)")
        #expect(out["api"] as? Int == 200, "\(out)")
        #expect(out["stream_head"] as? String == "HTTP/1.1 200 OK", "\(out)")
        #expect(out["stream_first_event"] as? Bool == true, "\(out)")
        #expect(out["many_closed"] as? Int == flood, "\(out)")
        #expect(out["stream_still_open"] as? Bool == true, "a live stream is a request in progress: never idle, never let go")
        #expect(out["after"] as? Int == 200, "\(out)")
        #expect(out["kept"] as? Int == cap)
        #expect(out["page_past_kept"] as? Int == 200, "the connection idle longest makes way: \(out)")
        #expect((out["kept_closed"] as? Int).map { $0 >= 1 && $0 < cap } == true, "\(out)")
        #expect(out["streams"] as? Int == cap)
        // Before the stream reserve, a cap full of streams refused every new connection (the page too).
        #expect(out["streams_refused"] as? Int == 8, "streams past the cap less 8 are refused: \(out)")
        #expect(out["past_streams"] as? Int == 200, "streams never take every connection: \(out)")
        #expect(out["page_past_streams"] as? Int == 200, "\(out)")
        #expect(out["streams_closed"] as? Int == 8, "only the refused streams are closed: \(out)")
        if token {
            #expect(out["anonymous"] as? Int == 401)
            #expect(out["anonymous_connection"] as? String == "close", "a refused request's connection is not kept")
        }
    }

    static func decode(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
    }

    /// The loopback listener (no token): the local page loads past at least four times the cap of idle connections.
    /// Before the fix the descriptors ran out: nothing answered, and at times libdispatch trapped (SIGILL).
    @Test(.enabled(if: pythonMissing == nil, Comment(rawValue: pythonMissing ?? "")))
    func idleConnectionsLeaveRoomForTheLocalPage() async throws {
        let fixture = try WebFixture()
        let probe = fixture.folder + "/probe.py"
        try Self.probe.write(toFile: probe, atomically: true, encoding: .utf8)
        let server = try await ServerProcess(database: fixture.database, extra: ["--header-timeout", "1"],
                                             command: ["/bin/sh", "-c", "ulimit -n \(Self.fileLimit) && exec \"$0\" \"$@\"", quenchBinary!, "serve"])
        let r = try runProgram(Namespace.python!, [probe], environment: [
            "BASE": server.url, "COUNT": String(Self.cap), "MANY": String(Self.flood),
        ])
        let log = (try? String(contentsOfFile: server.log, encoding: .utf8)) ?? ""
        #expect(r.status == 0, "\(r.stderr)\n\(log)")
        #expect(log.contains("at most \(Self.cap) connections (\(Self.fileLimit) open files allowed)"), "\(log)")
        Self.expectServed(try Self.decode(r.stdout), token: false)
        #expect(kill(server.process.pid, 0) == 0, "still running")
        #expect(server.stop() == 0, "SIGTERM stops it cleanly (no trap on the way): \(log)")
    }

    /// A network listener, in a network namespace of the test's own: a token holder's
    /// request (Bearer) and live stream (cookie) get in past at least four times the cap of anonymous
    /// idle connections; an anonymous request is answered 401 and its connection closed.
    @Test(.enabled(if: Namespace.missing == nil, Comment(rawValue: Namespace.missing ?? "")))
    func idleConnectionsLeaveRoomForTokenHolders() throws {
        let fixture = try WebFixture()
        let probe = fixture.folder + "/probe.py"
        try Self.probe.write(toFile: probe, atomically: true, encoding: .utf8)
        let tokenFile = fixture.folder + "/web-token"
        _ = try fixture.quench(["serve", "token", "--listen", "0.0.0.0:8080"])
        let token = try String(contentsOfFile: tokenFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        // The limit for the server alone; the probe holds more sockets than that.
        let script = """
            set -e
            "$IP" link set lo up
            (ulimit -n "$FILES" && exec "$QUENCH" serve --db "$DB" --listen 0.0.0.0:8080 --header-timeout 1) > "$DIR/serve.log" 2>&1 &
            server=$!
            "$PYTHON" "$DIR/probe.py"
            kill -0 $server
            kill -TERM $server
            wait $server
            """
        let r = try runProgram("/usr/bin/unshare", ["--net", "--", "/bin/sh", "-c", script], environment: [
            "IP": Namespace.ip!, "QUENCH": quenchBinary!, "DB": fixture.database, "DIR": fixture.folder, "PYTHON": Namespace.python!,
            "FILES": String(Self.fileLimit), "BASE": "http://127.0.0.1:8080", "COUNT": String(Self.cap), "MANY": String(Self.flood), "TOKEN": token,
        ])
        let log = (try? String(contentsOfFile: fixture.folder + "/serve.log", encoding: .utf8)) ?? ""
        #expect(r.status == 0, "the server ran through and stopped cleanly on SIGTERM: \(r.stderr)\n\(log)")
        #expect(log.contains("at most \(Self.cap) connections"), "\(log)")
        Self.expectServed(try Self.decode(r.stdout), token: true)
    }

    /// Live streams never take the last `streamReserve` connections, and a table full of
    /// requests in progress lets the oldest stream go rather than refuse a new connection
    /// (before, it refused: a page could not load while streams and slow requests filled it).
    @Test func streamsLeaveAReserveAndTheOldestMakesWay() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        func socket() async throws -> any Channel {
            try await DatagramBootstrap(group: group).bind(host: "127.0.0.1", port: 0).get()
        }
        var channels: [any Channel] = []
        let table = ConnectionTable(capacity: 10)
        #expect(table.streamCapacity == 10 - WebServer.ConnectionLimits.streamReserve)
        for _ in 0..<10 {
            let channel = try await socket()
            channels.append(channel)
            guard case .admitted(evicting: nil) = table.admit(channel) else { Issue.record("not admitted under the cap"); return }
            table.trust(channel)
            table.requestStarted(channel)
        }
        #expect(table.startStream(channels[3]))
        #expect(table.startStream(channels[1]))
        #expect(!table.startStream(channels[2]), "a stream past the cap less the reserve is refused")
        let newcomer = try await socket()
        guard case let .admitted(evicting: evicted?) = table.admit(newcomer) else {
            Issue.record("a table full of requests with streams among them refused a new connection")
            return
        }
        #expect(evicted === channels[1], "the oldest-accepted stream makes way")
        // With no stream left to let go and every connection busy, a new one is refused.
        table.trust(newcomer)
        table.requestStarted(newcomer)
        table.requestEnded(channels[3])
        table.requestStarted(channels[3])
        let last = try await socket()
        guard case .refused = table.admit(last) else { Issue.record("a busy table without streams let a request go"); return }
        for channel in channels + [newcomer, last] { try? await channel.close() }
        try await group.shutdownGracefully()
    }

    /// The cap follows the descriptor limit, and the service's limit leaves the standard cap whole
    /// on a machine of up to 32 cores (the reserve grows with the event loops and request threads).
    /// A flood of refused connections (hundreds a second) logs one line each 10 s, with how many
    /// were refused since the last: the first at once, then none until the interval has passed.
    @Test func refusalsAreLoggedAtMostOnceAnInterval() {
        let table = ConnectionTable(capacity: 4)
        let start = ContinuousClock.now
        #expect(table.refusalToLog(now: start) == 1, "the first is said at once")
        let step = ConnectionTable.refusalLogInterval / 1000
        for i in 1..<1000 { #expect(table.refusalToLog(now: start + step * i) == nil) }
        #expect(table.refusalToLog(now: start + ConnectionTable.refusalLogInterval) == 1000, "then one line for the 1000 since")
        #expect(table.refusalToLog(now: start + ConnectionTable.refusalLogInterval + .seconds(1)) == nil)
    }

    @Test func theCapStaysBelowTheDescriptorLimit() throws {
        let limits = WebServer.ConnectionLimits.standard
        let reserve = WebServer.ConnectionLimits.reservedFiles
        #expect(try limits.cap(openFiles: reserve + 20) == 20)
        #expect(try limits.cap(openFiles: 1 << 20) == limits.maxConnections)
        #expect(throws: WebError.self) { try limits.cap(openFiles: reserve + 7) }
        let unit = try String(contentsOf: TestPackage.root.appendingPathComponent("systemd/quench-web.service"), encoding: .utf8)
        let lines = unit.split(separator: "\n").filter { $0.hasPrefix("LimitNOFILE=") }
        let files = try #require(lines.count == 1 ? Int(lines[0].dropFirst("LimitNOFILE=".count)) : nil, "one LimitNOFILE=N in quench-web.service")
        #expect(files >= limits.maxConnections + 64 + 16 * 32, "LimitNOFILE=\(files)")
    }
}

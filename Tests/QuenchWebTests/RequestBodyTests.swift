import Foundation
import QuenchTestSupport
import QuenchWeb
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Hostile bodies and heads, through `quench serve` on loopback (a 1 s body
/// timeout), probed by Python's raw sockets:
/// - a body trickled a byte at a time is answered 408 `{"error":…}` and its
///   connection closed (before, it held a connection for as long as it trickled);
/// - a chunked body the HTTP parser rejects is answered 400 `{"error":"request body: …"}`
///   (before: 500), and `POST /api/undo` with one undoes nothing (before: 200, a drink deleted);
/// - a request head the parser rejects is answered 400 with a JSON body (before: empty);
/// - an HTTP/1.0 request's connection closes after its answer (before: held for the idle minute);
/// - the live stream goes to an HTTP/1.0 client unchunked, to the close (before: chunk sizes in its data);
/// - two Host headers, or none in HTTP/1.1, are answered 400 (before: the first judged, or 403);
/// - a client more than 16 requests ahead of its answers is closed (before: read on, 1.7 GB);
/// - `Expect: 100-continue` is answered `100 Continue` before the body is sent (before: never,
///   and curl waited a second before each write), but not for a body declared too large;
/// - an HTTP/1.0 request with a `Transfer-Encoding` is refused (before: its chunked body was read).
@Suite(.serialized)
struct RequestBodyTests {
    static var missing: String? {
        if quenchBinary == nil { return "SKIPPED: quench is not built (swift build)" }
        if Namespace.python == nil { return "SKIPPED: the probe needs python3: apt-get install -y python3" }
        return nil
    }

    static let probe = #"""
        import json, os, re, select, socket, time, urllib.request
        base = os.environ["BASE"]
        host, port = base.split("//")[1].split(":"); port = int(port)
        head = "Host: %s:%d\r\nContent-Type: application/json\r\n" % (host, port)
        def read_all(s, seconds=10):
            # Until the server closes (EOF or reset), at most `seconds`.
            got = b""; deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                ready, _, _ = select.select([s], [], [], 0.1)
                if not ready: continue
                try: chunk = s.recv(65536)
                except OSError: return got, True
                if not chunk: return got, True
                got += chunk
            return got, False
        def raw(data, seconds=10):
            s = socket.create_connection((host, port), timeout=10)
            s.sendall(data)
            got, closed = read_all(s, seconds)
            s.close()
            return answer(got, closed)
        def answer(got, closed):
            status = got.split(b"\r\n")[0].decode(errors="replace")
            body = got.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in got else b""
            try: error = json.loads(body).get("error", "")
            except Exception: error = None
            return {"status": status, "error": error, "closed": closed}
        def log():
            return urllib.request.urlopen(base + "/api/log?limit=1000", timeout=5).read().decode()
        out = {}
        # A body trickled a byte every 0.3 s: answered once the body timeout passes, and closed.
        s = socket.create_connection((host, port), timeout=10)
        s.sendall(("POST /api/add HTTP/1.1\r\n%sContent-Length: 60000\r\n\r\n" % head).encode())
        start = time.monotonic(); got = b""; sent = 0
        while time.monotonic() - start < 10 and not got:
            s.sendall(b" "); sent += 1
            ready, _, _ = select.select([s], [], [], 0.3)
            if ready: got = s.recv(65536) or b"<eof>"
        rest, closed = read_all(s)
        out["slow"] = answer(got + rest, closed)
        out["slow_bytes_sent"] = sent
        s.close()
        # A length declared larger than any write takes, and no body: refused at once, not after the body timeout.
        start = time.monotonic()
        out["declared_huge"] = raw(("POST /api/add HTTP/1.1\r\n%sContent-Length: 100000000\r\n\r\n" % head).encode(), 5)
        out["declared_huge"]["seconds"] = time.monotonic() - start
        # Bodies the parser rejects, on the writes that read one.
        bad = {
            "size_zz": "Transfer-Encoding: chunked\r\n\r\nZZ\r\n{}\r\n0\r\n\r\n",
            "size_negative": "Transfer-Encoding: chunked\r\n\r\n-1\r\n{}\r\n0\r\n\r\n",
            "gzip": "Transfer-Encoding: gzip\r\n\r\n{}",
        }
        for name, rest in bad.items():
            out["add_" + name] = raw(("POST /api/add HTTP/1.1\r\n%s%s" % (head, rest)).encode())
        # Undo takes no arguments, but reads its body whole before it acts.
        urllib.request.urlopen(urllib.request.Request(base + "/api/add", data=b'{"amount":"250ml"}',
                               headers={"Content-Type": "application/json"}), timeout=5).read()
        before = log()
        for name, rest in bad.items():
            out["undo_" + name] = raw(("POST /api/undo HTTP/1.1\r\n%s%s" % (head, rest)).encode())
        out["undo_arguments"] = raw(("POST /api/undo HTTP/1.1\r\n%sContent-Length: 8\r\nConnection: close\r\n\r\n{\"id\":1}" % head).encode())
        out["log_unchanged"] = log() == before
        out["undo_empty"] = raw(("POST /api/undo HTTP/1.1\r\n%sContent-Length: 2\r\nConnection: close\r\n\r\n{}" % head).encode())
        out["log_changed_by_undo"] = log() != before
        # Heads the parser rejects.
        out["lowercase_method"] = raw(b"get / HTTP/1.1\r\nHost: x\r\n\r\n")
        out["http_9"] = raw(b"GET / HTTP/9.9\r\nHost: x\r\n\r\n")
        out["two_lengths"] = raw(("POST /api/add HTTP/1.1\r\n%sContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}" % head).encode())
        out["length_and_chunked"] = raw(("POST /api/add HTTP/1.1\r\n%sContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n" % head).encode())
        # One Host, and only one (RFC 9112 §3.2): a second was ignored, and the first judged.
        before_hosts = log()
        out["two_hosts"] = raw(("POST /api/add HTTP/1.1\r\n%sHost: elsewhere.example\r\nContent-Length: 17\r\n\r\n{\"amount\":\"50ml\"}" % head).encode())
        out["no_host"] = raw(b"GET /api/today HTTP/1.1\r\n\r\n")
        # A target in absolute form names the host (RFC 9112 §3.2.2): its Host field is not the one judged.
        out["absolute_elsewhere"] = raw(("GET http://elsewhere.example/api/today HTTP/1.1\r\n%sConnection: close\r\n\r\n" % head).encode())
        out["absolute_here"] = raw(("GET http://%s:%d/api/today HTTP/1.1\r\nHost: elsewhere.example\r\nConnection: close\r\n\r\n" % (host, port)).encode())
        out["gzip_chunked"] = raw(("POST /api/add HTTP/1.1\r\n%sTransfer-Encoding: gzip, chunked\r\n\r\n11\r\n{\"amount\":\"50ml\"}\r\n0\r\n\r\n" % head).encode())
        out["log_unchanged_by_hosts"] = log() == before_hosts
        # Pipelined: a good write, then a head with two Hosts; answered in order, the write's first.
        s = socket.create_connection((host, port), timeout=10)
        s.sendall(("POST /api/add HTTP/1.1\r\n%sContent-Length: 18\r\n\r\n{\"amount\":\"125ml\"}" % head).encode()
                  + ("GET /api/today HTTP/1.1\r\n%sHost: elsewhere.example\r\n\r\n" % head).encode())
        got, closed = read_all(s, 5)
        s.close()
        out["pipelined_statuses"] = [m.decode() for m in re.findall(rb"HTTP/1\.1 \d{3} [A-Za-z ]*", got)]
        out["pipelined_closed"] = closed
        # Up to 16 requests ahead of their answers are each answered in turn; a client further
        # ahead, as no browser is, is closed (200 a packet, never read, took the server to 1.7 GB).
        for n in (16, 200):
            s = socket.create_connection((host, port), timeout=10)
            s.sendall(("GET /icon.svg HTTP/1.1\r\n%s\r\n" % head).encode() * n)
            got, closed = read_all(s, 2)
            s.close()
            out["pipelined_%d" % n] = {"answered": len(re.findall(rb"HTTP/1\.1 200 OK", got)), "closed": closed}
        # HTTP/1.0 closes after the answer unless it asks to keep the connection; so does a
        # 1.1 request whose Connection says close in capitals (each within 3 s, not the idle minute).
        hosted = "Host: %s:%d\r\n" % (host, port)
        out["http10"] = raw(("GET /api/today HTTP/1.0\r\n%s\r\n" % hosted).encode(), 3)
        out["http10_keep_alive"] = raw(("GET /api/today HTTP/1.0\r\n%sConnection: keep-alive\r\n\r\n" % hosted).encode(), 1)
        out["http11_close"] = raw(("GET /api/today HTTP/1.1\r\n%sConnection: Close\r\n\r\n" % hosted).encode(), 3)
        # The live stream (no length) to HTTP/1.0, which cannot read chunked: plain data to the close.
        s = socket.create_connection((host, port), timeout=10)
        s.sendall(("GET /api/events HTTP/1.0\r\n%sConnection: keep-alive\r\n\r\n" % hosted).encode())
        got, _ = read_all(s, 2)
        s.close()
        stream_head, _, stream_body = got.partition(b"\r\n\r\n")
        out["http10_stream"] = {"head": stream_head.decode(errors="replace"), "body": stream_body[:40].decode(errors="replace")}
        # CONNECT: no tunnel, and the connection closed at once (its answer had no length: held for the idle minute).
        out["connect"] = raw(("CONNECT /api/today HTTP/1.1\r\n%s\r\n" % head).encode(), 3)
        # Expect: 100-continue: the interim answer comes before the body is sent, then the write's own.
        s = socket.create_connection((host, port), timeout=10)
        s.sendall(("POST /api/add HTTP/1.1\r\n%sExpect: 100-continue\r\nContent-Length: 17\r\nConnection: close\r\n\r\n" % head).encode())
        start = time.monotonic(); interim = b""
        while time.monotonic() - start < 3 and b"\r\n\r\n" not in interim:
            ready, _, _ = select.select([s], [], [], 0.1)
            if ready: interim += s.recv(65536) or b"<eof>"
        out["continue_seconds"] = time.monotonic() - start
        out["continue_interim"] = interim.decode(errors="replace")
        s.sendall(b'{"amount":"60ml"}')
        got, closed = read_all(s, 5)
        s.close()
        out["continue_final"] = answer(got, closed)
        # A body declared too large is refused at once, with no 100 before it.
        out["continue_huge"] = raw(("POST /api/add HTTP/1.1\r\n%sExpect: 100-continue\r\nContent-Length: 100000000\r\n\r\n" % head).encode(), 3)
        # Transfer-Encoding in HTTP/1.0 (RFC 9112 §6.1: the framing is faulty): refused, nothing written.
        before_10 = log()
        out["http10_chunked"] = raw(("POST /api/add HTTP/1.0\r\n%sTransfer-Encoding: chunked\r\n\r\n11\r\n{\"amount\":\"70ml\"}\r\n0\r\n\r\n" % head).encode(), 3)
        out["log_unchanged_by_http10_chunked"] = log() == before_10
        out["page_after"] = urllib.request.urlopen(base + "/", timeout=5).status
        print(json.dumps(out))
        """#

    @Test(.enabled(if: missing == nil, Comment(rawValue: missing ?? "")))
    func hostileBodiesAndHeadsAreAnsweredInJSONAndActOnNothing() async throws {
        let fixture = try WebFixture()
        let probe = fixture.folder + "/probe.py"
        try Self.probe.write(toFile: probe, atomically: true, encoding: .utf8)
        let server = try await ServerProcess(database: fixture.database, extra: ["--body-timeout", "1"])
        let r = try runProgram(Namespace.python!, [probe], environment: ["BASE": server.url])
        let log = (try? String(contentsOfFile: server.log, encoding: .utf8)) ?? ""
        #expect(r.status == 0, "\(r.stderr)\n\(log)")
        let out = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], "\(r.stdout)\n\(r.stderr)")
        func answer(_ key: String) -> (status: String, error: String?, closed: Bool) {
            let a = out[key] as? [String: Any] ?? [:]
            return (a["status"] as? String ?? "", a["error"] as? String, a["closed"] as? Bool ?? false)
        }
        let slow = answer("slow")
        #expect(slow.status == "HTTP/1.1 408 Request Timeout", "\(out)")
        #expect(slow.error?.hasPrefix("request body: it did not arrive within 1.0 s") == true, "\(out)")
        #expect(slow.closed, "the slow body's connection is closed")
        // It was still sending when answered: the body timeout, not the idle or header one.
        #expect((out["slow_bytes_sent"] as? Int).map { $0 >= 2 } == true, "\(out)")
        let huge = out["declared_huge"] as? [String: Any] ?? [:]
        #expect((huge["status"] as? String)?.hasPrefix("HTTP/1.1 413 ") == true && huge["closed"] as? Bool == true
                && (huge["seconds"] as? Double ?? 99) < 0.9, "a body declared 100 MB: \(huge)")
        #expect((huge["error"] as? String)?.hasPrefix("request body: larger than 64 kB") == true, "\(huge)")
        for key in ["add_size_zz", "add_size_negative", "add_gzip", "undo_size_zz", "undo_size_negative", "undo_gzip"] {
            let a = answer(key)
            #expect(a.status == "HTTP/1.1 400 Bad Request", "\(key): \(out[key] ?? "")")
            #expect(a.error?.hasPrefix("request body: ") == true, "\(key): \(out[key] ?? "")")
            #expect(a.closed, "\(key): the connection is closed after a body the parser rejected")
        }
        #expect(answer("undo_arguments").status == "HTTP/1.1 400 Bad Request", "\(out)")
        #expect(out["log_unchanged"] as? Bool == true, "an undo with a bad body undoes nothing: \(out)")
        #expect(answer("undo_empty").status == "HTTP/1.1 200 OK", "\(out)")
        #expect(out["log_changed_by_undo"] as? Bool == true, "an undo with `{}` still undoes: \(out)")
        #expect(answer("two_hosts").error == "not a valid HTTP/1.1 request (2 Host headers; a request names one host)", "\(out)")
        #expect(answer("no_host").error == "not a valid HTTP/1.1 request (no Host header; an HTTP/1.1 request names its host)", "\(out)")
        #expect(out["log_unchanged_by_hosts"] as? Bool == true, "a write with two Hosts or a second coding wrote: \(out)")
        #expect(answer("absolute_elsewhere").status == "HTTP/1.1 403 Forbidden", "\(out)")
        #expect(answer("absolute_here").status == "HTTP/1.1 200 OK", "\(out)")
        #expect(answer("gzip_chunked").error == "not a valid HTTP/1.1 request (Transfer-Encoding gzip, chunked: chunked, once, is the one this server reads)", "\(out)")
        #expect(out["pipelined_statuses"] as? [String] == ["HTTP/1.1 200 OK", "HTTP/1.1 400 Bad Request"] && out["pipelined_closed"] as? Bool == true,
                "each pipelined request answered in its turn: \(out)")
        let within = out["pipelined_16"] as? [String: Any] ?? [:]
        #expect(within["answered"] as? Int == 16 && within["closed"] as? Bool == false, "16 requests ahead: \(within)")
        let ahead = out["pipelined_200"] as? [String: Any] ?? [:]
        #expect(ahead["closed"] as? Bool == true && (ahead["answered"] as? Int ?? 200) <= 16, "a client 200 requests ahead: \(ahead)")
        // The parser's refusals in words (they said "unknown (http_parser error)", "invalid HTTP version").
        #expect(answer("add_gzip").error == "request body: a Transfer-Encoding this server does not take (chunked, once, is the one it reads), "
                + "or one beside Content-Length (one or the other)", "\(out)")
        #expect(answer("add_size_zz").error == "request body: a chunk's size is not a hexadecimal number", "\(out)")
        #expect(answer("http_9").error == "not a valid HTTP/1.1 request (the HTTP version is not 1.0 or 1.1, or the request line does not end in CRLF)", "\(out)")
        // A second Content-Length was said to be one beside Transfer-Encoding (the LAN trial), and that one to be no number.
        #expect(answer("two_lengths").error == "not a valid HTTP/1.1 request (Content-Length is given twice)", "\(out)")
        #expect(answer("length_and_chunked").error?.hasSuffix("or one beside Content-Length (one or the other))") == true, "\(out)")
        for key in ["lowercase_method", "http_9", "two_lengths", "length_and_chunked", "two_hosts", "no_host"] {
            let a = answer(key)
            #expect(a.status == "HTTP/1.1 400 Bad Request", "\(key): \(out[key] ?? "")")
            #expect(a.error?.hasPrefix("not a valid HTTP/1.1 request") == true, "\(key): \(out[key] ?? "")")
            #expect(a.closed, "\(key)")
        }
        for key in ["http10", "http10_keep_alive", "http11_close"] {
            #expect(answer(key).status == "HTTP/1.1 200 OK", "\(key): \(out[key] ?? "")")
        }
        #expect(answer("http10").closed, "an HTTP/1.0 request's connection is still open 3 s after its answer: \(out)")
        #expect(answer("http11_close").closed, "`Connection: Close`'s connection is still open 3 s after its answer: \(out)")
        #expect(!answer("http10_keep_alive").closed, "an HTTP/1.0 request that asked to keep its connection lost it: \(out)")
        let stream = out["http10_stream"] as? [String: String] ?? [:]
        let streamHead = (stream["head"] ?? "").lowercased()
        #expect(streamHead.hasPrefix("http/1.0 200 ok") && !streamHead.contains("transfer-encoding") && streamHead.contains("connection: close"),
                "the live stream's head to an HTTP/1.0 client: \(stream)")
        #expect(stream["body"]?.hasPrefix("retry: ") == true, "the stream's data, not a chunk size first: \(stream)")
        #expect(answer("connect").status == "HTTP/1.1 405 Method Not Allowed" && answer("connect").closed, "\(out["connect"] ?? "")")
        #expect((out["continue_interim"] as? String)?.hasPrefix("HTTP/1.1 100 Continue\r\n") == true
                && (out["continue_seconds"] as? Double ?? 9) < 1, "no 100 Continue within a second: \(out)")
        #expect(answer("continue_final").status == "HTTP/1.1 200 OK", "the write after its 100 Continue: \(out)")
        let huge100 = out["continue_huge"] as? [String: Any] ?? [:]
        #expect((huge100["status"] as? String)?.hasPrefix("HTTP/1.1 413 ") == true, "a body too large is refused, not continued: \(huge100)")
        #expect(answer("http10_chunked").error == "not a valid HTTP/1.1 request (Transfer-Encoding in an HTTP/1.0 request, "
                + "which frames its body by Content-Length only)" && answer("http10_chunked").closed, "\(out)")
        #expect(out["log_unchanged_by_http10_chunked"] as? Bool == true, "\(out)")
        #expect(out["page_after"] as? Int == 200)
        #expect(server.stop() == 0, "\(log)")
    }
}

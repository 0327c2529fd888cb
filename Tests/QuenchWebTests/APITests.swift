import Foundation
import QuenchCore
import QuenchStore
import QuenchTestSupport
import Testing

/// The JSON API is the CLI's `--json`: the same function, the same bytes,
/// checked against `quench` run as a separate process on the same database.
@Suite(.serialized, .enabled(if: quenchBinary != nil, "SKIPPED: quench is not built (swift build)"))
struct APITests {
    /// Keys that follow the clock: they move between the two requests.
    static let clockKeys: Set<String> = ["last_sip_ago_seconds", "pace_ml", "behind_by_ml", "next_at", "due", "reason"]

    static func withoutClock(_ text: String) -> NSDictionary? {
        guard var object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else { return nil }
        for key in clockKeys { object.removeValue(forKey: key) }
        return object as NSDictionary
    }

    @Test func eachEndpointSaysWhatTheCommandSays() async throws {
        let fixture = try WebFixture()
        let server = try await ServerProcess(database: fixture.database)
        defer { _ = server.stop() }
        let pairs: [(String, [String])] = [
            ("/api/today", ["today"]), ("/api/today?date=yesterday", ["today", "--date", "yesterday"]), ("/api/stats?days=7", ["stats", "--days", "7"]), ("/api/stats?days=30", ["stats", "--days", "30"]),
            ("/api/calendar", ["calendar"]), ("/api/goal", ["goal"]), ("/api/remind", ["remind"]),
        ]
        for (path, command) in pairs {
            let answer = try await server.client.get(path)
            #expect(answer.status == 200, "\(path)")
            #expect(answer.header("Content-Type") == "application/json; charset=utf-8")
            #expect(answer.header("Cache-Control") == "no-store", "health data is never cached")
            let cli = try fixture.quench(command + ["--json"])
            let api = try #require(Self.withoutClock(answer.body), "\(path): \(answer.body.prefix(200))")
            #expect(api == Self.withoutClock(cli), "\(path) differs from quench \(command.joined(separator: " ")) --json")
            #expect(api.count > 3)
        }
        // The log is byte for byte the same lines (nothing in it moves with the clock).
        let log = try await server.client.get("/api/log?since=today&deleted=true")
        #expect(log.body == (try fixture.quench(["log", "--since", "today", "--deleted", "--json"])))
        #expect(log.body.split(separator: "\n").count == 4, "three sensor sips and the tea today")
    }

    /// The log answers at most 5,000 lines, the newest: a history's whole log was built in memory for each
    /// request, and 32 connections asking for ten years and never reading took the server past 1 GB.
    /// A cut answer says where the rest is (a `Link` header), and its pages hold every event once, events
    /// at one instant too (an import's: paged by `until=` the last line's time, the rest of an instant
    /// cut at 5,000 was never seen).
    @Test func theLogIsBoundedAndItsPagesHoldEveryEvent() async throws {
        let fixture = try WebFixture()
        let before = Set(try fixture.quench(["log", "--json"]).split(separator: "\n"))
        let start = Timestamp.wallClockNow.adding(-40 * 86_400)
        // Three bottles' at each instant: the 5,000th line is the second of one.
        let sips = (0..<5_010).map { i in
            let t = Double(i / 3) * 600
            return IntakeEvent.sensor(DetectedEvent(kind: .sip, t: t + 6, start: t, end: t + 5, ml: 20 + Double(i % 3)),
                                      device: "F0:F1:F2:F3:F4:F\(i % 3)", started: start)
        }
        _ = try IntakeStore(path: fixture.database).insert(sips)
        let everything = try fixture.quench(["log", "--json"]).split(separator: "\n")
        #expect(everything.count == before.count + 5_010)
        let server = try await ServerProcess(database: fixture.database)
        defer { _ = server.stop() }
        let whole = try await server.client.get("/api/log")
        let lines = whole.body.split(separator: "\n")
        #expect(whole.status == 200 && lines.count == 5_000, "\(lines.count)")
        // The newest first: the same lines as the command's first 5,000.
        #expect(whole.body == (try fixture.quench(["log", "--json", "--limit", "5000"])))
        let more = try await server.client.get("/api/log?limit=5001")
        #expect(more.status == 400 && more.body.contains("limit=5001: 1 to 5000 lines (older ones: the answer's Link header, before=ID)"), "\(more.body)")
        // Followed from the first answer's Link, the pages are the whole log, in order, each line once.
        var pages = [whole]
        while let link = pages.last?.header("Link"), pages.count < 5 {
            #expect(link.hasPrefix("</api/log?before=") && link.hasSuffix(">; rel=\"next\""), "\(link)")
            pages.append(try await server.client.get(String(link.dropFirst().prefix { $0 != ">" })))
        }
        #expect(pages.count == 2 && pages.allSatisfy { $0.status == 200 })
        #expect(pages.flatMap { $0.body.split(separator: "\n") } == everything)
        // A page's query is kept (and a `before` given replaced): three at a time, deleted ones too.
        let small = try await server.client.get("/api/log?limit=3&deleted=true&before=5000")
        let next = try #require(small.header("Link"), "\(small.body)")
        #expect(next.hasPrefix("</api/log?limit=3&deleted=true&before="), "\(next)")
        var paged: [Substring] = []
        var page = try await server.client.get("/api/log?limit=3&deleted=true")
        for _ in 0..<6 {
            paged += page.body.split(separator: "\n")
            let link = try #require(page.header("Link"))
            page = try await server.client.get(String(link.dropFirst().prefix { $0 != ">" }))
        }
        #expect(paged == Array(try fixture.quench(["log", "--json", "--deleted", "--limit", "18"]).split(separator: "\n")))
        // A `before` that names no event is refused, not read as "everything".
        let unknown = try await server.client.get("/api/log?before=999999")
        #expect(unknown.status == 404 && unknown.body.contains("999999"), "\(unknown.status) \(unknown.body)")
    }

    /// `quench-web`, what the quench-web service runs, is `quench serve` in a smaller
    /// process: the same answers, and no Bluetooth or MQTT (libmosquitto, OpenSSL) mapped.
    @Test(.enabled(if: builtExecutable("quench-web") != nil, "SKIPPED: quench-web is not built (swift build)"))
    func quenchWebIsQuenchServeAlone() async throws {
        let fixture = try WebFixture()
        let server = try await ServerProcess(database: fixture.database, command: [builtExecutable("quench-web")!])
        let answer = try await server.client.get("/api/today")
        let cli = try fixture.quench(["today", "--json"])
        #expect(answer.status == 200 && Self.withoutClock(answer.body) == Self.withoutClock(cli), "\(answer.body)")
        let log = try await server.client.get("/api/log?since=today&deleted=true")
        #expect(log.body == (try fixture.quench(["log", "--since", "today", "--deleted", "--json"])))
        let maps = try String(contentsOfFile: "/proc/\(server.process.pid)/maps", encoding: .utf8)
        for library in ["libmosquitto", "libbluetooth", "libssl", "libcrypto"] {
            #expect(!maps.contains(library), "quench-web maps \(library)")
        }
        #expect(server.stop() == 0, "SIGTERM stops it cleanly")
    }

    @Test func writesChangeTheStoreAndBadInputSaysWhat() async throws {
        let fixture = try WebFixture()
        let server = try await ServerProcess(database: fixture.database)
        defer { _ = server.stop() }
        let before = try #require(fixture.json(["today"])["intake_ml"] as? Double)
        let added = try await server.client.postJSON("/api/add", ["amount": "250ml", "note": "from the page"])
        #expect(added.status == 200, "\(added.body)")
        let event = try #require((added.json as? [String: Any])?["event"] as? [String: Any])
        let id = try #require(event["id"] as? Int)
        #expect(try fixture.json(["today"])["intake_ml"] as? Double == before + 250)

        #expect(try await server.client.postJSON("/api/delete", ["id": id]).status == 200)
        #expect(try fixture.json(["today"])["intake_ml"] as? Double == before)
        #expect(try await server.client.postJSON("/api/restore", ["id": id]).status == 200)
        #expect(try fixture.json(["today"])["intake_ml"] as? Double == before + 250)
        #expect(try await server.client.postJSON("/api/undo", [:]).status == 200)
        #expect(try fixture.json(["today"])["intake_ml"] as? Double == before)

        let bad = try await server.client.postJSON("/api/add", ["amount": "lots"])
        #expect(bad.status == 400)
        #expect((bad.json as? [String: Any])?["error"] as? String == "invalid amount 'lots': expected a number with a unit, e.g. 250ml, 0.3l or 8oz"
                || ((bad.json as? [String: Any])?["error"] as? String)?.hasPrefix("invalid amount 'lots'") == true)
        let missing = try await server.client.postJSON("/api/delete", ["id": 999_999])
        #expect(missing.status == 404, "\(missing.body)")
        let badQuery = try await server.client.get("/api/stats?days=many")
        #expect(badQuery.status == 400 && badQuery.body.contains("days=many: not a whole number"))

        // Another site's page posting to the Pi, and a form: refused, nothing written.
        let crossSite = try await server.client.postJSON("/api/add", ["amount": "100ml"], headers: [("Origin", "https://evil.example")])
        #expect(crossSite.status == 403)
        let form = try await server.client.request("POST", "/api/add", headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                                   body: "amount=100ml")
        #expect(form.status == 415)
        let rebound = try await server.client.request("GET", "/api/today", hostHeader: "evil.example:8080")
        #expect(rebound.status == 403)
        #expect(try fixture.json(["today"])["intake_ml"] as? Double == before, "nothing refused was written")
    }

    /// Every error is `{"error":"…"}`, as the docs say: Hummingbird's own (a body
    /// that is not the JSON asked for, no such path or method) included.
    @Test func everyErrorHasTheOneShape() async throws {
        let fixture = try WebFixture(days: 2)
        let server = try await ServerProcess(database: fixture.database)
        defer { _ = server.stop() }
        let json = [("Content-Type", "application/json")]
        let cases: [(String, String, String?, Int, String)] = [
            ("GET", "/nothing-here", nil, 404, "nothing at /nothing-here"),
            ("POST", "/api/add", "{}", 400, "request body: `amount` is missing"),
            ("POST", "/api/add", "nope", 400, "request body: not valid JSON at byte 1: expected null"),
            // Strict JSON: a trailing comma and a key given twice (the decoder took the last) are said where they are.
            ("POST", "/api/add", #"{"amount":"250ml",}"#, 400, "request body: not valid JSON at byte 18: a comma before `}`"),
            ("POST", "/api/add", #"{"amount":"25ml","amount":"900ml"}"#, 400, "`amount` is given twice in one object"),
            ("POST", "/api/add", "[1]", 400, "request body: expected a JSON object"),
            ("POST", "/api/delete", "null", 400, "request body: expected a JSON object"),
            ("POST", "/api/add", #"{"amount":250}"#, 400, "request body: `amount` should be a string"),
            ("POST", "/api/delete", #"{"id":1.5}"#, 400, "request body: `id`: 1.5 is not an event id (a whole number)"),
            ("POST", "/api/delete", #"{"id":"1"}"#, 400, "request body: `id` should be a whole number"),
            // The fact, without the command line's advice (the page has its own Restore).
            ("POST", "/api/restore", #"{"id":1}"#, 400, "event 1 is not deleted (nothing to restore)"),
            ("PUT", "/api/add", #"{"amount":"250ml"}"#, 405, "/api/add takes POST, not PUT"),
            ("GET", "/api/chart/year.svg", nil, 404, "charts: week.svg"),
            // The field as the API names it, not the command line's option.
            ("GET", "/api/stats?days=0", nil, 400, "days must be between 1 and 36600"),
            ("GET", "/api/chart/week.svg?date=0001-01-07", nil, 400, "date: invalid date '0001-01-07': before 1970"),
            ("POST", "/api/remind", #"{"window":"25-3"}"#, 400, "window '25-3': '25' is not a time of day"),
            // Every option in a message is the field (it said `is not before --until`), and a snooze's is `duration`.
            ("GET", "/api/log?since=2026-03-04&until=2026-03-03", nil, 400, "since 2026-03-04"),
            ("POST", "/api/remind/snooze", #"{"duration":"3"}"#, 400, "duration: invalid amount '3': give a unit"),
            ("GET", "/api/log?deleted=yes", nil, 400, "deleted=yes: expected true or false"),
            ("POST", "/api/person/alert", #"{"person":"me","after":"5min"}"#, 400, "after: invalid amount '5min': between 15 min and 24 h, please"),
            ("POST", "/api/person/day-start", #"{"person":"me","hour":"25"}"#, 400, "day start '25' is not an hour from 0 to 23 (e.g. 14 or 14:00), or household"),
            // A field the request does not take is refused, not ignored (a typo lost the note), and so is a query read two ways.
            ("POST", "/api/add", #"{"amount":"250ml","nite":"after the run"}"#, 400,
             "request body: `nite` is not a field of this request (it takes `amount`, `at`, `note`, `key`)"),
            ("GET", "/api/today?person=%ZZ", nil, 400, "query: `person=%ZZ` is not percent-encoded UTF-8"),
            ("GET", "/api/today?person=me&person=Ann", nil, 400, "query: `person` is given more than once"),
            // A name the request does not read is refused with those it does (`?dat=` answered today, and
            // a card's `?date=` today's card, as if read); so is a value with no name.
            ("GET", "/api/today?dat=2026-11-25", nil, 400, "query: `dat` is not a parameter of this request (it takes `date`, `person`)"),
            ("GET", "/api/share/day.svg?date=2026-11-25", nil, 400, "query: `date` is not a parameter of this request (it takes `name`, `person`)"),
            ("GET", "/api/goal?units=oz", nil, 400, "query: `units` is not a parameter of this request (it takes `person`)"),
            ("GET", "/api/log?limit=2&deleted=true&sinse=2026-01-01", nil, 400, "query: `sinse` is not a parameter"),
            ("GET", "/api/today?=x", nil, 400, "query: `=x` has no name before its `=`"),
            ("GET", "/api/events?x=1", nil, 400, "query: `x` is not a parameter of this request (it takes `person`)"),
            ("POST", "/api/carer/ack", #"{"person":"me"}"#, 400, "there is no alert about me to acknowledge"),
            ("POST", "/api/carer/ack", #"{"person":"Nobody"}"#, 404, "Nobody is called 'Nobody' (people: me)"),
            // An id past any integer is no event id (it was "not JSON (The given data was not valid JSON.)": a household's trial).
            ("POST", "/api/edit", #"{"id":99999999999999999999,"amount":"300ml"}"#, 400,
             "request body: not valid JSON at byte 6: the whole number 99999999999999999999 is larger than JSON readers agree on"),
            ("POST", "/api/edit", #"{"id":1,"kind":"refill"}"#, 400, "kind: 'refill' is not sip (drunk) or pour (poured away)"),
            // A typo's few millionths of a drop is not stored as a drink.
            ("POST", "/api/add", #"{"amount":"1e-300ml"}"#, 400, "amount '1e-300ml': less than 1 mL, too little to be a drink"),
            // Bodies are a few hundred bytes: a big one is refused in the page's words (not NIO's error type).
            ("POST", "/api/add", #"{"amount":"250ml","note":""# + String(repeating: "a", count: 70_000) + #""}"#, 413,
             "request body: larger than 64 kB; nothing was done"),
        ]
        for (method, path, body, status, text) in cases {
            let answer = try await server.client.request(method, path, headers: body == nil ? [] : json, body: body)
            #expect(answer.status == status, "\(method) \(path): \(answer.body)")
            #expect(answer.header("Content-Type") == "application/json; charset=utf-8", "\(method) \(path)")
            let object = answer.json as? [String: Any]
            #expect(object?.count == 1 && (object?["error"] as? String)?.contains(text) == true,
                    "\(method) \(path): \(answer.body) is not {\"error\": \"…\(text)…\"}")
            #expect(!answer.body.contains("\"--") && !answer.body.contains(" --"), "\(method) \(path): an option in \(answer.body)")
            #expect(!answer.body.contains("`quench "), "\(method) \(path): a command in \(answer.body)")
        }
    }

    /// HEAD is GET without the body (curl -I, an uptime monitor); a path the server
    /// knows, asked with a method it does not take there, is a 405 with `Allow`.
    @Test func headAndMethodsAPathDoesNotTake() async throws {
        let fixture = try WebFixture(days: 2)
        let server = try await ServerProcess(database: fixture.database)
        defer { _ = server.stop() }
        for path in ["/", "/api/today", "/api/chart/week.svg"] {
            let get = try await server.client.request("GET", path)
            let head = try await server.client.request("HEAD", path)
            #expect(get.status == 200 && head.status == 200, "\(path): GET \(get.status), HEAD \(head.status)")
            #expect(head.bytes.isEmpty, "HEAD \(path) sent a body of \(head.bytes.count) bytes")
            #expect(head.header("Content-Type") == get.header("Content-Type"), "HEAD \(path)")
        }
        // The live stream's HEAD ends at once (its GET never does), and starts no stream.
        let events = try await server.client.request("HEAD", "/api/events")
        #expect(events.status == 200 && events.bytes.isEmpty && events.header("Content-Type") == "text/event-stream", "\(events)")
        let cases: [(String, String, String)] = [
            ("POST", "/api/today", "GET, HEAD"),
            ("DELETE", "/api/chart/week.svg", "GET, HEAD"),
            ("GET", "/api/add", "POST"),
            ("PATCH", "/api/goal", "GET, HEAD, POST"),
        ]
        for (method, path, allowed) in cases {
            let answer = try await server.client.request(method, path)
            #expect(answer.status == 405, "\(method) \(path): \(answer.status) \(answer.body)")
            #expect(answer.header("Allow") == allowed, "\(method) \(path): Allow \(answer.header("Allow") ?? "none")")
            #expect((answer.json as? [String: Any])?["error"] as? String == "\(path) takes \(allowed), not \(method)", "\(answer.body)")
        }
        // An unknown path is still a 404, whatever the method; a write to it still needs its JSON body first.
        for method in ["GET", "POST", "HEAD"] {
            let answer = try await server.client.request(method, "/api/nothing", headers: [("Content-Type", "application/json")], body: method == "POST" ? "{}" : nil)
            #expect(answer.status == 404, "\(method) /api/nothing: \(answer.status)")
        }
        #expect(try await server.client.request("POST", "/api/nothing").status == 415)
    }

    /// Issue 19: the page's door takes what the command line takes, up to the
    /// same limits: a note at its limit is stored and exports and imports back
    /// unchanged; one character more, or a control character, is refused (400), naming the field.
    @Test func aNoteAtItsLimitRoundTripsAndOneMoreIsRefused() async throws {
        let fixture = try WebFixture()
        let server = try await ServerProcess(database: fixture.database)
        defer { _ = server.stop() }
        let added = try await server.client.postJSON("/api/add", ["amount": "250ml", "note": StrangeText.longestNote])
        #expect(added.status == 200, "\(added.body.prefix(300))")
        let empty = try await server.client.postJSON("/api/add", ["amount": "100ml", "note": ""])
        #expect(empty.status == 200 && !empty.body.contains("\"note\""), "an empty note is no note: \(empty.body)")
        for (note, reason) in [(StrangeText.longestNote + "x", "note has 1001 characters, at most 1000"),
                               ("\u{1B}[31mred", "note holds the control character U+001B")] {
            let refused = try await server.client.postJSON("/api/add", ["amount": "250ml", "note": note])
            #expect(refused.status == 400 && (refused.json as? [String: Any])?["error"] as? String == reason, "\(refused.body)")
        }
        for format in ["json", "csv"] {
            let exported = try fixture.quench(["export", "--format", format])
            #expect(exported.contains("👩‍👩‍👧"))
            let file = fixture.folder + "/export.\(format)"
            try exported.write(toFile: file, atomically: true, encoding: .utf8)
            let fresh = fixture.folder + "/fresh-\(format).sqlite"
            let imported = try runQuench(["import", file, "--db", fresh])
            #expect(imported.status == 0, "\(imported.stderr)")
            #expect(try runQuench(["export", "--format", format, "--db", fresh]).stdout == exported, "\(format)")
        }
    }

    @Test func thePageAndItsFilesComeFromTheServerItself() async throws {
        let fixture = try WebFixture()
        let server = try await ServerProcess(database: fixture.database)
        defer { _ = server.stop() }
        let page = try await server.client.get("/")
        #expect(page.status == 200 && page.header("Content-Type") == "text/html; charset=utf-8")
        let policy = try #require(page.header("Content-Security-Policy"))
        #expect(policy.contains("default-src 'none'") && policy.contains("script-src 'self'") && policy.contains("connect-src 'self'"))
        // Every asset the page names is served here: no CDN, no web fonts (the Pi may be offline).
        for match in page.body.matches(of: /(?:src|href)="([^"#]+)"/) {
            let path = String(match.1)
            #expect(path.hasPrefix("/"), "\(path) is not this server's")
            #expect(try await server.client.get(path).status == 200, "\(path)")
        }
        let script = try await server.client.get("/app.js")
        #expect(!script.body.contains("http://") && !script.body.contains("https://"))
        // The first load (page, style, script, icon) under 100 KB even uncompressed: small on a Pi and a phone.
        var firstLoad = page.body.utf8.count
        for path in ["/app.js", "/app.css", "/icon.svg"] { firstLoad += try await server.client.get(path).body.utf8.count }
        #expect(firstLoad < 100_000, "the first load stays small: \(firstLoad) bytes")
        #expect(try await server.client.get("/nothing-here").status == 404)
    }
}

import FoundationEssentials
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOPosix
import QuenchCore
import QuenchHistory
import QuenchStore
import ServiceLifecycle
import Synchronization

/// The page and the JSON API. Each endpoint is a CLI command: it parses the
/// query or body, calls the same `History` function with `json: true`, and
/// sends what it returns, so `/api/today` is `quench today --json` byte for
/// byte (and so on for log, stats, calendar, goal, remind). No logic here.
struct Routes: Sendable {
    let environment: HistoryEnvironment
    let feed: ChangeFeed
    /// The open connections: a live stream is counted there.
    let connections: ConnectionTable
    /// The server's: a store failure the page only names is told here in full.
    let logger: Logger
    /// Whether the database file has been seen since the server started.
    let databaseSeen = DatabaseSeen()
    /// The last PNG cards made.
    let cards = CardCache()
    /// Each path's methods, as registered here (for JSONErrors' 405).
    let table: RouteTable
    /// Where writes run: they may wait on the database's lock (an import, another process's write),
    /// and on the shared pool two of them held every thread, so each page's reads waited too
    /// (10.2 s, behind a lock held 12 s, where they take 3 ms).
    let writePool: NIOThreadPool

    func register(on router: Router<WebRequestContext>) {
        get(router, "/") { request, _ in Responses.asset(Assets.page, type: "text/html; charset=utf-8", for: request) }
        get(router, "/app.js") { request, _ in Responses.asset(Assets.script, type: "text/javascript; charset=utf-8", for: request) }
        get(router, "/app.css") { request, _ in Responses.asset(Assets.style, type: "text/css; charset=utf-8", for: request) }
        get(router, "/icon.svg") { request, _ in Responses.asset(Assets.icon, type: "image/svg+xml", for: request) }
        get(router, "/icon-192.png") { request, _ in Responses.asset(Assets.icon192, type: "image/png", for: request) }
        get(router, "/icon-512.png") { request, _ in Responses.asset(Assets.icon512, type: "image/png", for: request) }
        get(router, "/manifest.webmanifest") { request, _ in Responses.asset(Assets.manifest, type: "application/manifest+json", for: request) }
        // Asked for again at each visit, so a new version of the page reaches the phones.
        get(router, "/sw.js") { request, _ in
            var response = Responses.asset(Assets.serviceWorker, type: "text/javascript; charset=utf-8", for: request)
            response.headers[.cacheControl] = "no-cache"
            return response
        }

        get(router, "/api/today") { request, _ in
            await answer(request, takes: ["date"]) { env, q throws(HistoryError) in try History.today(env, date: q["date"], json: true) }
        }
        get(router, "/api/log") { request, _ in
            await answer(request, takes: ["since", "until", "device", "limit", "before", "deleted"]) { env, q throws(HistoryError) -> Answered in
                var lines = ""
                let last = try History.log(env, since: q["since"], until: q["until"], device: q["device"], limit: try q.logLimit(),
                                           before: try q.int("before").map(Int64.init), includeDeleted: try q.flag("deleted"),
                                           csv: false, json: true, to: &lines)
                if lines.hasSuffix("\n") { lines.removeLast() }
                return Answered(bytes: Array(lines.utf8), next: last.map { q.nextPage(of: request.uri, before: $0) })
            }
        }
        get(router, "/api/stats") { request, _ in
            await answer(request, takes: ["days"]) { env, q throws(HistoryError) in try History.stats(env, days: try q.int("days") ?? 7, json: true) }
        }
        get(router, "/api/calendar") { request, _ in
            await answer(request, takes: ["month"]) { env, q throws(HistoryError) in try History.calendar(env, month: q["month"], json: true) }
        }
        get(router, "/api/goal") { request, _ in
            await answer(request) { env, _ throws(HistoryError) in try History.showGoal(env, json: true) }
        }
        get(router, "/api/remind") { request, _ in
            await answer(request) { env, _ throws(HistoryError) in try History.remind(env, json: true) }
        }
        get(router, "/api/state") { request, _ in
            await answer(request) { env, _ throws(HistoryError) in History.json(try History.personState(env)) }
        }

        // Everyone at a glance (the carer's view): each person's state, as MQTT publishes it.
        get(router, "/api/household") { request, _ in
            await answer(request) { env, _ throws(HistoryError) in History.json(try History.personStates(env)) }
        }
        // The carer's view: everyone, the one longest without a drink in their waking hours first.
        get(router, "/api/carer") { request, _ in
            await answer(request) { env, _ throws(HistoryError) in try History.carer(env, json: true) }
        }
        post(router, "/api/person/day-start") { request, context in
            let body = try await request.json(as: DayStartRequest.self, context: context)
            return await answer(request, writes: true) { env, _ throws(HistoryError) in
                try History.setPersonDayStart(env, name: body.person, hour: body.hour, json: true)
            }
        }
        post(router, "/api/person/alert") { request, context in
            let body = try await request.json(as: AlertRequest.self, context: context)
            return await answer(request, writes: true) { env, _ throws(HistoryError) in
                try History.setPersonAlert(env, name: body.person, after: body.after, json: true)
            }
        }
        // A carer has seen the alert about someone (`quench carer ack`).
        post(router, "/api/carer/ack") { request, context in
            let body = try await request.json(as: PersonRequest.self, context: context)
            return await answer(request, writes: true) { env, _ throws(HistoryError) in
                try History.acknowledgeCarerAlert(env, name: body.person, json: true)
            }
        }
        get(router, "/api/people") { request, _ in
            await answer(request) { env, _ throws(HistoryError) in try History.people(env, json: true) }
        }

        post(router, "/api/add") { request, context in
            let body = try await request.json(as: AddRequest.self, context: context)
            return await answer(request, writes: true) { env, _ throws(HistoryError) in
                try History.add(env, amount: body.amount, at: body.at, note: body.note, json: true, identity: try body.identity())
            }
        }
        post(router, "/api/edit") { request, context in
            let body = try await request.json(as: EditRequest.self, context: context)
            return await answer(request, writes: true) { env, _ throws(HistoryError) in
                try History.edit(env, id: body.id, amount: body.amount, at: body.at, note: body.note, to: body.to, kind: body.kind, json: true)
            }
        }
        post(router, "/api/delete") { request, context in
            let body = try await request.json(as: IDRequest.self, context: context)
            return await answer(request, writes: true) { env, _ throws(HistoryError) in try History.delete(env, id: body.id, json: true) }
        }
        post(router, "/api/restore") { request, context in
            let body = try await request.json(as: IDRequest.self, context: context)
            return await answer(request, writes: true) { env, _ throws(HistoryError) in try History.restore(env, id: body.id, json: true) }
        }
        post(router, "/api/undo") { request, context in
            try await request.noArguments(context: context)
            return await answer(request, writes: true) { env, _ throws(HistoryError) in try History.undo(env, json: true) }
        }

        // The page's settings: `quench goal set`, `goal recommend`, `remind set`, `remind snooze`.
        post(router, "/api/goal") { request, context in
            let body = try await request.json(as: GoalRequest.self, context: context)
            return await answer(request, writes: true) { env, _ throws(HistoryError) in try History.setGoal(env, amount: body.goal, from: nil, json: true) }
        }
        get(router, "/api/goal/recommend") { request, _ in
            await answer(request, takes: ["weight", "exercise"]) { env, q throws(HistoryError) in
                guard let weight = q["weight"] else { throw .invalidArgument("weight: give the body weight, e.g. weight=70kg") }
                return try History.recommendGoal(env, weight: weight, exercise: q["exercise"], save: false, json: true)
            }
        }
        post(router, "/api/remind") { request, context in
            let body = try await request.json(as: ReminderRequest.self, context: context)
            return await answer(request, writes: true) { env, _ throws(HistoryError) in
                try History.setReminders(env, mode: body.mode, window: body.window, after: body.after, every: body.every, slack: nil, json: true)
            }
        }
        post(router, "/api/remind/snooze") { request, context in
            let body = try await request.json(as: SnoozeRequest.self, context: context)
            return await answer(request, writes: true) { env, _ throws(HistoryError) in try History.snoozeReminders(env, duration: body.duration, json: true) }
        }

        // The charts `quench chart` draws, inlined by the page (the same renderer).
        get(router, "/api/chart/:file") { request, context in
            guard let kind = Self.name(context.parameters.get("file"), ext: ".svg").flatMap(History.ChartKind.init(rawValue:)) else {
                return Responses.error(.notFound, "charts: week.svg, 30days.svg, month.svg, day.svg")
            }
            return await answer(request, takes: ["date", "width"], type: "image/svg+xml") { env, q throws(HistoryError) in
                try History.chart(env, kind: kind, date: q["date"], out: "-", width: try q.int("width"))
            }
        }
        // The card `quench share` makes: the page's "share" links.
        get(router, "/api/share/:file") { request, context in
            let file = context.parameters.get("file") ?? ""
            guard let period = (Self.name(file, ext: ".png") ?? Self.name(file, ext: ".svg")).flatMap(History.SharePeriod.init(rawValue:)) else {
                return Responses.error(.notFound, "cards: day.png, week.png, day.svg, week.svg")
            }
            let png = file.hasSuffix(".png")
            // A PNG is rasterized by a child process (about 45 ms); the same card again, with nothing
            // changed in the history and within the minute, is the one made (a second tap, a share
            // after a look).
            let key = "\(request.uri)|\(feed.version)|\(Int(Timestamp.wallClockNow.secondsSince1970 / 60))"
            return await answer(request, takes: ["name"], type: png ? "image/png" : "image/svg+xml") { env, q throws(HistoryError) -> [UInt8] in
                if png, let made = cards.made(key) { return made }
                let bytes = try History.shareCardFile(env, period: period, name: q["name"], png: png)
                if png { cards.keep(bytes, as: key) }
                return bytes
            }
        }

        get(router, "/api/events") { request, context in
            // HEAD (answered through this handler) starts no stream: no subscription whose body never runs.
            guard request.method != .head else { return Self.liveEventsResponse(body: ResponseBody()) }
            // Its query is read as every request's (`?x=1` was taken in silence); the stream is everyone's changes.
            let query = Query(request.uri)
            if let problem = query.problem ?? query.unknownName(takes: []) { return Responses.error(.badRequest, problem) }
            guard connections.startStream(context.channel) else {
                var refused = Responses.error(.serviceUnavailable, "too many live pages are open (at most \(connections.streamCapacity)); this one is not live")
                refused.headers[.connection] = "close"
                return refused
            }
            return liveEvents()
        }
    }

    private func get<Output: ResponseGenerator>(_ router: Router<WebRequestContext>, _ path: String,
                                                _ handler: @escaping @Sendable (Request, WebRequestContext) async throws -> Output) {
        table.add(.get, path)
        router.get(RouterPath(path), use: handler)
    }

    private func post<Output: ResponseGenerator>(_ router: Router<WebRequestContext>, _ path: String,
                                                 _ handler: @escaping @Sendable (Request, WebRequestContext) async throws -> Output) {
        table.add(.post, path)
        router.post(RouterPath(path), use: handler)
    }

    /// Runs a history call off the event loop (SQLite blocks) with this
    /// request's clock, and turns its error into a status with the message.
    /// `takes`: the query's names this request reads besides `person` (every request's); any other is refused.
    func answer(_ request: Request, writes: Bool = false, takes: [String] = [], type: String? = nil,
                _ body: @escaping @Sendable (HistoryEnvironment, Query) throws(HistoryError) -> String) async -> Response {
        await answer(request, writes: writes, takes: takes, type: type) { (env, query) throws(HistoryError) -> [UInt8] in Array(try body(env, query).utf8) }
    }

    func answer(_ request: Request, writes: Bool = false, takes: [String] = [], type: String? = nil,
                _ body: @escaping @Sendable (HistoryEnvironment, Query) throws(HistoryError) -> [UInt8]) async -> Response {
        await answer(request, writes: writes, takes: takes, type: type) { (env, query) throws(HistoryError) -> Answered in Answered(bytes: try body(env, query)) }
    }

    func answer(_ request: Request, writes: Bool = false, takes: [String] = [], type: String? = nil,
                _ body: @escaping @Sendable (HistoryEnvironment, Query) throws(HistoryError) -> Answered) async -> Response {
        let query = Query(request.uri)
        if let problem = query.problem ?? query.unknownName(takes: takes) { return Responses.error(.badRequest, problem) }
        // `?person=` is `--person`: whose history (needed once several people share it).
        var now = environment
        now.now = .wallClockNow
        if let person = query["person"] { now.person = person }
        // A database deleted under the running server: said, and no write starts an empty one.
        if FileManager.default.fileExists(atPath: environment.databasePath) {
            databaseSeen.flag.store(true, ordering: .relaxed)
        } else if databaseSeen.flag.load(ordering: .relaxed) {
            logger.error("the database file is gone", metadata: ["path": "\(environment.databasePath.shownSafely())"])
            return Responses.error(.serviceUnavailable, "The history file has gone missing since the server started"
                                   + (writes ? ": nothing was saved" : "") + ". Put it back from a backup, or restart the server to begin a new one.")
        }
        now.createsDatabase = !databaseSeen.flag.load(ordering: .relaxed)
        let env = now
        do {
            let answered = try await (writes ? writePool : NIOThreadPool.singleton).runIfActive { () throws -> Answered in try body(env, query) }
            if writes { feed.changed() }
            let gzip = Gzip.accepted(by: request)
            var response = type.map { Responses.data(answered.bytes, type: $0, gzip: gzip) } ?? Responses.json(answered.bytes, gzip: gzip)
            // RFC 8288: where the rest of a cut answer is.
            if let next = answered.next { response.headers[Responses.link] = "<\(next)>; rel=\"next\"" }
            return response
        } catch let error as HistoryError {
            let status = Responses.status(for: error)
            if status.code >= 500 {
                logger.error("request failed", metadata: ["path": "\(request.uri.path.shownSafely())", "error": "\(error)"])
            }
            return Responses.error(status, Responses.message(for: error))
        } catch {
            logger.error("request failed", metadata: ["path": "\(request.uri.path.shownSafely())", "error": "\(error)"])
            return Responses.error(.internalServerError, "the server could not answer (its log says why)")
        }
    }

    /// `text/event-stream`: a `change` event whenever the history changes, so
    /// the page refetches; a comment now and then so a closed phone is noticed.
    /// `week.svg` → `week`.
    static func name(_ file: String?, ext: String) -> String? {
        guard let file, file.hasSuffix(ext) else { return nil }
        return String(file.dropLast(ext.count))
    }

    func liveEvents() -> Response {
        let notices = feed.subscribe()
        let body = ResponseBody { writer in
            // The first frame at once: the page knows it is live.
            try await writer.write(ByteBuffer(string: "retry: 2000\n" + ChangeFeed.frame(.heartbeat)))
            // On SIGTERM the server waits for its responses to end: this one would never.
            try await withGracefulShutdownHandler {
                for await notice in notices {
                    try await writer.write(ByteBuffer(string: ChangeFeed.frame(notice)))
                }
            } onGracefulShutdown: {
                feed.finish()
            }
            try await writer.finish(nil)
        }
        return Self.liveEventsResponse(body: body)
    }

    static func liveEventsResponse(body: ResponseBody) -> Response {
        Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-store"], body: body)
    }
}

/// `quench edit ID [--amount] [--at] [--note] [--to]`.
struct EditRequest: Decodable, Sendable {
    var id: Int64
    var amount: String?
    var at: String?
    var note: String?
    /// Who really drank it: `--to`.
    var to: String?
    /// `sip` or `pour`: `--kind`.
    var kind: String?
}

/// `quench goal set GOAL`.
struct GoalRequest: Decodable, Sendable {
    var goal: String
}

/// `quench remind set`: each field as its option, absent ones unchanged.
struct ReminderRequest: Decodable, Sendable {
    var mode: String?
    var window: String?
    var after: String?
    var every: String?
}

/// `quench carer ack NAME`.
struct PersonRequest: Decodable, Sendable {
    var person: String
}

/// `quench person alert NAME AFTER` (`off`: not watched).
struct AlertRequest: Decodable, Sendable {
    var person: String
    var after: String
}

/// `quench person day-start NAME HOUR|household`.
struct DayStartRequest: Decodable, Sendable {
    var person: String
    var hour: String
}

/// `quench remind snooze DURATION` (`off` ends it).
struct SnoozeRequest: Decodable, Sendable {
    var duration: String
}

/// The last few PNG cards, by request, history version and minute: at most four (a person's day
/// and week, twice), 64 kB each.
final class CardCache: Sendable {
    private let entries = Mutex<[(key: String, bytes: [UInt8])]>([])

    func made(_ key: String) -> [UInt8]? { entries.withLock { list in list.first { $0.key == key }?.bytes } }

    func keep(_ bytes: [UInt8], as key: String) {
        entries.withLock { list in
            list.removeAll { $0.key == key }
            list.append((key, bytes))
            if list.count > 4 { list.removeFirst(list.count - 4) }
        }
    }
}

/// Set once the database file has been seen; never cleared.
final class DatabaseSeen: Sendable {
    let flag = Atomic<Bool>(false)
}

struct AddRequest: Decodable, Sendable {
    var amount: String
    var at: String?
    var note: String?
    /// The page's key for this add: the same key again (a retry, a second tap) stores nothing more.
    var key: String?

    /// The event's identity for `key` (`web|KEY`), after checking it is a key and not anything else.
    func identity() throws(HistoryError) -> String? {
        guard let key else { return nil }
        guard (8...64).contains(key.utf8.count), key.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || (48...57).contains($0) || (97...122).contains($0) })
        else { throw .invalidArgument("key: 8 to 64 of a-z, 0-9 and -") }
        return "web|" + key
    }
}

struct IDRequest: Decodable, Sendable {
    var id: Int64

    enum CodingKeys: String, CodingKey { case id }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let id = try? container.decode(Int64.self, forKey: .id) {
            self.id = id
            return
        }
        // FoundationEssentials calls `{"id":1.5}` "not valid JSON": said here instead.
        if let number = try? container.decode(Double.self, forKey: .id) {
            throw DecodingError.dataCorruptedError(forKey: .id, in: container, debugDescription: "\(number) is not an event id (a whole number)")
        }
        id = try container.decode(Int64.self, forKey: .id)  // missing, null, a string: said as such
    }
}

/// A request's query, as the history functions take their options.
struct Query: Sendable {
    let values: [String: String]
    /// Why the query cannot be read as one value a name: a stray `%` (`person=%ZZ`
    /// was no person at all), or a name given twice (the last one won).
    let problem: String?

    /// As a form encodes it (WHATWG application/x-www-form-urlencoded): `+` is a space, then
    /// percent-decoding; `URLSearchParams` (the page) writes "Ann Lee" as `Ann+Lee`.
    init(_ uri: URI) {
        var values: [String: String] = [:]
        var problem: String?
        for pair in (uri.query ?? "").split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let key = Self.decoded(parts[0]), let value = parts.count > 1 ? Self.decoded(parts[1]) : "" else {
                problem = problem ?? "query: `\(String(pair.prefix(60)).shownSafely())` is not percent-encoded UTF-8"
                continue
            }
            guard !key.isEmpty else {
                problem = problem ?? "query: `\(String(pair.prefix(60)).shownSafely())` has no name before its `=`"
                continue
            }
            if values[key] != nil { problem = problem ?? "query: `\(key.shownSafely(limit: 40))` is given more than once" }
            values[key] = value
        }
        self.values = values
        self.problem = problem
    }

    /// nil for a stray `%` or bytes that are not UTF-8.
    static func decoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var utf8 = text.utf8[...]
        while let byte = utf8.popFirst() {
            switch byte {
            case UInt8(ascii: "+"): bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard utf8.count >= 2, let high = hexValue(utf8.removeFirst()), let low = hexValue(utf8.removeFirst()) else { return nil }
                bytes.append(high << 4 | low)
            default: bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 48...57: byte - 48
        case 65...70: byte - 55
        case 97...102: byte - 87
        default: nil
        }
    }

    subscript(_ key: String) -> String? { values[key].flatMap { $0.isEmpty ? nil : $0 } }

    /// A name the request does not read, said with those it does: `?dat=2026-11-25` answered
    /// today, and a share card's `?date=` today's card, as if it had been read.
    func unknownName(takes: [String]) -> String? {
        let names = takes + ["person"]
        guard let stray = values.keys.sorted().first(where: { !names.contains($0) }) else { return nil }
        return "query: `\(stray.shownSafely(limit: 40))` is not a parameter of this request (it takes "
            + names.map { "`\($0)`" }.joined(separator: ", ") + ")"
    }

    func int(_ key: String) throws(HistoryError) -> Int? {
        guard let text = self[key] else { return nil }
        guard let value = Int(text) else { throw .invalidArgument("\(key)=\(text.prefix(40)): not a whole number") }
        return value
    }

    /// The most lines `/api/log` answers with: a history's every line is built in memory before it is sent,
    /// and ten years of 50 drinks a day (33 MB) asked for by 32 connections that never read took the server
    /// past 1 GB (a LAN trial). The newest come first; a cut answer's `Link` header has the next page.
    static let mostLogLines = 5_000

    /// The same request for the page after event `before`: its query as sent, `before` replaced
    /// (already checked to decode, so each pair is kept as the client encoded it).
    func nextPage(of uri: URI, before: Int64) -> String {
        uri.path + "?" + (Self.pairs(of: uri.query, without: "before") + ["before=\(before)"]).joined(separator: "&")
    }

    /// The `name=value` pairs of a query as sent, but those named `name` however the name is encoded.
    static func pairs(of query: String?, without name: String) -> [Substring] {
        (query ?? "").split(separator: "&").filter { pair in
            decoded(pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)[0]) != name
        }
    }

    /// `limit`, 1 to `mostLogLines`; that when not given.
    func logLimit() throws(HistoryError) -> Int {
        guard let limit = try int("limit") else { return Self.mostLogLines }
        guard (1...Self.mostLogLines).contains(limit) else {
            throw .invalidArgument("limit=\(limit): 1 to \(Self.mostLogLines) lines (older ones: the answer's Link header, before=ID)")
        }
        return limit
    }

    /// `true` or `false` (`1`, `0`); absent is false. Anything else is said, not taken as false.
    func flag(_ key: String) throws(HistoryError) -> Bool {
        guard let text = self[key] else { return false }
        switch text.lowercased() {
        case "true", "1": return true
        case "false", "0": return false
        default: throw .invalidArgument("\(key)=\(String(text.prefix(40)).shownSafely()): expected true or false")
        }
    }
}

/// What a handler answers: the body and, for one page of a longer answer, the next page's path and query.
struct Answered: Sendable {
    var bytes: [UInt8]
    var next: String?
}

enum Responses {
    static let link = HTTPField.Name("Link")!

    static func json(_ bytes: [UInt8], gzip: Bool = false) -> Response {
        data(bytes + [UInt8(ascii: "\n")], type: "application/json; charset=utf-8", gzip: gzip)
    }

    /// Health data (the API) is never cached. Sent gzipped when the client takes it and it is worth it.
    static func data(_ bytes: [UInt8], type: String, gzip: Bool = false) -> Response {
        var headers: HTTPFields = [.contentType: type, .cacheControl: "no-store"]
        let content = body(bytes, gzip && Gzip.isWorthwhile(bytes, type: type) ? Gzip.compress(bytes) : nil, &headers)
        return Response(status: .ok, headers: headers, body: content)
    }

    static func error(_ status: HTTPResponse.Status, _ message: String) -> Response {
        Response(status: status, headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
                 body: ResponseBody(byteBuffer: ByteBuffer(string: History.json(["error": message]) + "\n")))
    }

    /// The page's files never change within a build: the browser keeps them five minutes.
    static func asset(_ file: PageFile, type: String, for request: Request) -> Response {
        var headers: HTTPFields = [.contentType: type, .cacheControl: "private, max-age=300",
                                   HTTPField.Name("X-Content-Type-Options")!: "nosniff",
                                   HTTPField.Name("Content-Security-Policy")!: Assets.contentSecurityPolicy]
        let content = body(file.plain, Gzip.accepted(by: request) ? file.gzipped : nil, &headers)
        return Response(status: .ok, headers: headers, body: content)
    }

    /// The body, gzipped when `gzipped` is given: said in Content-Encoding, and `Vary` tells a cache
    /// that another client may have had it plain.
    private static func body(_ plain: [UInt8], _ gzipped: [UInt8]?, _ headers: inout HTTPFields) -> ResponseBody {
        headers[.vary] = "Accept-Encoding"
        guard let gzipped else { return ResponseBody(byteBuffer: ByteBuffer(bytes: plain)) }
        headers[.contentEncoding] = "gzip"
        return ResponseBody(byteBuffer: ByteBuffer(bytes: gzipped))
    }

    /// An error in the page's words: what is true and whether anything was
    /// saved, never SQLite's text or codes, a command or an option (the server's
    /// log has the whole error). A value refused says the store's own words,
    /// which name the field.
    /// `--window '25-3': …` → `window '25-3': …`: an option in a message (at its start, or after a
    /// space, a bracket or a quote) is the field the API names without its dashes.
    static func fieldName(_ text: String) -> String {
        let characters = Array(text)
        var out = ""
        var i = 0
        while i < characters.count {
            let boundary = i == 0 || " (`'\"".contains(characters[i - 1])
            if boundary, i + 2 < characters.count, characters[i] == "-", characters[i + 1] == "-", ("a"..."z").contains(characters[i + 2]) {
                i += 2
                continue
            }
            out.append(characters[i])
            i += 1
        }
        return out
    }

    static func message(for error: HistoryError) -> String {
        switch error {
        // The field as the page and the API name it: `at`, not the command line's `--at`.
        case .inOption(let option, let inner) where !isStore(inner):
            let said = message(for: inner)
            return "\(fieldName(option)): \(said.prefix(1).lowercased() + said.dropFirst())"
        case .inOption(_, let inner): return message(for: inner)
        case .unknownPerson(let name, let people):
            return "Nobody is called '\(name.shownSafely(limit: 40))' (people: \(people.map { $0.shownSafely(limit: 40) }.joined(separator: ", ")))"
        case .personNeeded(let people):
            return "Several people share this history (\(people.map { $0.shownSafely(limit: 40) }.joined(separator: ", "))): choose whose, "
                + "with `person=NAME` in the address"
        case .store(let e): return message(for: e)
        default: return fieldName(error.description)
        }
    }

    static func message(for error: StoreError) -> String {
        switch error.code {
        case .notFound: "Nothing is recorded yet"
        case .noSuchEvent: error.eventID.map { "There is no drink \($0)" } ?? "There is no such drink"
        case .busy: "The history is busy; try again in a moment"
        case .readOnly: "The history cannot be written on the server (it is read-only); nothing was saved"
        case .diskFull: "The server's disk is full; nothing was saved"
        case .invalidValue: error.message
        default: "The history cannot be read; the server's log says why"
        }
    }

    private static func isStore(_ error: HistoryError) -> Bool {
        if case .store = error { return true }
        return false
    }

    static func status(for error: HistoryError) -> HTTPResponse.Status {
        if case let .inOption(_, inner) = error { return status(for: inner) }
        if case .unknownPerson = error { return .notFound }
        guard case let .store(storeError) = error else { return .badRequest }
        switch storeError.code {
        case .noSuchEvent, .notFound: return .notFound
        case .invalidValue: return .badRequest
        case .busy: return .serviceUnavailable
        default: return .internalServerError
        }
    }
}

import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore
import NIOPosix
import QuenchCore
import QuenchHistory
import QuenchStore

/// The page and the JSON API. Each endpoint is a CLI command: it parses the
/// query or body, calls the same `History` function with `json: true`, and
/// sends what it returns, so `/api/today` is `quench today --json` byte for
/// byte (and so on for log, stats, calendar, goal, remind). No logic here.
struct Routes: Sendable {
    let environment: HistoryEnvironment
    let feed: ChangeFeed

    func register(on router: Router<BasicRequestContext>) {
        router.get("/") { _, _ in Responses.asset(Assets.page, type: "text/html; charset=utf-8") }
        router.get("/app.js") { _, _ in Responses.asset(Assets.script, type: "text/javascript; charset=utf-8") }
        router.get("/app.css") { _, _ in Responses.asset(Assets.style, type: "text/css; charset=utf-8") }
        router.get("/icon.svg") { _, _ in Responses.asset(Assets.icon, type: "image/svg+xml") }

        router.get("/api/today") { request, _ in
            await answer(request) { env, _ throws(HistoryError) in try History.today(env, json: true) }
        }
        router.get("/api/log") { request, _ in
            await answer(request) { env, q throws(HistoryError) in
                try History.log(env, since: q["since"], until: q["until"], device: q["device"], limit: try q.int("limit"),
                                includeDeleted: q["deleted"] == "true", csv: false, json: true)
            }
        }
        router.get("/api/stats") { request, _ in
            await answer(request) { env, q throws(HistoryError) in try History.stats(env, days: try q.int("days") ?? 7, json: true) }
        }
        router.get("/api/calendar") { request, _ in
            await answer(request) { env, q throws(HistoryError) in try History.calendar(env, month: q["month"], json: true) }
        }
        router.get("/api/goal") { request, _ in
            await answer(request) { env, _ throws(HistoryError) in try History.showGoal(env, json: true) }
        }
        router.get("/api/remind") { request, _ in
            await answer(request) { env, _ throws(HistoryError) in try History.remind(env, json: true) }
        }
        router.get("/api/state") { request, _ in
            await answer(request) { env, _ throws(HistoryError) in History.json(try History.personState(env)) }
        }

        router.post("/api/add") { request, context in
            let body = try await request.decode(as: AddRequest.self, context: context)
            return await answer(request, writes: true) { env, _ throws(HistoryError) in
                try History.add(env, amount: body.amount, at: body.at, note: body.note, json: true)
            }
        }
        router.post("/api/delete") { request, context in
            let body = try await request.decode(as: IDRequest.self, context: context)
            return await answer(request, writes: true) { env, _ throws(HistoryError) in try History.delete(env, id: body.id, json: true) }
        }
        router.post("/api/restore") { request, context in
            let body = try await request.decode(as: IDRequest.self, context: context)
            return await answer(request, writes: true) { env, _ throws(HistoryError) in try History.restore(env, id: body.id, json: true) }
        }
        router.post("/api/undo") { request, _ in
            await answer(request, writes: true) { env, _ throws(HistoryError) in try History.undo(env, json: true) }
        }

        router.get("/api/events") { _, _ in liveEvents() }
    }

    /// Runs a history call off the event loop (SQLite blocks) with this
    /// request's clock, and turns its error into a status with the message.
    func answer(_ request: Request, writes: Bool = false,
                _ body: @escaping @Sendable (HistoryEnvironment, Query) throws(HistoryError) -> String) async -> Response {
        var now = environment
        now.now = .wallClockNow
        let env = now
        let query = Query(request.uri)
        do {
            let text = try await NIOThreadPool.singleton.runIfActive { () throws -> String in try body(env, query) }
            if writes { feed.changed() }
            return Responses.json(text)
        } catch let error as HistoryError {
            return Responses.error(Responses.status(for: error), error.description)
        } catch {
            return Responses.error(.internalServerError, "\(error)")
        }
    }

    /// `text/event-stream`: a `change` event whenever the history changes, so
    /// the page refetches; a comment now and then so a closed phone is noticed.
    func liveEvents() -> Response {
        let notices = feed.subscribe()
        let body = ResponseBody { writer in
            // The first frame at once: the page knows it is live.
            try await writer.write(ByteBuffer(string: "retry: 2000\n" + ChangeFeed.frame(.heartbeat)))
            for await notice in notices {
                try await writer.write(ByteBuffer(string: ChangeFeed.frame(notice)))
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-store"], body: body)
    }
}

struct AddRequest: Decodable, Sendable {
    var amount: String
    var at: String?
    var note: String?
}

struct IDRequest: Decodable, Sendable {
    var id: Int64
}

/// A request's query, as the history functions take their options.
struct Query: Sendable {
    let values: [String: String]

    init(_ uri: URI) {
        var values: [String: String] = [:]
        for (key, value) in uri.queryParameters { values[String(key)] = String(value) }
        self.values = values
    }

    subscript(_ key: String) -> String? { values[key].flatMap { $0.isEmpty ? nil : $0 } }

    func int(_ key: String) throws(HistoryError) -> Int? {
        guard let text = self[key] else { return nil }
        guard let value = Int(text) else { throw .invalidArgument("\(key)=\(text.prefix(40)): not a whole number") }
        return value
    }
}

enum Responses {
    static func json(_ text: String) -> Response {
        Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
                 body: ResponseBody(byteBuffer: ByteBuffer(string: text + "\n")))
    }

    static func error(_ status: HTTPResponse.Status, _ message: String) -> Response {
        Response(status: status, headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
                 body: ResponseBody(byteBuffer: ByteBuffer(string: History.json(["error": message]) + "\n")))
    }

    /// The page's files never change within a build: the browser keeps them a
    /// day; health data (the API) is never cached.
    static func asset(_ text: String, type: String) -> Response {
        Response(status: .ok, headers: [.contentType: type, .cacheControl: "private, max-age=300",
                                        HTTPField.Name("X-Content-Type-Options")!: "nosniff",
                                        HTTPField.Name("Content-Security-Policy")!: Assets.contentSecurityPolicy],
                 body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    static func status(for error: HistoryError) -> HTTPResponse.Status {
        guard case let .store(storeError) = error else { return .badRequest }
        switch storeError.code {
        case .noSuchEvent, .notFound: return .notFound
        case .invalidValue: return .badRequest
        case .busy: return .serviceUnavailable
        default: return .internalServerError
        }
    }
}

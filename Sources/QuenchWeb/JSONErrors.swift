import FoundationEssentials
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import QuenchCore
import Synchronization

/// Every error the server answers has the API's one shape, `{"error":"…"}`.
/// Hummingbird's own would otherwise reach the client as `{"error":{"message":…}}`
/// (a body that is not the JSON asked for) or with no body at all (no such
/// path, a body too large, anything else thrown).
struct JSONErrors<Context: RequestContext>: RouterMiddleware {
    /// The paths the server answers and their methods: a known path asked with
    /// another method is a 405 that names them (RFC 9110 §15.5.6), not a 404.
    let routes: RouteTable

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // CONNECT asks for a tunnel, and the HTTP parser reads nothing more of the connection after one: its
        // answer had no length, so the client waited for the rest until the idle timeout (a LAN trial). Closed.
        if request.method == .connect {
            var response = Responses.error(.methodNotAllowed, "this server opens no tunnels (CONNECT)")
            response.headers[.connection] = "close"
            return response
        }
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound && error.body == nil {
            // The router's own 404: no path matched, or no method of one that did.
            let allowed = routes.methods(for: request.uri.path)
            guard !allowed.isEmpty else { return Responses.error(.notFound, Self.message(.notFound, request)) }
            let names = allowed.map(\.rawValue).joined(separator: ", ")
            var response = Responses.error(.methodNotAllowed, "\(request.uri.path.shownSafely()) takes \(names), not \(request.method.rawValue.shownSafely())")
            response.headers[.allow] = names
            return response
        } catch let error as HTTPError {
            var response = Responses.error(error.status, error.body ?? Self.message(error.status, request))
            response.headers.append(contentsOf: error.headers)
            return response
        } catch let error as any HTTPResponseError {
            return Responses.error(error.status, Self.message(error.status, request))
        } catch {
            context.logger.error("request failed", metadata: ["path": "\(request.uri.path.shownSafely())", "error": "\(error)"])
            return Responses.error(.internalServerError, "the server could not answer (its log says why)")
        }
    }

    /// What a status without a message of its own says.
    static func message(_ status: HTTPResponse.Status, _ request: Request) -> String {
        status == .notFound ? "nothing at \(request.uri.path.shownSafely())" : status.reasonPhrase.lowercased()
    }
}

extension Request {
    /// The JSON body as `T`, or a 400 that says what is wrong with it and which
    /// field (Hummingbird's own decoding called `{"id":"1"}` "not valid JSON").
    func json<T: Decodable>(as type: T.Type, context: some RequestContext) async throws -> T {
        let buffer = try await wholeBody(context: context)
        // Strict RFC 8259 first: Foundation's decoder takes a trailing comma and the last of a key given twice.
        if let problem = JSONSyntax.firstProblem(in: Array(buffer.readableBytesView)) {
            throw HTTPError(.badRequest, message: "request body: not valid JSON at byte \(problem.byteOffset): \(problem.reason)")
        }
        let data = Data(buffer.readableBytesView)
        let value: T
        let fields: [String]
        do {
            value = try JSONDecoder().decode(T.self, from: data)
            fields = try JSONDecoder().decode(ObjectFields.self, from: data).names
        } catch let error as DecodingError {
            throw HTTPError(.badRequest, message: "request body: " + Self.describe(error))
        }
        // A field the request does not take is refused, not ignored: `"not"` for
        // `"note"` lost the note with a 200. A request's stored properties are its fields.
        let known = Mirror(reflecting: value).children.compactMap(\.label)
        if let unknown = fields.first(where: { !known.contains($0) }) {
            throw HTTPError(.badRequest, message: "request body: `\(unknown.shownSafely(limit: 40))` is not a field of this request (it takes "
                + known.map { "`\($0)`" }.joined(separator: ", ") + ")")
        }
        return value
    }

    /// A body that must be empty or `{}` (a write that takes no arguments), read
    /// whole first: nothing acts on a request whose body turns out bad.
    func noArguments(context: some RequestContext) async throws {
        let buffer = try await wholeBody(context: context)
        let text = String(decoding: buffer.readableBytesView, as: UTF8.self).filter { !" \t\r\n".contains($0) }
        guard text.isEmpty || text == "{}" else {
            throw HTTPError(.badRequest, message: "request body: this takes none (or `{}`)")
        }
    }

    /// The whole body, or a 400 when it is not valid HTTP (a bad chunk size, an
    /// unknown transfer coding: the parser's error) or did not arrive whole.
    private func wholeBody(context: some RequestContext) async throws -> ByteBuffer {
        var request = self
        // Every body the API takes is a few hundred bytes; said in the page's words, not NIO's type.
        let tooLarge = "request body: larger than \(context.maxUploadSize / 1024) kB; nothing was done"
        // A length declared too large is refused at once, and the connection closed: it waited for the
        // body and answered 408 after the body timeout (15 s) for a size it could have judged.
        if let declared = headers[.contentLength], declared.utf8.allSatisfy({ (48...57).contains($0) }),
           declared.count > 9 || (Int(declared) ?? 0) > context.maxUploadSize {
            throw HTTPError(.contentTooLarge, headers: [.connection: "close"], message: tooLarge)
        }
        do {
            return try await request.collectBody(upTo: context.maxUploadSize)
        } catch let error as HTTPError {
            throw error
        } catch is NIOTooManyBytesError {
            throw HTTPError(.contentTooLarge, message: tooLarge)
        } catch {
            throw HTTPError(.badRequest, message: "request body: \(ParserWords.describe(error))")
        }
    }

    /// The names of a JSON object's fields, in no particular order.
    private struct ObjectFields: Decodable {
        struct Name: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }
        let names: [String]
        init(from decoder: any Decoder) throws {
            names = try decoder.container(keyedBy: Name.self).allKeys.map(\.stringValue)
        }
    }

    static func describe(_ error: DecodingError) -> String {
        func field(_ path: [any CodingKey]) -> String { "`" + path.map(\.stringValue).joined(separator: ".") + "`" }
        switch error {
        case let .keyNotFound(key, context): return "\(field(context.codingPath + [key])) is missing"
        case let .valueNotFound(_, context): return context.codingPath.isEmpty ? "expected a JSON object" : "\(field(context.codingPath)) is null"
        case let .typeMismatch(type, context):
            let expected = type == String.self ? "a string" : type == Int64.self || type == Int.self ? "a whole number" : "\(type)"
            return context.codingPath.isEmpty ? "expected a JSON object" : "\(field(context.codingPath)) should be \(expected)"
        case let .dataCorrupted(context):
            return context.codingPath.isEmpty ? "not JSON (\(context.debugDescription))" : "\(field(context.codingPath)): \(context.debugDescription)"
        @unknown default: return "\(error)"
        }
    }
}

/// Each path the server answers and the methods it takes there, as the routes
/// register them; `:name` segments match any one segment. HEAD goes with GET
/// (the router answers it from GET's response).
final class RouteTable: Sendable {
    private let routes = Mutex<[(method: HTTPRequest.Method, segments: [Substring])]>([])

    func add(_ method: HTTPRequest.Method, _ path: String) {
        routes.withLock { $0.append((method, path.split(separator: "/"))) }
    }

    /// Whether `path` is one the routes registered and `method` is not among its methods:
    /// an unknown path is not known to refuse anything (so a route registered some other way
    /// keeps every check), only a known one asked with the wrong method.
    func refuses(_ method: HTTPRequest.Method, at path: String) -> Bool {
        let allowed = methods(for: path)
        return !allowed.isEmpty && !allowed.contains(method)
    }

    /// The methods `path` takes, in a fixed order (GET, HEAD, POST); none for an unknown path.
    func methods(for path: String) -> [HTTPRequest.Method] {
        let asked = path.split(separator: "/")
        let methods = routes.withLock { routes in
            Set(routes.filter { route in
                route.segments.count == asked.count && zip(route.segments, asked).allSatisfy { $0.hasPrefix(":") || $0 == $1 }
            }.map(\.method.rawValue))
        }
        return [HTTPRequest.Method.get, .head, .post].filter { $0 == .head ? methods.contains("GET") : methods.contains($0.rawValue) }
    }
}

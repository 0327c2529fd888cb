import FoundationEssentials
import HTTPTypes
import Hummingbird
import Logging
import QuenchCore

/// Every error the server answers has the API's one shape, `{"error":"…"}`.
/// Hummingbird's own would otherwise reach the client as `{"error":{"message":…}}`
/// (a body that is not the JSON asked for) or with no body at all (no such
/// path, a body too large, anything else thrown).
struct JSONErrors<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
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
        var request = self
        let buffer = try await request.collectBody(upTo: context.maxUploadSize)
        do {
            return try JSONDecoder().decode(T.self, from: Data(buffer.readableBytesView))
        } catch let error as DecodingError {
            throw HTTPError(.badRequest, message: "request body: " + Self.describe(error))
        }
    }

    static func describe(_ error: DecodingError) -> String {
        func field(_ path: [any CodingKey]) -> String { "`" + path.map(\.stringValue).joined(separator: ".") + "`" }
        switch error {
        case let .keyNotFound(key, context): return "\(field(context.codingPath + [key])) is missing"
        case let .valueNotFound(_, context): return "\(field(context.codingPath)) is null"
        case let .typeMismatch(type, context):
            let expected = type == String.self ? "a string" : type == Int64.self || type == Int.self ? "a whole number" : "\(type)"
            return context.codingPath.isEmpty ? "expected a JSON object" : "\(field(context.codingPath)) should be \(expected)"
        case let .dataCorrupted(context):
            return context.codingPath.isEmpty ? "not JSON (\(context.debugDescription))" : "\(field(context.codingPath)): \(context.debugDescription)"
        @unknown default: return "\(error)"
        }
    }
}

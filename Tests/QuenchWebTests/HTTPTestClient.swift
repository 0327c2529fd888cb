import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// An HTTP/1.1 client on SwiftNIO's codec, for the API and for chromedriver:
/// one request per connection, the whole answer collected.
struct HTTPTestClient: Sendable {
    struct Answer: Sendable {
        var status: Int
        var headers: [(String, String)]
        var body: String
        /// The body as it came (a gzipped answer, a PNG), before it was read as text.
        var bytes: [UInt8] = []

        func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
        var json: Any? { try? JSONSerialization.jsonObject(with: Data(body.utf8)) }
    }

    var host = "127.0.0.1"
    var port: Int

    func request(_ method: String, _ path: String, headers: [(String, String)] = [], body: String? = nil,
                 hostHeader: String? = nil) async throws -> Answer {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(5))
            .connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(wrappingChannelSynchronously: channel)
                }
            }
        var head = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: method), uri: path)
        head.headers.add(name: "Host", value: hostHeader ?? "\(host):\(port)")
        head.headers.add(name: "Connection", value: "close")
        for (name, value) in headers { head.headers.add(name: name, value: value) }
        if let body { head.headers.add(name: "Content-Length", value: String(body.utf8.count)) }
        return try await channel.executeThenClose { inbound, outbound in
            // The whole request in one write: the server may answer and close (Connection: close)
            // as soon as it has the head, and a separate write of the end then fails with
            // "I/O on closed channel" (seen under load).
            var parts: [HTTPClientRequestPart] = [.head(head)]
            if let body { parts.append(.body(.byteBuffer(ByteBuffer(string: body)))) }
            parts.append(.end(nil))
            try await outbound.write(contentsOf: parts)
            var answer = Answer(status: 0, headers: [], body: "")
            for try await part in inbound {
                switch part {
                case let .head(h):
                    answer.status = Int(h.status.code)
                    answer.headers = h.headers.map { ($0.name, $0.value) }
                case let .body(buffer):
                    answer.bytes += buffer.readableBytesView
                case .end:
                    answer.body = String(decoding: answer.bytes, as: UTF8.self)
                    return answer
                }
            }
            answer.body = String(decoding: answer.bytes, as: UTF8.self)
            return answer
        }
    }

    func get(_ path: String, headers: [(String, String)] = []) async throws -> Answer {
        try await request("GET", path, headers: headers)
    }

    func postJSON(_ path: String, _ object: Any, headers: [(String, String)] = []) async throws -> Answer {
        let data = try JSONSerialization.data(withJSONObject: object)
        return try await request("POST", path, headers: [("Content-Type", "application/json")] + headers,
                                 body: String(decoding: data, as: UTF8.self))
    }
}

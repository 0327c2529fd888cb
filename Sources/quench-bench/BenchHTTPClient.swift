import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A keep-alive HTTP/1.1 connection on SwiftNIO's codec, one request in flight
/// at a time, as a browser uses each of its (up to six) connections to a host.
/// The reply's end is stamped on the event loop, as the last byte is read, so
/// the main thread's wake-up is not part of a latency.
final class BenchConnection: Sendable {
    struct Reply: Sendable {
        var status = 0
        var body = ByteBuffer()
        var finished = ContinuousClock.now
        var text: String { String(buffer: body) }
    }

    let channel: Channel

    private init(channel: Channel) { self.channel = channel }

    static func connect(_ group: EventLoopGroup, host: String, port: Int) throws -> BenchConnection {
        let channel = try ClientBootstrap(group: group)
            .channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .connectTimeout(.seconds(5))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(ExchangeHandler())
                }
            }
            .connect(host: host, port: port).wait()
        return BenchConnection(channel: channel)
    }

    /// Sends one request; the future completes with the whole reply.
    func send(_ method: HTTPMethod = .GET, _ path: String, json: String? = nil) -> EventLoopFuture<Reply> {
        var head = HTTPRequestHead(version: .http1_1, method: method, uri: path)
        head.headers.add(name: "Host", value: "127.0.0.1")
        // As a browser asks: the server gzips what is worth it, and that cost is in the figures.
        head.headers.add(name: "Accept-Encoding", value: "gzip, deflate, br")
        if let json {
            head.headers.add(name: "Content-Type", value: "application/json")
            head.headers.add(name: "Content-Length", value: String(json.utf8.count))
        }
        let promise = channel.eventLoop.makePromise(of: Reply.self)
        channel.writeAndFlush(Exchange(head: head, body: json.map { ByteBuffer(string: $0) }, reply: promise), promise: nil)
        return promise.futureResult
    }

    /// Sends one request and waits for its reply: (latency in seconds, reply).
    func timed(_ method: HTTPMethod = .GET, _ path: String, json: String? = nil) throws -> (seconds: Double, reply: Reply) {
        let start = ContinuousClock.now
        let reply = try send(method, path, json: json).wait()
        return (inSeconds(reply.finished - start), reply)
    }

    func close() { try? channel.close().wait() }
}

/// What `BenchConnection.send` writes down the pipeline: the request and where its reply goes.
struct Exchange: Sendable {
    var head: HTTPRequestHead
    var body: ByteBuffer?
    var reply: EventLoopPromise<BenchConnection.Reply>
}

final class ExchangeHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = Exchange
    typealias OutboundOut = HTTPClientRequestPart

    private var waiting: EventLoopPromise<BenchConnection.Reply>?
    private var reply = BenchConnection.Reply()

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let exchange = unwrapOutboundIn(data)
        waiting = exchange.reply
        reply = BenchConnection.Reply()
        context.write(wrapOutboundOut(.head(exchange.head)), promise: nil)
        if let body = exchange.body { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
        context.write(wrapOutboundOut(.end(nil)), promise: promise)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case let .head(head):
            reply.status = Int(head.status.code)
        case var .body(buffer):
            reply.body.writeBuffer(&buffer)
        case .end:
            reply.finished = .now
            let promise = waiting
            waiting = nil
            promise?.succeed(reply)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        waiting?.fail(error)
        waiting = nil
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        waiting?.fail(ChannelError.ioOnClosedChannel)
        waiting = nil
        context.fireChannelInactive()
    }
}

/// An open `/api/events` stream: when each `change` event arrived.
final class EventStream: Sendable {
    let channel: Channel
    let log: StreamLog

    final class StreamLog: Sendable {
        private let state = Mutex<(opened: Bool, changes: [ContinuousClock.Instant])>((false, []))
        func open() { state.withLock { $0.opened = true } }
        func change(at instant: ContinuousClock.Instant) { state.withLock { $0.changes.append(instant) } }
        var opened: Bool { state.withLock { $0.opened } }
        var changes: [ContinuousClock.Instant] { state.withLock { $0.changes } }
    }

    private init(channel: Channel, log: StreamLog) {
        self.channel = channel
        self.log = log
    }

    /// Connects and asks for the stream; returns once its first frame came.
    static func open(_ group: EventLoopGroup, host: String, port: Int) throws -> EventStream {
        let log = StreamLog()
        let channel = try ClientBootstrap(group: group)
            .channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .connectTimeout(.seconds(5))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(EventFrameHandler(log: log))
                }
            }
            .connect(host: host, port: port).wait()
        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/api/events")
        head.headers.add(name: "Host", value: "127.0.0.1")
        head.headers.add(name: "Accept", value: "text/event-stream")
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        try channel.writeAndFlush(HTTPClientRequestPart.end(nil)).wait()
        let deadline = ContinuousClock.now + .seconds(5)
        while !log.opened {
            guard ContinuousClock.now < deadline else { throw StoreBenchmark.BenchError.usage("/api/events sent nothing in 5 s") }
            usleep(1000)
        }
        return EventStream(channel: channel, log: log)
    }

    func close() { try? channel.close().wait() }
}

/// Splits the stream into its frames (a blank line ends each) and stamps each `change`.
final class EventFrameHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    let log: EventStream.StreamLog
    private var pending = ""

    init(log: EventStream.StreamLog) { self.log = log }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case let .body(buffer) = unwrapInboundIn(data) else { return }
        let now = ContinuousClock.now
        pending += String(buffer: buffer)
        while let end = pending.range(of: "\n\n") {
            let frame = pending[..<end.lowerBound]
            if frame.contains("event: change") { log.change(at: now) } else { log.open() }
            pending.removeSubrange(..<end.upperBound)
        }
    }
}

/// A duration in seconds.
func inSeconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18 }

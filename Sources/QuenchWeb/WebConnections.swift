import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import QuenchHistory
// Hummingbird's HTTP parts (`HTTPRequestPart`); in its graph already, as NIOCore is.
import NIOHTTPTypes
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

extension WebServer {
    /// How long a connection may say nothing, and how many may be open at once.
    ///
    /// Why these: a connection that never sends a request, or only part of one,
    /// costs a descriptor and memory; a thousand of them once took the server off
    /// the air, and when they filled the process's descriptors Swift's thread pool
    /// (libdispatch, which counts its workers by opening /proc/TID/stat) trapped:
    /// the SIGILL. So the cap stays below the descriptor limit with room to spare,
    /// and a full table makes way for the people the server is for.
    public struct ConnectionLimits: Sendable, Equatable {
        /// From the connection's accept to its first request's complete head. A
        /// phone on weak Wi-Fi sends its request in one segment right after the
        /// handshake; 15 s covers TCP's retransmissions of it (1 + 2 + 4 s) twice.
        public var headerTimeout: Duration
        /// From a request's head to its body's end: a body trickled a byte at a
        /// time would otherwise hold its connection (a request in progress, never
        /// let go) for as long as the sender likes. The API's bodies are a line of
        /// JSON: the header timeout's reasoning holds for them.
        public var bodyTimeout: Duration
        /// A connection that has shown it may be here, between requests (HTTP
        /// keep-alive; Hummingbird's `idleTimeout`). A minute keeps a page's
        /// connections for its next refresh (a change, or the page coming back to
        /// the front) without holding a phone that went away; a live stream is a
        /// request in progress and is never idle (its heartbeat every 15 s).
        public var idleTimeout: Duration
        /// At most this many connections, fewer when the descriptor limit says so
        /// (`cap(openFiles:)`). A browser keeps up to six to a server and a page
        /// its live stream, but a phone mostly uses one or two, and a full table
        /// lets idle ones go rather than refuse: 64 serves a household. Each held
        /// connection costs quench-web about 12 kB (static release: 64 held add
        /// 0.8 MB, a flood of 1000 capped at 64 adds 1.5 MB, 128 would add 2.8 MB),
        /// and its 30 MB budget has little to spare (docs/benchmarks-web.md).
        public var maxConnections: Int

        public static let standard = ConnectionLimits(headerTimeout: .seconds(15), idleTimeout: .seconds(60), maxConnections: 64)

        /// Connections a live stream may never take: the page itself, its API
        /// calls and a second phone still get in when streams fill the rest.
        static let streamReserve = 8

        public init(headerTimeout: Duration, bodyTimeout: Duration = .seconds(15), idleTimeout: Duration, maxConnections: Int) {
            self.headerTimeout = headerTimeout
            self.bodyTimeout = bodyTimeout
            self.idleTimeout = idleTimeout
            self.maxConnections = maxConnections
        }

        /// Descriptors never given to connections: the process's own (stdio, each
        /// event loop's epoll, eventfd and timerfds, the listener, the change
        /// watcher's database: 21 on 2 cores), each request thread's (a database
        /// with its WAL and shared memory, the token file, a share card's
        /// rsvg-convert pipes), the connections accepted past the cap before
        /// one is let go (`acceptSlack`), and libdispatch's /proc reads.
        public static var reservedFiles: Int { 64 + 16 * System.coreCount }

        /// Connections accepted beyond the cap while the ones they replace close
        /// (on their own event loops): past that the listener stops accepting
        /// (Hummingbird's `MaximumAvailableConnections`) and the kernel's backlog waits.
        static let acceptSlack = 16

        /// Fewer than this and the server could not serve a page and its stream.
        static let minimumConnections = 8

        /// The cap for a process that may open `openFiles` descriptors.
        public func cap(openFiles: Int) throws(WebError) -> Int {
            let room = openFiles - Self.reservedFiles
            guard room >= Self.minimumConnections else {
                throw .tooFewFiles(limit: openFiles, needed: Self.reservedFiles + Self.minimumConnections)
            }
            return min(maxConnections, room)
        }

        /// RLIMIT_NOFILE's soft limit: the descriptors this process may open
        /// (`ulimit -n`, or the unit's `LimitNOFILE=`).
        public static func openFileLimit() -> Int {
            var limit = rlimit()
            guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
            return Int(clamping: limit.rlim_cur)
        }
    }
}

/// The open connections, and which to let go when there are too many.
///
/// The policy, when a connection arrives and the table is full: let go of the
/// oldest connection that has not yet shown it may be here (no request that
/// the access policy allowed: no token on a network listener, nothing yet on
/// loopback); else the one idle the longest between requests; else the oldest
/// live stream (the page reconnects it); else (every connection is in a request
/// and none is a stream) refuse the new one. Live streams may hold at most the
/// cap less `streamReserve`: one past that is refused, not a page.
/// New connections are not refused while anonymous ones are open because who
/// is on a new connection is not known until its request is read: refusing
/// them would shut a token holder out behind idle strangers, which is what the
/// cap is against. A connection in a request other than a live stream is never let go.
final class ConnectionTable: Sendable {
    enum Admission {
        case admitted(evicting: (any Channel)?)
        case refused
    }

    private struct Entry {
        let channel: any Channel
        /// Accept order.
        let serial: UInt64
        /// A request on it was allowed.
        var trusted = false
        /// A request is being read or answered.
        var busy = false
        /// Its request is a live stream (until it ends).
        var streaming = false
        var idleSince: ContinuousClock.Instant
    }

    private struct State {
        var entries: [ObjectIdentifier: Entry] = [:]
        var serial: UInt64 = 0
        /// Refusals since the last one logged, and when that was.
        var refusedUnlogged = 0
        var refusalLoggedAt: ContinuousClock.Instant?
    }

    /// A flood of connections logs at most a line each `refusalLogInterval`: a Pi's journal is not for filling.
    static let refusalLogInterval = Duration.seconds(10)

    let capacity: Int
    /// At most this many live streams at once.
    let streamCapacity: Int
    private let state = Mutex(State())

    init(capacity: Int) {
        self.capacity = capacity
        self.streamCapacity = max(1, capacity - WebServer.ConnectionLimits.streamReserve)
    }

    /// A connection was refused: how many to say were refused, when a line is due (the first, then
    /// at most one each `refusalLogInterval`, counting those in between), else nil.
    func refusalToLog(now: ContinuousClock.Instant = .now) -> Int? {
        state.withLock { s in
            s.refusedUnlogged += 1
            if let last = s.refusalLoggedAt, now - last < Self.refusalLogInterval { return nil }
            defer { s.refusedUnlogged = 0 }
            s.refusalLoggedAt = now
            return s.refusedUnlogged
        }
    }

    /// A connection was accepted: in, perhaps in place of another (which the caller closes), or refused.
    func admit(_ channel: any Channel) -> Admission {
        state.withLock { s in
            var evicted: (any Channel)?
            if s.entries.count >= capacity {
                guard let victim = Self.victim(in: s.entries) else { return .refused }
                evicted = s.entries.removeValue(forKey: victim)?.channel
            }
            s.serial += 1
            s.entries[ObjectIdentifier(channel)] = Entry(channel: channel, serial: s.serial, idleSince: .now)
            return .admitted(evicting: evicted)
        }
    }

    private static func victim(in entries: [ObjectIdentifier: Entry]) -> ObjectIdentifier? {
        if let stranger = entries.lazy.filter({ !$0.value.trusted }).min(by: { $0.value.serial < $1.value.serial }) {
            return stranger.key
        }
        if let idle = entries.lazy.filter({ !$0.value.busy }).min(by: { $0.value.idleSince < $1.value.idleSince }) {
            return idle.key
        }
        return entries.lazy.filter { $0.value.streaming }.min { $0.value.serial < $1.value.serial }?.key
    }

    /// The request on `channel` becomes a live stream, unless `streamCapacity` are open already.
    func startStream(_ channel: any Channel) -> Bool {
        state.withLock { s in
            guard s.entries.values.count(where: \.streaming) < streamCapacity else { return false }
            s.entries[ObjectIdentifier(channel)]?.streaming = true
            return true
        }
    }

    func closed(_ channel: any Channel) {
        state.withLock { s in
            let id = ObjectIdentifier(channel)
            if s.entries[id]?.channel === channel { s.entries[id] = nil }
        }
    }

    /// The access policy allowed a request on it.
    func trust(_ channel: any Channel) {
        state.withLock { $0.entries[ObjectIdentifier(channel)]?.trusted = true }
    }

    func requestStarted(_ channel: any Channel) {
        state.withLock { $0.entries[ObjectIdentifier(channel)]?.busy = true }
    }

    func requestEnded(_ channel: any Channel) {
        state.withLock { s in
            let id = ObjectIdentifier(channel)
            s.entries[id]?.busy = false
            s.entries[id]?.streaming = false
            s.entries[id]?.idleSince = .now
        }
    }

    func isTrusted(_ channel: any Channel) -> Bool {
        state.withLock { $0.entries[ObjectIdentifier(channel)]?.trusted ?? false }
    }
}

/// Hummingbird's HTTP/1.1 connection (idle timeout included), admitted through
/// the table: a connection it lets go of is closed, one it refuses never gets a pipeline.
struct LimitedHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    let http1: HTTP1Channel
    let table: ConnectionTable

    init(responder: @escaping HTTPChannelHandler.Responder, table: ConnectionTable, limits: WebServer.ConnectionLimits) {
        let headerTimeout = TimeAmount(limits.headerTimeout)
        self.http1 = HTTP1Channel(responder: responder, configuration: .init(
            additionalChannelHandlers: [ConnectionWatch(table: table, headerTimeout: headerTimeout, bodyTimeout: TimeAmount(limits.bodyTimeout))],
            idleTimeout: TimeAmount(limits.idleTimeout)))
        self.table = table
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        switch table.admit(channel) {
        case .refused:
            if let refused = table.refusalToLog() {
                logger.notice("connection refused: all \(table.capacity) connections are in requests",
                              metadata: ["peer": "\(channel.remoteAddress.map { "\($0)" } ?? "?")", "refused": "\(refused)"])
            }
            // Never registered: closing releases the descriptor. NIO drops a
            // connection whose setup failed without troubling the listener.
            channel.close(promise: nil)
            return channel.eventLoop.makeFailedFuture(ChannelError.ioOnClosedChannel)
        case let .admitted(evicted):
            if let evicted {
                logger.debug("connection limit reached: closing an idle one (or the oldest live stream)", metadata: ["peer": "\(evicted.remoteAddress.map { "\($0)" } ?? "?")"])
                evicted.close(promise: nil)
            }
        }
        let table = table
        channel.closeFuture.whenComplete { _ in table.closed(channel) }
        // Added before the channel reads anything: this runs while it is set up.
        let ready = http1.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let pipeline = channel.pipeline.syncOperations
            try pipeline.addHandler(RequestHeadCheck(), position: .after(try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)))
            return value
        }
        ready.whenFailure { _ in channel.close(promise: nil) }
        return ready
    }

    func handle(value: Value, logger: Logger) async {
        await http1.handle(value: value, logger: logger)
    }
}

/// What only the request head's HTTP/1.1 form shows, checked before Hummingbird
/// turns it into the shared HTTP types (which carry no version and keep one Host):
/// - a request with more than one `Host`, or an HTTP/1.1 request with none, is
///   answered 400 `{"error":…}` and its connection closed (RFC 9112 §3.2: a
///   server MUST). Before, the first `Host` was judged and any other ignored.
///   The head goes on marked (`refusedField`, its Hosts removed, `Connection:
///   close`) and `AccessGuard` answers it before anything else: in its turn
///   among pipelined requests, through the one error writer;
/// - an HTTP/1.0 request closes its connection after the answer unless it asks
///   to keep it (RFC 9112 §9.3). Hummingbird kept a 1.0 client's connection
///   until the idle timeout (a minute, for ApacheBench or a script reading to
///   the end): here such a request says `Connection: close`, as does a 1.1
///   request whose `Connection` lists `close` among other tokens or in capitals;
/// - an answer of no known length (the live page's event stream) to an HTTP/1.0
///   request is sent as HTTP/1.0: its body runs to the connection's close, which
///   follows its end (RFC 9112 §7: chunked, which NIO's encoder chose for a 1.1
///   answer, MUST NOT go to a 1.0 client, which shows the chunk sizes as data);
/// - an HTTP/1.0 request with a `Transfer-Encoding` is refused (RFC 9112 §6.1: its
///   framing MUST be taken as faulty): before, its chunked body was read as 1.1's;
/// - a request that says `Expect: 100-continue` is told `100 Continue` at once (RFC
///   9110 §10.1.1), unless its body is declared too large to take (answered 413 at once
///   by the routes) or its head is refused: curl waited a second for it before each
///   write, and a client that waits for it as long as it likes never sent its body.
final class RequestHeadCheck: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// The versions of the requests not yet answered, oldest first (pipelined
    /// heads pass here before the pipeline handler holds them back; answers go in order).
    private var versions: [HTTPVersion] = []
    /// The answer being written runs to the connection's close.
    private var closesAtEnd = false
    /// Closed for sending too many requests ahead: what else arrives is dropped.
    private var closing = false
    /// An answer's head is written and its end is not: nothing else may go out between them.
    private var answering = false

    /// Requests a connection may send before their answers: HTTP/1.1 pipelining (RFC 9112 §9.3.2)
    /// is allowed, but no browser does it, and a client many answers behind is not reading them.
    static let mostRequestsAhead = 16

    /// Set here only (a client's own is removed): why the head cannot be answered.
    static let refusedField = "Quench-Refused-Head"

    /// The error said of a request that is not valid HTTP/1.1, here and for the parser's refusals.
    static func message(_ problem: String) -> String { "not a valid HTTP/1.1 request (\(problem))" }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing else { return }
        guard case .head(var head) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        head.headers.remove(name: Self.refusedField)
        guard versions.count < Self.mostRequestsAhead else {
            // A client this far ahead of its answers is not a browser (none pipelines) and is not
            // reading them: a script sending `GET /app.js` 200 times a packet and never reading
            // took the server from 46 MB to 1.7 GB. Its connection is closed, and what it sent dropped.
            closing = true
            context.close(promise: nil)
            return
        }
        versions.append(head.version)
        if let target = Self.absoluteTarget(head.uri) {
            // RFC 9112 §3.2.2: a target in absolute form names the host, and the Host field is
            // ignored. Judged by its `Host` alone, `GET http://elsewhere.example/ …` with `Host: localhost`
            // passed the loopback listener's check for a host it never named.
            head.headers.replaceOrAdd(name: "Host", value: target.authority)
            head.uri = target.originForm
        }
        if let problem = Self.hostProblem(head) ?? Self.transferCodingProblem(head) {
            head.headers.remove(name: "Host")
            head.headers.add(name: Self.refusedField, value: problem)
            head.headers.replaceOrAdd(name: "Connection", value: "close")
        } else {
            if !head.isKeepAlive { head.headers.replaceOrAdd(name: "Connection", value: "close") }
            // Only between answers: with an earlier one still being written, the interim
            // answer would land inside it (the client sends its body after a wait all the same).
            if versions.count == 1, !answering, Self.waitsForContinue(head) {
                context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .continue))), promise: nil)
            }
        }
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }

    /// An HTTP/1.1 request holding back a body this server would read until it hears
    /// `100 Continue` (RFC 9110 §10.1.1; a 1.0 client's expectation is ignored, as it MUST be).
    static func waitsForContinue(_ head: HTTPRequestHead) -> Bool {
        guard head.version == .http1_1,
              head.headers["Expect"].contains(where: { $0.filter { $0 != " " && $0 != "\t" }.lowercased() == "100-continue" })
        else { return false }
        if head.headers.contains(name: "Transfer-Encoding") { return true }
        guard let declared = head.headers.first(name: "Content-Length").flatMap({ Int($0) }) else { return false }
        return declared > 0 && declared <= WebRequestContext.uploadLimit
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case var .head(response):
            // An interim answer (100 Continue) comes before the request's own.
            guard response.status.code >= 200 else { break }
            answering = true
            let version = versions.isEmpty ? HTTPVersion.http1_1 : versions.removeFirst()
            let lengthKnown = response.headers.contains(name: "Content-Length")
                || response.status == .noContent || response.status == .notModified
            guard version.major == 1, version.minor == 0, !lengthKnown else { break }
            response.version = .http1_0
            response.headers.replaceOrAdd(name: "Connection", value: "close")
            response.headers.remove(name: "Transfer-Encoding")
            closesAtEnd = true
            context.write(wrapOutboundOut(.head(response)), promise: promise)
            return
        case .body:
            break
        case .end:
            answering = false
            guard closesAtEnd else { break }
            closesAtEnd = false
            closeOnceWritten(context, data, promise)
            return
        }
        context.write(data, promise: promise)
    }

    /// A request target in absolute form (`http://host:port/path?query`, RFC 9112 §3.2.2), as
    /// the host it names and the origin form (`/path?query`) the routes read; nil for any other form.
    static func absoluteTarget(_ uri: String) -> (authority: String, originForm: String)? {
        let lowered = uri.prefix(8).lowercased()
        let scheme = lowered.hasPrefix("http://") ? 7 : lowered.hasPrefix("https://") ? 8 : 0
        guard scheme > 0 else { return nil }
        let rest = uri.dropFirst(scheme)
        let end = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        let path = rest[end...]
        return (String(rest[..<end]), path.hasPrefix("/") ? String(path) : "/" + path)
    }

    /// A transfer coding besides `chunked` (RFC 9112 §6.1): the parser refuses `gzip` alone (in its
    /// own words), but takes `gzip, chunked`, and the body would then be read as JSON still compressed.
    static func transferCodingProblem(_ head: HTTPRequestHead) -> String? {
        if head.version == .http1_0, head.headers.contains(name: "Transfer-Encoding") {
            return "Transfer-Encoding in an HTTP/1.0 request, which frames its body by Content-Length only"
        }
        let codings = head.headers["Transfer-Encoding"].flatMap { $0.split(separator: ",") }
            .map { $0.filter { $0 != " " && $0 != "\t" }.lowercased() }
        guard codings.count > 1 else { return nil }
        return "Transfer-Encoding \(codings.joined(separator: ", ")): chunked, once, is the one this server reads"
    }

    /// Why the head's `Host` fields cannot name one server (RFC 9112 §3.2); nil when they can.
    static func hostProblem(_ head: HTTPRequestHead) -> String? {
        let hosts = head.headers["Host"].count
        if hosts > 1 { return "\(hosts) Host headers; a request names one host" }
        if hosts == 0, head.version != .http1_0, head.version != .http0_9 { return "no Host header; an HTTP/1.1 request names its host" }
        return nil
    }
}

/// On each connection, between Hummingbird's HTTP codec and its handler:
/// closes one that has not sent a complete request head within the header
/// timeout, tells the table when a request starts and ends, and closes a
/// connection whose request was refused (`Connection: close`): a stranger gets
/// one answer, never a connection to keep. A body not whole within the body
/// timeout is answered 408 here (the handler is still waiting for it) and the
/// connection closed; the handler's read of it fails, so nothing acts on part
/// of a body. Hummingbird answers what its HTTP parser rejects with an empty
/// 400: given the API's `{"error":…}` body here.
final class ConnectionWatch: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let table: ConnectionTable
    private let headerTimeout: TimeAmount
    private let bodyTimeout: TimeAmount
    private var headerDeadline: Scheduled<Void>?
    private var bodyDeadline: Scheduled<Void>?
    private var sawRequest = false
    private var closeAfterAnswer = false
    /// The pipeline reported an error (the HTTP parser's, or the socket's).
    private var failed: (any Error)?
    /// A request's head has arrived and its body's end has not.
    private var readingBody = false
    /// A request's answer has started.
    private var answering = false
    /// This handler answered (408) and the connection is closing: the handler's own answer is dropped.
    private var answeredHere = false

    /// The error the handler's body read throws when its body did not arrive whole.
    struct BodyIncomplete: Error, CustomStringConvertible {
        let timedOut: Bool
        var description: String { timedOut ? "the body did not arrive in time" : "the connection closed before the body's end" }
    }

    init(table: ConnectionTable, headerTimeout: TimeAmount, bodyTimeout: TimeAmount) {
        self.table = table
        self.headerTimeout = headerTimeout
        self.bodyTimeout = bodyTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { startHeaderClock(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        startHeaderClock(context)
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stopHeaderClock()
        stopBodyClock()
    }

    func channelInactive(context: ChannelHandlerContext) {
        stopHeaderClock()
        stopBodyClock()
        // Hummingbird would end the body there, as if whole.
        if readingBody {
            readingBody = false
            context.fireErrorCaught(BodyIncomplete(timedOut: false))
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if failed == nil { failed = error }
        context.fireErrorCaught(error)
    }

    private func stopBodyClock() {
        bodyDeadline?.cancel()
        bodyDeadline = nil
    }

    private func startBodyClock(_ context: ChannelHandlerContext) {
        let loopContext = context.loopBound
        bodyDeadline = context.eventLoop.assumeIsolated().scheduleTask(in: bodyTimeout) { [weak self] in
            self?.bodyTimedOut(loopContext.value)
        }
    }

    private func bodyTimedOut(_ context: ChannelHandlerContext) {
        bodyDeadline = nil
        guard readingBody else { return }
        readingBody = false
        guard !answering else {
            context.close(promise: nil)
            return
        }
        answeredHere = true
        let seconds = Double(bodyTimeout.nanoseconds) / 1e9
        let body = ByteBuffer(string: History.json(["error": "request body: it did not arrive within \(seconds) s; nothing was done"]) + "\n")
        let head = HTTPResponse(status: .requestTimeout, headerFields: [
            .contentType: "application/json; charset=utf-8", .cacheControl: "no-store", .connection: "close",
            .contentLength: String(body.readableBytes),
        ])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: written)
        let loopContext = context.loopBound
        written.futureResult.whenComplete { _ in loopContext.value.close(promise: nil) }
        table.requestEnded(context.channel)
        // The handler waiting for the body gives up, rather than act on part of it.
        context.fireErrorCaught(BodyIncomplete(timedOut: true))
    }

    private func startHeaderClock(_ context: ChannelHandlerContext) {
        guard headerDeadline == nil, !sawRequest else { return }
        let loopContext = context.loopBound
        headerDeadline = context.eventLoop.assumeIsolated().scheduleTask(in: headerTimeout) {
            loopContext.value.close(promise: nil)
        }
    }

    private func stopHeaderClock() {
        headerDeadline?.cancel()
        headerDeadline = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            sawRequest = true
            stopHeaderClock()
            table.requestStarted(context.channel)
            readingBody = true
            answering = false
            startBodyClock(context)
        case .body:
            break
        case .end:
            readingBody = false
            stopBodyClock()
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if answeredHere {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        switch unwrapOutboundIn(data) {
        case var .head(response):
            answering = true
            // The access policy has decided by the time the answer starts; an
            // answer that says `Connection: close` (a stream refused) means it.
            closeAfterAnswer = !table.isTrusted(context.channel) || response.headerFields[.connection] == "close" || failed != nil
            if let failed, response.status == .badRequest, response.headerFields[.contentLength] == "0" {
                // Hummingbird's answer to a request its parser rejected: head and end, no body.
                let body = ByteBuffer(string: History.json(["error": RequestHeadCheck.message(ParserWords.describe(failed))]) + "\n")
                response.headerFields[.contentLength] = String(body.readableBytes)
                response.headerFields[.contentType] = "application/json; charset=utf-8"
                response.headerFields[.connection] = "close"
                context.write(wrapOutboundOut(.head(response)), promise: nil)
                context.write(wrapOutboundOut(.body(body)), promise: promise)
            } else if closeAfterAnswer {
                response.headerFields[.connection] = "close"
                context.write(wrapOutboundOut(.head(response)), promise: promise)
            } else {
                context.write(data, promise: promise)
            }
        case .body:
            context.write(data, promise: promise)
        case .end:
            table.requestEnded(context.channel)
            guard closeAfterAnswer else {
                context.write(data, promise: promise)
                return
            }
            closeOnceWritten(context, data, promise)
        }
    }
}

/// Writes an answer's last part and closes the connection once it is out, not before
/// (a close drops what is unwritten).
private func closeOnceWritten(_ context: ChannelHandlerContext, _ data: NIOAny, _ promise: EventLoopPromise<Void>?) {
    let written = context.eventLoop.makePromise(of: Void.self)
    context.writeAndFlush(data, promise: written)
    let loopContext = context.loopBound
    written.futureResult.whenComplete { _ in loopContext.value.close(promise: nil) }
    written.futureResult.cascade(to: promise)
}

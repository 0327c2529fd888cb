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
#if canImport(Glibc)
import Glibc
#endif

/// `quench serve`: the page and its JSON API, over Hummingbird (SwiftNIO).
///
/// A process of its own, so the gateway (`quenchd`) keeps its small memory;
/// both share only the database, which is how a change reaches an open page
/// from the gateway: the database's data version, polled.
public enum WebServer {
    public struct Options: Sendable {
        public var listen: ListenAddress
        /// The history commands' environment (database, units, zone); its clock
        /// is read anew for each request.
        public var environment: HistoryEnvironment
        /// The access token's file (network listeners only).
        public var tokenPath: String
        /// How often the database is asked whether another process changed it.
        public var pollInterval: Duration
        /// How often an idle live connection is written to.
        public var heartbeatInterval: Duration
        /// Timeouts and the connection cap (`ConnectionLimits`).
        public var limits: ConnectionLimits
        /// Where `listen` was set, for the advice when it is wrong: `--listen`, `$QUENCH_WEB_LISTEN`, a file and line.
        public var listenSource = "--listen"

        public init(listen: ListenAddress, environment: HistoryEnvironment, tokenPath: String? = nil,
                    pollInterval: Duration = .milliseconds(250), heartbeatInterval: Duration = .seconds(15),
                    limits: ConnectionLimits = .standard) {
            self.listen = listen
            self.environment = environment
            self.tokenPath = tokenPath ?? AccessToken.defaultPath(forDatabase: environment.databasePath)
            self.pollInterval = pollInterval
            self.heartbeatInterval = heartbeatInterval
            self.limits = limits
        }
    }

    /// Serves until SIGTERM or SIGINT. `listening` is called with the address
    /// bound (the port chosen when 0 was asked).
    public static func run(_ options: Options, logger: Logger, listening: @escaping @Sendable (BoundAddress) -> Void) async throws(WebError) {
        // The name resolved once, here, and that address bound: whether a token is
        // needed follows from it (and, once bound, from the socket), never from the text.
        let resolved: SocketAddress
        do { resolved = try SocketAddress.makeAddressResolvingHost(options.listen.host, port: options.listen.port) } catch {
            let check = ListenAddressCheck.check(options.listen.host)
            throw check == .ok ? .cannotListen(options.listen.description, cause: error)
                : .listenAddress(options.listen.description, check, source: options.listenSource)
        }
        let tokenFile = BoundAddress(resolved)?.isLoopback == true ? nil : try TokenFile(path: options.tokenPath)
        // An address no interface has is refused here, naming where it was set and what this machine has,
        // before the bind would fail with the system's words.
        let check = ListenAddressCheck.check(resolved.ipAddress ?? options.listen.host)
        if check != .ok { throw .listenAddress(options.listen.description, check, source: options.listenSource) }
        // The database exists before the first page asks: a new Pi shows an empty day, not an error.
        let store: IntakeStore
        do { store = try options.environment.openIntakeStore(creating: true) } catch { throw .history(.store(error)) }
        if let upgrade = store.upgradeNotice { logger.notice("\(upgrade)") }
        let bound = BoundListener()
        // Read once: the cap must leave room below the limit this process started with.
        let openFiles = ConnectionLimits.openFileLimit()
        let cap = try options.limits.cap(openFiles: openFiles)
        logger.info("at most \(cap) connections (\(openFiles) open files allowed)")
        let connections = ConnectionTable(capacity: cap)
        let feed = ChangeFeed()
        // HEAD answered as GET without the body (curl -I, link checkers, uptime monitors).
        let router = Router(context: WebRequestContext.self, options: .autoGenerateHeadEndpoints)
        let routes = RouteTable()
        router.add(middleware: JSONErrors(routes: routes))
        router.add(middleware: AccessGuard(listener: options.listen, bound: bound, tokenFile: tokenFile, logger: logger, connections: connections, routes: routes))
        let writePool = NIOThreadPool(numberOfThreads: 2)
        writePool.start()
        let handlers = Routes(environment: options.environment, feed: feed, connections: connections, logger: logger, table: routes,
                              writePool: writePool)
        // Opened (or made) just now: a file gone before the first request is said, as one gone after it,
        // not made anew empty by the first tap (a Pi trial's `rm` before any page asked).
        handlers.databaseSeen.flag.store(true, ordering: .relaxed)
        handlers.register(on: router)

        let watcher = ChangeWatcher(store: store, feed: feed, interval: options.pollInterval, heartbeat: options.heartbeatInterval, logger: logger)
        let limits = options.limits
        let app = Application(
            router: router,
            server: HTTPServerBuilder { responder in LimitedHTTP1Channel(responder: responder, table: connections, limits: limits) },
            // The table keeps the count at the cap by letting connections go; should closing them
            // lag behind a flood, the listener stops accepting a little past it, never at the descriptor limit.
            configuration: .init(address: .hostname(resolved.ipAddress ?? options.listen.host, port: options.listen.port), serverName: "quench",
                                 availableConnectionsDelegate: MaximumAvailableConnections(cap + ConnectionLimits.acceptSlack, logger: logger)),
            services: [watcher],
            onServerRunning: { channel in
                // Until this is known every request is refused (AccessGuard).
                guard let address = channel.localAddress.flatMap(BoundAddress.init) else { return }
                bound.address.withLock { $0 = address }
                listening(address)
            },
            logger: logger)
        var failure: (any Error)?
        do { try await app.runService() } catch { failure = error }
        try? await writePool.shutdownGracefully()
        if let failure { throw .cannotListen(options.listen.description, cause: failure) }
    }
}

/// Polls the store's count of changes shown, so a change from any process reaches
/// every page, until the server stops.
struct ChangeWatcher: Service {
    let store: IntakeStore
    let feed: ChangeFeed
    let interval: Duration
    let heartbeat: Duration
    let logger: Logger

    func run() async throws {
        // Polls until its own shutdown, not until the feed is finished: a live response finishes the
        // feed when the server (shut down first) ends it, and a watcher that returned then was a
        // service "finished unexpectedly" to the group, and quench serve exited 1 on SIGTERM (seen in CI).
        let stopping = Atomic(false)
        await withGracefulShutdownHandler {
            await WebServer.watch(store, feed: feed, every: interval, heartbeat: heartbeat, logger: logger) {
                stopping.load(ordering: .relaxed)
            }
        } onGracefulShutdown: {
            stopping.store(true, ordering: .relaxed)
            feed.finish()
        }
    }
}

extension WebServer {
    /// Polls the count of changes shown; a change from any process reaches every page (a gateway's
    /// checkpoints and claims, which SQLite's data version counts too, do not).
    static func watch(_ store: IntakeStore, feed: ChangeFeed, every interval: Duration, heartbeat: Duration, logger: Logger,
                      until stopping: @Sendable () -> Bool) async {
        var last = (try? store.shownChanges()) ?? 0
        var sinceHeartbeat = Duration.zero
        // A database file deleted under the server keeps answering through its open descriptor: the
        // file's going is a change of its own, so the pages ask again and are told (a stat a poll).
        var present = access(store.path, F_OK) == 0
        while !Task.isCancelled && !stopping() {
            try? await Task.sleep(for: interval)
            do {
                let version = try store.shownChanges()
                let there = access(store.path, F_OK) == 0
                if version != last || there != present {
                    last = version
                    present = there
                    feed.changed()
                }
            } catch {
                logger.warning("cannot read the count of changes shown", metadata: ["error": "\(error)"])
            }
            sinceHeartbeat += interval
            if sinceHeartbeat >= heartbeat {
                sinceHeartbeat = .zero
                feed.heartbeat()
            }
        }
    }
}

/// The address the server's socket holds, once bound.
final class BoundListener: Sendable {
    let address = Mutex<BoundAddress?>(nil)
}

/// Hummingbird's basic context and the request's connection, which the access
/// guard marks as one to keep when the connections are too many.
struct WebRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel
    /// Every body the API takes is a few hundred bytes (a note is at most 1000 characters):
    /// 64 kB, not Hummingbird's 2 MB, is what one request may make the server hold.
    var maxUploadSize: Int { Self.uploadLimit }
    static let uploadLimit = 64 * 1024

    init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.channel = source.channel
    }
}

/// Applies `AccessPolicy` to every request, with the token its file holds now.
struct AccessGuard: RouterMiddleware {
    typealias Context = WebRequestContext
    /// `RequestHeadCheck`'s mark on a head it refused.
    static let refusedHead = HTTPField.Name(RequestHeadCheck.refusedField)!
    let listener: ListenAddress
    let bound: BoundListener
    /// Nil when the address resolved was loopback.
    let tokenFile: TokenFile?
    let logger: Logger
    let connections: ConnectionTable
    let routes: RouteTable

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let problem = request.headers[Self.refusedHead] {
            var refused = Responses.error(.badRequest, RequestHeadCheck.message(problem))
            refused.headers[.connection] = "close"
            return refused
        }
        var token: AccessToken?
        // Without a token only on a socket known to be bound to loopback; anything else fails closed.
        if tokenFile == nil, bound.address.withLock({ $0 })?.isLoopback != true {
            return Responses.error(.serviceUnavailable, "this server's address is not known to be loopback, and it has no access token")
        }
        if let tokenFile {
            // Off loopback, no token means nobody: never open because a file went missing.
            switch tokenFile.currentOrProblem() {
            case .success(let current):
                _ = tokenFile.isNew(problem: nil)
                token = current
            case .failure(let problem):
                // Said as `quench serve token` says it (a file made readable to others was "cannot be read"), and logged once.
                if tokenFile.isNew(problem: problem.description) { logger.error("every request refused: \(problem)") }
                return Responses.error(.serviceUnavailable, problem.description)
            }
        }
        let policy = AccessPolicy(listener: listener, token: token)
        var parts = AccessPolicy.Request(
            method: request.method.rawValue, path: request.uri.path, query: request.uri.query,
            queryToken: request.uri.queryParameters["token"].map(String.init),
            cookieToken: request.cookies[AccessPolicy.cookieName]?.value,
            authorization: request.headers[.authorization], host: request.head.authority,
            origin: request.headers[.origin], fetchSite: request.headers[HTTPField.Name("Sec-Fetch-Site")!],
            contentType: request.headers[.contentType])
        // Asked of writes only, the one place it matters (not on every page and API read).
        if parts.isWrite { parts.pathTakesMethod = !routes.refuses(request.method, at: request.uri.path) }
        switch policy.decide(parts) {
        case .allow:
            connections.trust(context.channel)
            return try await next(request, context)
        case let .setCookieAndRedirect(location):
            connections.trust(context.channel)
            var response = Response(status: .seeOther, headers: [.location: location, .cacheControl: "no-store"])
            // Lax, not Strict: the link is opened from another app (a cross-site
            // navigation), and the page it lands on must already carry the cookie.
            response.setCookie(Cookie(name: AccessPolicy.cookieName, value: policy.token?.value ?? "",
                                      maxAge: 400 * 86400, path: "/", httpOnly: true, sameSite: .lax))
            return response
        case let .refuse(status, reason):
            return Responses.error(HTTPResponse.Status(code: status), reason)
        }
    }
}

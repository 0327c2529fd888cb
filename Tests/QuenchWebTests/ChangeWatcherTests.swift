import Logging
@testable import QuenchWeb
import QuenchStore
import QuenchTestSupport
import ServiceLifecycle
import Testing

/// The server as its service group stops it, first: its live responses end (and finish the
/// feed) as soon as the shutdown starts, then it takes a while closing connections.
private struct ClosingServer: Service {
    let feed: ChangeFeed
    func run() async throws {
        try? await gracefulShutdown()
        feed.finish()
        try? await Task.sleep(for: .milliseconds(500))
    }
}

@Suite("the database watcher")
struct ChangeWatcherTests {
    @Test("""
        it polls until its own shutdown: a feed finished while the server closes is not an unexpected end \
        (the group's error made quench serve exit 1 on SIGTERM with a live page open)
        """)
    func outlivesTheFeedUntilItsOwnShutdown() async throws {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let store = try IntakeStore(path: try TemporaryFolder.create("quench-watcher") + "/q.sqlite")
        let feed = ChangeFeed()
        let watcher = ChangeWatcher(store: store, feed: feed, interval: .milliseconds(20), heartbeat: .seconds(15), logger: logger)
        // As Hummingbird orders them: the application's services, then the server (stopped first).
        let group = ServiceGroup(configuration: .init(services: [.init(service: watcher), .init(service: ClosingServer(feed: feed))],
                                                      logger: logger))
        async let running: Void = group.run()
        try await Task.sleep(for: .milliseconds(100))
        await group.triggerGracefulShutdown()
        do { try await running } catch { Issue.record("the group stopped with \(error)") }
    }
}

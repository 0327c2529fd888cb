import Logging
import QuenchCore
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

    @Test("a drink another process adds wakes the pages; a gateway's checkpoint, which SQLite's data version counts too, does not")
    func aCheckpointWakesNoPage() async throws {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let path = try TemporaryFolder.create("quench-watcher") + "/q.sqlite"
        let store = try IntakeStore(path: path), gateway = try IntakeStore(path: path)
        let feed = ChangeFeed()
        let notices = feed.subscribe()
        let watching = Task { await WebServer.watch(store, feed: feed, every: .milliseconds(10), heartbeat: .seconds(60), logger: logger) { false } }
        defer { watching.cancel() }
        try await Task.sleep(for: .milliseconds(50))
        var detector = SipDetector(calibration: try BottleCalibration(unit: .g))
        var events: [DetectedEvent] = []
        for i in 0..<100 { detector.process(Reading(t: Double(i) / 10, value: 900), into: &events) }
        for n in 0..<5 {
            try gateway.saveCheckpoint(DetectorCheckpoint(device: "F0:F1:F2:F3:F4:F5", detector: detector, t: 9.9 + Double(n), wall: 0, bootID: "", sinceBoot: 0))
            try await Task.sleep(for: .milliseconds(30))
        }
        _ = try gateway.addManual(ml: 250, at: .wallClockNow, note: nil, identity: "manual|watched")
        try await Task.sleep(for: .milliseconds(200))
        feed.finish()
        var told: [ChangeFeed.Notice] = []
        for await notice in notices { told.append(notice) }
        #expect(told == [.changed(version: 1)], "\(told)")
    }
}

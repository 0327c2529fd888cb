#if os(Linux)
import BluetoothWire
import Foundation
import Logging
import QuenchCore
import QuenchGateway
import QuenchProfiles
import QuenchSimulator
import QuenchStore
import QuenchTestSupport
import Testing

/// The gateway killed in the middle of a sip and started again: the device's
/// pipeline, its `EventWriter` and a real SQLite store, one "process" after
/// the other. A kill leaves in the store only what was committed (the writer
/// is drained, as if the kill came just after its last commit; the detector
/// is not finished); the new process reads the checkpoint and resumes.
@Suite("a restart in the middle of a sip: the detector resumes from its stored checkpoint")
struct CheckpointRestartTests {
    static let address = BluetoothAddress("F0:F1:F2:F3:F4:F5")!
    static let wall0 = 1_790_000_000.0

    /// Events 80 s apart: a kill in one and a restart within 60 s see no other in between.
    static let scenario = Scenario(.clean(unit: .g).with(.noise, .zeroShift), seed: 17, initialML: 700)
        .idle(25).sip(ml: 40).idle(80).sip(ml: 55, liftSeconds: 12).idle(80).sip(ml: 25)
        .idle(80).refill(to: 650).idle(80).sip(ml: 35, liftSeconds: 7).idle(80)

    static func device() throws -> LiveDevice {
        LiveDevice(address: address, profile: .weightScale, calibration: try LiveFixture.calibration(scenario, unit: .g))
    }

    /// One process of the gateway: readings (trace time) fed from `processStart`
    /// on its own session clock, which started at wall `wall0 + later + processStart`
    /// (`later`: the trace's readings from here on happened that much later).
    static func process(_ readings: ArraySlice<Reading>, processStart: Double, later: Double = 0, store: IntakeStore, killed: Bool) throws {
        let device = try device()
        let writer = EventWriter(store: store, logger: LiveFixture.logger)
        writer.start()
        let clock = SessionClock(started: Timestamp(secondsSince1970: wall0 + later + processStart), rate: 1, synchronized: true)
        let pipeline = DevicePipeline(device: device, clock: clock, writer: writer, logger: LiveFixture.logger,
                                      checkpoint: try store.checkpoint(device: device.label))
        for r in readings {
            pipeline.feed(Reading(t: r.t - processStart, value: r.value), raw: ProfileReading(value: r.value, unit: .g))
        }
        if !killed { pipeline.finish() }
        writer.drain()
    }

    /// A payload the profile cannot read, ten a second, is warned of as a repeated problem is, not each time.
    @Test func undecodablePayloadsAreWarnedOfNowAndThen() throws {
        let lines = ReminderSignalTests.Lines()
        let logger = Logger(label: "test") { _ in ReminderSignalTests.Capture(into: lines) }
        let writer = EventWriter(store: nil, logger: logger)
        let clock = SessionClock(started: Timestamp(secondsSince1970: Self.wall0), rate: 1, synchronized: true)
        let pipeline = DevicePipeline(device: try Self.device(), clock: clock, writer: writer, logger: logger)
        for _ in 0..<240 { pipeline.handle(payload: [0xFF]) }
        let said = lines.all.filter { $0.hasSuffix("payload does not decode") }
        #expect(said.count == 240 && said.filter { $0.hasPrefix("warning") }.count == 12, "\(said.filter { $0.hasPrefix("warning") }.count)")
    }

    static func storedEvents(_ store: IntakeStore) throws -> [IntakeEvent] {
        try store.events(EventQuery(device: address.description, order: .byID))
    }

    @Test func killedAtRandomMomentsOfSipsAndRestartedWithinAMinute() throws {
        let (readings, truth) = Self.scenario.run()
        let whole = try LiveFixture.temporaryStore()
        try Self.process(readings[...], processStart: 0, store: whole, killed: false)
        let uninterrupted = try Self.storedEvents(whole)
        LiveFixture.expectMatches(uninterrupted.filter { $0.kind == .sip }, truth, tolerance: 5)
        #expect(uninterrupted.filter { $0.kind == .refill }.count == 1)

        var random = SeededRandom(seed: 2026)
        let sips = truth.filter { $0.kind == .sip }
        for _ in 0..<12 {
            let sip = sips[min(sips.count - 1, Int(random.uniform(0, Double(sips.count))))]
            let killT = random.uniform(sip.tStart - 2, sip.tEnd + 6)
            let processStart = killT + random.uniform(2, 60)
            let kill = readings.firstIndex { $0.t >= killT } ?? readings.count
            let restart = readings.firstIndex { $0.t >= processStart + 1 } ?? readings.count
            let context = "killed at t \(TraceWriter.fixed(killT, places: 1)), started again at \(TraceWriter.fixed(processStart, places: 1)), sip \(sip.tStart)–\(sip.tEnd)"

            let store = try LiveFixture.temporaryStore()
            try Self.process(readings[..<kill], processStart: 0, store: store, killed: true)
            guard case .usable = try store.checkpoint(device: Self.address.description) else {
                Issue.record("\(context): no checkpoint stored")
                continue
            }
            try Self.process(readings[restart...], processStart: processStart, store: store, killed: false)
            let events = try Self.storedEvents(store)
            // No sip lost, none doubled: as many of each kind as without the kill, each within a few mL and seconds.
            for kind in [EventKind.sip, .refill, .pour] {
                #expect(events.filter { $0.kind == kind }.count == uninterrupted.filter { $0.kind == kind }.count,
                        "\(context): \(kind)s \(events.map { "\($0.kind.rawValue) \($0.ml)" })")
            }
            for (a, b) in zip(events, uninterrupted) {
                #expect(a.kind == b.kind && abs(a.ml - b.ml) <= 5, "\(context): \(a.kind.rawValue) \(a.ml) mL for \(b.kind.rawValue) \(b.ml) mL")
                #expect(abs(a.time.secondsSince1970 - b.time.secondsSince1970) <= 8, "\(context): \(a.time) for \(b.time)")
            }
        }
    }

    /// A checkpoint older than `resumeWithin` is not resumed: the new process
    /// starts afresh (the sip under way then is long over), and says so.
    @Test func aCheckpointTooOldIsNotResumed() throws {
        let (readings, truth) = Self.scenario.run()
        let sips = truth.filter { $0.kind == .sip }
        let store = try LiveFixture.temporaryStore()
        let kill = readings.firstIndex { $0.t >= sips[0].tStart + 2 } ?? 0
        try Self.process(readings[..<kill], processStart: 0, store: store, killed: true)
        // Started again 10 minutes later, between the first and the second sip.
        let restartT = sips[1].tStart - 10
        let restart = readings.firstIndex { $0.t >= restartT } ?? 0
        try Self.process(readings[restart...], processStart: restartT, later: 600, store: store, killed: false)
        let stored = try Self.storedEvents(store).filter { $0.kind == .sip }
        // The first sip (under way at the kill) is not judged; the later ones are.
        LiveFixture.expectMatches(stored, Array(truth.filter { $0.kind == .sip }.dropFirst()), tolerance: 5)
    }
}
#endif

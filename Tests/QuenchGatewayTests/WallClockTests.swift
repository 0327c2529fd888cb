#if os(Linux)
import BluetoothWire
import Foundation
import QuenchCore
import QuenchProfiles
import QuenchSimulatedDevices
import QuenchSimulator
import QuenchStore
import QuenchTestSupport
import Synchronization
import Testing
import Threading
@testable import QuenchGateway

/// The anchor alone.
@Suite("wall clock anchor")
struct WallClockAnchorTests {
    @Test("steady, a jump, and the first synchronisation with its correction")
    func changes() {
        var a = WallClockAnchor(t: 0, wall: 1_000, synchronized: false)
        #expect(a.wall(at: 10) == 1_010)
        var c = a.observe(wall: 1_030.5, synchronized: false, at: 30)
        #expect(c == .steady)
        // Set by hand while unsynchronised: followed, and said.
        c = a.observe(wall: 5_000, synchronized: false, at: 40)
        #expect(c == .jumped(by: 5_000 - 1_040.5))
        #expect(a.wall(at: 41) == 5_001 && !a.synchronized)
        // NTP answers: three days later than the clock thought.
        c = a.observe(wall: 5_010 + 3 * 86_400, synchronized: true, at: 50)
        #expect(c == .synchronized(correction: 3 * 86_400))
        #expect(a.synchronized)
        // Losing the server later does not make the stamps provisional again.
        c = a.observe(wall: 5_010 + 3 * 86_400 + 10, synchronized: false, at: 60)
        #expect(c == .steady && a.synchronized)
        // A clock that cannot be asked counts as synchronised.
        var b = WallClockAnchor(t: 0, wall: 100, synchronized: false)
        #expect(b.observe(wall: 101, synchronized: nil, at: 1) == .synchronized(correction: 0))
    }
}

/// A scripted system clock: the boot's monotonic clock runs in real time;
/// the wall clock runs with the session's `rate` from `wall0`, plus whatever
/// the test sets it by; synchronised when the test says.
final class ScriptedClock: SystemClock {
    let bootID: String
    private let origin: ContinuousClock.Instant
    private let rate: Double
    private let state: Mutex<(wall0: Double, offset: Double, synchronized: Bool)>

    /// Clocks of the same boot share `origin`: their monotonic readings are one time line.
    init(wall0: Double, rate: Double, synchronized: Bool, bootID: String = "boot-a", origin: ContinuousClock.Instant = .now) {
        self.origin = origin
        self.rate = rate
        self.bootID = bootID
        state = Mutex((wall0, 0, synchronized))
    }

    func set(by seconds: Double, synchronized: Bool) { state.withLock { $0.offset += seconds; $0.synchronized = synchronized } }

    func read() -> ClockReading {
        let elapsed = (ContinuousClock.now - origin).seconds
        return state.withLock { ClockReading(wall: $0.wall0 + $0.offset + elapsed * rate, sinceBoot: 5_000 + elapsed, synchronized: $0.synchronized) }
    }
}

/// The gateway on a clock that is wrong, then set, then set again, with a
/// level bottle streaming three sips (accelerated, with the session).
@Suite("gateway on an unsynchronised clock", .serialized)
struct WallClockGatewayTests {
    typealias F = LiveFixture
    let address = BluetoothAddress("C4:11:22:33:44:55")!
    static let threeDays = 3 * 86_400.0

    func bottle() throws -> (LiveDevice, SimulatedPeripheral, [TruthEvent]) {
        let scenario = Scenario(.clean(unit: .mm, sampleRate: 5).with(.noise), seed: 5, initialML: 500)
            .idle(8).sip(ml: 40).idle(25).sip(ml: 60).idle(25).sip(ml: 35).idle(8)
        let (readings, truth) = scenario.run()
        let p = SimulatedPeripheral(address: address, profile: .custom(ProfileRegistry.levelBottle), readings: readings,
                                    unit: scenario.configuration.unit, streaming: SimulatedStreaming(speed: F.speed))
        let device = LiveDevice(address: address, profile: .custom(ProfileRegistry.levelBottle),
                                calibration: try F.calibration(scenario, unit: .mm))
        return (device, p, truth)
    }

    func gateway(_ device: LiveDevice, _ p: SimulatedPeripheral, store: IntakeStore, clock: ScriptedClock) -> Gateway {
        var options = Gateway.Options()
        options.clockRate = F.speed
        options.backoff = Backoff(initial: 0.05, factor: 2, maximum: 0.4)
        options.systemClock = clock
        return Gateway(devices: [device], store: store, options: options, logger: F.logger, connector: SimulatedRadio([p]),
                       advertisements: { _ throws(LiveError) in throw .stopped })
    }

    @Test("booted three days slow: the sip stamped before NTP is moved to its true day, a later jump makes no sip, no gap and no move")
    func setThenJumped() throws {
        let store = try F.temporaryStore()
        let (device, p, truth) = try bottle()
        let trueNow = Timestamp.wallClockNow.secondsSince1970
        // The Pi came up at its last shutdown time, three days ago, and NTP has not answered.
        let clock = ScriptedClock(wall0: trueNow - Self.threeDays, rate: F.speed, synchronized: false)
        let g = gateway(device, p, store: store, clock: clock)
        g.start()
        #expect(try F.waitFor { try F.sips(store, address).count == 1 })
        let provisional = try F.sips(store, address)[0]
        #expect(abs(provisional.time.secondsSince1970 - (trueNow - Self.threeDays)) < 60, "stamped from the slow clock")
        #expect(try store.unsyncedCount() == 1)

        clock.set(by: Self.threeDays, synchronized: true)
        g.checkClock()
        let moved = try F.sips(store, address)[0]
        #expect(abs(moved.time.secondsSince1970 - provisional.time.secondsSince1970 - Self.threeDays) < 0.5,
                "moved by the correction: \(provisional.time.iso8601) → \(moved.time.iso8601)")
        #expect(try store.unsyncedCount() == 0)

        // Someone sets the clock back an hour between the second and third sips.
        #expect(try F.waitFor { try F.sips(store, address).count == 2 })
        clock.set(by: -3600, synchronized: true)
        g.checkClock()
        #expect(p.waitUntilFinished(timeout: 30))
        g.stop()
        g.wait()
        p.shutdown()

        let sips = try F.sips(store, address)
        F.expectMatches(sips, truth, tolerance: 3)
        guard sips.count == 3 else { return }
        // Stamped from the monotonic clock (each row keeps its session time as `traceTime`): the first
        // two keep their monotonic spacing across the re-stamp,
        func spacing(_ a: IntakeEvent, _ b: IntakeEvent) -> (wall: Double, monotonic: Double) {
            (b.time.secondsSince1970 - a.time.secondsSince1970, (b.traceTime ?? .nan) - (a.traceTime ?? .nan))
        }
        let s01 = spacing(sips[0], sips[1])
        #expect(abs(s01.wall - s01.monotonic) < 0.01, "spacing \(s01)")
        // and the third follows the clock as now set (an hour back), with no sip, gap or refill made of the jump.
        let s12 = spacing(sips[1], sips[2])
        #expect(abs(s12.wall - (s12.monotonic - 3600)) < 0.01, "spacing \(s12)")
        #expect(try store.events(EventQuery(device: address.description)).allSatisfy { $0.kind == .sip }, "only the three sips")
    }

    @Test("stopped before NTP answered: the next process of the same boot re-stamps what the first stored; an earlier boot's stamps are let go")
    func restartedBeforeSync() throws {
        let store = try F.temporaryStore()
        let (device, p, _) = try bottle()
        let trueNow = Timestamp.wallClockNow.secondsSince1970
        let boot = ContinuousClock.now
        let slow = ScriptedClock(wall0: trueNow - Self.threeDays, rate: F.speed, synchronized: false, origin: boot)
        let first = gateway(device, p, store: store, clock: slow)
        first.start()
        #expect(try F.waitFor { try F.sips(store, address).count == 1 })
        first.stop()
        first.wait()
        p.shutdown()
        // A stamp from another boot, which nothing can correct.
        _ = try store.insert([(IntakeEvent(identity: "other-boot", kind: .sip, ml: 10, time: Timestamp(secondsSince1970: 1_000_000),
                                          source: .manual, recordedAt: .wallClockNow), [])],
                             unsynced: [UnsyncedStamp(bootID: "boot-z", sinceBoot: 12)])
        let provisional = try F.sips(store, address)[0].time.secondsSince1970
        #expect(try store.unsyncedCount() == 2)

        // The same boot (same monotonic clock), later, with the clock set.
        let (_, p2, _) = try bottle()
        let synced = ScriptedClock(wall0: trueNow, rate: F.speed, synchronized: true, origin: boot)
        let second = gateway(device, p2, store: store, clock: synced)
        second.start()
        second.stop()
        second.wait()
        p2.shutdown()
        let corrected = try F.sips(store, address)[0].time.secondsSince1970
        #expect(abs(corrected - provisional - Self.threeDays) < 1, "\(provisional) → \(corrected)")
        #expect(try store.unsyncedCount() == 0)
        #expect(try store.events(EventQuery()).contains { $0.identity == "other-boot" }, "the other boot's event is kept")
    }
}
#endif

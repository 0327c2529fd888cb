#if os(Linux)
import BluetoothWire
import Foundation
import Logging
import QuenchCore
import QuenchProfiles
import QuenchSimulatedDevices
import QuenchStore
import QuenchTestSupport
import Synchronization
import Testing
@testable import QuenchGateway

/// The gateway showing reminders on the devices themselves: `quench remind
/// --notify` records a reminder in the store (here `markReminded`, as it does),
/// and the live gateway, run in process over simulated peripherals, has each
/// connected device of that person that declares a signal perform its writes.
@Suite("reminder signals (simulated peripherals)", .serialized)
struct ReminderSignalTests {
    typealias F = LiveFixture

    /// A profile file's device: the DIY level bottle with a buzzer on 6e0a0002-…,
    /// written with response.
    static let buzzingBottle = try! CustomProfile(json: Array("""
        {"name": "buzzing bottle", "sensor": "level", "unit": "mm",
         "source": {"kind": "characteristic", "service": "6e0a0000-51a5-4c5b-9f1d-7e57b0771e00",
                    "characteristic": "6e0a0001-51a5-4c5b-9f1d-7e57b0771e00"},
         "value": {"type": "u16", "scale": 0.1},
         "reminder": {"characteristic": "6e0a0002-51a5-4c5b-9f1d-7e57b0771e00", "writes": ["01", "00", "01ff"],
                      "pauseSeconds": 0.2, "withResponse": true}}
        """.utf8))

    /// Log lines at notice and above, kept for the test to read.
    final class Lines: Sendable {
        let lines = Mutex<[String]>([])
        var all: [String] { lines.withLock { $0 } }
        func contains(_ text: String) -> Bool { all.contains { $0.contains(text) } }
    }

    struct Capture: LogHandler {
        let into: Lines
        var logLevel: Logger.Level = .debug
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            into.lines.withLock { $0.append("\(event.level) \(event.message)") }
        }
    }

    /// A store with `me` (the first person) and ann, and a device saved for each address given.
    func store(devices: [(address: String, profile: DeviceProfile, person: String)]) throws -> (IntakeStore, me: Int64, ann: Int64) {
        let store = try F.temporaryStore()
        let ann = try store.addPerson(name: "ann")
        for d in devices {
            try store.saveDevice(Device(address: d.address, profile: ProfileRegistry.identifier(d.profile),
                                        calibration: try calibration(d.profile), addedAt: .wallClockNow, person: d.person))
        }
        let me = try #require(try store.person(named: "me"))
        return (store, me.id, ann.id)
    }

    /// The gateway's own main loop (`run`, as quenchd runs it) on a thread, looking at reminders every 0.2 s.
    func startGateway(_ devices: [LiveDevice], _ radio: SimulatedRadio, store: IntakeStore, lines: Lines) -> (Gateway, Thread) {
        var options = Gateway.Options()
        options.connectTimeout = 1
        options.backoff = Backoff(initial: 0.05, factor: 2, maximum: 0.4)
        options.reminderCheckInterval = 0.2
        let logger = Logger(label: "test") { _ in Capture(into: lines) }
        let gateway = Gateway(devices: devices, store: store, options: options, logger: logger,
                              connector: radio, advertisements: { _ throws(LiveError) in throw .stopped })
        let thread = Thread { gateway.run(seconds: 60) }
        thread.start()
        return (gateway, thread)
    }

    func stop(_ gateway: Gateway, _ thread: Thread) {
        gateway.stop()
        _ = F.waitFor(10) { thread.isFinished }
    }

    /// A peripheral that stays connected and quiet after a short trace.
    func peripheral(_ address: String, _ profile: DeviceProfile) -> SimulatedPeripheral {
        let unit: MeasurementUnit = profile.sensor == .level ? .mm : .g
        return SimulatedPeripheral(address: BluetoothAddress(address)!, profile: profile,
                                   readings: [Reading(t: 0, value: 100), Reading(t: 0.1, value: 100)], unit: unit)
    }

    func calibration(_ profile: DeviceProfile) throws -> BottleCalibration {
        guard profile.sensor == .level else { return try BottleCalibration(unit: .g) }
        return try BottleCalibration(unit: .mm, levelCurve: try LevelCurve([.init(level: 0, ml: 0), .init(level: 200, ml: 700)]))
    }

    func device(_ address: String, _ profile: DeviceProfile) throws -> LiveDevice {
        LiveDevice(address: BluetoothAddress(address)!, profile: profile, calibration: try calibration(profile))
    }

    @Test("a reminder moved forward: that person's scale blinks its display, the declared writes in order; another's does not; one from before the start is never shown")
    func reminderShownOnTheOwnersDevicesOnly() throws {
        let annScale = "F0:F1:F2:F3:F4:A1", meBottle = "F0:F1:F2:F3:F4:A2"
        let bottleProfile = DeviceProfile.custom(Self.buzzingBottle)
        let (store, me, ann) = try store(devices: [(annScale, .decentScale, "ann"), (meBottle, bottleProfile, "me")])
        try store.markReminded(at: Timestamp.wallClockNow.adding(-120), person: ann)
        try store.markReminded(at: Timestamp.wallClockNow.adding(-60), person: me)
        let scale = peripheral(annScale, .decentScale), bottle = peripheral(meBottle, bottleProfile)
        let lines = Lines()
        let (gateway, thread) = startGateway([try device(annScale, .decentScale), try device(meBottle, bottleProfile)],
                                             SimulatedRadio([scale, bottle]), store: store, lines: lines)
        defer {
            stop(gateway, thread)
            scale.shutdown()
            bottle.shutdown()
        }
        #expect(F.waitFor(10) { gateway.pipelines.allSatisfy(\.isLinkUp) }, "both connected")
        // Several looks at the store, and several signal checks by each session: the reminders from before are not replayed.
        Thread.sleep(forTimeInterval: 1.5)
        #expect(scale.written.isEmpty && bottle.written.isEmpty, "a reminder from before the start was shown")

        // me is reminded: only me's bottle, with its three writes (with response) in order.
        try store.markReminded(at: .wallClockNow, person: me)
        let buzz = bottle.waitForWrites(3, timeout: 5)
        let buzzer = BluetoothUUID("6e0a0002-51a5-4c5b-9f1d-7e57b0771e00")!
        #expect(buzz.map(\.characteristic) == [buzzer, buzzer, buzzer])
        #expect(buzz.map(\.value) == [[0x01], [0x00], [0x01, 0xFF]])
        #expect(scale.written.isEmpty, "ann's scale showed me's reminder")

        // ann is reminded: her scale's display blinks, exactly the profile's writes to 0x36F5.
        let asked = ContinuousClock.now
        try store.markReminded(at: .wallClockNow, person: ann)
        let blink = scale.waitForWrites(4, timeout: 8)
        #expect(ContinuousClock.now - asked < .seconds(5), "shown within a few seconds (1.8 s of it the blink itself)")
        #expect(blink.map(\.characteristic) == Array(repeating: BluetoothUUID(uuid16: 0x36F5), count: 4))
        #expect(blink.map(\.value) == DeviceProfile.decentScale.reminderSignal!.writes)
        #expect(blink.map(\.value) == [[0x03, 0x0A, 0, 0, 0, 0, 0x09], [0x03, 0x0A, 1, 1, 0, 0, 0x09],
                                       [0x03, 0x0A, 0, 0, 0, 0, 0x09], [0x03, 0x0A, 1, 1, 0, 0, 0x09]])
        // Nothing more: each reminder once, on its owner's devices only.
        Thread.sleep(forTimeInterval: 1)
        #expect(scale.written.count == 4 && bottle.written.count == 3)
        #expect(lines.contains("reminder for ann shown") && lines.contains("reminder for me shown"), "\(lines.all)")
    }

    @Test("a device that is not connected when its owner is reminded: logged, not kept for later; a reminder seen too late: not shown")
    func notConnectedIsLoggedNotQueued() throws {
        let absent = "F0:F1:F2:F3:F4:B1"
        let (store, _, ann) = try store(devices: [(absent, .decentScale, "ann")])
        let lines = Lines()
        // Nobody answers at that address: every connect times out.
        let (gateway, thread) = startGateway([try device(absent, .decentScale)], SimulatedRadio([]), store: store, lines: lines)
        defer { stop(gateway, thread) }
        Thread.sleep(forTimeInterval: 0.5)
        // A reminder seen long after it was given (the store unreadable meanwhile) is not shown at all.
        try store.markReminded(at: Timestamp.wallClockNow.adding(-(ReminderWatch.staleAfter + 100)), person: ann)
        #expect(F.waitFor(5) { lines.contains("late; no light shown for it") }, "\(lines.all)")
        #expect(!lines.contains("not connected"))
        try store.markReminded(at: .wallClockNow, person: ann)
        #expect(F.waitFor(5) { lines.contains("reminder for ann: F0:F1:F2:F3:F4:B1 not connected, its light not shown") }, "\(lines.all)")
        #expect(gateway.gattSessions[0].signalState.withLock { $0.pending == nil }, "kept for later")
    }

    @Test("the watermarks: the first look is the baseline; a later time, or someone reminded for the first time, is new; the same or older is not")
    func watermarks() {
        func row(_ person: Int64, _ at: Double) -> ReminderGiven {
            ReminderGiven(person: person, name: "p\(person)", at: Timestamp(secondsSince1970: at), devices: [])
        }
        var w = ReminderWatermarks()
        #expect(w.advance([row(1, 100), row(2, 50)]).isEmpty)
        #expect(w.advance([row(1, 100), row(2, 50)]).isEmpty)
        #expect(w.advance([row(1, 99), row(2, 51)]).map(\.person) == [2])
        #expect(w.advance([row(1, 101), row(2, 51), row(3, 10)]).map(\.person) == [1, 3])
        #expect(w.advance([row(1, 101), row(2, 51), row(3, 10)]).isEmpty)
        // Nobody reminded at the start: whoever is reminded later is new.
        var late = ReminderWatermarks()
        #expect(late.advance([]).isEmpty)
        #expect(late.advance([row(1, 5)]).map(\.person) == [1])
    }

    @Test("the store's reminders given: one row per person reminded, with the devices that are theirs now")
    func remindersGivenQuery() throws {
        let (store, me, ann) = try store(devices: [("F0:00:00:00:00:02", .decentScale, "ann"), ("F0:00:00:00:00:01", .decentScale, "ann"),
                                                   ("F0:00:00:00:00:03", .weightScale, "me")])
        #expect(try store.remindersGiven().isEmpty)
        try store.markReminded(at: Timestamp(secondsSince1970: 1_800_000_000), person: ann)
        #expect(try store.remindersGiven() == [ReminderGiven(person: ann, name: "ann", at: Timestamp(secondsSince1970: 1_800_000_000),
                                                              devices: ["F0:00:00:00:00:01", "F0:00:00:00:00:02"])])
        try store.markReminded(at: Timestamp(secondsSince1970: 1_800_000_060), person: me)
        _ = try store.assignDevice(address: "F0:00:00:00:00:02", to: me)
        #expect(try store.remindersGiven().map(\.devices) == [["F0:00:00:00:00:02", "F0:00:00:00:00:03"], ["F0:00:00:00:00:01"]])
    }
}
#endif

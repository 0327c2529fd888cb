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

/// The whole path on the real kernel stack (../shared/ble-vm): the timer's command
/// decides and records a reminder while `quench run` holds the emulated kitchen
/// scale's link; the scale logs each write to 0x36F5 it receives.
@Suite("reminder signals in ble-vm", .serialized, .enabled(if: getenv("QUENCH_VM").map { String(cString: $0) } != "1", "runs outside the VM"))
struct ReminderSignalVMTests {
    @Test("quench remind --notify during quench run: the paired scale's display blinks, the four writes in order, once")
    func timerDecidesGatewayShows() throws {
        guard let (quench, dir) = try LiveVM.workspace() else { return }
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = dir.appendingPathComponent("scale.log").path
        // Hourly mode over the whole day: with nothing drunk and no reminder yet, one is due at once.
        let script = """
            Q=\(quench)
            export QUENCH_DB=/tmp/q.sqlite
            set -x
            $Q pair $QUENCH_VM_P1_ADDR --profile decent-scale --tare 180 || exit 11
            $Q remind set --mode hourly --window 00:00-24:00 --every 60min || exit 12
            $Q run --seconds 24 --log-level info &
            run=$!
            sleep 10
            $Q remind --notify || exit 13
            wait $run || exit 14
            """
        let result = try LiveVM.runScript(script, in: dir, peripherals: [
            "--profile decent-scale --addr F0:F1:F2:F3:F4:C1 --log \(log)",
        ], timeout: 180)
        #expect(result.status == 0, "the script in the VM failed (exit \(result.status))")
        #expect(result.output.contains("reminder for me shown"), "the gateway did not say it showed the reminder")
        let writes = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").compactMap { line -> String? in
            guard let obj = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  obj["event"] as? String == "write", obj["char"] as? String == "36f5" else { return nil }
            return obj["hex"] as? String
        }
        #expect(writes == ["030a0000000009", "030a0101000009", "030a0000000009", "030a0101000009"], "writes to 36f5: \(writes)")
    }
}
#endif

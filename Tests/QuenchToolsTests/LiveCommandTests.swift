#if os(Linux)
import BluetoothWire
import GATT
import Foundation
import QuenchCore
import QuenchProfiles
import QuenchSimulatedDevices
import QuenchTools
import QuenchSimulator
import QuenchStore
import QuenchTestSupport
import Synchronization
import Testing
@testable import QuenchGateway

/// `quench record`, `watch` and `calibrate` through the gateway functions
/// behind them, against simulated peripherals over socketpairs.
@Suite("live commands (simulated peripherals)", .serialized)
struct LiveCommandTests {
    typealias F = LiveFixture

    static let weightAddress = BluetoothAddress("F0:F1:F2:F3:F4:F5")!
    static let levelAddress = BluetoothAddress("C4:11:22:33:44:55")!

    static func transport(_ peripherals: [SimulatedPeripheral]) -> LiveTransport {
        LiveTransport(connector: SimulatedRadio(peripherals), advertisements: { _ throws(LiveError) in throw .stopped })
    }

    /// Session options for a trace streamed at `speed`: the clock at the same rate.
    static func accelerated(_ speed: Double = F.speed) -> Gateway.Options {
        var o = Gateway.Options()
        o.clockRate = speed
        o.connectTimeout = 2
        o.backoff = Backoff(initial: 0.05, factor: 2, maximum: 0.4)
        return o
    }

    /// A stop that fires once `p` has streamed its whole trace (or after `timeout`).
    static func stop(whenFinished p: SimulatedPeripheral, timeout: Double = 30, before: @escaping @Sendable () -> Void = {}) -> StopSignal {
        let stop = StopSignal()
        Thread.detachNewThread {
            let finished = p.waitUntilFinished(timeout: timeout)
            #expect(finished, "the simulated \(p.profile.identifier) did not finish streaming")
            before()
            stop.stop()
        }
        return stop
    }

    static func temporaryDirectory() throws -> URL {
        URL(fileURLWithPath: try TemporaryFolder.create("quench-cmds"))
    }

    /// A peripheral streaming `scenario` (its readings in the scenario's unit).
    static func peripheral(_ profile: DeviceProfile, _ address: BluetoothAddress, _ scenario: Scenario, speed: Double) -> (SimulatedPeripheral, [TruthEvent]) {
        let (readings, truth) = scenario.run()
        return (SimulatedPeripheral(address: address, profile: profile, readings: readings, unit: scenario.configuration.unit,
                                    streaming: SimulatedStreaming(speed: speed)), truth)
    }

    // MARK: - record

    @Test("record: a trace v1 file, renamed into place when done, whose replay gives the bottle's sips")
    func record() throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let scenario = F.weightScenario(seed: 21)
        // At half the others' speed: its readings are stamped as they arrive, and on a machine busy with
        // every test shard a stall of a few hundred ms was seconds of the trace, enough to lose a sip once.
        let speed = F.speed / 2
        let (p, truth) = Self.peripheral(.weightScale, Self.weightAddress, scenario, speed: speed)
        defer { p.shutdown() }
        let device = LiveDevice(address: Self.weightAddress, profile: .weightScale, calibration: try F.calibration(scenario, unit: .g))
        let path = dir.appendingPathComponent("rec.csv").path
        // While recording, only the temporary file exists.
        let stop = Self.stop(whenFinished: p) {
            #expect(!FileManager.default.fileExists(atPath: path), "the trace is under its real name before it is complete")
            let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
            #expect(names.contains { $0.hasPrefix("rec.csv.partial-") }, "no temporary file while recording: \(names)")
        }
        let options = Self.accelerated(speed)
        let n = try TraceRecorder.record(device, to: path, seconds: 60, options: options, transport: Self.transport([p]),
                                         stop: stop, stopOnSignals: false, logger: F.logger)
        #expect(n > 300, "only \(n) readings recorded")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["rec.csv"], "the temporary file is left over")

        let (header, readings) = try TraceParser.parse(try String(contentsOfFile: path, encoding: .utf8))
        #expect(readings.count == n)
        #expect(header.sensor == .weight)
        #expect(header.unit == .g)
        #expect(header.started?.iso8601 == options.started.iso8601)
        #expect(header["device"] == Self.weightAddress.description)
        #expect(header["profile"] == "weight-scale")
        #expect(header["empty-weight-g"] == "180")
        // Times are the session clock at the trace's rate: the recording spans the trace.
        let traceLength = scenario.run().readings.last!.t
        #expect(abs(readings.last!.t - traceLength) < 2, "recorded up to t=\(readings.last!.t), trace ends at \(traceLength)")

        var sips: [Double] = []
        let summary = try Replay.run(.file(path), options: ReplayOptions()) { e in if e.kind == .sip { sips.append(e.ml) } }
        let want = truth.filter { $0.kind == .sip }.map(\.ml)
        #expect(sips.count == want.count, "replayed sips \(sips), truth \(want)")
        for (got, w) in zip(sips, want) { #expect(abs(got - w) <= 5, "sip of \(w) mL replayed as \(got) mL") }
        #expect(summary.sips == want.count)
        #expect(summary.remainingML.map { abs($0 - (600 - want.reduce(0, +))) <= 10 } == true, "left: \(String(describing: summary.remainingML))")
    }

    @Test("record: a device that sends nothing leaves no file and says so")
    func recordNothing() throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let device = LiveDevice(address: BluetoothAddress("F0:00:00:00:00:02")!, profile: .weightScale, calibration: try BottleCalibration(unit: .g))
        var options = Gateway.Options()
        options.connectTimeout = 0.2
        options.backoff = Backoff(initial: 0.05, factor: 2, maximum: 0.2)
        let path = dir.appendingPathComponent("none.csv").path
        // Asked for 30 s, it gives up when no first reading has come within (here) 0.8 s.
        let error = #expect(throws: ToolError.self) {
            try TraceRecorder.record(device, to: path, seconds: 30, options: options, transport: Self.transport([]),
                                     stopOnSignals: false, firstReadingWithin: 0.8, logger: F.logger)
        }
        // The seconds it says are those it waited: 0.8 and a little, more on a starved machine (1.0 s seen), never the 30.
        let waited = error.flatMap { "\($0)".wholeMatch(of: /no readings from F0:00:00:00:00:02 within (\d+\.\d) s/) }.flatMap { Double($0.1) }
        #expect(waited.map { $0 >= 0.8 && $0 < 10 } == true, "\(String(describing: error))")
        // Stopped (Ctrl-C) before any reading: the seconds it waited, not the 60 it would have.
        let stop = StopSignal()
        Thread.detachNewThread { Thread.sleep(forTimeInterval: 0.3); stop.stop() }
        let stopped = #expect(throws: ToolError.self) {
            try TraceRecorder.record(device, to: path, seconds: 600, options: options, transport: Self.transport([]), stop: stop,
                                     stopOnSignals: false, logger: F.logger)
        }
        let said = stopped.map { "\($0)" } ?? ""
        #expect(said.hasPrefix("no readings from F0:00:00:00:00:02 within 0.") && said.hasSuffix(" s"), "\(said)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty)
    }

    /// A radio that takes `delay` seconds over each connection, as a busy or distant device does.
    struct SlowRadio: ATTConnector {
        let radio: SimulatedRadio
        let delay: Double
        func connect(to device: LiveDevice, timeout: Double, stop: StopSignal) throws(LiveError) -> any ATTBearer {
            if stop.wait(seconds: delay) { throw .stopped }
            return try radio.connect(to: device, timeout: timeout, stop: stop)
        }
    }

    @Test("record --seconds: the seconds count from the first reading, so a slow connection does not eat the recording")
    func recordSecondsFromTheFirstReading() throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // In real time: 10 readings a second, a connection that takes 1.5 s, a recording of 1 s.
        let (p, _) = Self.peripheral(.weightScale, Self.weightAddress, F.weightScenario(seed: 22), speed: 1)
        defer { p.shutdown() }
        let device = LiveDevice(address: Self.weightAddress, profile: .weightScale, calibration: try BottleCalibration(unit: .g))
        let path = dir.appendingPathComponent("slow.csv").path
        let transport = LiveTransport(connector: SlowRadio(radio: SimulatedRadio([p]), delay: 1.5),
                                      advertisements: { _ throws(LiveError) in throw .stopped })
        let n = try TraceRecorder.record(device, to: path, seconds: 1, options: Gateway.Options(), transport: transport,
                                         stopOnSignals: false, logger: F.logger)
        let (_, readings) = try TraceParser.parse(try String(contentsOfFile: path, encoding: .utf8))
        #expect(readings.count == n)
        let span = (readings.last?.t ?? 0) - (readings.first?.t ?? 0)
        #expect(n >= 7 && span >= 0.7, "\(n) readings over \(span) s after a 1.5 s connection; a second's worth (10) expected")
        #expect(span <= 1.5, "recorded \(span) s for --seconds 1")
        #expect(readings.first.map { $0.t >= 1.4 } == true, "the first reading at t=\(readings.first?.t ?? -1), before the connection could be up")
    }

    // MARK: - watch

    final class Collected: Sendable {
        private let items = Mutex<[Watch.Output]>([])
        func add(_ o: Watch.Output) { items.withLock { $0.append(o) } }
        var all: [Watch.Output] { items.withLock { $0 } }
    }

    @Test("watch: one line a reading with the detector's phase, level and band; events and link changes")
    func watch() throws {
        let scenario = F.levelScenario()
        let (p, truth) = Self.peripheral(.custom(ProfileRegistry.levelBottle), Self.levelAddress, scenario, speed: F.speed)
        defer { p.shutdown() }
        let device = LiveDevice(address: Self.levelAddress, profile: .custom(ProfileRegistry.levelBottle),
                                calibration: try F.calibration(scenario, unit: .mm))
        let out = Collected()
        Watch.run(device, seconds: 60, options: Self.accelerated(), transport: Self.transport([p]), stop: Self.stop(whenFinished: p),
                  stopOnSignals: false, logger: F.logger) { out.add($0) }
        let outputs = out.all
        let rows = outputs.compactMap { if case .reading(let r) = $0 { r } else { nil } }
        let events = outputs.compactMap { if case .event(let e, _) = $0 { e } else { nil } }
        #expect(rows.count > 100, "\(rows.count) rows")
        if case .link(true, let line) = outputs.first {
            #expect(line == "  (connected to \(Self.levelAddress))")
        } else {
            Issue.record("the first output is not the link coming up: \(String(describing: outputs.first))")
        }

        // Phases go settled → disturbed/confirming → settled as sips happen.
        let phases = Set(rows.map(\.phase))
        #expect(phases.isSuperset(of: [.settled, .disturbed]), "phases seen: \(phases)")
        let firstSettled = try #require(rows.first { $0.phase == .settled })
        #expect(abs(firstSettled.levelML! - 500) <= 5, "first settled level \(firstSettled.levelML!) mL, the bottle holds 500")
        let lastSettled = try #require(rows.last { $0.phase == .settled })
        #expect(abs(lastSettled.levelML! - 400) <= 5, "last settled level \(lastSettled.levelML!) mL, 100 mL drunk")
        #expect(rows.allSatisfy { ($0.phase == .settled) == ($0.levelML != nil) })
        #expect(rows.allSatisfy { $0.bandML > 0 })
        // The line shows the same values, in the header's columns.
        let line = firstSettled.line
        #expect(line.count == Watch.header.count, "\(line) vs \(Watch.header)")
        #expect(line.contains(" mm ") && line.contains(" settled "), "\(line)")
        #expect(line.hasSuffix(TraceWriter.fixed(firstSettled.bandML, places: 1)))
        #expect(line.contains(TraceWriter.fixed(firstSettled.levelML!, places: 1)))
        #expect(line.hasPrefix(EventFormat.leftPad(TraceWriter.fixed(firstSettled.reading.t, places: 2), 8) + "  \(TraceWriter.fixed(firstSettled.raw.value!, places: 1)) mm"))

        let sips = events.filter { $0.kind == .sip }.map(\.ml)
        let want = truth.filter { $0.kind == .sip }.map(\.ml)
        #expect(sips.count == want.count, "watch saw sips \(sips), truth \(want)")
        for (got, w) in zip(sips, want) { #expect(abs(got - w) <= 3) }
        #expect(outputs.contains { if case .event(let e, let l) = $0 { e.kind == .sip && l.hasPrefix("  → ") && l.contains("sip") } else { false } })
    }

    // MARK: - calibrate

    static func pairedStore(_ devices: [Device]) throws -> IntakeStore {
        let store = try F.temporaryStore()
        for d in devices { try store.saveDevice(d) }
        return store
    }

    /// The tools speak of what to measure; `quench calibrate` names its own options for it.
    @Test("calibrate on the command line: the problem in the words of its options")
    func calibrateCommandLineHints() throws {
        let store = try Self.pairedStore([Device(address: Self.weightAddress.description, profile: "weight-scale",
                                                 calibration: try BottleCalibration(unit: .g), addedAt: .wallClockNow)])
        let nothing = try runQuench(["calibrate", Self.weightAddress.description, "--db", store.path])
        #expect(nothing.status == 1)
        #expect(nothing.stderr.contains("quench: error: calibrate: nothing to do: give --empty-now, --full-now, --full ML or --point LEVEL:ML"),
                "\(nothing.stderr)")
        let point = try runQuench(["calibrate", Self.weightAddress.description, "--db", store.path, "--point", "0:0", "--point", "1:1"])
        #expect(point.stderr.contains("--point is for level sensors"), "\(point.stderr)")
        for problem: CalibrationProblem in [.nothingToDo, .fullNeedsEmptyWeight, .fullNeedsVolume, .badPoint("x"),
                                            .pointsNeedLevelSensor(address: "A", profile: "p"), .volumeNotPositive("0")] {
            #expect(!problem.description.contains("--"), "the library names no option: \(problem)")
        }
    }

    /// A bottle standing still with `ml` in it, streamed in real time.
    static func standing(_ unit: MeasurementUnit, ml: Double, address: BluetoothAddress, profile: DeviceProfile) -> SimulatedPeripheral {
        let config: SimulationConfiguration = unit.sensor == .level ? .clean(unit: unit, sampleRate: 10).with(.noise) : .clean(unit: unit).with(.noise)
        return peripheral(profile, address, Scenario(config, seed: 8, initialML: ml).idle(30), speed: 1).0
    }

    @Test("calibrate a weight device: empty weight from its readings, then capacity from a full reading")
    func calibrateWeight() throws {
        let store = try Self.pairedStore([Device(address: Self.weightAddress.description, profile: "weight-scale", sensor: .weight,
                                                 calibration: try BottleCalibration(unit: .g), addedAt: .wallClockNow)])
        var request = Calibration.Request(address: "f0:f1:f2:f3:f4:f5")
        request.seconds = 1.5

        // Step 1: the empty bottle (180 g) on the scale.
        let empty = Self.standing(.g, ml: 0, address: Self.weightAddress, profile: .weightScale)
        var lines: [String] = []
        request.emptyNow = true
        try Calibration.run(request, store: store, transport: Self.transport([empty]), logger: F.logger) { lines.append($0) }
        empty.shutdown()
        let afterEmpty = try #require(try store.device(address: Self.weightAddress.description)?.calibration)
        let tare = try #require(afterEmpty.emptyWeightG)
        #expect(abs(tare - 180) <= 5, "empty bottle measured as \(tare) g")
        #expect(afterEmpty.capacityML == nil)
        #expect(lines.first == "measuring for 1.5 s...")
        #expect(lines.last?.hasPrefix("saved calibration of F0:F1:F2:F3:F4:F5:") == true, "\(lines)")

        // Step 2: the full bottle (180 g + 750 mL of water).
        let full = Self.standing(.g, ml: 750, address: Self.weightAddress, profile: .weightScale)
        request.emptyNow = false
        request.fullNow = true
        lines = []
        try Calibration.run(request, store: store, transport: Self.transport([full]), logger: F.logger) { lines.append($0) }
        full.shutdown()
        let calibrated = try #require(try store.device(address: Self.weightAddress.description)?.calibration)
        #expect(calibrated.emptyWeightG == tare, "the tare is kept")
        let capacity = try #require(calibrated.capacityML)
        #expect(abs(capacity - 750) <= 10, "capacity \(capacity) mL")
        #expect(calibrated.unit == .g)
    }

    @Test("calibrate a level device: points by hand, a measured full point, one more point merged")
    func calibrateLevel() throws {
        let store = try Self.pairedStore([Device(address: Self.levelAddress.description, profile: "level-bottle", sensor: .level,
                                                 addedAt: .wallClockNow, addressType: "random")])
        var request = Calibration.Request(address: Self.levelAddress.description)
        request.points = ["0:0", "150:504"]
        var lines: [String] = []
        try Calibration.run(request, store: store, transport: Self.transport([]), logger: F.logger) { lines.append($0) }
        var c = try #require(try store.device(address: Self.levelAddress.description)?.calibration)
        #expect(c.levelCurve?.description == "0:0,150:504")
        #expect(c.capacityML == 504)
        #expect(c.unit == .mm)
        #expect(lines == ["saved calibration of C4:11:22:33:44:55: \(DeviceListing.summary(c)) (0:0,150:504)"])
        #expect(try store.device(address: Self.levelAddress.description)?.sensor == .level)
        #expect(try store.device(address: Self.levelAddress.description)?.addressType == "random", "the rest of the record is kept")

        // The full bottle measured (750 mL stands at 230 mm in the simulated sports bottle), with the hand points.
        let full = Self.standing(.mm, ml: 750, address: Self.levelAddress, profile: .custom(ProfileRegistry.levelBottle))
        request.fullNow = true
        request.fullML = 750
        request.seconds = 1.5
        try Calibration.run(request, store: store, transport: Self.transport([full]), logger: F.logger) { _ in }
        full.shutdown()
        c = try #require(try store.device(address: Self.levelAddress.description)?.calibration)
        let points = try #require(c.levelCurve?.points)
        #expect(points.count == 3)
        #expect(points.last.map { abs($0.level - 230) <= 1 && $0.ml == 750 } == true, "full point \(String(describing: points.last))")
        #expect(c.capacityML == 750)

        // One midpoint more corrects the saved curve.
        request = Calibration.Request(address: Self.levelAddress.description)
        request.points = ["30:84"]
        try Calibration.run(request, store: store, transport: Self.transport([]), logger: F.logger) { _ in }
        c = try #require(try store.device(address: Self.levelAddress.description)?.calibration)
        #expect(c.levelCurve?.points.map(\.ml) == [0, 84, 504, 750])
        #expect(c.capacityML == 750)
    }

    @Test("calibrate: bad inputs give clear errors and leave the saved calibration alone")
    func calibrateErrors() throws {
        let curve = try LevelCurve(parsing: "0:0,230:750")
        let saved = try BottleCalibration(unit: .mm, levelCurve: curve, capacityML: 750)
        let store = try Self.pairedStore([
            Device(address: Self.levelAddress.description, profile: "level-bottle", calibration: saved, addedAt: .wallClockNow),
            Device(address: Self.weightAddress.description, profile: "weight-scale", calibration: try BottleCalibration(unit: .g), addedAt: .wallClockNow),
        ])
        func failure(_ address: String, _ edit: (inout Calibration.Request) -> Void) -> String {
            var r = Calibration.Request(address: address)
            r.seconds = 0.5
            edit(&r)
            do {
                try Calibration.run(r, store: store, transport: Self.transport([]), logger: F.logger) { _ in }
                Issue.record("no error for \(r)")
                return ""
            } catch {
                return error.description
            }
        }
        let level = Self.levelAddress.description
        #expect(failure("F0:00:00:00:00:09") { $0.points = ["0:0", "100:500"] }
                == "no paired device F0:00:00:00:00:09")
        #expect(failure(level) { $0.points = ["10:0", "10:100"] }
                == "level points 10:0,10:100 (in order of mL): level curve point 2: level 10 is not above the previous point's 10")
        #expect(failure(level) { $0.points = ["20:0", "10:100"] }
                == "level points 20:0,10:100 (in order of mL): level curve point 2: level 10 is not above the previous point's 20")
        #expect(failure(level) { $0.points = ["12.5"] } == "calibrate: level point '12.5' is not LEVEL:ML (two numbers, e.g. 12.5:250)")
        #expect(failure(level) { _ in }.hasPrefix("calibrate: nothing to do"))
        #expect(failure(Self.weightAddress.description) { $0.fullNow = true }
                == "calibrate: measuring the full bottle needs the empty bottle's weight: measure the empty bottle first")
        #expect(failure(Self.weightAddress.description) { $0.points = ["0:0", "1:1"] }
                == "calibrate: level points are for level sensors; F0:F1:F2:F3:F4:F5 is a weight-scale (weight)")
        // Nothing answers: no readings within the listening time.
        #expect(failure(Self.weightAddress.description) { $0.emptyNow = true } == "no readings from F0:F1:F2:F3:F4:F5 within 0.5 s")
        #expect(try store.device(address: level)?.calibration == saved)
        #expect(try store.device(address: Self.weightAddress.description)?.calibration == (try BottleCalibration(unit: .g)))

        // A full bottle lighter than the empty one.
        #expect(throws: ToolError.self) {
            try Calibration.weight(try BottleCalibration(unit: .g, emptyWeightG: 400), emptyG: nil, fullG: 380, capacityML: nil)
        }
    }

    // MARK: - calibrate, guided

    /// The bench a person calibrates on: whichever bottle they last put down is
    /// the one the radio reaches, swapped when a prompt asks them to.
    final class Bench: ATTConnector, Sendable {
        private let state = Mutex<(current: SimulatedPeripheral?, all: [SimulatedPeripheral])>((nil, []))
        var all: [SimulatedPeripheral] { state.withLock { $0.all } }

        func put(_ p: SimulatedPeripheral) {
            state.withLock { s in
                s.current?.shutdown()
                s.current = p
                s.all.append(p)
            }
        }

        func connect(to device: LiveDevice, timeout: Double, stop: StopSignal) throws(LiveError) -> any ATTBearer {
            guard let p = state.withLock({ $0.current }) else { throw .connectTimeout(address: device.address.description, seconds: timeout) }
            return try p.connect(to: device, timeout: timeout, stop: stop)
        }

        func transport() -> LiveTransport {
            LiveTransport(connector: self, advertisements: { _ throws(LiveError) in throw .stopped })
        }
    }

    @Test("calibrate, guided: empty bottle, then full, each when the person presses Enter")
    func calibrateWeightGuided() throws {
        let store = try Self.pairedStore([Device(address: Self.weightAddress.description, profile: "weight-scale", sensor: .weight,
                                                 addedAt: .wallClockNow)])
        var request = Calibration.Request(address: Self.weightAddress.description)
        request.interactive = true
        request.seconds = 1.5
        let bench = Bench()
        var prompts: [String] = []
        var lines: [String] = []
        try Calibration.run(request, store: store, transport: bench.transport(), logger: F.logger, ask: { prompt in
            prompts.append(prompt)
            if prompt.hasPrefix("Put the empty bottle") {
                bench.put(Self.standing(.g, ml: 0, address: Self.weightAddress, profile: .weightScale))
            } else if prompt.hasPrefix("Fill the bottle") {
                bench.put(Self.standing(.g, ml: 750, address: Self.weightAddress, profile: .weightScale))
            }
            return ""
        }, write: { lines.append($0) })
        bench.all.forEach { $0.shutdown() }
        #expect(prompts == ["Put the empty bottle on the scale. Then press Enter.", "Fill the bottle and put it on the scale. Then press Enter."])
        let c = try #require(try store.device(address: Self.weightAddress.description)?.calibration)
        #expect(c.emptyWeightG.map { abs($0 - 180) <= 5 } == true, "empty \(String(describing: c.emptyWeightG)) g")
        #expect(c.capacityML.map { abs($0 - 750) <= 10 } == true, "capacity \(String(describing: c.capacityML)) mL")
        #expect(lines.filter { $0.hasPrefix("measuring") }.count == 2, "\(lines)")
    }

    @Test("calibrate, guided, level bottle: empty, the volume typed in, full; a volume that is not a number is refused")
    func calibrateLevelGuided() throws {
        let store = try Self.pairedStore([Device(address: Self.levelAddress.description, profile: "level-bottle", sensor: .level,
                                                 addedAt: .wallClockNow, addressType: "random")])
        var request = Calibration.Request(address: Self.levelAddress.description)
        request.interactive = true
        request.seconds = 1.5
        let level = DeviceProfile.custom(ProfileRegistry.levelBottle)
        func answering(_ volume: String) -> (String) -> String? {
            { prompt in
                if prompt.hasPrefix("Empty the bottle") {
                    bench.put(Self.standing(.mm, ml: 0, address: Self.levelAddress, profile: level))
                } else if prompt.hasPrefix("Fill the bottle") {
                    bench.put(Self.standing(.mm, ml: 750, address: Self.levelAddress, profile: level))
                }
                return prompt.hasPrefix("How many mL") ? volume : ""
            }
        }
        let bench = Bench()
        defer { bench.all.forEach { $0.shutdown() } }
        #expect {
            try Calibration.run(request, store: store, transport: bench.transport(), logger: F.logger, ask: answering("lots"), write: { _ in })
        } throws: { error in
            "\(error)".contains("the full bottle's volume must be a positive number of mL")
        }
        #expect(try store.device(address: Self.levelAddress.description)?.calibration == nil, "nothing saved after a refused answer")

        try Calibration.run(request, store: store, transport: bench.transport(), logger: F.logger, ask: answering(" 750 "), write: { _ in })
        let c = try #require(try store.device(address: Self.levelAddress.description)?.calibration)
        let points = try #require(c.levelCurve?.points)
        #expect(points.count == 2)
        #expect(points.first.map { abs($0.level) <= 1 && $0.ml == 0 } == true, "empty point \(String(describing: points.first))")
        #expect(points.last.map { abs($0.level - 230) <= 1 && $0.ml == 750 } == true, "full point \(String(describing: points.last))")
        #expect(c.capacityML == 750)
    }
}
#endif

#if os(Linux)
import BluetoothWire
import Logging
import QuenchGateway
import Synchronization
import QuenchCore
import QuenchProfiles
import QuenchStore
import Threading

/// `quench watch`: one line per reading with the detector's view of it.
public enum Watch {
    public static let header = columns("t", "reading", "value", "phase", "level mL", "band mL")

    /// The header's and the lines' columns, aligned alike.
    static func columns(_ t: String, _ reading: String, _ value: String, _ phase: String, _ level: String, _ band: String) -> String {
        EventFormat.leftPad(t, 8) + "  " + EventFormat.pad(reading, 20) + EventFormat.leftPad(value, 10) + "  "
            + EventFormat.pad(phase, 12) + EventFormat.leftPad(level, 9) + EventFormat.leftPad(band, 9)
    }

    /// One reading as watch shows it.
    public struct Row: Sendable {
        public var reading: Reading
        public var raw: ProfileReading
        public var phase: DetectorPhase
        /// The settled level in mL (nil while not settled).
        public var levelML: Double?
        /// The detector's noise band in mL.
        public var bandML: Double
        public var line: String
    }

    /// What watch reports, in order: readings, final events, link changes.
    public enum Output: Sendable {
        case reading(Row)
        case event(DetectedEvent, line: String)
        case link(up: Bool, line: String)
        /// What a device said of itself (a bottle's battery, its cap).
        case note(String)

        public var line: String {
            switch self {
            case .reading(let r): r.line
            case .event(_, let line), .link(_, let line), .note(let line): line
            }
        }
    }

    public static func line(_ r: Reading, raw: ProfileReading, detector: SipDetector, unit: MeasurementUnit) -> String {
        let value = r.value.map { TraceWriter.fixed($0, places: 1) + " " + unit.rawValue } ?? "-"
        let level = detector.level.map { TraceWriter.fixed($0, places: 1) } ?? "-"
        return columns(TraceWriter.fixed(r.t, places: 2), Pairing.describe(raw), value, detector.phase.rawValue, level,
                       TraceWriter.fixed(detector.band, places: 1))
    }

    /// Listens to `device` for `seconds` (nil: until `stop`), reporting each reading,
    /// event and link change to `output` on the device's thread.
    @discardableResult
    public static func run(_ device: LiveDevice, seconds: Double?, options: Gateway.Options = .init(), transport: LiveTransport,
                           stop: StopSignal = StopSignal(), stopOnSignals: Bool = true, logger: Logger,
                           output: @escaping @Sendable (Output) -> Void) -> Gateway {
        let unit = device.calibration.unit
        return LiveSession.run(device, seconds: seconds, observer: LiveObserver(
            reading: { _, r, raw, detector in
                output(.reading(Row(reading: r, raw: raw, phase: detector.phase, levelML: detector.level, bandML: detector.band,
                                    line: line(r, raw: raw, detector: detector, unit: unit))))
            },
            link: { d, up in output(.link(up: up, line: up ? "  (connected to \(d.label))" : "  (link lost; reconnecting)")) },
            note: { _, text in output(.note("  (\(text))")) }),
            logger: logger, options: options, transport: transport, stop: stop, stopOnSignals: stopOnSignals,
            onEvent: { c in output(.event(c.final.event, line: "  → " + EventFormat.tableRow(c.final.event, started: c.final.started))) })
    }
}

/// `quench record`: a device's readings as a trace v1 file, written to a
/// temporary name and renamed into place when done.
public final class TraceRecorder: Sendable {
    private struct State {
        var file: OutputFile
        var failure: OutputFileError?
        var readings = 0
        var firstReadingAt: ContinuousClock.Instant?
    }
    private let state: Mutex<State>

    /// Readings written so far.
    public var readings: Int { state.withLock { $0.readings } }

    /// The write that failed, if one did (nothing is written after it).
    var failure: OutputFileError? { state.withLock { $0.failure } }

    /// How long `record` waits for a first reading before it gives up: a
    /// recording's seconds count from its first reading.
    public static let firstReadingWithin = 60.0

    public init(path: String, device: LiveDevice, started: Timestamp) throws(ToolError) {
        let file: OutputFile
        do { file = try OutputFile(path: path) } catch { throw .output(error) }
        var metadata: [TraceHeader.Metadata] = [
            .init(key: "device", value: device.label),
            .init(key: "profile", value: ProfileRegistry.identifier(device.profile)),
        ]
        if let name = device.name { metadata.append(.init(key: "name", value: name)) }
        if let curve = device.calibration.levelCurve { metadata.append(.init(key: "level-curve", value: curve.description)) }
        if let c = device.calibration.capacityML { metadata.append(.init(key: "capacity-ml", value: c.compactDescription)) }
        if let e = device.calibration.emptyWeightG { metadata.append(.init(key: "empty-weight-g", value: e.compactDescription)) }
        let header = TraceHeader(sensor: device.calibration.sensor, unit: device.calibration.unit, started: started, metadata: metadata)
        do { try file.write(header.formatted()) } catch { throw .output(error) }
        state = Mutex(State(file: file))
    }

    public func append(_ reading: Reading) {
        state.withLock { s in
            guard s.failure == nil else { return }
            do throws(OutputFileError) { try s.file.write(TraceWriter.row(reading, decimals: 2)); s.readings += 1 } catch { s.failure = error }
            if s.firstReadingAt == nil { s.firstReadingAt = .now }
        }
    }

    /// Whether a recording of `seconds` that began at `began` is over: `seconds`
    /// after the first reading (a slow connection takes nothing from it), or
    /// without one after `firstReadingWithin`.
    func isOver(seconds: Double, began: ContinuousClock.Instant, firstReadingWithin: Double) -> Bool {
        let first = state.withLock { $0.firstReadingAt }
        let (from, limit) = first.map { ($0, seconds) } ?? (began, firstReadingWithin)
        return (ContinuousClock.now - from).seconds >= limit
    }

    public func commit() throws(ToolError) {
        try state.withLock { s throws(ToolError) in
            if let failure = s.failure { throw .output(failure) }
            do throws(OutputFileError) { try s.file.commit() } catch { throw .output(error) }
        }
    }

    /// Removes the partial file now: a session thread still winding down may
    /// hold the recorder for a while.
    public func discard() {
        state.withLock { $0.file.discard() }
    }

    /// Records `device` into `path` for `seconds` from its first reading (nil:
    /// until `stop`); with no reading within `firstReadingWithin` seconds, it
    /// gives up. The file appears only once complete, and not at all without
    /// readings. Returns the number of readings written.
    @discardableResult
    public static func record(_ device: LiveDevice, to path: String, seconds: Double?, options: Gateway.Options = .init(),
                              transport: LiveTransport, stop: StopSignal = StopSignal(), stopOnSignals: Bool = true,
                              firstReadingWithin: Double = firstReadingWithin, logger: Logger) throws(ToolError) -> Int {
        // The header's `started` is the session clock's t = 0, so rows and events line up with wall time.
        let recorder = try TraceRecorder(path: path, device: device, started: options.started)
        let began = ContinuousClock.now
        let isOver = seconds.map { s in { recorder.isOver(seconds: s, began: began, firstReadingWithin: firstReadingWithin) } }
        _ = LiveSession.run(device, seconds: nil, observer: LiveObserver(reading: { _, r, _, _ in recorder.append(r) }),
                            logger: logger, options: options, transport: transport, stop: stop, stopOnSignals: stopOnSignals,
                            endWhen: isOver)
        // A write that failed is said as such, even when it was the first.
        if let failure = recorder.failure {
            recorder.discard()
            throw .output(failure)
        }
        guard recorder.readings > 0 else {
            recorder.discard()
            throw .noReadings(address: device.label, seconds: (ContinuousClock.now - began).seconds)
        }
        do { try recorder.commit() } catch {
            recorder.discard()
            throw error
        }
        return recorder.readings
    }
}

/// `quench calibrate`: settled readings turned into a tare, a capacity or level-curve points.
public enum Calibration {
    /// What to calibrate, as the command's flags say.
    public struct Request: Sendable {
        public var address: String
        /// Measure the bottle on the device now as empty.
        public var emptyNow = false
        /// Measure it now as full.
        public var fullNow = false
        /// The full bottle's volume (capacity) in mL.
        public var fullML: Double?
        /// Level points by hand, `LEVEL:ML` as typed.
        public var points: [String] = []
        /// Seconds to listen for each measurement.
        public var seconds = 5.0
        /// Guide step by step through `ask` (a terminal); flags are then extra.
        public var interactive = false

        public init(address: String) { self.address = address }
    }

    /// Calibrates a paired device and saves it. `ask` shows a prompt and returns
    /// the answer (interactive only); `write` gets progress lines.
    @discardableResult
    public static func run(_ request: Request, store: IntakeStore, options: Gateway.Options = .init(), transport: LiveTransport,
                           logger: Logger, ask: (String) -> String? = { _ in nil }, write: (String) -> Void) throws(ToolError) -> Device {
        let key = normalizedAddress(request.address)
        let saved: Device?
        do { saved = try store.device(address: key) } catch { throw .live(.store(error)) }
        guard var record = saved else { throw .live(.unknownDevice(request.address)) }
        guard let address = BluetoothAddress(record.address) else { throw .live(.badAddress(record.address)) }
        let profile: DeviceProfile
        do { profile = try LiveDevice.profile(of: record) } catch { throw .live(error) }
        let sensor = profile.sensor
        let points = try parsePoints(request.points)
        let interactive = request.interactive
        guard interactive || request.emptyNow || request.fullNow || request.fullML != nil || !points.isEmpty else {
            throw .calibrationRequest(.nothingToDo)
        }
        if sensor == .weight && !points.isEmpty {
            throw .calibrationRequest(.pointsNeedLevelSensor(address: record.address, profile: ProfileRegistry.identifier(profile)))
        }
        if let c = request.fullML, !(c.isFinite && c > 0) { throw .calibrationRequest(.volumeNotPositive(c.compactDescription)) }

        // Measured in g (any scale's unit converts) or in the level sensor's own unit.
        let unit: MeasurementUnit = sensor == .weight ? .g : profile.unit
        // A level device's saved curve plays no part in a raw measurement: an identity placeholder makes it valid.
        let probeCalibration: BottleCalibration
        do throws(CalibrationError) {
            if sensor == .weight, let saved = record.calibration {
                probeCalibration = saved
            } else if sensor == .weight {
                probeCalibration = try BottleCalibration(unit: .g)
            } else {
                probeCalibration = try BottleCalibration(unit: unit, levelCurve: LevelCurve([.init(level: 0, ml: 0), .init(level: 1_000_000, ml: BottleCalibration.largestML)]))
            }
        } catch { throw .calibration(error) }
        let probe = LiveDevice(address: address, addressType: record.addressType.flatMap(AddressType.init) ?? .lePublic,
                               name: record.name, profile: profile, calibration: probeCalibration)
        func measure(_ prompt: String) throws(ToolError) -> Double {
            if interactive { _ = ask(prompt + " Then press Enter.") }
            write("measuring for \(request.seconds.compactDescription) s...")
            let v = try Calibration.measure(probe, seconds: request.seconds, logger: logger, options: options, transport: transport)
            write("  \(TraceWriter.fixed(v, places: 1)) \(unit.rawValue)")
            return v
        }

        let result: BottleCalibration
        if sensor == .weight {
            let old = probeCalibration
            let empty = request.emptyNow || interactive ? try measure("Put the empty bottle on the scale.") : nil
            if (request.fullNow || interactive) && (empty ?? old.emptyWeightG) == nil {
                throw .calibrationRequest(.fullNeedsEmptyWeight)
            }
            let full = request.fullNow || interactive ? try measure("Fill the bottle and put it on the scale.") : nil
            // A measured full bottle gives the capacity; --full only without one.
            result = try weight(old, emptyG: empty, fullG: full, capacityML: full == nil ? request.fullML : nil)
        } else {
            var list = points
            if request.emptyNow || interactive { list.append(.init(level: try measure("Empty the bottle and stand it upright."), ml: 0)) }
            var capacity = request.fullML
            if interactive && capacity == nil {
                let answer = ask("How many mL does the full bottle hold?") ?? ""
                guard let c = Double(answer.trimmingSpaces), c.isFinite, c > 0 else {
                    throw .calibrationRequest(.volumeNotPositive(String(answer.trimmingSpaces)))
                }
                capacity = c
            }
            if request.fullNow || interactive {
                guard let c = capacity ?? record.calibration?.capacityML else {
                    throw .calibrationRequest(.fullNeedsVolume)
                }
                capacity = c
                list.append(.init(level: try measure("Fill the bottle to \(c.compactDescription) mL and stand it upright."), ml: c))
            }
            // One new point corrects the saved curve: it replaces the saved point of the same volume.
            if list.count < 2, let old = record.calibration?.levelCurve {
                list = old.points.filter { p in !list.contains { $0.ml == p.ml } } + list
            }
            result = try level(unit, points: list, capacityML: capacity)
        }
        record.calibration = result
        record.sensor = result.sensor
        do { try store.saveDevice(record) } catch { throw .live(.store(error)) }
        write("saved calibration of \(record.address): \(DeviceListing.summary(result))"
              + (result.levelCurve.map { " (\($0.description))" } ?? ""))
        return record
    }

    /// `LEVEL:ML` strings as points.
    public static func parsePoints(_ texts: [String]) throws(ToolError) -> [LevelCurve.Point] {
        var out: [LevelCurve.Point] = []
        for text in texts {
            guard let point = LevelCurve.Point(parsing: text) else { throw .calibrationRequest(.badPoint(text)) }
            out.append(point)
        }
        return out
    }

    /// The median of the readings in the last half of `seconds` of listening.
    public static func measure(_ device: LiveDevice, seconds: Double, logger: Logger, options: Gateway.Options = .init(),
                               transport: LiveTransport) throws(ToolError) -> Double {
        let values = SettledValues()
        _ = LiveSession.run(device, seconds: seconds, observer: LiveObserver(reading: { _, r, _, _ in
            if let v = r.value { values.append(r.t, v) }
        }), logger: logger, options: options, transport: transport)
        guard let median = values.settledMedian() else { throw .noReadings(address: device.label, seconds: seconds) }
        return median
    }

    /// A weight calibration from the empty bottle's weight and optionally the full one's (both g).
    public static func weight(_ old: BottleCalibration, emptyG: Double?, fullG: Double?, capacityML: Double?) throws(ToolError) -> BottleCalibration {
        let empty = emptyG ?? old.emptyWeightG
        var capacity = capacityML ?? old.capacityML
        if let fullG, let empty {
            guard fullG > empty else {
                throw .calibrationRequest(.fullNotHeavier(fullG: fullG, emptyG: empty))
            }
            capacity = (fullG - empty) / old.density
        }
        do {
            return try BottleCalibration(unit: .g, density: old.density, capacityML: capacity, emptyWeightG: empty)
        } catch {
            throw .calibration(error)
        }
    }

    /// A level curve from measured or given points (at least two), taken in
    /// order of volume: the level must rise with every point.
    public static func level(_ unit: MeasurementUnit, points: [LevelCurve.Point], capacityML: Double?) throws(ToolError) -> BottleCalibration {
        let sorted = points.sorted { ($0.ml, $0.level) < ($1.ml, $1.level) }
        let curve: LevelCurve
        do { curve = try LevelCurve(sorted) } catch { throw .levelPoints(sorted, error) }
        do {
            return try BottleCalibration(unit: unit, levelCurve: curve, capacityML: capacityML ?? sorted.last?.ml)
        } catch {
            throw .calibration(error)
        }
    }
}

/// Readings gathered on the device's thread for a measurement.
private final class SettledValues: Sendable {
    private let samples = Mutex<[(t: Double, v: Double)]>([])
    func append(_ t: Double, _ v: Double) { samples.withLock { $0.append((t, v)) } }
    /// The median of the readings in the later half of the time listened.
    func settledMedian() -> Double? {
        let samples = self.samples.withLock { $0 }
        guard let first = samples.first, let last = samples.last else { return nil }
        let half = samples.filter { $0.t >= (first.t + last.t) / 2 }.map(\.v).sorted()
        return half.isEmpty ? nil : half[half.count / 2]
    }
}
#endif

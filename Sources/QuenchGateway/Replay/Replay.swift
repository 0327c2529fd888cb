import QuenchCore

/// How to read a trace: overrides of its header and the bottle's calibration.
public struct ReplayOptions: Sendable {
    public var sensor: SensorKind?
    public var unit: MeasurementUnit?
    public var levelCurve: LevelCurve?
    public var density = 1.0
    public var capacityML: Double?
    public var tareG: Double?
    /// Wall-clock time of t = 0 when the header has no `started`.
    public var started: Timestamp?
    public var detector = DetectorConfiguration()

    public init() {}

    /// The calibration for a trace with this header, or why there is none.
    public func calibration(for header: TraceHeader, source: TraceSource) throws(ReplayError) -> BottleCalibration {
        let sensor = self.sensor ?? header.sensor
        guard let unit = self.unit ?? header.unit ?? sensor.map({ $0 == .weight ? .g : .mm }) else {
            throw .missingUnit(path: source.description)
        }
        if let sensor, unit.sensor != sensor {
            throw .calibration(path: source.description, .unitDoesNotFitSensor(unit, sensor))
        }
        do {
            // The header may carry the bottle's calibration (`quench simulate`
            // and `quench record` write it); options given on the command line win.
            var curve = levelCurve
            if curve == nil, unit.sensor == .level, let text = header["level-curve"] { curve = try LevelCurve(parsing: text) }
            return try BottleCalibration(
                unit: unit, density: density, levelCurve: curve,
                capacityML: capacityML ?? header["capacity-ml"].flatMap { Double($0) },
                emptyWeightG: tareG ?? header["empty-weight-g"].flatMap { Double($0) })
        } catch {
            throw .calibration(path: source.description, error)
        }
    }
}

/// Why a replay failed.
public enum ReplayError: Error, Sendable, CustomStringConvertible {
    case cannotOpen(path: String, SystemError)
    case cannotRead(path: String, SystemError)
    case malformedTrace(path: String, TraceError)
    case missingUnit(path: String)
    case calibration(path: String, CalibrationError)

    public var description: String {
        switch self {
        case .cannotOpen(let path, let e): "\(path): cannot open: \(e)"
        case .cannotRead(let path, let e): "\(path): cannot read: \(e)"
        case .malformedTrace(let path, let e): "\(path):\(e.line): \(e.reasonDescription)"
        case .missingUnit(let path): "\(path): the header gives no '# unit:' (use --unit g|kg|lb|oz|mm|percent|raw)"
        case .calibration(let path, let e): "\(path): \(e)"
        }
    }
}

/// What a replay found, besides the events themselves.
public struct ReplaySummary: Sendable, Hashable {
    public var header = TraceHeader()
    public var calibration: BottleCalibration?
    public var readings = 0
    public var duration = 0.0
    public var sipML = 0.0
    public var sips = 0
    public var refills = 0
    public var refillML = 0.0
    public var pours = 0
    public var pourML = 0.0
    /// What the last event said is left in the bottle.
    public var remainingML: Double?

    public init() {}

    mutating func count(_ event: DetectedEvent) {
        switch event.kind {
        case .sip: sips += 1; sipML += event.ml
        case .refill: refills += 1; refillML += event.ml
        case .pour: pours += 1; pourML += event.ml
        case .lifted, .placed: return
        }
        if let remaining = event.remainingML { remainingML = remaining }
    }
}

/// Runs a trace through the detector, streaming.
public enum Replay {
    /// Calls `onEvent` for each event as it becomes final, in order.
    public static func run(
        _ source: TraceSource,
        options: ReplayOptions,
        chunkSize: Int = 1 << 16,
        onStart: (TraceHeader, BottleCalibration) throws -> Void = { _, _ in },
        onEvent: (DetectedEvent) throws -> Void
    ) throws -> ReplaySummary {
        var summary = ReplaySummary()
        var detector: SipDetector?
        var events: [DetectedEvent] = []
        var lastT = 0.0
        var firstT: Double?
        let header = try TraceStreamReader(source, chunkSize: chunkSize).read { header, batch in
            if detector == nil {
                let calibration = try options.calibration(for: header, source: source)
                detector = SipDetector(calibration: calibration, configuration: options.detector)
                summary.calibration = calibration
                try onStart(header, calibration)
            }
            for reading in batch {
                detector!.process(reading, into: &events)
                if !events.isEmpty {
                    for event in events {
                        summary.count(event)
                        try onEvent(event)
                    }
                    events.removeAll(keepingCapacity: true)
                }
            }
            summary.readings += batch.count
            if firstT == nil { firstT = batch.first?.t }
            lastT = batch[batch.count - 1].t
        }
        if detector == nil {
            // A trace with a header and no readings: still check its calibration.
            summary.calibration = try options.calibration(for: header, source: source)
            try onStart(header, summary.calibration!)
        }
        detector?.finish(into: &events)
        for event in events {
            summary.count(event)
            try onEvent(event)
        }
        summary.header = header
        summary.duration = lastT - (firstT ?? lastT)
        return summary
    }
}

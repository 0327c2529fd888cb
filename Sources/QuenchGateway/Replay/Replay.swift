import QuenchCore

/// How to read a trace: overrides of its header and the bottle's calibration.
public struct ReplayOptions: Sendable {
    public var sensor: SensorKind?
    public var unit: MeasurementUnit?
    public var levelCurve: LevelCurve?
    public var density = 1.0
    public var capacityML: Double?
    public var tareG: Double?
    /// Wall-clock time of t = 0, in place of the header's `started` (a recorder's wrong clock) or where it has none.
    public var started: Timestamp?
    public var detector = DetectorConfiguration()

    public init() {}

    /// The calibration for a trace with this header, or why there is none.
    public func calibration(for header: TraceHeader, source: TraceSource) throws(ReplayError) -> BottleCalibration {
        let sensor = self.sensor ?? header.sensor
        // Never guessed from the sensor: a pound scale's trace read as grams gave no sips, and exit 0.
        guard let unit = self.unit ?? header.unit else {
            throw .missingUnit(path: source.description)
        }
        if let sensor, unit.sensor != sensor {
            throw .calibration(path: source.description, .unitDoesNotFitSensor(unit, sensor))
        }
        // Said, not ignored: a curve given for a scale's trace (as an option, or in its
        // header) is a mistaken trace or option.
        if levelCurve != nil || header["level-curve"] != nil, unit.sensor == .weight {
            throw .calibration(path: source.description, .levelCurveForScale(unit))
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
        case .missingUnit(let path): "\(path): the header gives no '# unit:'"
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
    /// The first reading's time on the trace's clock (nil without readings).
    public var firstT: Double?
    public var sipML = 0.0
    public var sips = 0
    public var refills = 0
    public var refillML = 0.0
    public var pours = 0
    public var pourML = 0.0
    /// What the last event said is left in the bottle.
    public var remainingML: Double?
    /// Every 256th reading (`sampled`), and how many of them weighed more than any bottle could,
    /// or read a level far above the curve's top (`overweight`): a wrong unit or curve shows in
    /// them when nothing else does (a gram trace read as kg gives no events, its noise a thousand
    /// times too wide to settle; a level sensor's readings above its curve are taken for garbage).
    public var sampled = 0, overweight = 0
    /// Refills after which the bottle held more than its capacity (`overfull`, the most `fullest`): "left"
    /// is shown capped at the capacity, which hid a calibration that was off (a developer's 700 mL
    /// bottle that weighed as 790). Refills, as a bottle is most often filled to the top; and most of
    /// them, as a load cell's drift over days puts some past it (a simulated 11 days: 1066 mL once).
    public var overfull = 0, fullest = 0.0
    /// Silences of 3 s or more between readings (`silences`), readings under a second apart (`quick`),
    /// and readings that repeated the one before (`repeats`): a trace written only when the value
    /// changes has the first two and never the third, and loses the sips its silences hide (a link gap
    /// to the detector), without a word. (A logger writing every 5 s has no quick ones.)
    public var silences = 0, quick = 0, repeats = 0
    /// Of the sampled readings with something on the scale (`loaded`), those lighter than most of the empty
    /// bottle's weight (`underTare`): a standing bottle weighs at least that, so a tare too high shows in them.
    /// Under half of it the detector takes the bottle to be off the scale, and `--tare 1800` (for 180) gave no
    /// events without a word (a developer's trial).
    public var loaded = 0, underTare = 0

    public init() {}

    /// A doubt about the trace's unit, when most of what stood on the scale weighed over 20 kg
    /// (a load cell's spikes reach that, but not most readings): said, since the events say nothing.
    public var unitDoubt: String? {
        guard let calibration, sampled >= 2, overweight * 2 > sampled else { return nil }
        if let curve = calibration.levelCurve {
            // A reading in percent is of the curve's highest level: its top is 100 percent.
            let top = calibration.unit == .percent ? 100 : curve.highestLevel
            return "most readings are above the level curve's top (\(top.compactDescription) "
                + "\(calibration.unit.rawValue) is \(curve.highestML.compactDescription) mL), "
                + "so they read as a tilted sensor's garbage: is the curve right (`# level-curve:` in the header, or --level-curve)?"
        }
        return "most readings weigh over \(Int(Self.heaviestBottleML / 1000)) kg read in \(calibration.unit.rawValue), "
            + "more than a bottle on a scale: is the unit right (`# unit:` in the header, or --unit)?"
    }

    static let heaviestBottleML = 20_000.0

    /// A doubt about the capacity or the empty weight, when the bottle held more than its capacity by
    /// a twentieth (and 10 mL) after most refills.
    public var capacityDoubt: String? {
        guard let capacity = calibration?.capacityML, overfull > 0, overfull * 2 > refills else { return nil }
        let fix = calibration?.sensor == .weight ? "the capacity (`# capacity-ml:` or --capacity) or the empty weight (`# empty-weight-g:` or --tare)"
            : "the capacity (`# capacity-ml:` or --capacity) or the level curve"
        return "the bottle held up to \(Int(fullest.rounded())) mL, more than its capacity of \(capacity.compactDescription) mL, "
            + "and what is left is shown as at most that: is \(fix) right?"
    }

    /// A doubt about the empty weight, when over a tenth of what stood on the scale weighed less than it.
    public var tareDoubt: String? {
        guard let tare = calibration?.emptyWeightG, loaded >= 4, underTare * 10 > loaded else { return nil }
        let share = underTare * 2 > loaded ? "most" : "\(underTare * 100 / loaded) % of the"
        return "\(share) readings with something on the scale weigh under four fifths of the empty bottle "
            + "(\(tare.compactDescription) g), and under half of that the bottle is taken to be off the scale, its drinks unseen: "
            + "is the empty weight right (`# empty-weight-g:` in the header, or --tare)?"
    }

    /// Below this share of the empty bottle's weight a reading doubts it: a bottle's noise and a zero a few grams off stay above.
    static let tareDoubtFraction = 0.8

    /// A doubt about how the trace was written, when it looks written only on a change.
    public var rateDoubt: String? {
        guard silences >= 3, quick >= silences, repeats == 0, readings >= 100 else { return nil }
        return "\(silences) silences of 3 s or more, and no reading repeats the one before: was it written only when the value "
            + "changed? The detector takes each silence for a link gap, and a sip it hides may be missed: resample it to a "
            + "steady rate (docs/trace-format.md)"
    }

    /// What the replay doubts, each a line for standard error.
    public var doubts: [String] { [unitDoubt, tareDoubt, capacityDoubt, rateDoubt].compactMap { $0 } }

    /// Notes the intervals and the values of `batch`, after `previous`. Once a reading has repeated the
    /// one before, the trace was not written on a change, and nothing more is looked at (a pass of its own,
    /// not in the detector's loop: there it cost the replay 7–12 %).
    mutating func noteSteps(_ batch: [Reading], after previous: Reading?) {
        guard repeats == 0, var last = previous ?? batch.first else { return }
        batch.withUnsafeBufferPointer { readings in
            for reading in readings[(previous == nil ? 1 : 0)...] {
                guard noteStep(reading, after: last) else { return }
                last = reading
            }
        }
    }

    /// One reading after the one before; false once a reading repeated it.
    @inline(__always)
    mutating func noteStep(_ reading: Reading, after last: Reading) -> Bool {
        guard repeats == 0 else { return false }
        let interval = reading.t - last.t
        if interval >= 3 { silences += 1 } else if interval < 1 { quick += 1 }
        if reading.value == last.value { repeats += 1 }
        return repeats == 0
    }

    mutating func sample(_ reading: Reading) {
        guard let calibration, let value = reading.value else { return }
        sampled += 1
        let ml = calibration.millilitres(value)
        if let curve = calibration.levelCurve {
            // Where the detector takes a level for garbage.
            if ml > SipDetector.plausibleML(curve).upperBound { overweight += 1 }
        } else if ml > Self.heaviestBottleML {
            overweight += 1
        } else if let tare = calibration.emptyWeightG, ml >= SipDetector.smallestBottleML {
            loaded += 1
            if ml * calibration.density < Self.tareDoubtFraction * tare { underTare += 1 }
        }
    }

    /// What the bottle holds after a refill, its level `settledML` as the detector judged it.
    mutating func noteContents(settledML: Double) {
        guard let capacity = calibration?.capacityML, let water = calibration?.contents(settledML: settledML),
              water > capacity * 1.05 + 10 else { return }
        overfull += 1
        fullest = max(fullest, water)
    }

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

/// The detector loop every replay shares, whatever the readings come from (a
/// trace file, a btsnoop capture): feed readings in order, events come out as
/// they become final, and the summary counts them. Bounded memory.
public struct ReplayPipeline {
    public private(set) var summary = ReplaySummary()
    private var detector: SipDetector
    private var events: [DetectedEvent] = []
    private var firstT: Double?
    private var lastT = 0.0
    private var previous: Reading?

    public init(header: TraceHeader, calibration: BottleCalibration, configuration: DetectorConfiguration) {
        detector = SipDetector(calibration: calibration, configuration: configuration)
        summary.header = header
        summary.calibration = calibration
    }

    /// Runs a batch of readings (non-decreasing `t`) through the detector.
    public mutating func process(_ batch: [Reading], onEvent: (DetectedEvent) throws -> Void) rethrows {
        guard let first = batch.first else { return }
        for (i, reading) in batch.enumerated() {
            detector.process(reading, into: &events)
            if !events.isEmpty { try drain(onEvent) }
            if i & 255 == 0 { summary.sample(reading) }
        }
        summary.noteSteps(batch, after: previous)
        previous = batch[batch.count - 1]
        summary.readings += batch.count
        if firstT == nil { firstT = first.t }
        lastT = batch[batch.count - 1].t
    }

    /// Runs one reading through the detector.
    public mutating func process(_ reading: Reading, onEvent: (DetectedEvent) throws -> Void) rethrows {
        if let previous { _ = summary.noteStep(reading, after: previous) }
        previous = reading
        detector.process(reading, into: &events)
        if !events.isEmpty { try drain(onEvent) }
        if summary.readings & 255 == 0 { summary.sample(reading) }
        summary.readings += 1
        if firstT == nil { firstT = reading.t }
        lastT = reading.t
    }

    /// Ends the readings: the detector settles what it still holds.
    public mutating func finish(onEvent: (DetectedEvent) throws -> Void) rethrows -> ReplaySummary {
        detector.finish(into: &events)
        try drain(onEvent)
        summary.duration = lastT - (firstT ?? lastT)
        summary.firstT = firstT
        return summary
    }

    private mutating func drain(_ onEvent: (DetectedEvent) throws -> Void) rethrows {
        if events.contains(where: { $0.kind == .refill }), let level = detector.level {
            summary.noteContents(settledML: level - detector.objectsBesideML)
        }
        for event in events {
            summary.count(event)
            try onEvent(event)
        }
        events.removeAll(keepingCapacity: true)
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
        var pipeline: ReplayPipeline?
        let header = try ChunkedInput(source, chunkSize: chunkSize).readTraceAhead { header, batch in
            if pipeline == nil {
                pipeline = try start(header, source: source, options: options, onStart: onStart)
            }
            try pipeline!.process(batch, onEvent: onEvent)
        }
        // A trace with a header and no readings: still check its calibration.
        if pipeline == nil { pipeline = try start(header, source: source, options: options, onStart: onStart) }
        // The header is complete only at the end (metadata may follow the first readings' chunk).
        var summary = try pipeline!.finish(onEvent: onEvent)
        summary.header = header
        return summary
    }

    /// The pipeline for a source whose header (sensor, unit, calibration
    /// metadata) is known, after telling `onStart`.
    public static func start(
        _ header: TraceHeader, source: TraceSource, options: ReplayOptions,
        onStart: (TraceHeader, BottleCalibration) throws -> Void
    ) throws -> ReplayPipeline {
        let calibration = try options.calibration(for: header, source: source)
        try onStart(header, calibration)
        return ReplayPipeline(header: header, calibration: calibration, configuration: options.detector)
    }
}

/// Tuning of the sip detector. Defaults suit a drinking bottle on a kitchen
/// or bathroom scale, or a bottle with a level sensor.
public struct DetectorConfiguration: Sendable, Hashable, Codable {
    /// Smaller losses across a lift are treated as noise (mL).
    public var minSipML: Double = 3.0
    /// A loss without a lift (a straw, a pump pot) must be at least this large;
    /// smaller steps are nudges and touches (mL).
    public var minUnliftedSipML: Double = 8
    /// Smaller increases are not reported as refills (mL).
    public var minRefillML: Double = 15
    /// When set, a fixed rule: a loss across a lift of at least this much is a
    /// pour, and a smaller one a sip, whatever its pace (mL; `--pour-ml`, for
    /// those whose drinks or pours the pace misjudges). Unset, its pace decides.
    public var pourML: Double?
    /// A loss across a lift of at least `pourMinML` that ran out faster than this
    /// while a level sensor read the bottle tilted is a pour: nobody drinks faster
    /// than about 30 mL/s for long, and a bottle upside down over the sink empties
    /// at 50–150 mL/s (mL/s; see `SipDetector.isPour`).
    public var pourRateMLPerSecond: Double = 35
    /// The same for a scale, which sees only the time away: a loss at least this
    /// fast over that time less `SipDetector.pourHandlingSeconds` is a pour (mL/s).
    public var awayPourRateMLPerSecond: Double = 24
    /// Smaller losses are sips, however fast (a quick gulp) (mL).
    public var pourMinML: Double = 100
    /// A weight step up without a lift, smaller than this, is an object put next
    /// to the bottle (a phone); larger ones are refills poured on the scale (mL).
    public var maxObjectML: Double = 350
    /// Seconds a new level must hold before the event is final. Longer than a
    /// hand resting on the bottle after setting it down; level sensors wait
    /// longer for the slosh to calm (`nil`: 6 s for weight, 8 s for level).
    public var confirmSeconds: Double?
    /// The start of a new level that is left out of its judged value: the
    /// ring of a load cell, the slosh of a level sensor (`nil`: 1 s for weight, 3 s for level).
    public var settlingSeconds: Double?
    /// After a link gap at least this long, the level is judged from a whole
    /// `confirmSeconds` of readings, not the shorter hold of a bottle long
    /// calm: a level read once a second from three readings of a sensor in 1 %
    /// steps is off by half a step, and a gap made that a "sip" of 4–5 mL.
    public var longGapSeconds: Double = 15
    /// Seconds a level must hold to count as settled at all.
    public var settleSeconds: Double = 1.2
    /// Seconds the very first level must hold to become the reference.
    public var firstLevelSeconds: Double = 3
    /// No reading for this long is a link gap: whatever happened in it is
    /// judged from the levels on either side.
    public var gapSeconds: Double = 3
    /// Emit the diagnostic `lifted` and `placed` events.
    public var emitDiagnostics = false

    public init() {}

    /// Keys a checkpoint of an earlier version lacks take their defaults, and
    /// keys it has that this version dropped are ignored: a sip under way when
    /// the gateway is upgraded is still resumed (docs/reliability.md).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        func read<T: Decodable>(_ key: CodingKeys, _ value: inout T) throws {
            if let decoded = try c.decodeIfPresent(T.self, forKey: key) { value = decoded }
        }
        try read(.minSipML, &minSipML)
        try read(.minUnliftedSipML, &minUnliftedSipML)
        try read(.minRefillML, &minRefillML)
        pourML = try c.decodeIfPresent(Double.self, forKey: .pourML)
        try read(.pourRateMLPerSecond, &pourRateMLPerSecond)
        try read(.awayPourRateMLPerSecond, &awayPourRateMLPerSecond)
        try read(.pourMinML, &pourMinML)
        try read(.maxObjectML, &maxObjectML)
        confirmSeconds = try c.decodeIfPresent(Double.self, forKey: .confirmSeconds)
        settlingSeconds = try c.decodeIfPresent(Double.self, forKey: .settlingSeconds)
        try read(.longGapSeconds, &longGapSeconds)
        try read(.settleSeconds, &settleSeconds)
        try read(.firstLevelSeconds, &firstLevelSeconds)
        try read(.gapSeconds, &gapSeconds)
        try read(.emitDiagnostics, &emitDiagnostics)
    }
}

/// The detector's phase, for `quench watch`.
public enum DetectorPhase: String, Sendable, Hashable {
    /// No settled level yet.
    case unknown
    /// The bottle stands still; `level` is tracked.
    case settled
    /// Something moved: lifted, touched, tilted, or the link dropped.
    case disturbed
    /// A weight scale reads (nearly) empty: the bottle is off it.
    case away
    /// A new level holds; waiting `confirmSeconds` before the event is final.
    case confirming

    /// Something is under way that a kill could lose: a lift, a tilt, a new level being confirmed. Settled, the
    /// bottle off a scale, or nothing learnt yet are not (what a checkpoint could add then is the zero, written
    /// as the phase changes).
    public var isUnderWay: Bool { self == .disturbed || self == .confirming }
}

/// Turns a stream of readings into sip, refill and pour events.
///
/// The bottle spends most of its time standing still. The detector tracks that
/// level, notices when it is disturbed (a lift, a tilt, a touch, a link gap),
/// waits until a new level has held for `confirmSeconds`, and then judges the
/// change between the level before and the level after. Isolated spikes are
/// ignored; slow drift moves the tracked level without ever crossing a threshold.
///
/// Streaming and deterministic; O(1) work and memory per reading.
public struct SipDetector: Sendable, Codable {
    public let calibration: BottleCalibration
    public let configuration: DetectorConfiguration

    /// What this sensor kind sees of a drink, and its timings.
    private let policy: DetectorPolicy
    /// mL per sensor unit for weight (a multiply on the hot path).
    private let mlPerUnit: Double
    /// The empty bottle's weight as mL-equivalent, when the calibration knows it.
    private let tareML: Double?
    /// Readings that map outside this range are sensor garbage (level sensors).
    private let plausibleML: ClosedRange<Double>

    private var noise: NoiseEstimate
    private var run: LevelRun
    private let confirmSeconds: Double
    private var outliers = OutlierRun()
    private var lastT = -Double.infinity
    private var lastValidT = -Double.infinity
    /// How often readings come (for how long a tilt lasted between them).
    private var interval = SampleInterval()
    /// The settled level's readings summed against its whole (level sensors).
    private var shift = LevelShift()
    /// The last plausible reading (mL), level sensors.
    private var lastML = Double.nan
    /// Consecutive level readings this far apart mean a tilt (mL).
    private let tiltJumpML: Double

    /// The settled level before the current disturbance (mL), if any.
    private var reference: Double?
    private var state: State = .unknown
    private var disturbance = Disturbance()
    /// Known weight of things standing next to the bottle (mL-equivalent).
    private var objectsML = 0.0
    /// What the scale reads with nothing on it (mL-equivalent), once seen.
    private var emptyML = 0.0
    /// What the empty scale reads and whether its offsets stay (weight).
    private var zero = ZeroModel()
    /// The bottle's level right after the last event: later changes of the
    /// level while it stands are drift, which moves the zero too.
    private var levelAnchor: Double?
    /// The empty scale was read before the first bottle settled, by this detector (not inherited from one before a
    /// restart: `keepingLearning`); nil once the first level settles, and in a checkpoint from before it was kept.
    private var emptySeenUnsettled: Bool?

    private enum State: Codable { case unknown, settled, disturbed }

    private struct Disturbance: Codable {
        var start = 0.0
        var lifted = false
        /// A link gap hid what happened; the gap counts as a lift.
        var gapped = false
        /// Readings came back after a long gap: the level after it waits a whole confirmation.
        var afterGap = false
        /// A level that held at least `settleSeconds` during the disturbance and
        /// was then interrupted: the bottle may have been set down and lifted again.
        var heldLevel: Double?
        var heldStart = 0.0
        var heldEnd = 0.0
        /// Last time the bottle was off the scale or the level unreadable.
        var lastAway = 0.0
        /// First time the level was unreadable (tilted: pouring or drinking), level sensors.
        var firstAway: Double?
        /// Seconds the level sensor read the bottle tilted: each run of unreadable
        /// or garbage readings from its first to its last, plus a reading's time.
        /// A spike after the pour adds a reading's time, not the time since the tilt.
        /// (nil in a checkpoint from before it was kept: then from first to last.)
        var tiltedSeconds: Double?
        /// `tiltedSeconds` before a jump inside a level that had begun.
        var tiltBeforeLevel: TiltBeforeLevel?
        /// It began with the level moving within the band (`LevelShift`).
        var byMeanShift = false
        /// What the empty scale read when the disturbance began, and whether a stay at that level held in it
        /// (nil in a checkpoint from before they were kept).
        var emptyBefore: Double?
        var sawEmptyBefore: Bool?
        /// What the empty scale read while the bottle was off (weight).
        var zeroSeen: Double?
        /// What the empty scale read in as few as two readings (a short lift at 1 Hz): enough for a
        /// zero shift, not for `zeroSeen`'s other use, telling that something beside the bottle went.
        var zeroGlimpsed: Double?
        /// A level that held while the bottle was off, light for the bottle.
        var lightLevel: Double?
        /// The last reading of the level before it (nil in a checkpoint from before it was kept): a loss is
        /// paced from it, so readings a link dropped count as time the loss may have taken.
        var lastOfLevel: Double?
    }

    /// The tilt's time up to a level, kept when a jump came inside it.
    struct TiltBeforeLevel: Sendable, Codable, Equatable {
        var levelStart: Double
        var seconds: Double
    }

    public init(calibration: BottleCalibration, configuration: DetectorConfiguration = .init()) {
        self.calibration = calibration
        self.configuration = configuration
        policy = calibration.sensor == .weight ? .weight : .level
        confirmSeconds = configuration.confirmSeconds ?? policy.confirmSeconds
        run = LevelRun(settlingTail: configuration.settlingSeconds ?? policy.settlingTailSeconds, blockSeconds: policy.averagingBlockSeconds)
        noise = NoiseEstimate(floor: policy.noiseFloorML, timeConstant: policy.noiseTimeConstant)
        mlPerUnit = (calibration.unit.gramsPerUnit ?? 1) / calibration.density
        tareML = calibration.emptyWeightG.map { $0 / calibration.density }
        if let curve = calibration.levelCurve {
            plausibleML = Self.plausibleML(curve)
            tiltJumpML = Self.tiltJumpFraction * curve.highestML
        } else {
            plausibleML = -.infinity ... .infinity
            tiltJumpML = .infinity
        }
    }

    public var phase: DetectorPhase {
        switch state {
        case .unknown: .unknown
        case .settled: .settled
        case .disturbed:
            if policy.bottleLeavesSensor, run.count > 0, run.mean < awayThreshold { .away }
            else if run.count > 0, run.duration >= configuration.settleSeconds, isPresent(run.mean) { .confirming }
            else { .disturbed }
        }
    }

    /// Half-width of the band within which readings count as the same level
    /// (mL), for `quench watch`.
    public var band: Double { tolerance }

    /// The tracked level in mL (whole load for weight), when settled.
    public var level: Double? { state == .settled ? run.mean : nil }

    /// What stands beside the bottle on a scale, as far as the detector knows (mL-equivalent).
    public var objectsBesideML: Double { objectsML }

    /// Feeds one reading; appends any event that became final.
    @inlinable
    public mutating func process(_ reading: Reading, into events: inout [DetectedEvent]) {
        processReading(t: reading.t, value: reading.value, into: &events)
    }

    @usableFromInline
    mutating func processReading(t: Double, value: Double?, into events: inout [DetectedEvent]) {
        interval.observe(t - lastT, gap: configuration.gapSeconds)
        if t - lastValidT > interval.gapSeconds(configuration.gapSeconds), lastValidT > -.infinity {
            noteGap(at: lastValidT, until: t, into: &events)
        }
        lastT = t
        guard let value, value.isFinite else {
            // Nothing usable: a level sensor tilted, or a dropped sample.
            if policy.unreadableMeansTilted { noteUnreadable(at: t, into: &events) }
            return
        }
        let (ml, perUnit) = policy.readsThroughCurve ? calibration.millilitresAndSlope(value) : (value * mlPerUnit, mlPerUnit)
        guard policy.readsThroughCurve ? plausibleML.contains(ml) : abs(ml) <= BottleCalibration.largestML else {
            // Past the curve, a tilted sensor's garbage; past 100 L of water (100 kg at a density of 1), no
            // bottle on a scale but a broken reading (1e15 g for 12 s became a refill of 10¹⁵ mL), missing
            // as a dropped one is.
            if policy.unreadableMeansTilted { noteUnreadable(at: t, into: &events) }
            return
        }
        lastValidT = t
        if policy.unreadableMeansTilted {
            if state == .disturbed { noteTiltJump(ml, at: t) }
            lastML = ml
        }
        noise.observe(ml, value: value, mlPerUnit: perUnit, at: t, coarsestStepML: policy.coarsestStepML)
        add(ml, at: t, into: &events)
    }

    /// Ends the stream: a level that is holding but not yet confirmed is judged now.
    public mutating func finish(into events: inout [DetectedEvent]) {
        guard state == .disturbed else { return }
        if run.count > 0, run.duration >= configuration.settleSeconds, isPresent(run.mean) {
            conclude(level: run.judgedLevel, settledAt: run.start, at: lastT, into: &events)
        } else if let held = disturbance.heldLevel {
            conclude(level: held, settledAt: disturbance.heldStart, at: lastT, into: &events)
        }
    }

    // MARK: - Per reading

    private var tolerance: Double { noise.tolerance }

    /// Seconds after the bottle is back at which a 3 s hold confirms a level.
    static let calmAfterSeconds = 12.0

    /// A bigger difference between two empty-scale readings is not a zero shift
    /// (something else was on the scale).
    static let largestZeroShift = 40.0

    /// Level readings that map this far outside the curve (below empty, as a
    /// fraction of the full volume; above full, as a multiple of it) are garbage.
    static let plausibleBelowEmpty = 0.05
    static let plausibleAboveFull = 1.2

    /// The mL a level sensor on `curve` can read; beyond, its readings are garbage (replay's doubt
    /// about a curve counts readings past the top by the same bound).
    public static func plausibleML(_ curve: LevelCurve) -> ClosedRange<Double> {
        -plausibleBelowEmpty * curve.highestML ... plausibleAboveFull * curve.highestML + 1
    }
    /// Slosh moves a level by millimetres; a tilted sensor's garbage jumps by
    /// a large part of the bottle (this fraction of its volume).
    static let tiltJumpFraction = 0.15

    /// Readings of the empty scale before they say what its zero is. Two may be two
    /// spikes in a row, which agree when the wire carries no negative weight (a SIG
    /// Weight Measurement is unsigned, so each arrives as 0): at 1 Hz such a pair, beside
    /// a phone on the scale, once said the phone had gone, and every later level was off
    /// by it. Three spikes in a row are a million to one; a real lift at 1 Hz gives three.
    static let emptyScaleReadings = 3

    /// A bottle weighs at least this (mL-equivalent) above the empty scale:
    /// well clear of an empty scale's offsets.
    public static let smallestBottleML = 20.0
    /// With the empty bottle's weight known, half of it still means "a bottle".
    static let awayFractionOfTare = 0.5
    /// Without it, a tenth of the load before the lift, at most `awayCapML`.
    static let awayFractionOfLoad = 0.1
    static let awayCapML = 50.0

    /// A level held while the bottle was off, under this fraction of the
    /// bottle's load, is light for the bottle (a pour, or an object on the scale).
    static let lightFraction = 0.35
    /// The bottle came back on top of such a light level when the new level is
    /// at least this fraction of the bottle's load above it.
    static let backOnTopFraction = 0.5

    /// A loss without a lift within this of the objects' weight (at least
    /// `objectRemovalToleranceML`) is the object taken away, not a sip.
    static let objectRemovalToleranceML = 10.0
    static let objectRemovalFraction = 0.15
    /// Nobody drinks through a straw or a pump faster than this (mL/s): a loss without a lift of
    /// at least `smallestTakenAwayML` that came faster was something taken from the scale. (The real
    /// coffee pot's pump pours ran at 21–23 mL/s; a phone lifted off goes within a second or two.)
    static let fastestUnliftedDrinkMLPerSecond = 50.0
    static let smallestTakenAwayML = 30.0

    /// Tilted readings at most this many sampling intervals apart are one tilt;
    /// further apart, the later one starts another (or is a spike).
    static let sameTiltReadings = 8.5
    /// The shortest time away a pour rate is measured over.
    static let shortestAwaySeconds = 0.5
    /// The time away a lift spends besides the drinking or pouring itself
    /// (grasp, to the mouth or the sink and back, and the scale telling the
    /// bottle gone and back), as a scale's pour rule counts it.
    static let pourHandlingSeconds = 2.5

    /// Readings at least this far apart (seconds) are slow: a short stay on the
    /// scale may show only two calm ones.
    static let slowReadingSeconds = 0.7

    /// Long after the bottle came back, a level confirms after this hold.
    static let calmConfirmSeconds = 3.0

    /// Below this the scale holds no bottle: well clear of an empty scale's
    /// offsets, yet under a nearly empty bottle (half its known empty weight,
    /// else a tenth of the load, at most 50 g), even right after a pour.
    private var awayThreshold: Double {
        let base = emptyML + objectsML
        guard let reference else { return base + Self.smallestBottleML }
        if let tare = tareML { return base + max(Self.smallestBottleML, Self.awayFractionOfTare * tare) }
        return base + max(Self.smallestBottleML, min(Self.awayFractionOfLoad * (reference - base), Self.awayCapML))
    }

    private func isPresent(_ level: Double) -> Bool { !policy.bottleLeavesSensor || level >= awayThreshold }

    private mutating func add(_ x: Double, at t: Double, into events: inout [DetectedEvent]) {
        if run.count == 0 {
            // A new level (after a tilt or a gap): its readings are summed afresh.
            run.start(x, at: t)
            shift.reset()
            return
        }
        let tol = tolerance
        if abs(x - run.mean) <= tol {
            run.add(x, at: t)
            outliers.clear()
            if policy.watchesMeanShift, state == .settled,
               let change = shift.observe(x, at: t, level: run.judgedLevel, sigma: noise.sigma, smallest: configuration.minUnliftedSipML) {
                // The level moved by less than the band (a coarse, dithering
                // sensor) and no tilt was read: a sip all the same. The level
                // before it is judged without the readings after it began.
                reference = run.judgedLevel(withoutLatest: change.count, summing: change.sum)
                beginDisturbance(at: change.since, into: &events)
                disturbance.byMeanShift = true
                run.start(x, at: t)
                shift.reset()
                return
            }
            afterInlier(at: t, into: &events)
            return
        }
        outliers.add(x, at: t)
        // Read slowly, a bottle set down between two lifts may show two calm readings
        // with a hand's press between them: both belong to the level it stood at.
        let keepsFirst = policy.bottleLeavesSensor && interval.typical >= Self.slowReadingSeconds && isPresent(x)
        guard outliers.brokeRun(tolerance: tol, keepingFirstPastASpike: keepsFirst) else { return }
        // The signal moved: the current run is over.
        let (restartValue, restartT, firstT) = outliers.restart()
        runEnded(firstOutlierAt: firstT, into: &events)
        run.start(restartValue, at: restartT)
        shift.reset()
        if outliers.startsWithTwo { run.add(outliers.lastValue, at: outliers.lastT) }
        outliers.clear()
        afterInlier(at: t, into: &events)
    }

    /// The current run was broken by a sustained change at `firstOutlierAt`.
    private mutating func runEnded(firstOutlierAt t: Double, into events: inout [DetectedEvent]) {
        switch state {
        case .unknown:
            if run.duration >= configuration.firstLevelSeconds, run.count >= 3, isPresent(run.mean) {
                reference = run.judgedLevel
                if levelAnchor == nil { levelAnchor = reference }
                beginDisturbance(at: t, into: &events)
            }
        case .settled:
            reference = run.judgedLevel
            let lastOfLevel = run.lastT
            beginDisturbance(at: t, into: &events)
            disturbance.lastOfLevel = lastOfLevel
        case .disturbed:
            interruptedDuringDisturbance(at: t, into: &events)
        }
    }

    private mutating func afterInlier(at t: Double, into events: inout [DetectedEvent]) {
        guard state != .settled else { return }
        let held = run.duration
        if state == .unknown {
            // The first level that holds becomes the reference; no event.
            if held >= confirmSeconds, run.count >= 3, isPresent(run.mean) {
                state = .settled
                reference = run.judgedLevel
                if levelAnchor == nil { levelAnchor = reference }
                defer { emptySeenUnsettled = nil }
                if policy.bottleLeavesSensor, emptySeenUnsettled == true, emptyML < -Self.largestZeroShift,
                   run.judgedLevel - objectsML >= Self.largestZeroShift {
                    // The "empty scale" read before the first bottle was far below nothing, and this bottle stands
                    // clearly above nothing: a load cell's glitch, as if unseen (kept, −300 g for 1.6 s at a trace's
                    // start made 0 read as a bottle, and each drink after it a refill). A scale tared under a bottle
                    // and then lifted reads its bottle about nothing. Should the glitch have been the zero, the first
                    // lift shows it again (`conclude`: the scale's new zero). Only what this detector read: a zero learnt before a
                    // restart (a scale tared under its bottle, then refilled above nothing) is kept (a review).
                    (emptyML, zero) = (0, ZeroModel())
                }
            } else if policy.bottleLeavesSensor, held >= configuration.settleSeconds, !isPresent(run.mean) {
                emptyML = run.judgedLevel - objectsML
                zero.startEmpty(at: emptyML)
                emptySeenUnsettled = true
            }
            return
        }
        // Disturbed.
        if policy.bottleLeavesSensor, !isPresent(run.mean), run.count >= 2 {
            disturbance.afterGap = false
            if disturbance.heldLevel != nil {
                // Set down, held, and now lifted again: the previous drink is over.
                concludeHeld(at: t, into: &events)
            }
            markLifted(at: run.start, into: &events)
            disturbance.lastAway = t
            // A stay at the empty scale's level as it was (the bottle reading nothing after its tare was pressed)
            // before one far below it: the scale was zeroed under the bottle in this disturbance (`conclude`).
            if held >= configuration.settleSeconds, let before = disturbance.emptyBefore, abs(run.judgedLevel - objectsML - before) <= Self.largestZeroShift {
                disturbance.sawEmptyBefore = true
            }
            // The empty scale's zero, from as many readings as `zeroSeen` takes: two spikes to 0 on a
            // SIG scale at 1 Hz, a phone beside the bottle, set it a phone's weight low, and from then
            // on the phone alone, seen at each lift, read as the bottle (simulated 240 h: 10 % of the intake).
            // Two readings are a glimpse of it, unless their level is exactly 0: a wire without negative
            // weights sends a spike below zero as 0, and two such spikes in a row look like a lift.
            if run.judgedLevel != 0 { disturbance.zeroGlimpsed = run.judgedLevel - objectsML }
            if run.count >= Self.emptyScaleReadings {
                disturbance.zeroSeen = run.judgedLevel - objectsML
                if held >= configuration.settleSeconds { emptyML = run.judgedLevel - objectsML }
            }
            return
        }
        // Long after the bottle came back, no hand rests on it any more and
        // the slosh has died down: a shorter hold is enough (not after a long
        // gap, where the level before is all there is to judge by).
        let calm = t - max(disturbance.lastAway, disturbance.start) >= SipDetector.calmAfterSeconds
        let needed = calm && !disturbance.afterGap ? min(confirmSeconds, Self.calmConfirmSeconds) : confirmSeconds
        if held >= needed, run.count >= 3 {
            conclude(level: run.judgedLevel, settledAt: run.start, at: t, into: &events)
        }
    }

    private mutating func beginDisturbance(at t: Double, into events: inout [DetectedEvent]) {
        state = .disturbed
        disturbance = Disturbance(start: t)
        disturbance.emptyBefore = emptyML
        if !policy.seesLifts { markLifted(at: t, into: &events) }
    }

    private mutating func markLifted(at t: Double, into events: inout [DetectedEvent]) {
        guard !disturbance.lifted else { return }
        disturbance.lifted = true
        if configuration.emitDiagnostics {
            events.append(DetectedEvent(kind: .lifted, t: t, start: disturbance.start, end: t, ml: 0))
        }
    }

    /// A level held during a disturbance and then moved again.
    private mutating func interruptedDuringDisturbance(at t: Double, into events: inout [DetectedEvent]) {
        disturbance.afterGap = false
        if runHasHeld, run.duration >= policy.heldLevelSeconds, isPresent(run.mean) {
            disturbance.heldLevel = run.judgedLevel
            disturbance.heldStart = run.start
            disturbance.heldEnd = t
            if policy.bottleLeavesSensor, disturbance.lifted, let reference,
               run.judgedLevel < emptyML + objectsML + Self.lightFraction * (reference - emptyML - objectsML) {
                // Light for the bottle: it may be the bottle after a pour, or
                // something put on the empty scale; what comes next tells.
                disturbance.lightLevel = run.judgedLevel
            }
        } else if policy.bottleLeavesSensor, disturbance.heldLevel == nil, run.count == 2,
                  interval.typical >= Self.slowReadingSeconds, run.duration >= configuration.settleSeconds, isPresent(run.mean) {
            // Read once a second, a bottle set down for a few seconds between the tap and
            // a drink may show only two calm readings between the hand's press and its
            // grasp: they are the level it stood at, unless a level holds after them.
            // Left out, a refill and the drink after it were judged as one (+86 mL).
            disturbance.heldLevel = run.judgedLevel
            disturbance.heldStart = run.start
            disturbance.heldEnd = t
        }
    }

    /// Seconds the level sensor has read the bottle tilted, up to `end`. A checkpoint from
    /// before the runs were kept has only the first and last tilted readings: their span.
    private func tiltedSeconds(through end: Double) -> Double {
        disturbance.tiltedSeconds ?? min(disturbance.lastAway, end) - (disturbance.firstAway ?? end) + interval.typical
    }

    /// The current run has held long enough to be a level (three readings over `settleSeconds`).
    private var runHasHeld: Bool { run.count >= 3 && run.duration >= configuration.settleSeconds }

    /// Level sensors: a jump a scale of slosh cannot make is a tilted sensor
    /// reading the wall or foam (or the first reading back), part of the
    /// tilt's time; but not once a level holds: a spike on it, and the reading
    /// back from the spike, are no tilt. Nor is a jump inside the level the
    /// change is judged by, however young: the tilt's time up to that level is
    /// kept. (At 1 Hz, a spike a few seconds after a pour made the pour look
    /// twice as long, and it was counted as a drink.)
    private mutating func noteTiltJump(_ ml: Double, at t: Double) {
        guard abs(ml - lastML) >= tiltJumpML, !runHasHeld else { return }
        if run.count > 0, t > run.start, disturbance.tiltBeforeLevel?.levelStart != run.start {
            disturbance.tiltBeforeLevel = TiltBeforeLevel(levelStart: run.start, seconds: tiltedSeconds(through: disturbance.lastAway))
        }
        markTilted(at: t)
    }

    /// Level sensors: no usable reading (tilted). Weight: ignored.
    private mutating func markTilted(at t: Double) {
        if disturbance.firstAway == nil {
            disturbance.firstAway = t
            disturbance.tiltedSeconds = interval.typical
        } else {
            // The next reading of the same run, or the first of another.
            let step = t - disturbance.lastAway
            disturbance.tiltedSeconds = tiltedSeconds(through: disturbance.lastAway)
                + (step <= Self.sameTiltReadings * interval.typical ? step : interval.typical)
        }
        disturbance.lastAway = t
    }

    private mutating func noteUnreadable(at t: Double, into events: inout [DetectedEvent]) {
        defer { if state == .disturbed { markTilted(at: t) } }
        switch state {
        case .settled:
            reference = run.judgedLevel
            beginDisturbance(at: t, into: &events)
            run.reset()
        case .disturbed:
            if run.count > 0 {
                interruptedDuringDisturbance(at: t, into: &events)
                // A tilt after a level held: the previous drink is over.
                if disturbance.heldLevel != nil { concludeHeld(at: t, into: &events) }
            }
            run.reset()
        case .unknown:
            run.reset()
        }
        outliers.clear()
    }

    private mutating func noteGap(at lastSeen: Double, until t: Double, into events: inout [DetectedEvent]) {
        switch state {
        case .settled:
            reference = run.judgedLevel
            beginDisturbance(at: lastSeen, into: &events)
        case .disturbed:
            if run.count > 0 { interruptedDuringDisturbance(at: lastSeen, into: &events) }
        case .unknown:
            break
        }
        disturbance.afterGap = t - lastSeen >= configuration.longGapSeconds
        disturbance.gapped = true
        run.reset()
        outliers.clear()
    }

    /// Concludes with the level that held before an interruption, when the
    /// interruption turned out to be the next lift.
    private mutating func concludeHeld(at t: Double, into events: inout [DetectedEvent]) {
        guard let held = disturbance.heldLevel else { return }
        let nextStart = disturbance.heldEnd
        conclude(level: held, settledAt: disturbance.heldStart, at: t, into: &events)
        // The next disturbance began when the held level was interrupted.
        reference = held
        state = .disturbed
        disturbance = Disturbance(start: nextStart)
        markLifted(at: nextStart, into: &events)
    }

    // MARK: - Judging a change

    /// Whether a loss across a lift went into the sink rather than into the
    /// person. Size alone cannot tell: back from a run, people drink 150–400 mL
    /// in one go. Pace can: drinking tops out near 30 mL/s, while a bottle held
    /// upside down runs at 50–150 mL/s (docs/detector.md#pour-or-drink).
    /// A level sensor times the tilt itself (its unreadable readings and
    /// garbage jumps). A scale sees only the time away, a few seconds of which
    /// are handling either way; over what is left of it, a drink stays under
    /// about 24 mL/s and a pour is faster, but where the two meet (a slow pour,
    /// a fast drink, long handling) the scale cannot tell them apart. What was
    /// left in the bottle does not help: a big drink finishes a bottle as often
    /// as a pour empties it.
    private func isPour(loss: Double, start: Double, settledAt: Double) -> Bool {
        // The fixed rule replaces the pace's, both ways: `--pour-ml 400` for someone whose big drinks are
        // quick must not leave a 300 mL drink to the pace (it did: only losses over 400 were its own).
        if let pourML = configuration.pourML { return loss >= pourML }
        guard loss >= configuration.pourMinML else { return false }
        if !policy.seesLifts, disturbance.firstAway != nil {
            // The tilt's own time, from its unreadable readings and garbage
            // jumps: the pace itself.
            let kept = disturbance.tiltBeforeLevel.flatMap { $0.levelStart == settledAt ? $0.seconds : nil }
            return loss / max(kept ?? tiltedSeconds(through: settledAt), Self.shortestAwaySeconds) >= configuration.pourRateMLPerSecond
        }
        let seconds = settledAt - start - Self.pourHandlingSeconds
        return loss / max(seconds, Self.shortestAwaySeconds) >= configuration.awayPourRateMLPerSecond
    }

    private mutating func conclude(level after: Double, settledAt: Double, at t: Double, into events: inout [DetectedEvent]) {
        let before = reference ?? after
        var delta = after - before
        if policy.bottleLeavesSensor {
            let anchor = levelAnchor ?? before
            zero.drifted(by: before - anchor)
            if let light = disturbance.lightLevel, after - light >= Self.backOnTopFraction * (before - emptyML - objectsML) {
                // The bottle came back on top of that light level: it was
                // something put on the empty scale, which is now the zero to judge by.
                disturbance.zeroSeen = light - objectsML
            }
            // An empty scale that read far below both the one before and nothing (a scale cannot weigh less than
            // nothing; what it read, objects and all: a phone taken away while the bottle was off reads lower
            // than the empty scale with it, and is the objects' business below):
            if let seen = disturbance.zeroSeen ?? disturbance.zeroGlimpsed, let emptyBefore = disturbance.emptyBefore,
               seen + objectsML < min(emptyBefore, 0) - Self.largestZeroShift {
                if abs(delta) < configuration.minSipML {
                    // The bottle back as it was: a load cell's glitch, not its empty scale. Kept, a developer's
                    // −300 g for 1.6 s made every lift after it "something put down beside the bottle", and
                    // each put-down a refill of the whole bottle.
                    emptyML = emptyBefore
                } else {
                    // The scale's new zero. Zeroed under the bottle in this disturbance (its tare pressed with the
                    // bottle on, a board that tares at power-up: it read nothing, then far below when lifted),
                    // the level before moves with it, or the tare was a drink of the whole bottle.
                    if disturbance.sawEmptyBefore == true { delta -= emptyML - emptyBefore }
                    zero.startEmpty(at: emptyML)
                }
                (disturbance.zeroSeen, disturbance.zeroGlimpsed) = (nil, nil)
            }
            // A short lift at 1 Hz may show the empty scale once or twice: enough to judge a zero
            // shift by (most lifts' error on a load cell), not to say that something beside the
            // bottle went (two spikes to 0 on a SIG scale look like that).
            if let zeroSeen = disturbance.zeroSeen ?? disturbance.zeroGlimpsed {
                let shift = zero.shiftIfPersistent(seen: zeroSeen)
                if abs(shift) <= SipDetector.largestZeroShift {
                    // Judge the bottle against the zero it was weighed on, each
                    // side, as far as the stream says offsets stay.
                    delta -= zero.observe(seen: zeroSeen) * shift
                } else if disturbance.zeroSeen != nil, shift > 0 || objectsML > 0 {
                    // Too large for a zero shift: something was put down beside
                    // the bottle (or taken away) while the bottle was off.
                    let change = max(shift, -objectsML)
                    objectsML += change
                    delta -= change
                    zero.observe(seen: zeroSeen - change)
                    // The empty scale, if read during this lift, was counted against the objects
                    // as they were. Left so, a phone taken away while the bottle was off left the
                    // zero a phone's weight low, and the next lift's empty scale read as the bottle.
                    emptyML = zeroSeen - change
                }
            }
            // The drift since this event is counted from its level: `drifted` adds what moved since
            // the last event, so the anchor moves to each. (It stayed where the zero was last seen,
            // and each event without a lift added all the drift since then again: over days of a
            // scale's presses and gaps the count ran to kilograms, and an empty scale read as a bottle.)
            levelAnchor = after
        }
        let start = disturbance.start
        // A level sensor's disturbance counts as a lift, unless all it saw was
        // the level's mean shifting (no tilt, no jump): then it must be as large
        // as a loss without a lift, well clear of what the average's noise can do.
        let lifted = disturbance.lifted && !(disturbance.byMeanShift && disturbance.firstAway == nil)
            || !policy.seesLifts && !(disturbance.byMeanShift && disturbance.firstAway == nil)
            || disturbance.gapped
        var kind: EventKind?
        var ml = abs(delta)
        if delta < 0 {
            let loss = -delta
            if policy.bottleLeavesSensor, !lifted, objectsML > 0,
               abs(loss - objectsML) <= max(Self.objectRemovalToleranceML, Self.objectRemovalFraction * objectsML) {
                objectsML = 0  // the phone was taken away
            } else if policy.bottleLeavesSensor, !lifted, loss >= Self.smallestTakenAwayML,
                      loss / (settledAt - (disturbance.lastOfLevel ?? start - interval.typical)) > Self.fastestUnliftedDrinkMLPerSecond {
                // Too fast to drink: something taken away whose weight was not known well (a SIG
                // scale's zero below its floor of 0 hides part of a phone's weight at each lift).
                objectsML = max(0, objectsML - loss)
            } else if loss >= (lifted ? configuration.minSipML : configuration.minUnliftedSipML) {
                // Emptying into the sink needs a lift; a scale that was only
                // pressed (a pump pot, a straw) lost what was drunk.
                let pour = lifted && isPour(loss: loss, start: start, settledAt: settledAt)
                kind = pour ? .pour : .sip
            }
        } else if delta >= configuration.minRefillML {
            if policy.bottleLeavesSensor, !lifted, delta < configuration.maxObjectML {
                objectsML += delta  // something put down beside the bottle
            } else {
                kind = .refill
            }
        }
        if let kind {
            ml = (ml * 100).rounded() / 100
            // Judged from the scale's 0, unless its zero moved further than any shift (a tare pressed with the bottle
            // on: "left" read 0 for good after it); a few grams either way are the zero model's to hedge.
            let zeroed = abs(emptyML) > Self.largestZeroShift ? emptyML : 0
            let remaining = calibration.remaining(settledML: after - objectsML - zeroed).map { ($0 * 10).rounded() / 10 }
            events.append(DetectedEvent(kind: kind, t: t, start: start, end: settledAt, ml: ml, remainingML: remaining))
        }
        if configuration.emitDiagnostics, disturbance.lifted {
            events.append(DetectedEvent(kind: .placed, t: t, start: start, end: settledAt, ml: 0))
        }
        reference = after
        state = .settled
        disturbance = Disturbance()
    }
}

// MARK: - Building blocks

/// What a sensor kind sees of a drink, chosen once from the calibration: a
/// scale under the bottle sees it leave (its zero shows then) and needs little
/// settling; a level sensor travels with the bottle, sees no lift, reads
/// through the bottle's curve, goes unreadable when tilted, and sloshes.
/// One byte in the detector's state; each answer is a switch.
enum DetectorPolicy: UInt8, Sendable, Hashable, Codable {
    case weight, level

    /// Lifting the bottle takes it off the sensor (the scale then reads its
    /// zero): away, the empty scale's offsets and objects beside it exist.
    var bottleLeavesSensor: Bool { self == .weight }
    /// A lift shows in the readings; where it cannot, every disturbance counts as one.
    var seesLifts: Bool { self == .weight }
    /// Readings are levels that the calibration's curve turns into mL (and
    /// readings far outside it are garbage), rather than weights.
    var readsThroughCurve: Bool { self == .level }
    /// A missing reading means the bottle is tilted (level), not a dropped sample.
    var unreadableMeansTilted: Bool { self == .level }

    /// How long a new level holds before it is judged: longer than a hand
    /// resting on a scale (6 s), longer than a level sensor's slosh (8 s).
    var confirmSeconds: Double { self == .weight ? 6 : 8 }
    /// The start of a level left out of its mean: a put-down's last wobble
    /// (1 s), or the slosh of a level sensor (3 s).
    var settlingTailSeconds: Double { self == .weight ? 1 : 3 }
    /// How long a level must hold, before the next lift or tilt, to be judged
    /// as the level after a drink: a level sensor carried to the tap sloshes
    /// through two seconds of readings that agree by chance.
    var heldLevelSeconds: Double { self == .weight ? 0 : 3 }
    /// Blocks of the level's running average: a load cell creeps for minutes
    /// (8 s); a level sensor's readings drift little but are coarse (1 % of a
    /// bottle is several mL), so their dithering is averaged over longer (40 s).
    var averagingBlockSeconds: Double { self == .weight ? 8 : 40 }
    /// A level sensor's sip may move the level by less than its noise band
    /// (1 % steps, dithering) and, at 1 Hz, bring no unreadable reading: watch
    /// the level's readings summed against it as well (`LevelShift`). A scale always sees the lift.
    var watchesMeanShift: Bool { self == .level }
    /// The noise band's floor (mL) and how fast it follows the stream: load
    /// cells change noise quickly, a level sensor's noise is slow to judge.
    var noiseFloorML: Double { self == .weight ? 4 : 3 }
    /// The coarsest step a sensor of this kind is taken to have (mL): a scale's
    /// is 5 g (a SIG scale's wire), 4.5 g (0.01 lb) or finer, so a step of more
    /// than 10 g is more likely the hand. A level sensor's 1 % is 20 mL in a 2 L
    /// bottle: no bound.
    var coarsestStepML: Double { self == .weight ? 10 : .infinity }
    var noiseTimeConstant: Double { self == .weight ? 1.5 : 30 }
}

/// What an empty scale reads, and whether its offset after a lift stays.
///
/// Load cells shift their zero when unloaded (HX711 logs show 10–20 g), and
/// such a shift stays once the bottle is back; other scales only read a few
/// grams off while empty. The stream says which: lasting shifts make the empty
/// readings wander like a random walk, passing offsets scatter them around one
/// centre. Each hypothesis predicts the next empty reading; the weight given to
/// "it stays" follows how much better that prediction has been.
struct ZeroModel: Sendable, Codable {
    /// Drift of the standing bottle since the start: it moves the zero too.
    private var drift = 0.0
    /// The last empty reading, and the drift then ("it stays").
    private var lastSeen = 0.0
    private var driftAtLastSeen = 0.0
    /// Mean of the drift-free empty readings ("it passes"), a prior of 0 weighted once.
    private var centreSum = 0.0
    private var centreCount = 1.0
    /// Squared prediction errors of each hypothesis, with equal priors.
    private var errorIfStays = ZeroModel.prior
    private var errorIfPasses = ZeroModel.prior
    static let prior = 8.0

    /// The scale was seen empty before any bottle: that is the zero.
    mutating func startEmpty(at level: Double) {
        lastSeen = level
        driftAtLastSeen = drift
        centreSum = 3 * (level - drift)
        centreCount = 3
    }

    mutating func drifted(by amount: Double) { drift += amount }

    /// How far `seen` is from where a lasting zero would be now.
    func shiftIfPersistent(seen: Double) -> Double { seen - (lastSeen + drift - driftAtLastSeen) }

    /// Takes an empty reading; returns the weight (0...1) to give its shift.
    @discardableResult
    mutating func observe(seen: Double) -> Double {
        let ifStays = shiftIfPersistent(seen: seen)
        let ifPasses = seen - (centreSum / centreCount + drift)
        errorIfStays += ifStays * ifStays
        errorIfPasses += ifPasses * ifPasses
        lastSeen = seen
        driftAtLastSeen = drift
        centreSum += seen - drift
        centreCount += 1
        // Passing offsets: the "stays" prediction errs about twice as much
        // (ratio ≈ 0.5) → 0; no evidence (ratio 1) → ½; a wandering zero → 1.
        let ratio = errorIfPasses / errorIfStays
        let evidence = min(1, max(0, ratio - 0.5))
        // An empty scale reading "a few grams off" is one thing; a shift of
        // ten or more is a load cell's zero moving, as HX711 logs show.
        let size = min(1, max(0, (abs(ifStays) - 6) / 6))
        return max(evidence, size)
    }
}

/// Samples that agree with each other within the noise: the current level.
///
/// The mean follows slow drift (two blocks of sums). Samples are committed to
/// the judged level only after `holdBack` seconds, so that when the level is
/// disturbed, the touch that began it is not part of the level it is judged
/// against; the first second of a new level (the settling tail) is left out.
struct LevelRun: Sendable, Codable {
    private(set) var start = 0.0
    private(set) var lastT = 0.0
    private(set) var count = 0
    private var sum = 0.0, n = 0
    private var previousSum = 0.0, previousN = 0
    /// The settling tail: used only when the level is too short to spare it.
    private var tailSum = 0.0, tailN = 0
    private var blockStart = 0.0
    /// Samples not yet committed, oldest first, in a fixed ring.
    private var recent = RecentSamples()

    /// The judged level averages the last one to two blocks: short enough to
    /// follow a load cell's creep, long enough to average a coarse level
    /// sensor's dithering down (its drift is slow).
    let blockSeconds: Double
    let settlingTail: Double
    static let holdBack = 1.0

    init(settlingTail: Double, blockSeconds: Double = 8) {
        self.settlingTail = settlingTail
        self.blockSeconds = blockSeconds
    }

    var duration: Double { lastT - start }

    /// Everything in the run, for the band: committed and recent samples.
    var mean: Double {
        let m = n + previousN + tailN + recent.count
        return (sum + previousSum + tailSum + recent.sum) / Double(m)
    }

    /// The judged level without the latest `k` samples (which sum to `total`),
    /// when enough are left: they belong to the level that came next.
    func judgedLevel(withoutLatest k: Int, summing total: Double) -> Double {
        let (held, heldSum) = recent.latest(min(k, recent.count))
        let left = n + previousN - (k - held)
        guard left >= 3 else { return judgedLevel }
        return (sum + previousSum - (total - heldSum)) / Double(left)
    }

    /// The level to judge a change by: committed samples only, when there are enough.
    var judgedLevel: Double {
        let m = n + previousN
        if m >= 3 { return (sum + previousSum) / Double(m) }
        let k = m + tailN
        return k >= 3 ? (sum + previousSum + tailSum) / Double(k) : mean
    }

    mutating func reset() {
        count = 0
        sum = 0; n = 0; previousSum = 0; previousN = 0; tailSum = 0; tailN = 0
        recent.removeAll()
    }

    mutating func start(_ x: Double, at t: Double) {
        reset()
        start = t
        blockStart = t + settlingTail
        add(x, at: t)
    }

    mutating func add(_ x: Double, at t: Double) {
        if recent.isFull { commit(recent.removeOldest()) }
        recent.append(x, at: t)
        while let oldestT = recent.oldestT, t - oldestT > Self.holdBack { commit(recent.removeOldest()) }
        count += 1
        lastT = t
    }

    private mutating func commit(_ sample: (x: Double, t: Double)) {
        if sample.t < start + settlingTail {
            tailSum += sample.x
            tailN += 1
            return
        }
        if sample.t - blockStart >= blockSeconds {
            previousSum = sum; previousN = n
            sum = 0; n = 0
            blockStart = sample.t
        }
        sum += sample.x
        n += 1
    }
}

/// A settled level's readings against the level judged from the whole run: a
/// coarse sensor's dithering readings straddle a sip's step within one noise
/// band, but they sit on the new side of it more often than not. A two-sided
/// CUSUM (Page, 1954) adds up each reading's distance from the level beyond half
/// the smallest change worth finding; a sum of six noise deviations is a change,
/// and it began where its sum last stood at zero. (A three-second average of the
/// readings, which it replaced, had to move by 2.2 deviations: in 1 % steps that
/// is more than most small sips; such sensors at 1–5 Hz found 0.967 of the sweep's
/// sips with it, 0.979 now.)
/// A false alarm costs nothing: the levels on either side are judged as always.
struct LevelShift: Sendable, Equatable, Codable {
    /// Evidence that the level rose or fell, and when each last stood at zero.
    private var rise = 0.0, fall = 0.0
    private var riseSince = 0.0, fallSince = 0.0
    /// The readings since then, each side: the change's, not the level's before it.
    private var riseSum = 0.0, fallSum = 0.0
    private var riseCount = 0, fallCount = 0
    private var count = 0
    /// Samples before a change is believed.
    static let fewest = 4
    /// The sum that is a change, in the readings' standard deviations.
    static let deviations = 6.0

    init() {}

    /// A checkpoint from before the sums were kept holds an average instead:
    /// the sums start again from zero.
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        rise = try c.decodeIfPresent(Double.self, forKey: .rise) ?? 0
        fall = try c.decodeIfPresent(Double.self, forKey: .fall) ?? 0
        riseSince = try c.decodeIfPresent(Double.self, forKey: .riseSince) ?? 0
        fallSince = try c.decodeIfPresent(Double.self, forKey: .fallSince) ?? 0
        riseSum = try c.decodeIfPresent(Double.self, forKey: .riseSum) ?? 0
        fallSum = try c.decodeIfPresent(Double.self, forKey: .fallSum) ?? 0
        riseCount = try c.decodeIfPresent(Int.self, forKey: .riseCount) ?? 0
        fallCount = try c.decodeIfPresent(Int.self, forKey: .fallCount) ?? 0
        count = try c.decodeIfPresent(Int.self, forKey: .count) ?? 0
    }

    mutating func reset() { count = 0 }

    /// A change found: when it began, and the readings since (their sum and count).
    struct Change: Equatable {
        var since: Double
        var sum: Double
        var count: Int
    }

    /// Takes an inlier; when the level has moved by at least `smallest` (mL),
    /// judged against the readings' `sigma`, the change; else nil.
    @inline(__always)
    mutating func observe(_ x: Double, at t: Double, level: Double, sigma: Double, smallest: Double) -> Change? {
        if count == 0 {
            rise = 0; fall = 0; riseSince = t; fallSince = t
            riseSum = 0; fallSum = 0; riseCount = 0; fallCount = 0
        }
        count += 1
        let slack = smallest / 2, off = x - level
        rise = max(0, rise + off - slack)
        fall = max(0, fall - off - slack)
        if rise == 0 { riseSince = t; riseSum = 0; riseCount = 0 } else { riseSum += x; riseCount += 1 }
        if fall == 0 { fallSince = t; fallSum = 0; fallCount = 0 } else { fallSum += x; fallCount += 1 }
        guard count >= Self.fewest else { return nil }
        let limit = max(smallest, Self.deviations * sigma)
        if rise >= limit { return Change(since: riseSince, sum: riseSum, count: riseCount) }
        if fall >= limit { return Change(since: fallSince, sum: fallSum, count: fallCount) }
        return nil
    }
}

/// The typical time between readings (an average that follows rate changes
/// within a minute or so); gaps are left out.
struct SampleInterval: Sendable, Equatable, Codable {
    /// The interval of a stream read faster than a link gap (the name the version before stored it by).
    private var seconds = 0.1
    private var seen = false
    /// A stream read more slowly than a link gap (a logger that writes every 5 s): its interval, once
    /// three in a row have agreed on it; 0 for a faster stream. Each of its readings was a "link gap",
    /// and no level ever held: such a trace gave no events at all, and said nothing.
    private(set) var slow = 0.0
    private var slowRun = 0
    private var lastSlow = 0.0
    /// Loggers write once a minute as often as every few seconds: up to ten minutes is a stream.
    static let slowestStream = 600.0

    /// The interval readings come at.
    var typical: Double { slow > 0 ? slow : seconds }

    init() {}

    /// A checkpoint of the version before has no slow stream: it was a fast one.
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        seconds = try c.decode(Double.self, forKey: .seconds)
        seen = try c.decode(Bool.self, forKey: .seen)
        slow = try c.decodeIfPresent(Double.self, forKey: .slow) ?? 0
        slowRun = try c.decodeIfPresent(Int.self, forKey: .slowRun) ?? 0
        lastSlow = try c.decodeIfPresent(Double.self, forKey: .lastSlow) ?? 0
    }

    /// Takes the time since the last reading; `gap` is the shortest silence that is a link gap.
    @inline(__always)
    mutating func observe(_ dt: Double, gap: Double) {
        guard dt > 0 else { return }
        if dt < gap {
            seconds = seen ? seconds + (dt - seconds) * 0.05 : dt
            seen = true
            // A reading this soon is a fast stream's, whatever came before.
            if dt < gap / 2 { (slow, slowRun) = (0, 0) }
            if slow > 0 { slow += (dt - slow) * 0.1 }
            return
        }
        guard dt <= Self.slowestStream else { (slowRun, lastSlow) = (0, 0); return }
        slowRun = abs(dt - lastSlow) <= 0.5 * lastSlow ? slowRun + 1 : 1
        lastSlow = dt
        if slow > 0 { slow += (dt - slow) * 0.1 } else if slowRun >= 3 { slow = dt }
    }

    /// The shortest silence that is a link gap: `gap`, or for a slow stream two and a half of its intervals.
    func gapSeconds(_ gap: Double) -> Double { max(gap, 2.5 * slow) }
}

/// A fixed ring of the last few samples (at most 32: a second at 30 Hz),
/// allocated once.
struct RecentSamples: Sendable, Codable {
    private var values = [Double](repeating: 0, count: RecentSamples.capacity)
    private var times = [Double](repeating: 0, count: RecentSamples.capacity)
    private var head = 0
    private(set) var count = 0
    private(set) var sum = 0.0
    static let capacity = 32

    var isFull: Bool { count == Self.capacity }
    var oldestT: Double? { count == 0 ? nil : times[head] }

    mutating func removeAll() { count = 0; sum = 0; head = 0 }

    mutating func append(_ x: Double, at t: Double) {
        let slot = (head + count) & (Self.capacity - 1)
        values[slot] = x
        times[slot] = t
        count += 1
        sum += x
    }

    /// How many of the latest `k` samples there are, and their sum.
    func latest(_ k: Int) -> (count: Int, sum: Double) {
        let k = max(0, min(k, count))
        var total = 0.0
        for i in (count - k)..<count { total += values[(head + i) & (Self.capacity - 1)] }
        return (k, total)
    }

    mutating func removeOldest() -> (x: Double, t: Double) {
        let x = values[head], t = times[head]
        head = (head + 1) & (Self.capacity - 1)
        count -= 1
        sum = count == 0 ? 0 : sum - x
        return (x, t)
    }
}

/// Up to three consecutive samples that did not fit the current level.
/// One or two wild ones are spikes; two that agree, or three, mean it moved.
struct OutlierRun: Sendable, Codable {
    private(set) var count = 0
    private var x0 = 0.0, t0 = 0.0, x1 = 0.0, t1 = 0.0, x2 = 0.0, t2 = 0.0

    mutating func clear() { count = 0 }

    mutating func add(_ x: Double, at t: Double) {
        switch count {
        case 0: x0 = x; t0 = t
        case 1: x1 = x; t1 = t
        default:
            if count >= 3 { x0 = x1; t0 = t1; x1 = x2; t1 = t2; count = 2 }
            x2 = x; t2 = t
        }
        count += 1
    }

    var lastValue: Double { count >= 3 ? x2 : x1 }
    var lastT: Double { count >= 3 ? t2 : t1 }
    private var previousValue: Double { count >= 3 ? x1 : x0 }
    private var previousT: Double { count >= 3 ? t1 : t0 }

    /// The last two outliers agree with each other.
    private(set) var consistentPair = false
    /// The first and last of three agree, with a spike between them (nil in a
    /// checkpoint from before it was kept).
    private var spikeBetween: Bool?

    /// The new run starts with two readings, the newest added after `restart()`.
    var startsWithTwo: Bool { consistentPair || spikeBetween == true }

    mutating func brokeRun(tolerance: Double, keepingFirstPastASpike: Bool) -> Bool {
        guard count >= 2 else { return false }
        consistentPair = abs(lastValue - previousValue) <= 2 * tolerance
        spikeBetween = keepingFirstPastASpike && !consistentPair && count >= 3 && abs(x2 - x0) <= 2 * tolerance
        return consistentPair || count >= 3
    }

    /// Where a new run starts: the older of two that agree (the newer is added
    /// after), or the newest sample; plus when the move began. A spike between
    /// the two that agree does not cost the new level its first reading (read
    /// once a second, a short stay may have only two calm ones).
    func restart() -> (value: Double, t: Double, firstT: Double) {
        if consistentPair { return (previousValue, previousT, t0) }
        if spikeBetween == true { return (x0, t0, t0) }
        return (lastValue, lastT, t0)
    }
}

/// The stream's current noise and resolution, for the band within which
/// samples belong to the same level. It follows the local noise within a second
/// or two, so a wobbling pot or a ringing scale widens the band and a quiet
/// bottle narrows it again.
struct NoiseEstimate: Sendable, Codable {
    /// Exponential average of |Δ| between neighbouring samples; jumps of more
    /// than three bands are left out and the rest clipped to one and a half,
    /// so steps and spikes barely move it while real noise still widens it.
    private var step = 0.0
    private var last = Double.nan
    private var lastValue = Double.nan
    private var lastT = 0.0
    /// Smallest non-zero step seen twice, in the sensor's own units: its resolution.
    /// Kept in those units because what one step is worth in mL depends, for a
    /// level sensor, on where in the bottle the level stands: 1 % is 4 mL in a
    /// neck and 8 mL in the body, and a band of the neck's step split a level
    /// dithering between two of the body's steps (its sips were confirmed 15–30 s late).
    private var unitResolution = Double.infinity
    /// The smallest step seen but not yet often enough to be the resolution,
    /// and how often. A coarse scale at rest reads one value for minutes, so its
    /// first step may be a grasp of 40 g, and a band of 1.6 times that took the
    /// grasp into the level before the sip (a Mi scale in the VM: a 60 mL sip
    /// stored as 73.3, after a refill of 13.3). A step comes twice before it is
    /// the resolution; one coarser than a sensor of the kind is taken to have
    /// (`DetectorPolicy.coarsestStepML`: a press and its release are two equal
    /// steps) four times, as only a sensor dithering between its steps does.
    private var unconfirmedStep = Double.infinity
    private var unconfirmedSeen = 0
    /// mL per sensor unit where the level stands now.
    private var mlPerUnit = 1.0
    /// Differences averaged so far, while fewer than one time constant's worth:
    /// until then the estimate is their plain mean, not an average that
    /// starts from zero (a noisy level sensor's first 30 s had a band too
    /// narrow for its noise, and its first level broke into false sips).
    private var warmingUp = 0
    let floor: Double
    /// Seconds over which the estimate follows the stream. Load cells need it
    /// short (a wobbling pot); level sensors long, so that slosh after a
    /// put-down does not open the band and the level is judged once calm.
    let timeConstant: Double
    /// However noisy the stream, a change larger than this is a change (mL).
    static let widest = 60.0

    init(floor: Double, timeConstant: Double) {
        self.floor = floor
        self.timeConstant = timeConstant
        tolerance = floor
    }

    /// A checkpoint from before the resolution was kept in sensor units holds
    /// it in mL: it is learnt again from the next steps.
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        step = try c.decode(Double.self, forKey: .step)
        last = try c.decode(Double.self, forKey: .last)
        lastValue = try c.decodeIfPresent(Double.self, forKey: .lastValue) ?? .nan
        lastT = try c.decode(Double.self, forKey: .lastT)
        unitResolution = try c.decodeIfPresent(Double.self, forKey: .unitResolution) ?? .infinity
        if let unconfirmed = try c.decodeIfPresent(Double.self, forKey: .unconfirmedStep) {
            unconfirmedStep = unconfirmed
            unconfirmedSeen = try c.decodeIfPresent(Int.self, forKey: .unconfirmedSeen) ?? 1
        } else {
            // Kept when the first step was the resolution: it may be a grasp, and must come again.
            (unconfirmedStep, unconfirmedSeen) = (unitResolution, unitResolution.isFinite ? 1 : 0)
            unitResolution = .infinity
        }
        mlPerUnit = try c.decodeIfPresent(Double.self, forKey: .mlPerUnit) ?? 1
        warmingUp = try c.decodeIfPresent(Int.self, forKey: .warmingUp) ?? Int.max
        floor = try c.decode(Double.self, forKey: .floor)
        timeConstant = try c.decode(Double.self, forKey: .timeConstant)
        tolerance = try c.decode(Double.self, forKey: .tolerance)
    }

    /// Takes a reading as `x` mL, the sensor's `value`, and what one unit of
    /// it is worth there (`mlPerUnit`); a step worth more than `coarsestStepML`
    /// must come four times to be the resolution, not two.
    @inline(__always)
    mutating func observe(_ x: Double, value: Double, mlPerUnit perUnit: Double, at t: Double, coarsestStepML: Double) {
        defer { last = x; lastValue = value; lastT = t }
        guard !last.isNaN else { return }
        let unitStep = abs(value - lastValue)
        var finer = false
        if unitStep > 1e-9, unitStep < unitResolution {
            // Within 1 %: values on the wire's grid differ by float rounding once converted.
            if unconfirmedStep.isFinite, abs(unitStep - unconfirmedStep) <= 0.01 * unconfirmedStep {
                unconfirmedSeen += 1
                if unconfirmedSeen >= (unitStep * abs(perUnit) <= coarsestStepML ? 2 : 4) {
                    unitResolution = unitStep
                    finer = true
                }
            } else if unitStep < unconfirmedStep {
                (unconfirmedStep, unconfirmedSeen) = (unitStep, 1)
            }
        }
        if finer || perUnit != mlPerUnit {
            mlPerUnit = perUnit
            updateTolerance()
        }
        let d = abs(x - last)
        let band = tolerance
        // A jump of several bands is a step or a spike, not noise.
        guard d <= 3 * band else { return }
        // Per time, but never more than a few percent per sample, so that one
        // step of a lift at 1 Hz does not open the band.
        var weight = min(0.15, max(t - lastT, 0.01) / timeConstant)
        if warmingUp < Int.max {
            warmingUp += 1
            if 1 / Double(warmingUp) > weight { weight = 1 / Double(warmingUp) } else { warmingUp = .max }
        }
        step += (min(d, 1.5 * band) - step) * weight
        updateTolerance()
    }

    /// The band, kept up to date on every change (read on every reading).
    private(set) var tolerance: Double

    /// One step of the sensor where the level stands (mL).
    private var resolution: Double { unitResolution * abs(mlPerUnit) }

    /// The readings' standard deviation (mean |Δ| of white noise is 1.13 σ),
    /// at least a third of the resolution (rounding's own spread is 0.29 of a step).
    var sigma: Double { max(step / 1.13, resolution.isFinite ? resolution / 3 : 0) }

    /// mean |Δ| of white noise is 1.13 σ, so 4 × step ≈ 4.5 σ.
    private mutating func updateTolerance() {
        let quantum = resolution.isFinite ? 1.6 * resolution : 0
        tolerance = min(max(floor, 4 * step, quantum), Self.widest)
    }
}

// MARK: - Checkpoints

extension SipDetector {
    /// Why a detector decoded from a checkpoint cannot go on for this
    /// calibration and configuration; nil when it can. Everything it derived
    /// from them must be what this version derives, and its ring must be whole.
    public func resumeProblem(calibration: BottleCalibration, configuration: DetectorConfiguration) -> String? {
        guard self.calibration == calibration else { return "the device's calibration changed since" }
        guard self.configuration == configuration else { return "the detector's configuration changed since" }
        let fresh = SipDetector(calibration: calibration, configuration: configuration)
        guard policy == fresh.policy, mlPerUnit == fresh.mlPerUnit, tareML == fresh.tareML,
              plausibleML == fresh.plausibleML, confirmSeconds == fresh.confirmSeconds,
              run.settlingTail == fresh.run.settlingTail, run.blockSeconds == fresh.run.blockSeconds,
              noise.floor == fresh.noise.floor, noise.timeConstant == fresh.noise.timeConstant
        else { return "its settings are not the ones this version derives" }
        guard run.isWhole else { return "its recent samples are inconsistent" }
        return nil
    }

    /// A new detector for `calibration` that keeps what `earlier` learnt of
    /// the sensor: what the empty scale reads and whether its zero shifts stay
    /// (the first lifts of a load cell are judged as well as later ones).
    public func keepingLearning(of earlier: SipDetector) -> SipDetector {
        guard earlier.policy == policy else { return self }
        var next = self
        next.zero = earlier.zero
        next.emptyML = earlier.emptyML
        return next
    }

    /// The time of the last reading fed (-∞ before any).
    public var lastReadingT: Double { lastT }
}

extension LevelRun {
    var isWhole: Bool { recent.isWhole && count >= 0 }
}

extension RecentSamples {
    /// The ring's invariants, which a decoded value must hold before it indexes anything.
    var isWhole: Bool {
        values.count == Self.capacity && times.count == Self.capacity
            && (0..<Self.capacity).contains(head) && (0...Self.capacity).contains(count)
    }
}

/// What a device's detector needs to go on after the gateway restarts: the
/// whole detector (the settled level and its time, the zero-shift evidence, a
/// lift in progress) and where its clock stood on the wall and boot clocks
/// (docs/reliability.md#a-restart-in-the-middle-of-a-sip). Stored per device,
/// with each event and every few seconds; validated before it is trusted.
public struct DetectorCheckpoint: Sendable, Codable {
    /// The encoding's version: a checkpoint of another version is ignored.
    public static let formatVersion = 1
    /// A stored checkpoint larger than this is not read (a detector's is about 1.5 KB).
    public static let maximumBytes = 32_768
    /// Seconds of the detector's time between checkpoints while something is under way (a lift, a
    /// tilt, a level being confirmed), besides the one stored with each event: what a kill then loses
    /// is at most this many seconds of readings, which the detector sees as a link gap.
    public static let interval = 5.0
    /// Seconds between checkpoints while the bottle stands settled: nothing is under way to lose, and
    /// a write every 5 s of a bottle standing all night was 17,280 commits a day per device to an SD
    /// card, each of which woke every open page. A restart within a minute still finds one younger
    /// than `resumeWithin`, and the reading that leaves the settled level writes one at once (`isDue`).
    public static let restingInterval = 30.0
    /// A checkpoint older than this when the device's first reading comes is
    /// not resumed (only what it learnt of the scale's zero is kept): the sip
    /// it was in the middle of is long over, judged or not.
    public static let resumeWithin = 120.0

    /// The device's label (its address as printed).
    public var device: String
    public var detector: SipDetector
    /// The detector's time of the last reading (its clock runs on across restarts).
    public var t: Double
    /// Wall seconds since 1970 at `t`.
    public var wall: Double
    /// The boot `sinceBoot` belongs to (empty when not known) and CLOCK_BOOTTIME at `t`.
    public var bootID: String
    public var sinceBoot: Double

    /// Whether a checkpoint is due at a reading at detector time `t` (besides the one stored with each
    /// event), the last written at `last`: at once when the reading changed the detector's phase from
    /// `previous` (the lift leaves the level the sip is judged against; the bottle back on a load cell
    /// has shown its zero: of 120 simulated kills of an HX711's sips, 14 changed the sips where a
    /// checkpoint every 5 s alone changed 20), then every `interval` while anything is under way and every
    /// `restingInterval` while settled.
    public static func isDue(_ detector: SipDetector, previous: DetectorPhase, t: Double, last: Double) -> Bool {
        let phase = detector.phase
        // (Half a second apart at least: a jostled bottle's level flickering between settling and disturbed wrote at each
        // flicker. A second apart lost the zero seen as a load cell's bottle came back: 17 kills of 120 changed the sips, not 14.)
        if phase != previous, t - last >= phaseChangeSpacing { return true }
        return t - last >= (phase.isUnderWay ? interval : restingInterval)
    }

    /// Seconds at least between two checkpoints written for a change of phase.
    public static let phaseChangeSpacing = 0.5

    /// How old this checkpoint may be when the device's first reading comes and still be resumed: `resumeWithin`,
    /// and for one written while nothing was under way, the longer wait for the next it would have had (a settled
    /// bottle's checkpoint may be 30 s old at a kill where an under-way one is 5 s: a restart is given as long).
    public var resumableFor: Double {
        Self.resumeWithin + (detector.phase.isUnderWay ? 0 : Self.restingInterval - Self.interval)
    }

    public init(device: String, detector: SipDetector, t: Double, wall: Double, bootID: String, sinceBoot: Double) {
        self.device = device
        self.detector = detector
        self.t = t
        self.wall = wall
        self.bootID = bootID
        self.sinceBoot = sinceBoot
    }

    /// Why this checkpoint (as read) cannot resume `device`'s detector; nil when it can.
    public func problem(device: String, calibration: BottleCalibration, configuration: DetectorConfiguration) -> String? {
        guard self.device == device else { return "it belongs to \(self.device.shownSafely(limit: 40))" }
        guard t.isFinite, wall.isFinite, sinceBoot.isFinite, detector.lastReadingT <= t else {
            return "its times are not finite or out of order"
        }
        return detector.resumeProblem(calibration: calibration, configuration: configuration)
    }
}

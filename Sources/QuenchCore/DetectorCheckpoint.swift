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
    /// Seconds of the detector's time between checkpoints, besides the one
    /// stored with each event: what a kill loses is at most this many seconds
    /// of readings, which the detector then sees as a link gap.
    public static let interval = 5.0
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

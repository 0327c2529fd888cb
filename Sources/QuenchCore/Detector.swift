/// Tuning of the sip detector. Defaults suit a drinking bottle on a kitchen
/// or bathroom scale, or a bottle with a level sensor.
public struct DetectorConfiguration: Sendable, Hashable, Codable {
    /// Smaller decreases are treated as noise (mL).
    public var minSipML: Double = 2.5
    /// Smaller increases are not reported as refills (mL).
    public var minRefillML: Double = 20
    /// A loss of at least this much in one go is a pour, not a sip (mL).
    public var pourML: Double = 250
    /// A loss faster than this over the time the bottle was away is a pour (mL/s),
    /// when it is also at least `pourMinML`.
    public var pourRateMLPerSecond: Double = 60
    public var pourMinML: Double = 120
    /// Emit the diagnostic `lifted` and `placed` events.
    public var emitDiagnostics = false

    public init() {}
}

/// The detector's phase, for `quench watch`.
public enum DetectorPhase: String, Sendable, Hashable {
    case unknown, settled, disturbed, away
}

/// Turns a stream of readings into sip, refill and pour events.
/// Streaming, bounded memory, deterministic. (Implementation in progress.)
public struct SipDetector: Sendable {
    public let calibration: BottleCalibration
    public let configuration: DetectorConfiguration
    public private(set) var phase: DetectorPhase = .unknown

    public init(calibration: BottleCalibration, configuration: DetectorConfiguration = .init()) {
        self.calibration = calibration
        self.configuration = configuration
    }

    public mutating func process(_ reading: Reading, into events: inout [DetectedEvent]) {}

    public mutating func finish(into events: inout [DetectedEvent]) {}
}

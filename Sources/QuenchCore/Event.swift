/// What the detector reports.
public enum EventKind: String, Sendable, Hashable, CaseIterable, Codable {
    /// Water drunk: intake.
    case sip
    /// Water added to the bottle.
    case refill
    /// Water lost too fast or in too large an amount to be drunk (emptied into
    /// the sink): not intake.
    case pour
    /// Diagnostic: the bottle left the scale (or the level sensor went unreadable).
    case lifted
    /// Diagnostic: the bottle is back and has settled.
    case placed

    /// Whether the event counts towards intake.
    public var isIntake: Bool { self == .sip }
    public var isDiagnostic: Bool { self == .lifted || self == .placed }
}

/// An event the detector has made final.
public struct DetectedEvent: Sendable, Hashable {
    public var kind: EventKind
    /// When the event became final (trace seconds).
    public var t: Double
    /// When the disturbance began: the lift, the tilt or the touch (trace seconds).
    public var start: Double
    /// When the bottle was back and settled (trace seconds).
    public var end: Double
    /// Volume moved, always positive (0 for diagnostics).
    public var ml: Double
    /// What the sensor says is in the bottle after the event, when the
    /// calibration knows (capacity or empty weight).
    public var remainingML: Double?

    public init(kind: EventKind, t: Double, start: Double, end: Double, ml: Double, remainingML: Double? = nil) {
        self.kind = kind
        self.t = t
        self.start = start
        self.end = end
        self.ml = ml
        self.remainingML = remainingML
    }
}

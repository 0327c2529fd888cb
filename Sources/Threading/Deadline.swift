/// A point on the monotonic clock, for "how many seconds are left" when a
/// wait is split across several bearer receives.
public struct Deadline: Sendable {
    public let instant: ContinuousClock.Instant?

    /// `seconds` from now; an infinite value never passes.
    public init(seconds: Double) {
        instant = seconds.isFinite ? ContinuousClock.now + .seconds(max(0, seconds)) : nil
    }

    /// Seconds left, never negative; infinity when there is no limit.
    public var remaining: Double {
        guard let instant else { return .infinity }
        let left = instant - ContinuousClock.now
        guard left > .zero else { return 0 }
        let (s, atto) = left.components
        return Double(s) + Double(atto) * 1e-18
    }

    public var hasPassed: Bool { remaining == 0 }
}

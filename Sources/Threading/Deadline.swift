/// A point on the monotonic clock, for "how many seconds are left" when a
/// wait is split across several bearer receives.
public struct Deadline: Sendable {
    /// Waits longer than this (about 31 years) are taken as no limit, so no
    /// arithmetic on the clock can overflow.
    static let longest = 1e9

    public let instant: ContinuousClock.Instant?

    /// `seconds` from now; an infinite (or absurdly long) value never passes, NaN is now.
    public init(seconds: Double) {
        instant = seconds.isNaN ? .now : seconds < Self.longest ? ContinuousClock.now + .seconds(seconds > 0 ? seconds : 0) : nil
    }

    /// Seconds left, never negative; infinity when there is no limit.
    public var remaining: Double {
        guard let instant else { return .infinity }
        return max(0, (instant - ContinuousClock.now).seconds)
    }

    public var hasPassed: Bool { remaining == 0 }

    /// The deadline as an instant, for APIs that take one; no limit is the
    /// longest wait (about 31 years) from now.
    public var until: ContinuousClock.Instant { instant ?? .now + .seconds(Self.longest) }
}

extension Duration {
    /// The duration in seconds, as a Double.
    public var seconds: Double {
        let (s, atto) = components
        return Double(s) + Double(atto) * 1e-18
    }
}

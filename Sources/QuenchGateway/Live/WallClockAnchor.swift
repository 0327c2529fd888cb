/// Where the session's time line meets the wall clock (pure). Between looks
/// at the wall clock, events are placed by the monotonic clock from the last
/// anchor, so a wall-clock jump moves no event, makes no gap and no sip.
/// Until the wall clock is synchronised (a Pi without a real-time clock
/// boots at its last shutdown time, or in 1970, until NTP answers) the
/// anchor is provisional, and the events stamped from it are re-stamped
/// by the correction once it is.
public struct WallClockAnchor: Sendable, Hashable {
    /// Session seconds at the anchor.
    public private(set) var t: Double
    /// Wall seconds (since 1970) at the anchor.
    public private(set) var wall: Double
    /// False while the wall clock has not been synchronised since the session
    /// started; once it has, it stays true (a synchronised clock that loses its
    /// server drifts by milliseconds, not by days).
    public private(set) var synchronized: Bool

    /// Differences between the monotonic and the wall clock larger than this are jumps (seconds).
    public static let jumpLimit = 2.0

    public enum Change: Sendable, Hashable {
        case steady
        /// The wall clock was set (by hand, or NTP stepped it) by this many seconds.
        case jumped(by: Double)
        /// Synchronised for the first time: provisional stamps were off by `correction` seconds.
        case synchronized(correction: Double)
    }

    public init(t: Double, wall: Double, synchronized: Bool) {
        self.t = t
        self.wall = wall
        self.synchronized = synchronized
    }

    /// Wall seconds of session time `t`.
    public func wall(at t: Double) -> Double { wall + (t - self.t) }

    /// A look at the wall clock at session time `t`. `synchronized` nil (the
    /// kernel cannot be asked) counts as synchronised: nothing better is known.
    public mutating func observe(wall now: Double, synchronized isSynchronized: Bool?, at t: Double) -> Change {
        let drift = now - wall(at: t)
        self.t = t
        wall = now
        if !synchronized, isSynchronized != false {
            synchronized = true
            return .synchronized(correction: drift)
        }
        return abs(drift) > Self.jumpLimit ? .jumped(by: drift) : .steady
    }
}

#if os(Linux)
import BluetoothLinux
import Glibc
#endif
import QuenchProfiles
import Threading

/// One "stop now" for a whole session: wakes threads waiting out a backoff
/// (a condition variable, no polling) and cancels blocked scans and connects.
public final class StopSignal: Sendable {
    private let stopped = Condition(false)
    #if os(Linux)
    /// Polled next to sockets by the Bluetooth layer; nil if no eventfd could be made.
    public let bluetooth: BluetoothCancellation?
    #endif

    public init() {
        #if os(Linux)
        bluetooth = try? BluetoothCancellation()
        #endif
    }

    public var isStopped: Bool { stopped.withLock { $0 } }

    /// Whether a stop wakes blocked socket waits (the eventfd exists).
    public var canWakeBearers: Bool {
        #if os(Linux)
        bluetooth != nil
        #else
        false
        #endif
    }

    public func stop() {
        stopped.changing { $0 = true }
        #if os(Linux)
        bluetooth?.cancel()
        #endif
    }

    /// Waits `seconds` or until stopped; true when stopped.
    @discardableResult
    public func wait(seconds: Double) -> Bool {
        stopped.wait(until: Deadline(seconds: seconds)) { $0 ? true : nil } ?? false
    }
}

/// Exponential backoff with jitter and a cap, for reconnecting.
public struct Backoff: Sendable {
    public var initial: Double
    public var factor: Double
    public var maximum: Double
    /// Each delay is spread by ± this fraction, so devices that dropped together do not retry in lockstep.
    public var jitter: Double
    private var state: UInt64

    public init(initial: Double = 1, factor: Double = 2, maximum: Double = 30, jitter: Double = 0.2, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) {
        self.initial = initial
        self.factor = factor
        self.maximum = maximum
        self.jitter = jitter
        state = seed | 1
    }

    /// The delay before retry number `attempt` (0 = the first retry).
    public mutating func delay(attempt: Int) -> Double {
        let base = min(maximum, initial * pow(factor, Double(min(attempt, 60))))
        // xorshift64*: cheap, deterministic per seed.
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        let unit = Double((state &* 0x2545_F491_4F6C_DD1D) >> 11) / Double(1 << 53)
        return min(maximum, max(0, base * (1 + jitter * (2 * unit - 1))))
    }
}

extension StopSignal: SessionStop {}

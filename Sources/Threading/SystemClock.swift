#if canImport(Glibc)
import CClock
import Glibc

/// One look at the system's clocks: what the gateway stamps events with.
public struct ClockReading: Sendable, Hashable {
    /// The wall clock, seconds since 1970.
    public var wall: Double
    /// The monotonic clock of this boot (CLOCK_BOOTTIME), seconds.
    public var sinceBoot: Double
    /// Whether the kernel considers the wall clock synchronised (adjtimex: no
    /// STA_UNSYNC, as `timedatectl` shows it); nil when it cannot be asked.
    public var synchronized: Bool?

    public init(wall: Double, sinceBoot: Double, synchronized: Bool?) {
        self.wall = wall
        self.sinceBoot = sinceBoot
        self.synchronized = synchronized
    }
}

/// The system's clocks; a scripted one in tests.
public protocol SystemClock: Sendable {
    func read() -> ClockReading
    /// This boot's identity (`/proc/sys/kernel/random/boot_id`): a monotonic
    /// reading means something only within the boot it was taken in.
    var bootID: String { get }
}

/// This machine's clocks.
public struct KernelClock: SystemClock {
    public let bootID: String

    public init() {
        bootID = Self.readBootID() ?? "unknown"
    }

    public func read() -> ClockReading {
        // Read first, so the wall time is as close as possible to the state it is judged by.
        let state = quench_clock_state()
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let wall = Double(now.tv_sec) + Double(now.tv_nsec) * 1e-9
        // TIME_ERROR (5): STA_UNSYNC is set. -1: the call was refused (a seccomp filter).
        return ClockReading(wall: wall, sinceBoot: quench_seconds_since_boot(), synchronized: state < 0 ? nil : state != 5)
    }

    private static func readBootID() -> String? {
        let fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { return nil }
        let text = String(decoding: buffer.prefix(n), as: UTF8.self).filter { !$0.isWhitespace }
        return text.isEmpty ? nil : text
    }
}
#endif

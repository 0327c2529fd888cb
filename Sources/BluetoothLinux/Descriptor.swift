#if os(Linux)
import Glibc
import Synchronization
import CBlueZ
import GATT

/// Thin wrappers over the system calls this layer uses: EINTR is retried and
/// failures become `BluetoothSocketError` naming the operation.
enum Sys {
    static func check(_ result: Int32, _ operation: @autoclosure () -> String) throws(BluetoothSocketError) -> Int32 {
        if result >= 0 { return result }
        throw BluetoothSocketError(operation: operation(), errno: errno)
    }

    /// Runs `body` until it does not fail with EINTR.
    static func retrying(_ operation: @autoclosure () -> String, _ body: () -> Int) throws(BluetoothSocketError) -> Int {
        while true {
            let r = body()
            if r >= 0 { return r }
            let e = errno
            if e == EINTR { continue }
            throw BluetoothSocketError(operation: operation(), errno: e)
        }
    }

    /// A Bluetooth socket, close-on-exec and non-blocking from the start.
    static func bluetoothSocket(type: Int32, protocol proto: Int32, _ what: String) throws(BluetoothSocketError) -> Int32 {
        let flags = Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        return try check(socket(AF_BLUETOOTH, type | flags, proto), "socket(AF_BLUETOOTH, \(what))")
    }

    static func bind<Address: BitwiseCopyable>(_ fd: Int32, _ address: Address, _ operation: String) throws(BluetoothSocketError) {
        var a = address
        let r = withUnsafePointer(to: &a) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<Address>.size)) }
        }
        _ = try check(r, operation)
    }

    static func setOption<Value: BitwiseCopyable>(_ fd: Int32, level: Int32, name: Int32, _ value: Value, _ operation: String) throws(BluetoothSocketError) {
        let r = withUnsafeBytes(of: value) { setsockopt(fd, level, name, $0.baseAddress, socklen_t($0.count)) }
        _ = try check(r, operation)
    }

    static func getOption<Value: BitwiseCopyable>(_ fd: Int32, level: Int32, name: Int32, _ initial: Value, _ operation: String) throws(BluetoothSocketError) -> Value {
        var v = initial
        var len = socklen_t(MemoryLayout<Value>.size)
        let r = withUnsafeMutableBytes(of: &v) { getsockopt(fd, level, name, $0.baseAddress, &len) }
        _ = try check(r, operation)
        return v
    }

    /// Writes one whole packet (datagram or seqpacket); nil when the socket is
    /// not ready (EAGAIN); a short write is an error.
    static func writePacket(_ fd: Int32, _ bytes: [UInt8], _ operation: @autoclosure () -> String) throws(BluetoothSocketError) -> Bool {
        while true {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n == bytes.count { return true }
            if n >= 0 { throw BluetoothSocketError(operation: operation() + " (short write)", errno: EMSGSIZE) }
            let e = errno
            if e == EINTR { continue }
            if e == EAGAIN || e == EWOULDBLOCK { return false }
            throw BluetoothSocketError(operation: operation(), errno: e)
        }
    }

    /// Reads one packet; nil when nothing is waiting (EAGAIN).
    static func readPacket(_ fd: Int32, maximum: Int, _ operation: @autoclosure () -> String) throws(BluetoothSocketError) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: maximum)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n >= 0 { return Array(buffer[0..<n]) }
            let e = errno
            if e == EINTR { continue }
            if e == EAGAIN || e == EWOULDBLOCK { return nil }
            throw BluetoothSocketError(operation: operation(), errno: e)
        }
    }
}

/// What a wait for readiness ended with.
enum PollOutcome: Equatable {
    case ready(Int16)
    case timedOut
    case cancelled
}

/// Waits for `events` on `fd` until the deadline, or until `cancellation` fires.
/// Retries EINTR with the time that is left.
func waitFor(_ fd: Int32, events: Int16, until deadline: ContinuousClock.Instant,
             cancellation: BluetoothCancellation?, wakeup: Int32? = nil,
             _ operation: @autoclosure () -> String) throws(BluetoothSocketError) -> PollOutcome {
    var fds = [pollfd(fd: fd, events: events, revents: 0)]
    if let c = cancellation { fds.append(pollfd(fd: c.fd, events: Int16(POLLIN), revents: 0)) }
    if let w = wakeup, w >= 0 { fds.append(pollfd(fd: w, events: Int16(POLLIN), revents: 0)) }
    while true {
        let ms = DescriptorBearer.pollMilliseconds(until: deadline)
        for i in fds.indices { fds[i].revents = 0 }
        let r = poll(&fds, nfds_t(fds.count), ms)
        if r < 0 {
            let e = errno
            if e == EINTR { continue }
            throw BluetoothSocketError(operation: "poll(\(operation()))", errno: e)
        }
        if fds.dropFirst().contains(where: { $0.revents != 0 }) { return .cancelled }
        if r > 0 && fds[0].revents != 0 { return .ready(fds[0].revents) }
        if ms == 0 { return .timedOut }
    }
}

/// A cancellation signal that wakes up blocked scans and connects (an eventfd
/// polled next to the socket), so that no wait needs a sleeping loop.
public final class BluetoothCancellation: Sendable {
    let fd: Int32
    private let fired = Atomic<Bool>(false)

    public init() throws(BluetoothLinuxError) {
        let fd = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
        guard fd >= 0 else { throw .system(BluetoothSocketError(operation: "eventfd", errno: errno)) }
        self.fd = fd
    }

    public var isCancelled: Bool { fired.load(ordering: .acquiring) }

    /// The eventfd, readable once cancelled: for others to poll beside their own descriptors.
    public var fileDescriptor: Int32 { fd }

    /// Wakes every wait on this cancellation, now and later.
    public func cancel() {
        guard !fired.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { Glibc.write(fd, $0.baseAddress, 8) }
    }

    deinit { Glibc.close(fd) }
}

/// `seconds` from now; a NaN is now, and anything past 30 years (a `--timeout
/// 1e300`, infinity) is 30 years: never a trap on converting to milliseconds.
func deadline(after seconds: Double) -> ContinuousClock.Instant {
    let bounded = seconds.isNaN ? 0 : min(max(0, seconds), 1e9)
    return ContinuousClock.now.advanced(by: .milliseconds(Int64((bounded * 1000).rounded(.up))))
}
#endif

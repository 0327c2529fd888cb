#if os(Linux)
import Glibc

/// systemd's notify protocol, spoken directly (sd_notify(3): one datagram of
/// `KEY=value` lines to the AF_UNIX socket in `$NOTIFY_SOCKET`), so no
/// libsystemd is needed: `READY=1`, `STATUS=…`, `WATCHDOG=1`, `STOPPING=1`.
/// Without `$NOTIFY_SOCKET` (not under a `Type=notify` unit) every call does nothing.
public struct ServiceNotifier: Sendable {
    /// The socket's path; a leading `@` is an abstract name.
    public let socketPath: String?
    /// How often systemd wants `WATCHDOG=1` (its `WatchdogSec=`), nil without a watchdog.
    public let watchdogInterval: Double?

    public init(socketPath: String?, watchdogInterval: Double?) {
        self.socketPath = socketPath.flatMap { $0.isEmpty ? nil : $0 }
        self.watchdogInterval = watchdogInterval
    }

    /// From `$NOTIFY_SOCKET`, `$WATCHDOG_USEC` and `$WATCHDOG_PID` (the watchdog is ours only when the pid is).
    public static func fromEnvironment() -> ServiceNotifier {
        fromEnvironment({ name in getenv(name).map { String(cString: $0) } }, pid: getpid())
    }

    /// The same from `variable` for a process `pid` (tests: no change to this process's environment).
    public static func fromEnvironment(_ variable: (String) -> String?, pid: Int32) -> ServiceNotifier {
        var interval: Double?
        if let usec = variable("WATCHDOG_USEC").flatMap(UInt64.init), usec > 0,
           variable("WATCHDOG_PID").flatMap(Int32.init).map({ $0 == pid }) ?? true {
            interval = Double(usec) / 1e6
        }
        return ServiceNotifier(socketPath: variable("NOTIFY_SOCKET"), watchdogInterval: interval)
    }

    public var isActive: Bool { socketPath != nil }

    public func ready(status: String) { send("READY=1\nSTATUS=\(status)") }
    public func status(_ text: String) { send("STATUS=\(text)") }
    public func watchdog() { send("WATCHDOG=1") }
    public func stopping() { send("STOPPING=1") }

    /// Sends one datagram; failures are ignored (systemd may be gone, and a
    /// notification must never stop the gateway).
    public func send(_ message: String) {
        guard let socketPath else { return }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var path = Array(socketPath.utf8)
        if path.first == UInt8(ascii: "@") { path[0] = 0 }  // abstract namespace
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.count < capacity else { return }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.enumerated() { raw[i] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count + (path.first == 0 ? 0 : 1))
        var bytes = Array(message.utf8)
        _ = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                sendto(fd, &bytes, bytes.count, Int32(MSG_NOSIGNAL), sa, length)
            }
        }
    }
}
#endif

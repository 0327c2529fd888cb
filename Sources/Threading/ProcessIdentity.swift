#if canImport(Glibc)
import Glibc

/// A process as this boot knows it: its pid and when it started (field 22 of
/// /proc/PID/stat, clock ticks since boot), so a pid used again by another
/// process is not taken for the one that held something (a role on a database).
public struct ProcessIdentity: Sendable, Hashable {
    public var pid: Int32
    public var started: Int64

    /// This program's name as it was run (`quench`, `quenchd`, `quench-web`): what its messages and log
    /// lines begin with, so a journal that holds them all says which one spoke.
    public static var programName: String {
        guard let path = CommandLine.arguments.first, let name = path.split(separator: "/").last, !name.isEmpty else { return "quench" }
        return String(name)
    }

    /// The process `pid` now, with its start time; nil when there is none.
    public static func of(_ pid: Int32) -> ProcessIdentity? {
        startTime(of: pid).map { ProcessIdentity(pid: pid, started: $0) }
    }

    public static var current: ProcessIdentity {
        let pid = getpid()
        return ProcessIdentity(pid: pid, started: startTime(of: pid) ?? 0)
    }

    /// Whether that process still runs (the same pid, started at the same tick).
    public static func isRunning(pid: Int32, started: Int64) -> Bool {
        guard pid > 0 else { return false }
        guard let now = startTime(of: pid) else { return false }
        return now == started
    }

    /// Field 22 of /proc/PID/stat; the fields after the command (field 2, in
    /// parentheses, which may itself hold spaces and parentheses) are counted from its last `)`.
    static func startTime(of pid: Int32) -> Int64? {
        let fd = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 1024)
        let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard n > 0, let close = bytes.prefix(n).lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let fields = bytes[(close + 1)..<n].split(separator: UInt8(ascii: " "))
        // After ")": field 3 (state) is fields[0], so field 22 is fields[19].
        guard fields.count > 19 else { return nil }
        return Int64(String(decoding: fields[19], as: UTF8.self))
    }
}
#endif

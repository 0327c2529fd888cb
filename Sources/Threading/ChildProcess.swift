#if canImport(Glibc)
import CClock
import Glibc

/// Runs a program directly (posix_spawn, never a shell), bounded in time: a
/// reminder's hook, `systemctl` for `doctor`. Nothing a child does can hold
/// the caller past `timeout`; it is killed then.
public enum ChildProcess {
    public enum Outcome: Sendable, Equatable {
        /// It exited with `status`; `output` is its standard output when asked for (at most 64 KB).
        case exited(status: Int32, output: String)
        case killed(signal: Int32)
        case timedOut
        case cannotStart(errno: Int32)
    }

    /// - Parameters:
    ///   - environment: `NAME=value` entries; nil inherits this process's.
    ///   - captureOutput: collect standard output (standard error goes to /dev/null); else both are inherited.
    public static func run(_ path: String, _ arguments: [String] = [], environment: [String]? = nil,
                           captureOutput: Bool = false, timeout: Double) -> Outcome {
        var pipeFDs: [Int32] = [-1, -1]
        if captureOutput {
            guard pipe(&pipeFDs) == 0 else { return .cannotStart(errno: errno) }
            // Neither end leaks into the child past exec; its stdout is a dup2 of the write end.
            for fd in pipeFDs { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if captureOutput {
            posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 1)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        var argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var envp: [UnsafeMutablePointer<CChar>?]? = environment.map { $0.map { strdup($0) } + [nil] }
        defer { for p in envp ?? [] { free(p) } }
        var pid: pid_t = 0
        var attributes = cleanSignals()
        defer { posix_spawnattr_destroy(&attributes) }
        // A group of its own, so that a timeout stops what it started too (a hook's script
        // running `yes` kept writing into our output after the script itself was killed).
        posix_spawnattr_setpgroup(&attributes, 0)
        var flags: Int16 = 0
        posix_spawnattr_getflags(&attributes, &flags)
        posix_spawnattr_setflags(&attributes, flags | Int16(POSIX_SPAWN_SETPGROUP))
        func spawn() -> Int32 {
            envp == nil ? posix_spawn(&pid, path, &actions, &attributes, &argv, environ)
                : envp!.withUnsafeMutableBufferPointer { posix_spawn(&pid, path, &actions, &attributes, &argv, $0.baseAddress) }
        }
        var rc = spawn()
        // "Text file busy": the program is open for writing somewhere, as a script is for a moment while another thread
        // of this process forks (its copy of the descriptor lives until that child's exec), or while it is installed.
        // Tried again for up to a second (a test's freshly written script failed so, once in a full run).
        for _ in 0..<20 where rc == ETXTBSY {
            usleep(50_000)
            rc = spawn()
        }
        if captureOutput { close(pipeFDs[1]) }
        defer { if captureOutput { close(pipeFDs[0]) } }
        guard rc == 0 else { return .cannotStart(errno: rc) }

        let deadline = Deadline(seconds: timeout)
        var output: [UInt8] = []
        if captureOutput {
            var chunk = [UInt8](repeating: 0, count: 4096)
            reading: while output.count < 1 << 16, !deadline.hasPassed {
                var p = pollfd(fd: pipeFDs[0], events: Int16(POLLIN), revents: 0)
                guard poll(&p, 1, Int32(min(deadline.remaining * 1000, 1000))) > 0 else { continue }
                let n = chunk.withUnsafeMutableBytes { read(pipeFDs[0], $0.baseAddress, $0.count) }
                if n > 0 { output += chunk.prefix(n) } else if n == 0 || errno != EINTR { break reading }
            }
        }
        var status: Int32 = 0
        // The child's exit is waited for on its pidfd, so it is reaped the moment it ends (a poll
        // every 20 ms added 0–20 ms to each card a page asked for); without one (a kernel before
        // 5.3), waitpid is polled, each wait twice the last, up to 20 ms.
        let exited = quench_pidfd_open(pid)
        defer { if exited >= 0 { close(exited) } }
        var pause: UInt32 = 500
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { break }
            if r < 0, errno != EINTR { return .cannotStart(errno: errno) }
            if deadline.hasPassed {
                kill(-pid, SIGKILL)  // the child's group: whatever it started and left running
                kill(pid, SIGKILL)
                while waitpid(pid, &status, 0) < 0, errno == EINTR {}
                return .timedOut
            }
            if exited >= 0 {
                var p = pollfd(fd: exited, events: Int16(POLLIN), revents: 0)
                _ = poll(&p, 1, Int32(max(1, min(deadline.remaining * 1000, 1000))))
            } else {
                usleep(pause)
                pause = min(pause * 2, 20_000)
            }
        }
        guard status & 0x7F == 0 else { return .killed(signal: status & 0x7F) }
        return .exited(status: (status >> 8) & 0xFF, output: String(decoding: output, as: UTF8.self))
    }

    /// Spawn attributes for every child: no signal blocked and the usual
    /// dispositions. A process that handles SIGINT/SIGTERM on a thread of its
    /// own blocks them everywhere else, and posix_spawn would pass that mask
    /// on: the child could then never be stopped with SIGTERM.
    static func cleanSignals() -> posix_spawnattr_t {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for s in [SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGUSR1, SIGUSR2] { sigaddset(&defaults, s) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        return attributes
    }

    /// A program started and left running (a server a test talks to): its
    /// output goes to `logFile` (or /dev/null); `signal` and `wait` end it.
    public final class Running: Sendable {
        public let pid: pid_t

        init(pid: pid_t) { self.pid = pid }

        public func signal(_ signal: Int32) { kill(pid, signal) }

        /// Waits for it to end; its wait status.
        @discardableResult
        public func wait() -> Int32 {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0, errno == EINTR {}
            return status
        }
    }

    public static func start(_ path: String, _ arguments: [String] = [], logFile: String? = nil) -> Result<Running, SpawnError> {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let log = logFile ?? "/dev/null"
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        var argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var attributes = cleanSignals()
        defer { posix_spawnattr_destroy(&attributes) }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, &attributes, &argv, environ)
        guard rc == 0 else { return .failure(SpawnError(path: path, errno: rc)) }
        return .success(Running(pid: pid))
    }

    public struct SpawnError: Error, Sendable, CustomStringConvertible {
        public var path: String
        public var errno: Int32
        public var description: String { "cannot start \(path): \(String(cString: strerror(errno)))" }
    }
}
#endif

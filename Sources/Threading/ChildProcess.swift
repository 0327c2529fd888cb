#if canImport(Glibc)
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
        let rc: Int32 = envp == nil ? posix_spawn(&pid, path, &actions, nil, &argv, environ)
            : envp!.withUnsafeMutableBufferPointer { posix_spawn(&pid, path, &actions, nil, &argv, $0.baseAddress) }
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
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { break }
            if r < 0, errno != EINTR { return .cannotStart(errno: errno) }
            if deadline.hasPassed {
                kill(pid, SIGKILL)
                while waitpid(pid, &status, 0) < 0, errno == EINTR {}
                return .timedOut
            }
            usleep(20_000)
        }
        guard status & 0x7F == 0 else { return .killed(signal: status & 0x7F) }
        return .exited(status: (status >> 8) & 0xFF, output: String(decoding: output, as: UTF8.self))
    }
}
#endif

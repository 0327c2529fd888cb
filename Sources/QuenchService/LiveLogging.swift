#if os(Linux)
import Glibc
import Logging
import Synchronization

/// Logging for the live commands: swift-log to standard error at `level`
/// (`trace` … `critical`; `QUENCH_LOG` when not given, else `info`).
public enum LiveLogging {
    /// swift-log may be bootstrapped once per process: the first call sets the level, later ones get the same logging.
    private static let bootstrapped = Mutex(false)

    public static func bootstrap(level: String?) -> Logger {
        bootstrapped.withLock { done in
            guard !done else { return }
            done = true
            let name = level ?? getenv("QUENCH_LOG").map { String(cString: $0) } ?? "info"
            let parsed = Logger.Level(rawValue: name.lowercased()) ?? .info
            LoggingSystem.bootstrap { label in
                var h = StreamLogHandler.standardError(label: label)
                h.logLevel = parsed
                return h
            }
        }
        return Logger(label: programName)
    }

    /// The running program's name (`quench`, `quenchd`, `quench-web`): what each log line is labelled with,
    /// so a journal that holds them all says which one spoke.
    static var programName: String {
        guard let path = CommandLine.arguments.first, let name = path.split(separator: "/").last, !name.isEmpty else { return "quench" }
        return String(name)
    }
}
#endif

#if os(Linux)
import Glibc
import Logging
import Synchronization
import Threading

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
        return Logger(label: ProcessIdentity.programName)
    }
}
#endif

#if canImport(Glibc)
import Glibc

/// Runs `body` on its own POSIX thread (not Swift's cooperative pool, which
/// must never block on a socket); `join` waits for it to end.
public final class WorkerThread: @unchecked Sendable {
    private let lock = ConditionLock()
    private var finished = false

    /// - Parameter name: shown by `top -H` and in core dumps (the kernel keeps 15 bytes).
    public init(name: String, _ body: @escaping @Sendable () -> Void) {
        let start = Start(name: name) { [self] in
            body()
            lock.withLock {
                finished = true
                lock.broadcast()
            }
        }
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        // 1 MiB instead of glibc's 8 MiB default: these threads only wait on descriptors.
        pthread_attr_setstacksize(&attributes, 1 << 20)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let box = Unmanaged.passRetained(start).toOpaque()
        let status = pthread_create(&thread, &attributes, { box in
            let start = Unmanaged<Start>.fromOpaque(box!).takeRetainedValue()
            WorkerThread.nameThisThread(start.name)
            start.body()
            return nil
        }, box)
        // Only when the process is out of threads or memory; nothing to recover.
        precondition(status == 0, "cannot start thread '\(name)': \(String(cString: strerror(status)))")
    }

    public func join() {
        lock.withLock {
            while !finished { _ = lock.wait(until: Deadline(seconds: .infinity)) }
        }
    }

    /// pthread_setname_np needs _GNU_SOURCE, which Swift's Glibc module does not
    /// define; the kernel takes the same name through /proc.
    private static func nameThisThread(_ name: String) {
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = name.withCString { write(fd, $0, strlen($0)) }
        close(fd)
    }

    private final class Start {
        let name: String
        let body: () -> Void
        init(name: String, body: @escaping () -> Void) {
            self.name = String(name.utf8.prefix(15)) ?? "quench"
            self.body = body
        }
    }
}
#endif

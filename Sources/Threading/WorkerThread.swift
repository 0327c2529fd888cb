#if canImport(Glibc)
import Glibc
import Synchronization

/// Runs `body` on its own POSIX thread (not Swift's cooperative pool, which
/// must never block on a socket); `join` waits for it to end. The one way
/// Quench starts a thread.
public final class WorkerThread: Sendable {
    private let finished = Condition(false)

    /// - Parameter name: shown by `top -H` and in core dumps (the kernel keeps 15 bytes).
    public init(name: String, _ body: @escaping @Sendable () -> Void) {
        let finished = self.finished
        let start = Start(name: name) {
            body()
            finished.changing { $0 = true }
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
        _ = finished.wait(until: Deadline(seconds: .infinity)) { $0 ? () : nil }
    }

    /// Whether `body` has returned (a join would not wait).
    public var hasFinished: Bool { finished.withLock { $0 } }

    /// pthread_setname_np needs _GNU_SOURCE, which Swift's Glibc module does not
    /// define; the kernel takes the same name through /proc.
    private static func nameThisThread(_ name: String) {
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = name.withCString { write(fd, $0, strlen($0)) }
        close(fd)
    }

    private final class Start: Sendable {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = String(name.utf8.prefix(15)) ?? "quench"
            self.body = body
        }
    }
}

/// The thread a long-running part keeps: started at most once, joined from
/// any thread (before it started, a join returns at once).
public final class ThreadSlot: Sendable {
    private let worker = Mutex<WorkerThread?>(nil)

    public init() {}

    /// Starts `body` on a thread named `name`, unless one was started already.
    public func start(name: String, _ body: @escaping @Sendable () -> Void) {
        worker.withLock { w in
            guard w == nil else { return }
            w = WorkerThread(name: name, body)
        }
    }

    /// Waits for the thread to end.
    public func join() { worker.withLock { $0 }?.join() }
}

/// The write end of the pipe from the signal handler to the signal thread.
/// A global, since a C signal handler captures nothing; atomic, since the
/// handler may run on any thread.
private let signalPipeWriteEnd = Atomic<Int32>(-1)

/// What runs when SIGINT or SIGTERM arrives, by registration.
private let signalActions = Mutex<(next: UInt64, actions: [UInt64: @Sendable (Int32) -> Void])>((0, [:]))

/// Installed on first use, once per process (global initialisers run once).
private let signalThread: Void = {
    var ends: [Int32] = [-1, -1]
    // Only when the process is out of descriptors; nothing to recover.
    precondition(pipe(&ends) == 0, "cannot make the signal pipe: \(String(cString: strerror(errno)))")
    for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
    signalPipeWriteEnd.store(ends[1], ordering: .relaxed)
    let readEnd = ends[0]
    _ = WorkerThread(name: "signals") {
        // A parent may have started us with SIGINT and SIGTERM blocked (the mask is inherited: a test
        // runner's, a supervisor's): every thread would keep them pending and the process would never
        // stop. This thread takes them whatever the others block.
        var stopping = sigset_t()
        sigemptyset(&stopping)
        for s in [SIGINT, SIGTERM] { sigaddset(&stopping, s) }
        pthread_sigmask(SIG_UNBLOCK, &stopping, nil)
        while true {
            var number: UInt8 = 0
            let n = read(readEnd, &number, 1)
            if n == 1 {
                let actions = signalActions.withLock { Array($0.actions.values) }
                // Nobody wants it any more: the signal does what it does by default (Ctrl-C ends the process).
                if actions.isEmpty {
                    signal(Int32(number), SIG_DFL)
                    raise(Int32(number))
                }
                for action in actions { action(Int32(number)) }
            } else if n < 0, errno == EINTR {
                continue
            } else {
                return
            }
        }
    }
    for signal in [SIGINT, SIGTERM] {
        var handler = sigaction()
        handler.__sigaction_handler.sa_handler = { number in
            let saved = errno
            var byte = UInt8(truncatingIfNeeded: number)
            _ = write(signalPipeWriteEnd.load(ordering: .relaxed), &byte, 1)
            errno = saved
        }
        handler.sa_flags = SA_RESTART
        sigemptyset(&handler.sa_mask)
        sigaction(signal, &handler, nil)
    }
}()

/// SIGINT and SIGTERM as a clean stop: the handler only writes the signal's
/// number to a pipe (async-signal-safe, whichever thread the kernel picked),
/// and one thread reads it and runs the registered actions, so nothing is
/// done inside a handler and no write of the program's own is cut short.
public final class StopSignals: Sendable {
    private let key: UInt64

    /// Calls `action` (on the signal thread) for each SIGINT or SIGTERM while
    /// the returned registration is kept.
    public static func handle(_ action: @escaping @Sendable (Int32) -> Void) -> StopSignals {
        _ = signalThread
        let key = signalActions.withLock { state -> UInt64 in
            state.next += 1
            state.actions[state.next] = action
            return state.next
        }
        return StopSignals(key: key)
    }

    private init(key: UInt64) { self.key = key }

    /// Stops calling the action.
    public func cancel() { _ = signalActions.withLock { $0.actions.removeValue(forKey: key) } }

    deinit { cancel() }
}
#endif

#if canImport(Glibc)
import Glibc

/// State that threads share, guarded by a mutex, with a condition variable on
/// the monotonic clock so one thread can block until another changes it (no
/// polling). Like `Mutex`, but a thread can also wait for the state to change.
///
/// The state is reachable only through `withLock`, `changing` and `wait`,
/// each of which hands it to a closure between `pthread_mutex_lock` and
/// `pthread_mutex_unlock`; no closure keeps access to it across a wait. That
/// is what makes the `@unchecked Sendable` safe: the compiler cannot see a
/// pthread mutex, but every access is inside one.
public final class Condition<State>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var state: State

    public init(_ initial: sending State) {
        state = initial
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Reads or changes the state; waiters are not woken.
    public func withLock<T, E: Error>(_ body: (inout State) throws(E) -> T) throws(E) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }

    /// Changes the state and wakes every waiter, so they look at it again.
    public func changing<T, E: Error>(_ body: (inout State) throws(E) -> T) throws(E) -> T {
        pthread_mutex_lock(mutex)
        defer {
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
        }
        return try body(&state)
    }

    /// Calls `check` with the state until it returns a value, waiting for a
    /// `changing` between calls; nil once `deadline` has passed (`check` is
    /// called once more at the deadline, so a change just in time counts).
    public func wait<T, E: Error>(until deadline: Deadline, _ check: (inout State) throws(E) -> T?) throws(E) -> T? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while true {
            if let result = try check(&state) { return result }
            if !waitOnce(until: deadline) { return try check(&state) }
        }
    }

    /// One wait on the condition, mutex held; false once the deadline has passed.
    private func waitOnce(until deadline: Deadline) -> Bool {
        let left = deadline.remaining
        if left == .infinity {
            pthread_cond_wait(condition, mutex)
            return true
        }
        guard left > 0 else { return false }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let whole = Int(left)
        var nanoseconds = now.tv_nsec + Int((left - Double(whole)) * 1e9)
        var seconds = now.tv_sec + whole
        if nanoseconds >= 1_000_000_000 { seconds += 1; nanoseconds -= 1_000_000_000 }
        var until = timespec(tv_sec: seconds, tv_nsec: nanoseconds)
        _ = pthread_cond_timedwait(condition, mutex, &until)
        return !deadline.hasPassed
    }
}
#endif

#if canImport(Glibc)
import Glibc

/// A mutex with a condition variable on the monotonic clock, so one thread
/// can block until another changes shared state (no polling).
public final class ConditionLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    public init() {
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

    public func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        lock()
        defer { unlock() }
        return try body()
    }

    /// For a critical section that is a whole method: `lock()` then `defer { unlock() }`.
    public func lock() { pthread_mutex_lock(mutex) }

    public func unlock() { pthread_mutex_unlock(mutex) }

    /// Wakes every waiter; call with the lock held.
    public func broadcast() { pthread_cond_broadcast(condition) }

    /// Waits, lock held, for a broadcast or the deadline; false once the
    /// deadline has passed. Callers re-check their predicate in a loop.
    public func wait(until deadline: Deadline) -> Bool {
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

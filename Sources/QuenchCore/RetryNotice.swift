/// How often a retry that keeps failing is told in the journal.
public enum RetryNotice {
    /// Whether retry number `attempt` (0 = the first) is worth a warning: the first five, then the
    /// 8th, 16th, 32nd …, and every 120th (an hour at 30 s apart, ten minutes at 5 s). A bottle out of
    /// range for a month wrote the same 360-byte warning every 30 s (2,900 a day, a Pi trial), a
    /// publisher without its broker one every 5 s (17,000 a day, a review); the others go at debug.
    public static func worthSaying(attempt: Int) -> Bool {
        attempt < 5 || (attempt + 1).nonzeroBitCount == 1 || (attempt + 1) % 120 == 0
    }
}

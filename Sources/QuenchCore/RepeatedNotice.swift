/// How often a problem that keeps coming back is told in the journal.
public enum RepeatedNotice {
    /// Whether occurrence number `occurrence` (0 = the first) of the same problem is worth a warning: the
    /// first five, then the 8th, 16th, 32nd …, and every 120th (an hour of retries 30 s apart, ten minutes
    /// 5 s apart). A bottle out of range for a month wrote the same 360-byte warning every 30 s (2,900 a
    /// day, a Pi trial), a publisher without its broker one every 5 s (17,000 a day, a review); the others
    /// go at debug.
    public static func worthSaying(occurrence: Int) -> Bool {
        occurrence < 5 || (occurrence + 1).nonzeroBitCount == 1 || (occurrence + 1) % 120 == 0
    }
}

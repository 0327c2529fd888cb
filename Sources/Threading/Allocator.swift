import CClock

/// glibc's malloc, for a long-running process on a small machine.
public enum Allocator {
    /// At most `arenas` malloc arenas (`M_ARENA_MAX`): the web server's work moves between its event
    /// loop, its thread pool and Swift's concurrency threads, each of which would otherwise hold an
    /// arena, and the memory freed in it, for good (1.6 MB of a debug server's 41.3 after a page's reads,
    /// docs/benchmarks-web.md). Call before the threads start. Whether it was taken.
    @discardableResult
    public static func limitArenas(_ arenas: Int32) -> Bool { quench_malloc_arenas(arenas) == 1 }
}

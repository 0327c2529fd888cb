import Glibc
import Synchronization
import Testing
import Threading

/// The primitives every thread in Quench is built on.
@Suite("threading: condition, worker threads, deadlines")
struct ThreadingTests {
    @Test("a waiter wakes when another thread changes the state, not at its deadline")
    func conditionWakesWaiter() {
        let shared = Condition(0)
        let start = ContinuousClock.now
        let worker = WorkerThread(name: "changer") {
            _ = Deadline(seconds: 0)
            shared.changing { $0 = 42 }
        }
        let seen = shared.wait(until: Deadline(seconds: 10)) { $0 == 42 ? $0 : nil }
        worker.join()
        #expect(seen == 42)
        #expect(ContinuousClock.now - start < .seconds(5))
    }

    @Test("a wait that nothing answers ends at its deadline with nil, after one last look")
    func conditionTimesOut() {
        let shared = Condition(false)
        let start = ContinuousClock.now
        let result = shared.wait(until: Deadline(seconds: 0.15)) { $0 ? true : nil }
        let elapsed = ContinuousClock.now - start
        #expect(result == nil)
        #expect(elapsed >= .milliseconds(150) && elapsed < .seconds(2))
    }

    @Test("withLock serialises many threads: no increment is lost")
    func conditionSerialises() {
        let counter = Condition(0)
        let workers = (0..<8).map { i in
            WorkerThread(name: "adder \(i)") { for _ in 0..<10_000 { counter.withLock { $0 += 1 } } }
        }
        for w in workers { w.join() }
        #expect(counter.withLock { $0 } == 80_000)
    }

    @Test("join waits for the body; a finished thread joins at once, any number of times")
    func workerJoin() {
        let done = Mutex(false)
        let worker = WorkerThread(name: "sleeper") {
            _ = Condition(()).wait(until: Deadline(seconds: 0.1)) { _ in nil as Bool? }
            done.withLock { $0 = true }
        }
        worker.join()
        #expect(done.withLock { $0 })
        worker.join()
    }

    @Test("deadlines: infinite and absurd waits never pass, past ones have passed, NaN is now")
    func deadlines() {
        #expect(Deadline(seconds: .infinity).remaining == .infinity)
        #expect(Deadline(seconds: 1e300).remaining == .infinity, "no clock overflow")
        #expect(Deadline(seconds: -5).hasPassed)
        #expect(Deadline(seconds: .nan).hasPassed)
        let soon = Deadline(seconds: 60).remaining
        #expect(soon > 59 && soon <= 60)
        #expect(Duration.milliseconds(1500).seconds == 1.5)
    }
}

/// A program run directly, bounded in time.
@Suite("child processes")
struct ChildProcessTests {
    @Test func outputStatusEnvironmentAndTheTimeLimit() {
        #expect(ChildProcess.run("/bin/echo", ["a b"], captureOutput: true, timeout: 5) == .exited(status: 0, output: "a b\n"))
        #expect(ChildProcess.run("/bin/sh", ["-c", "exit 3"], timeout: 5) == .exited(status: 3, output: ""))
        // Only the environment given: no shell expands anything, and nothing else is inherited.
        #expect(ChildProcess.run("/usr/bin/env", environment: ["GREETING=$(rm -rf /)"], captureOutput: true, timeout: 5)
                == .exited(status: 0, output: "GREETING=$(rm -rf /)\n"))
        let start = ContinuousClock.now
        #expect(ChildProcess.run("/bin/sleep", ["30"], timeout: 0.3) == .timedOut)
        #expect(ContinuousClock.now - start < .seconds(5))
        #expect(ChildProcess.run("/nonexistent/program", timeout: 5) == .cannotStart(errno: ENOENT))
        #expect(ChildProcess.run("/bin/sh", ["-c", "kill -KILL $$"], timeout: 5) == .killed(signal: SIGKILL))
    }

    /// A program still open for writing somewhere ("Text file busy": a script written a moment ago while another
    /// thread forked, which failed a test once in a full run) is started once it is closed, within a second.
    @Test func aProgramBusyBeingWrittenIsStartedOnceItIsClosed() throws {
        let path = "/tmp/quench-busy-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { unlink(path) }
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
        try #require(fd >= 0)
        let script = Array("#!/bin/sh\nexit 7\n".utf8)
        #expect(script.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == script.count)
        // Closed 300 ms from now, on another thread: until then every start is refused with ETXTBSY.
        let closer = WorkerThread(name: "closer") {
            usleep(300_000)
            close(fd)
        }
        #expect(ChildProcess.run(path, timeout: 5) == .exited(status: 7, output: ""))
        closer.join()
    }

    /// A hook that starts a program and never ends: at the timeout the program goes too (a
    /// script's `yes` went on writing into quench's output, 12 GB, after the script was killed).
    @Test func aTimeoutStopsWhatTheChildStarted() {
        #expect(ChildProcess.run("/bin/sh", ["-c", "sleep 297 & wait"], timeout: 0.5) == .timedOut)
        // Killed with its group: no `sleep 297` left running (a zombie, state Z, has ended).
        let end = ContinuousClock.now + .seconds(2)
        var left = Self.running("sleep 297")
        while !left.isEmpty, ContinuousClock.now < end {
            usleep(50_000)
            left = Self.running("sleep 297")
        }
        #expect(left.isEmpty, "still running after the timeout: \(left)")
    }

    /// Processes whose command line is `command`, not yet ended.
    static func running(_ command: String) -> [String] {
        var found: [String] = []
        guard let dir = opendir("/proc") else { return [] }
        defer { closedir(dir) }
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard Int(name) != nil, let cmdline = read("/proc/\(name)/cmdline"), let stat = read("/proc/\(name)/stat") else { continue }
            let words = cmdline.split(separator: "\0").joined(separator: " ")
            let state = stat.split(separator: ")").last?.split(separator: " ").first.map(String.init) ?? "?"
            if words == command, state != "Z" { found.append("\(name) \(state)") }
        }
        return found
    }

    static func read(_ path: String) -> String? {
        guard let f = fopen(path, "r") else { return nil }
        defer { fclose(f) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = fread(&buffer, 1, buffer.count, f)
            if n <= 0 { break }
            bytes += buffer.prefix(n)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

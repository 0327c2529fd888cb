import Foundation
import QuenchCore
import QuenchGateway
import QuenchSimulator

/// `quench-bench detector` and `quench-bench replay`: throughput of the sip
/// detector alone and of replaying a trace file, and peak memory.
struct PipelineBenchmark {
    var readings = 10_000_000
    var quench: String?
    var folder = NSTemporaryDirectory()
    /// Traces written elsewhere (another generator) to replay as a process too.
    var traces: [String] = []

    init(arguments: [String]) throws {
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { throw BenchmarkError.usage("\(flag) needs a value") }
            switch flag {
            case "--readings": readings = Int(value) ?? readings
            case "--quench": quench = value
            case "--folder": folder = value
            case "--trace": traces.append(value)
            default: throw BenchmarkError.usage("unknown option \(flag)")
            }
        }
    }

    /// A month of 10 Hz kitchen-scale readings is 26 M; this simulates `readings` of them.
    func configuration() -> SimulationConfiguration {
        var c = SimulationConfiguration.preset(.hx711, duration: Double(readings) / 10)
        c.started = Timestamp(iso8601: "2026-03-01T00:00:00Z")
        return c
    }

    func runDetector() {
        let c = configuration()
        var bottle = SimulatedBottle(configuration: c, seed: 1)
        var all: [Reading] = []
        all.reserveCapacity(readings)
        while let r = bottle.next() { all.append(r) }
        print("detector: \(all.count) simulated readings (hx711 preset, 10 Hz, every behaviour on)")
        var best = Double.infinity
        var eventCount = 0
        for _ in 0..<3 {
            var detector = SipDetector(calibration: c.calibration)
            var events: [DetectedEvent] = []
            let start = monotonicSeconds()
            for r in all { detector.process(r, into: &events) }
            detector.finish(into: &events)
            best = min(best, monotonicSeconds() - start)
            eventCount = events.count
        }
        print(String(format: "detector: best of 3: %.3f s, %.1f M readings/s, %d events", best, Double(all.count) / best / 1e6, eventCount))
        print("detector: state \(MemoryLayout<SipDetector>.size) bytes inline + a 32-sample ring (512 bytes); nothing grows with the stream")
    }

    func runReplay() throws {
        let path = folder + "/quench-bench-\(readings).csv"
        if !FileManager.default.fileExists(atPath: path) {
            let start = monotonicSeconds()
            _ = try Simulate.write(configuration: configuration(), seed: 1, tracePath: path, truthPath: nil)
            print(String(format: "replay: wrote %@ in %.1f s", path, monotonicSeconds() - start))
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        print("replay: trace of \(readings) readings, \(size / 1_000_000) MB")

        // In process: parse + detect.
        var best = Double.infinity
        var summary = ReplaySummary()
        for _ in 0..<3 {
            let start = monotonicSeconds()
            summary = try Replay.run(.file(path), options: ReplayOptions()) { _ in }
            best = min(best, monotonicSeconds() - start)
        }
        print(String(format: "replay (in process): best of 3: %.3f s, %.1f M readings/s, %d sips", best, Double(summary.readings) / best / 1e6, summary.sips))

        // As a whole process, with its peak resident memory.
        guard let quench = quench ?? locateQuench() else {
            print("replay (process): skipped: no quench binary (give --quench PATH)")
            return
        }
        for length in [readings / 10, readings] {
            let small = length == readings ? path : folder + "/quench-bench-\(length).csv"
            if !FileManager.default.fileExists(atPath: small) {
                var c = configuration()
                c.duration = Double(length) / 10
                _ = try Simulate.write(configuration: c, seed: 1, tracePath: small, truthPath: nil)
            }
            try replayProcess(quench, small, readings: length)
        }
        // The same readings as another generator writes them: one decimal each, `\r\n`.
        let other = folder + "/quench-bench-\(readings)-other.csv"
        if !FileManager.default.fileExists(atPath: other) { try writeOtherGenerator(other) }
        try replayProcess(quench, other, readings: nil)
        for trace in traces { try replayProcess(quench, trace, readings: nil) }
    }

    /// `quench replay --json FILE` as a whole process against `wc -l FILE` in
    /// the same run, best of 3 of each, interleaved (so both see the same
    /// machine); `readings` nil: counted from the file's lines.
    func replayProcess(_ quench: String, _ path: String, readings known: Int?) throws {
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        var best = Double.infinity, bestWC = Double.infinity, peakKiB = 0
        for _ in 0..<3 {
            let (wc, _) = try timeProcess("/usr/bin/wc", ["-l", path])
            bestWC = min(bestWC, wc)
            let (seconds, maxRSSKiB) = try timeProcess(quench, ["replay", "--json", path])
            best = min(best, seconds)
            peakKiB = max(peakKiB, maxRSSKiB)
        }
        let readings = try known ?? lineCount(path)
        // How busy the machine was (the figures are wall times on a shared machine).
        let load = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").first.map(String.init) ?? "?"
        print(String(format: "replay (quench process): %@: %d readings, %.0f MB: best of 3 %.3f s, %.1f M readings/s, peak RSS %.1f MB; wc -l %.3f s (replay %.1f× wc -l); load %@",
                     (path as NSString).lastPathComponent, readings, Double(size) / 1e6, best, Double(readings) / best / 1e6,
                     Double(peakKiB) / 1024, bestWC, best / bestWC, load))
    }

    /// Readings of a file, as an in-process replay counts them.
    func lineCount(_ path: String) throws -> Int {
        try Replay.run(.file(path), options: ReplayOptions()) { _ in }.readings
    }

    /// The simulated readings written as another logger would: `t` and value with one decimal each, `\r\n` endings.
    func writeOtherGenerator(_ path: String) throws {
        var bottle = SimulatedBottle(configuration: configuration(), seed: 1)
        var text = "# quench trace v1\r\n# sensor: weight\r\n# unit: g\r\n# logger: other\r\nt,value\r\n"
        guard let out = FileHandle(forWritingAtPath: path) ?? {
            _ = FileManager.default.createFile(atPath: path, contents: nil)
            return FileHandle(forWritingAtPath: path)
        }() else { throw BenchmarkError.failed("cannot write \(path)") }
        defer { try? out.close() }
        while let r = bottle.next() {
            text += TraceWriter.fixed(r.t, places: 1) + "," + (r.value.map { TraceWriter.fixed($0, places: 1) } ?? "") + "\r\n"
            if text.utf8.count > 1 << 20 {
                out.write(Data(text.utf8))
                text = ""
            }
        }
        out.write(Data(text.utf8))
        print("replay: wrote \(path) (another generator's format)")
    }

    func locateQuench() -> String? {
        let here = StoreBenchmark.quenchBeside
        return FileManager.default.isExecutableFile(atPath: here) ? here : nil
    }
}

enum BenchmarkError: Error, CustomStringConvertible {
    case usage(String)
    case failed(String)
    var description: String {
        switch self {
        case .usage(let s): "usage: \(s)"
        case .failed(let s): s
        }
    }
}

func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Runs a program with stdout to /dev/null; returns wall seconds and its peak RSS (KiB).
func timeProcess(_ path: String, _ arguments: [String]) throws -> (Double, Int) {
    var pid: pid_t = 0
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    let start = monotonicSeconds()
    let rc = posix_spawn(&pid, path, &actions, nil, argv, environ)
    guard rc == 0 else { throw BenchmarkError.failed("spawn \(path): errno \(rc)") }
    var status: Int32 = 0
    var usage = rusage()
    guard wait4(pid, &status, 0, &usage) == pid else { throw BenchmarkError.failed("wait4 failed") }
    let seconds = monotonicSeconds() - start
    guard status == 0 else { throw BenchmarkError.failed("\(path) \(arguments) exited with status \(status)") }
    return (seconds, usage.ru_maxrss)
}

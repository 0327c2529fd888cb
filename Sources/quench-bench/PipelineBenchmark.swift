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

    init(arguments: [String]) throws {
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { throw BenchmarkError.usage("\(flag) needs a value") }
            switch flag {
            case "--readings": readings = Int(value) ?? readings
            case "--quench": quench = value
            case "--folder": folder = value
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
            let (seconds, maxRSSKiB) = try timeProcess(quench, ["replay", "--json", small])
            print(String(format: "replay (quench process): %d readings: %.3f s, %.1f M readings/s, peak RSS %.1f MB",
                         length, seconds, Double(length) / seconds / 1e6, Double(maxRSSKiB) / 1024))
        }
    }

    func locateQuench() -> String? {
        let here = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("quench").path
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

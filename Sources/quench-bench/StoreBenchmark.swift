import Foundation
import QuenchSimulator
import QuenchCore
import QuenchStore

/// Ten years of synthetic history (about 400 000 events), then:
/// - ingest of 100 000 events in one call (fresh database, and on top of the ten years);
/// - `quench today`, `quench stats --year` and `quench calendar` as whole processes.
/// Targets (issue 3): each command < 50 ms, ingest of 100 000 events < 2 s.
struct StoreBenchmark {
    var quench: String
    var database: String
    var runs = 15
    /// The database is ours to delete afterwards (no --db given).
    var temporary: Bool

    init(arguments: [String]) throws {
        var quench: String?
        var database: String?
        for (flag, v) in try Self.options(arguments) {
            switch flag {
            case "--quench": quench = v
            case "--db": database = v
            case "--runs": runs = Int(v) ?? runs
            default: throw BenchError.usage("unknown argument \(flag)")
            }
        }
        self.quench = quench ?? Self.quenchBeside
        self.temporary = database == nil
        self.database = database ?? NSTemporaryDirectory() + "quench-bench-\(getpid())/ten-years.sqlite"
        guard FileManager.default.isExecutableFile(atPath: self.quench) else {
            throw BenchError.usage("no quench binary at \(self.quench) (give --quench PATH)")
        }
    }

    enum BenchError: Error, CustomStringConvertible {
        case usage(String)
        case command(String, Int32, String)
        /// A run that went wrong (not the arguments).
        case failed(String)
        var description: String {
            switch self {
            case .usage(let m): m
            case .failed(let m): m
            case .command(let c, let status, let err): "\(c) exited with \(status): \(err)"
            }
        }
    }

    /// A benchmark's arguments as `--flag value` pairs, in order; a flag left
    /// without its value is a usage error, as an unknown one is.
    static func options(_ arguments: [String]) throws -> [(flag: String, value: String)] {
        if arguments.count % 2 == 1, let last = arguments.last { throw BenchError.usage("unknown argument \(last)") }
        return stride(from: 0, to: arguments.count, by: 2).map { (arguments[$0], arguments[$0 + 1]) }
    }

    /// The quench binary built next to this one.
    static var quenchBeside: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("quench").path
    }

    func run() throws {
        try withTenYears { work, now in try measureCommands(work: work, now: now) }
    }

    /// `quench-bench backup`: `quench backup` of the ten years (a consistent
    /// copy, checked whole, synced) and `quench restore` of it over a copy of them.
    func runBackup() throws {
        try withTenYears { work, _ in
            let folder = work + "/backups"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
            var times: [Double] = []
            var peak = 0
            for _ in 0..<max(1, runs) {
                let result = try spawnMeasured([quench, "backup", "--dir", folder, "--db", database], output: "/dev/null")
                times.append(result.seconds)
                peak = max(peak, result.peakBytes)
            }
            times.sort()
            let backups = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".sqlite") }.sorted()
            let newest = folder + "/" + (backups.last ?? "")
            print("  quench backup, \(times.count) runs: median \(fmt(times[times.count / 2])) s   max \(fmt(times.last!)) s   "
                + "peak RSS \(fmt(Double(peak) / 1_048_576)) MB   (\(fileSize(newest) / 1_000_000) MB written, \(backups.count) kept)")
            // Restore over a copy of the ten years: the check, the copy kept, the replacement.
            let live = work + "/live.sqlite"
            try FileManager.default.copyItem(atPath: database, toPath: live)
            let restore = try spawnMeasured([quench, "restore", newest, "--db", live], output: "/dev/null")
            print("  quench restore of it over the ten years: \(fmt(restore.seconds)) s   peak RSS \(fmt(Double(restore.peakBytes) / 1_048_576)) MB")
        }
    }

    /// Builds the ten years at `database`, runs `body` with a scratch folder and
    /// the clock the history ends at, then removes what the benchmark made.
    func withTenYears(_ body: (_ work: String, _ now: Timestamp) throws -> Void) throws {
        // Nothing the benchmark did not create is ever removed: the database must
        // be a new file, and the scratch databases live in a folder of its own.
        let directory = (database as NSString).deletingLastPathComponent
        let createdDirectory = !FileManager.default.fileExists(atPath: directory)
        if createdDirectory { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
        guard !FileManager.default.fileExists(atPath: database) else {
            throw BenchError.usage("\(database) already exists: the store benchmark builds its own database; give a path that does not exist")
        }
        let work = directory + "/quench-bench-work-\(getpid())-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: false)
        defer {
            try? FileManager.default.removeItem(atPath: work)
            if temporary {
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + suffix) }
                if createdDirectory { try? FileManager.default.removeItem(atPath: directory) }
            }
        }
        print("Store benchmark (\(ProcessInfo.processInfo.activeProcessorCount) cores)")

        // Ten years ending now, as a sensor would deliver them: a day's events per ingest call.
        let now = Timestamp.wallClockNow
        let days = 3652
        var generator = SyntheticDays(seed: 42)
        var store: IntakeStore? = try IntakeStore(path: database)
        try store!.setGoal(ml: 2000, from: CivilDay(number: Int(now.secondsSince1970 / 86_400) - days), setAt: now)
        var total = 0
        let fillStart = DispatchTime.now()
        for d in 0..<days {
            let todayMidnight: Double = (now.secondsSince1970 / 86_400).rounded(.down) * 86_400
            let midnight = Timestamp(secondsSince1970: todayMidnight - Double((days - d) * 86_400))
            let events = generator.day()
            total += try store!.ingest(events, device: "C4:7C:8D:6A:12:34", started: midnight, recordedAt: now).inserted
        }
        let fill = seconds(since: fillStart)
        store = nil  // the last connection closes: WAL checkpointed, as after a daemon's stop
        let size = (try FileManager.default.attributesOfItem(atPath: database)[.size] as? Int) ?? 0
        print("  ten-year database: \(total) events in \(fmt(fill)) s (\(days) ingest calls), \(size / 1_000_000) MB")
        try body(work, now)
    }

    func measureCommands(work: String, now: Timestamp) throws {
        // The commands first, on ten years of ordinary history; the big ingest on top comes after.
        print("  whole-process timings over \(runs) runs (after one warm-up), target < 50 ms:")
        for command in [["today"], ["stats", "--year"], ["calendar"], ["log", "--limit", "20"]] {
            var times: [Double] = []
            _ = try invoke(command)
            for _ in 0..<runs { times.append(try invoke(command)) }
            times.sort()
            let label = ("quench " + command.joined(separator: " ")).padding(toLength: 24, withPad: " ", startingAt: 0)
            print("    \(label) median \(fmt(times[times.count / 2] * 1000)) ms   p90 \(fmt(times[times.count * 9 / 10] * 1000)) ms   max \(fmt(times.last! * 1000)) ms")
        }

        try measureMemory(work: work)

        // 100 000 events in one ingest: a fresh database, then on top of the ten years.
        var batch: [DetectedEvent] = []
        for i in 0..<100_000 {
            let start: Double = Double(i) * 30
            let kind: EventKind = i % 20 == 0 ? .refill : .sip
            let ml: Double = 18 + Double(i % 13)
            batch.append(DetectedEvent(kind: kind, t: start + 5, start: start, end: start + 4, ml: ml, remainingML: 400))
        }
        let freshPath = work + "/fresh.sqlite"
        let fresh = try IntakeStore(path: freshPath)
        var start = DispatchTime.now()
        let freshResult = try fresh.ingest(batch, device: "bench", started: Timestamp(secondsSince1970: 1_700_000_000))
        let freshTime = seconds(since: start)
        start = DispatchTime.now()
        let again = try fresh.ingest(batch, device: "bench", started: Timestamp(secondsSince1970: 1_700_000_000))
        let againTime = seconds(since: start)
        start = DispatchTime.now()
        // On a copy, so that the ten-year database stays as it was for later runs.
        let copyPath = work + "/ten-years-plus.sqlite"
        try FileManager.default.copyItem(atPath: database, toPath: copyPath)
        let copy = try IntakeStore(path: copyPath)
        start = DispatchTime.now()
        let onTop = try copy.ingest(batch, device: "bench", started: Timestamp(secondsSince1970: now.secondsSince1970 - 3_100_000))
        let onTopTime = seconds(since: start)
        print("  ingest 100000 events, fresh database:     \(fmt(freshTime)) s (\(freshResult.inserted) inserted)   target < 2 s")
        print("  ingest the same 100000 again (all dups):  \(fmt(againTime)) s (\(again.duplicates) duplicates)")
        print("  ingest 100000 events on the ten years:    \(fmt(onTopTime)) s (\(onTop.inserted) inserted)")
    }

    /// Runs quench with `--db` through posix_spawn, output to /dev/null, and
    /// returns the wall time from spawn to reaped exit in seconds: the whole
    /// process, without Foundation.Process's own overhead.
    func invoke(_ command: [String]) throws -> Double {
        try spawn(command, database: database, output: "/dev/null").seconds
    }

    /// Runs quench on `database` with stdout to `output`; wall time and peak resident memory (from wait4).
    func spawn(_ command: [String], database: String, output: String) throws -> (seconds: Double, peakBytes: Int) {
        try spawnMeasured([quench] + command + ["--db", database], output: output)
    }

    /// Peak resident memory of the commands that read or write the whole history:
    /// export, import and log stream their rows (target < 64 MB on any history size).
    func measureMemory(work: String) throws {
        print("  peak resident memory on the ten years, target < 64 MB:")
        let csv = work + "/export.csv", json = work + "/export.json"
        var runs: [(label: String, command: [String], database: String, output: String)] = [
            ("export --format csv", ["export", "--format", "csv"], database, csv),
            ("export --format json", ["export", "--format", "json"], database, json),
            ("log --limit 100000 --json", ["log", "--limit", "100000", "--json"], database, "/dev/null"),
            ("log --limit 1000000 --csv", ["log", "--limit", "1000000", "--csv"], database, "/dev/null"),
            ("log --limit 1000000", ["log", "--limit", "1000000"], database, "/dev/null"),
            ("today", ["today"], database, "/dev/null"),
            ("stats --year", ["stats", "--year"], database, "/dev/null"),
            ("calendar", ["calendar"], database, "/dev/null"),
        ]
        runs += [
            ("import (CSV export, fresh db)", ["import", csv], work + "/import-csv.sqlite", "/dev/null"),
            ("import (JSON export, fresh db)", ["import", json], work + "/import-json.sqlite", "/dev/null"),
            ("import (JSON again: duplicates)", ["import", json], work + "/import-json.sqlite", "/dev/null"),
        ]
        for run in runs {
            let result = try spawn(run.command, database: run.database, output: run.output)
            let size = run.output == "/dev/null" ? "" : "   (\(fileSize(run.output) / 1_000_000) MB written)"
            let label = ("quench " + run.label).padding(toLength: 40, withPad: " ", startingAt: 0)
            print("    \(label) \(fmt(Double(result.peakBytes) / 1_048_576)) MB   \(fmt(result.seconds)) s\(size)")
        }
        let original = try spawn(["export", "--format", "csv"], database: database, output: work + "/a.csv")
        let restored = try spawn(["export", "--format", "csv"], database: work + "/import-json.sqlite", output: work + "/b.csv")
        _ = (original, restored)
        let same = FileManager.default.contentsEqual(atPath: work + "/a.csv", andPath: work + "/b.csv")
        print("    JSON export imported into a fresh database exports the same CSV: \(same ? "yes" : "NO")")
        if !same { throw BenchError.command("import of the JSON export", 1, "the re-export differs") }
    }

    func fileSize(_ path: String) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    }

    func seconds(since start: DispatchTime) -> Double {
        Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
    }

    func fmt(_ x: Double) -> String { String(format: "%.2f", x) }
}

/// A reproducible drinker: about 100 sips a day between 07:00 and 23:00 UTC
/// (lognormal sizes, median 18 mL), a refill of 500 mL every 20 sips, a pour now
/// and then; on roughly one day in seven much less is drunk.
struct SyntheticDays {
    var random: SeededRandom

    init(seed: UInt64) { random = SeededRandom(seed: seed) }

    mutating func next() -> UInt64 { random.next() }

    mutating func uniform() -> Double { Double(next() >> 11) / Double(1 << 53) }

    mutating func normal() -> Double {
        let u = max(uniform(), 1e-12), v = uniform()
        return (-2 * log(u)).squareRoot() * cos(2 * .pi * v)
    }

    /// One day's events on that day's clock (seconds after midnight UTC).
    mutating func day() -> [DetectedEvent] {
        let light = uniform() < 0.15
        let count = light ? 40 + Int(uniform() * 30) : 95 + Int(uniform() * 30)
        var events: [DetectedEvent] = []
        var remaining = 750.0
        var t = 7 * 3600.0
        let step = 16 * 3600.0 / Double(count)
        for i in 0..<count {
            t += step * (0.5 + uniform())
            let ml = max(3, min(120, exp(log(18.0) + 0.5 * normal())))
            if remaining < ml + 20 || i % 20 == 19 {
                events.append(DetectedEvent(kind: .refill, t: t + 4, start: t, end: t + 3, ml: 750 - remaining, remainingML: 750))
                remaining = 750
                t += 10
            }
            remaining -= ml
            events.append(DetectedEvent(kind: .sip, t: t + 6, start: t, end: t + 5, ml: ml, remainingML: remaining))
        }
        if uniform() < 0.05, remaining > 1 {
            t += 60
            events.append(DetectedEvent(kind: .pour, t: t + 3, start: t, end: t + 2, ml: remaining, remainingML: 0))
        }
        return events
    }
}

/// Runs `argv` through posix_spawn with stdout to `output` (NO_COLOR set) and
/// returns the wall time from spawn to reaped exit and the peak resident
/// memory (wait4): the whole process, without Foundation.Process's overhead.
func spawnMeasured(_ argv: [String], output: String) throws -> (seconds: Double, peakBytes: Int) {
    var cArguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
    defer { for p in cArguments { free(p) } }
    var environment = ProcessInfo.processInfo.environment
    environment["NO_COLOR"] = "1"
    var cEnvironment: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { for p in cEnvironment { free(p) } }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    let start = DispatchTime.now()
    var pid: pid_t = 0
    let rc = posix_spawn(&pid, argv[0], &actions, nil, &cArguments, &cEnvironment)
    guard rc == 0 else { throw StoreBenchmark.BenchError.command(argv.joined(separator: " "), rc, "posix_spawn failed") }
    var status: Int32 = 0
    var usage = rusage()
    while wait4(pid, &status, 0, &usage) < 0, errno == EINTR {}
    let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
    guard status == 0 else { throw StoreBenchmark.BenchError.command(argv.joined(separator: " "), status, "see its stderr above") }
    return (elapsed, usage.ru_maxrss * 1024)  // ru_maxrss is in KiB on Linux
}

#if os(Linux)
import BLEVMHarness
import Foundation
import QuenchCore
import QuenchProfiles
import QuenchSimulator
import QuenchStore
import QuenchTestSupport
import Testing

// `quench` itself on the real Linux Bluetooth stack: ../shared/ble-vm boots a
// kernel whose controller shares a link with emulated devices streaming
// traces with known sips. The built `quench` is run inside: scan, pair each
// profile, `quench run`, and the store's sips are compared with the truth.
// Skipped visibly only when the harness cannot start (setup fails, exit 125).

private func env(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }

enum LiveVM {
    static let packageRoot = TestPackage.root

    /// The `quench` built beside this test binary.
    static var quench: String? { quenchBinary }

    /// Runs `script` (bash, the host's: the guest sees the host's root) in the VM with these peripherals; cancels the test when the harness cannot start.
    static func runScript(_ script: String, in dir: URL, peripherals: [String], timeout: Int, adapters: Int = 1,
                          watching conditions: [LogCondition] = []) throws -> (status: Int32, output: String) {
        if let reason = BLEVMHarness.unavailableReason(packageRoot: packageRoot) {
            print("SKIPPED: \(reason)")
            try Test.cancel(Comment(rawValue: reason))
        }
        let file = dir.appendingPathComponent("inner.sh")
        // Each traced command with the guest's time: how long each step took, when a case fails.
        // (bash's `\t`: dash printed a `$(date)` in PS4 as it stood, then failed to parse it.)
        try ("PS4='+ \\t '\n" + script).write(to: file, atomically: true, encoding: .utf8)
        var watch = LogWatch(conditions, in: dir)
        defer { watch.stop() }
        let start = ContinuousClock.now
        let harnessResult = try BLEVMHarness.boot(
            packageRoot: packageRoot, options: ["--timeout", "\(timeout)"] + (adapters > 1 ? ["--adapters", "\(adapters)"] : []),
            peripherals: peripherals, command: ["/bin/bash", file.path], beforeRetry: {
                // The first run's flags would let the second's script run straight through (seen: it
                // stopped `run` after 106 of 300 records, the flags of 300 still there).
                watch.stop()
                Thread.sleep(forTimeInterval: 0.5)
                for condition in conditions { try? FileManager.default.removeItem(at: dir.appendingPathComponent(condition.flag)) }
                watch = LogWatch(conditions, in: dir)
            })
        let result = (status: harnessResult.status, output: harnessResult.output)
        print("ble-vm: exit \(result.status) after \(ContinuousClock.now - start)\n\(result.output)")
        if harnessResult.harnessFailed {
            print("SKIPPED: the ble-vm harness could not start (exit 125)")
            try Test.cancel("the ble-vm harness could not start (exit 125)")
        }
        return result
    }

    /// The built `quench` and a fresh folder beside it for one test (removed by the caller); nil,
    /// with the issue recorded, when quench is not built.
    static func workspace() throws -> (quench: String, dir: URL)? {
        guard let quench else {
            Issue.record("no quench executable beside the test binary (swift build first)")
            return nil
        }
        return (quench, try workDirectory(beside: quench))
    }

    /// A fresh folder beside the built executables (the guest sees it read-write), removed by the caller.
    static func workDirectory(beside executable: String) throws -> URL {
        let dir = URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent("live-vm-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    /// The sips stored for `address` match the truth's, one for one, within `tolerance` mL.
    static func expectSips(_ stored: [String: [Double]], _ address: String, _ truth: [TruthEvent], tolerance: Double,
                           sourceLocation: SourceLocation = #_sourceLocation) {
        let want = truth.filter { $0.kind == .sip }.map(\.ml)
        let got = stored[address] ?? []
        #expect(got.count == want.count, "\(address): stored \(got), truth \(want)", sourceLocation: sourceLocation)
        for (g, w) in zip(got, want) {
            #expect(abs(g - w) <= tolerance, "\(address): \(w) mL stored as \(g) mL", sourceLocation: sourceLocation)
        }
    }

    /// A trace file (and its truth) in `dir`, from a scripted simulated bottle.
    static func writeTrace(_ scenario: Scenario, name: String, in dir: URL) throws -> (path: String, truth: [TruthEvent], levelCurve: LevelCurve?) {
        let (readings, truth) = scenario.run()
        var text = scenario.bottle().header.formatted()
        for r in readings { text += TraceWriter.row(r, decimals: scenario.configuration.valueDecimals) }
        let url = dir.appendingPathComponent(name)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return (url.path, truth, scenario.configuration.levelCurve)
    }

    /// A device as `quench pair` would save it, for `pairedDatabase`.
    struct Paired {
        var address: String
        var profile: String
        var random = false
        var capacityML: Double?
        var tareG: Double?
        var levelCurve: LevelCurve?
        /// The advertised name, as a pairing saves it (doctor shows it).
        var name: String?
    }

    /// A database with `devices` saved as `quench pair` saves them (profile, address type, the profile's
    /// calibration from the same options), made on the host for the guest to copy to `$QUENCH_DB` before
    /// its gateway starts. A pairing in the guest would start a streaming device's trace clock (at its
    /// first subscription), and a busy host's guest took over 60 s from there to the gateway (seen in CI),
    /// which no lead-in allows for: here the gateway's own subscription starts the clock. Pairing itself
    /// is `allProfiles`' to test (and `serviceBeforeItsFirstPairing`'s).
    static func pairedDatabase(_ devices: [Paired], in dir: URL, name: String = "paired.sqlite") throws -> String {
        let path = dir.appendingPathComponent(name).path
        let store = try IntakeStore(path: path)
        for d in devices {
            let profile = try #require(ProfileRegistry.named(d.profile), "no profile \(d.profile)")
            let calibration = try profile.defaultCalibration(levelCurve: d.levelCurve, capacityML: d.capacityML, tareG: d.tareG, density: 1)
            try store.saveDevice(Device(address: d.address, name: d.name, profile: d.profile, sensor: profile.sensor, calibration: calibration,
                                        addedAt: .wallClockNow, addressType: d.random ? "random" : "public"))
        }
        return path
    }

    /// Shell lines that wait (up to `seconds`) for a `LogCondition`'s flag in `dir`: a gateway stopped
    /// then (a trace's end, every sip acknowledged), not after a fixed sleep, has had the whole trace
    /// however slow the guest is.
    static func awaitFlag(_ flag: String, in dir: URL, seconds: Int = 180) -> String {
        awaitGuest("[ -e \(dir.appendingPathComponent(flag).path) ]", seconds: seconds)
    }

    /// Shell lines that wait (up to `seconds`) until bash's `condition` holds, testing it every half
    /// second with nothing but the shell's own commands: the wait is bash's `read -t` on a FIFO nobody
    /// writes to, not `sleep`, a program, whose every start (files over 9p, an emulated CPU) cost the
    /// guest more than the rest of the wait (allProfiles: qemu 60 CPU-s with `sleep 0.5`, 52 without).
    static func awaitGuest(_ condition: String, seconds: Int) -> String {
        """
        { set +x; } 2>/dev/null
        [ -n "${tick:-}" ] || { rm -f /tmp/tick; mkfifo /tmp/tick; exec {tick}<>/tmp/tick; }
        n=0; until \(condition); do n=$((n + 1)); [ $n -lt \(seconds * 2) ] || break; read -t 0.5 -u $tick; done
        set -x
        """
    }

    /// The shell line that copies the guest's database (`$QUENCH_DB`, /tmp/q.sqlite) into the work folder,
    /// for `storedEvents` to read on the host: one program where `quench log` would be another start of
    /// the emulated `quench` (a busy guest took 20 s to start one).
    static func copyDatabase(to dir: URL) -> String { "cp /tmp/q.sqlite* \(dir.path)/" }

    /// An export holding one modern HidrateSpark (591 mL) as paired, for `quench import` in the guest:
    /// the gateway drains it as soon as the guest is up, with no scan and no pairing.
    static func pairedHidrateSpark(_ address: String, in dir: URL) throws -> URL {
        let device = dir.appendingPathComponent("device.json")
        try """
            {"format": "quench-export", "version": 1, "events": [], "devices": [{"address": "\(address)",
             "profile": "hidrate-spark", "address_type": "public", "added_at": {"seconds_since1970": 1790000000},
             "calibration": {"unit": "percent", "density": 1, "capacity_ml": 591,
                             "level_curve": {"points": [{"level": 0, "ml": 0}, {"level": 100, "ml": 591}]}}}]}
            """.write(to: device, atomically: true, encoding: .utf8)
        return device
    }

    /// The guest's shell lines that copy the paired `database` to `$QUENCH_DB` and start `quench run`
    /// on it in the background (`$Q` the built quench, `$run` its pid), its events printed as JSON
    /// lines into `printed` (which the host can watch: `LogCondition.printed`).
    static func startRun(_ quench: String, database: String, printed: URL) -> String {
        """
        Q=\(quench)
        export QUENCH_DB=/tmp/q.sqlite
        set -x
        cp \(database) $QUENCH_DB
        $Q run --json --log-level info > \(printed.path) &
        run=$!
        """
    }

    /// The lines that stop `startRun`'s run (SIGTERM, as Ctrl-C or systemd would; exit 15 if it
    /// fails), print what it printed, and copy the database out for `storedEvents`.
    static func stopRun(printed: URL, in dir: URL) -> String {
        """
        kill -TERM $run
        wait $run || exit 15
        cat \(printed.path)
        \(copyDatabase(to: dir))
        """
    }

    /// Every event the guest stored (deleted ones too), from the database `copyDatabase` left in `dir`.
    static func storedEvents(_ dir: URL, sourceLocation: SourceLocation = #_sourceLocation) -> [IntakeEvent] {
        do {
            let store = try IntakeStore(path: dir.appendingPathComponent("q.sqlite").path, mode: .existing)
            return try store.events(EventQuery(includeDeleted: true, order: .byID))
        } catch {
            Issue.record("cannot read the guest's database in \(dir.path): \(error)", sourceLocation: sourceLocation)
            return []
        }
    }

    /// Stored sips per device: (time, mL), by time.
    static func storedSipsWithTimes(_ dir: URL, sourceLocation: SourceLocation = #_sourceLocation) -> [String: [(time: Double, ml: Double)]] {
        var out: [String: [(time: Double, ml: Double)]] = [:]
        for event in storedEvents(dir, sourceLocation: sourceLocation) where event.kind == .sip && !event.deleted {
            guard let device = event.device else { continue }
            out[device, default: []].append((event.time.secondsSince1970, event.ml))
        }
        return out.mapValues { $0.sorted { $0.time < $1.time } }
    }

    /// The guest's clock minus the host's, from stored sips and the emulator's log of the same sips:
    /// the median difference. Stored times are the guest's clock, the log the host's, and a starved
    /// emulated guest's clock falls behind (4 s, and 12 s with six guests on two busy cores: every sip
    /// alike); what the tests check is that each sip keeps its own time (not the time it was drained),
    /// so this offset is taken out first. Beyond `bound` seconds the test fails: a clock that far off is
    /// not the emulation's.
    static func guestClockOffset(stored: [(time: Double, ml: Double)], truth: [(time: Double, ml: Double)], bound: Double = 60,
                                 sourceLocation: SourceLocation = #_sourceLocation) -> Double {
        let differences = zip(stored, truth).map { $0.time - $1.time }.sorted()
        let offset = differences.isEmpty ? 0 : differences[differences.count / 2]
        #expect(abs(offset) <= bound, "the guest's clock is \(offset) s off the host's", sourceLocation: sourceLocation)
        return offset
    }

    /// Stored sips' mL per device, by time.
    static func storedSips(_ dir: URL, sourceLocation: SourceLocation = #_sourceLocation) -> [String: [Double]] {
        storedSipsWithTimes(dir, sourceLocation: sourceLocation).mapValues { $0.map(\.ml) }
    }
}

@Suite("quench in ble-vm", .serialized, .enabled(if: env("QUENCH_VM") != "1", "runs outside the VM"))
struct LiveVMTests {
    /// Two sets of the four profiles on one radio. `quench run` listens to the first, saved as paired on
    /// the host (`pairedDatabase`), so each trace's clock starts when run subscribes (the mi-scale's at
    /// its first scan) and the idle bottle before the first sip is the detector's baseline however slow
    /// the guest is. 8 s of it were too few for a starved guest (a slow CI machine, 2026-12-02, twice):
    /// the level bottle's readings came so late that the detector settled only after its first sip,
    /// which became the baseline (stored [35] for [50, 35], 415 mL left). Once run has stopped, the
    /// command line scans the room and pairs the second set, which streams a constant value: a pairing
    /// in the guest starts a trace's clock, and a busy host's guest took over 20 s a program (seen), so
    /// a pairing before run left no lead-in safe.
    static let leadIn = 20.0

    @Test("run with weight-scale, decent-scale (link dropped mid-sip), level-bottle (random address), mi-scale at once; then scan, pair each, record; an absent device")
    func allProfiles() throws {
        guard let (quench, dir) = try LiveVM.workspace() else { return }
        defer { try? FileManager.default.removeItem(at: dir) }

        // 12 s between sips: with 8, a starved guest's late readings left the detector no settled
        // bottle between them, and the decent scale's two became one (65.07 for [25, 40], CI here 2026-12-02).
        let weight = try LiveVM.writeTrace(Scenario(.clean(unit: .g).with(.noise), seed: 11, initialML: 600)
            .idle(Self.leadIn).sip(ml: 30).idle(12).sip(ml: 45).idle(8), name: "weight.csv", in: dir)
        let decent = try LiveVM.writeTrace(Scenario(.clean(unit: .g).with(.noise), seed: 12, initialML: 650)
            .idle(Self.leadIn).sip(ml: 25).idle(12).sip(ml: 40).idle(10), name: "decent.csv", in: dir)
        let level = try LiveVM.writeTrace(Scenario(.clean(unit: .mm, sampleRate: 5).with(.noise), seed: 13, initialML: 500)
            .idle(Self.leadIn).sip(ml: 50).idle(12).sip(ml: 35).idle(8), name: "level.csv", in: dir)
        // The mi-scale's clock starts at the guest's first LE scan, which the other three's
        // connections make before run listens for broadcasts. In starved guests (CI, 2026-11-28:
        // run 42 s to start, stored [48] and [36] for [60, 40]) the first sip came before run
        // heard the scale; 20 s more of idle scale leave it time.
        let mi = try LiveVM.writeTrace(Scenario(.clean(unit: .g, sampleRate: 4).with(.noise), seed: 14, initialML: 700)
            .idle(Self.leadIn + 24).sip(ml: 60).idle(8).sip(ml: 40).idle(14), name: "mi.csv", in: dir)
        // The decent scale drops the link half a second into its second lift, for 5 s.
        let second = decent.truth.filter { $0.kind == .sip }[1]
        let dropAt = TraceWriter.fixed(second.tStart + 0.5, places: 1)
        let log = dir.appendingPathComponent("devices.jsonl")
        let printed = dir.appendingPathComponent("run.jsonl")
        let database = try LiveVM.pairedDatabase([
            .init(address: "F0:F1:F2:F3:F4:F5", profile: "weight-scale", capacityML: 750, tareG: 180),
            .init(address: "F0:F1:F2:F3:F4:F6", profile: "decent-scale", tareG: 180),
            .init(address: "C3:11:22:33:44:55", profile: "level-bottle", random: true, levelCurve: level.levelCurve),
            .init(address: "F0:F1:F2:F3:F4:F7", profile: "mi-scale", tareG: 180),
        ], in: dir)

        let script = """
            \(LiveVM.startRun(quench, database: database, printed: printed))
            # Stopped once run has printed the eight sips (or after 240 s), not at the traces' end: a fixed
            # 5 s after it was too short for a starved guest's mi-scale (CI, 2026-11-28: its last sip, at
            # the end of the last trace, was missed), and 20 s of idle scales after the last sip is
            # printed show nothing more (a sip split in two would have made the eight, and fails below).
            \(LiveVM.awaitFlag("sips-printed", in: dir, seconds: 240))
            \(LiveVM.stopRun(printed: printed, in: dir))
            # The second set: every device advertises (the first set's again, once run let go).
            $Q scan --timeout 3 || exit 10
            $Q pair $QUENCH_VM_P8_ADDR --tare 180 || exit 14
            $Q pair $QUENCH_VM_P5_ADDR --capacity 750 --tare 180 || exit 11
            $Q record $QUENCH_VM_P5_ADDR --out \(dir.path)/recorded.csv --seconds 4 || exit 16
            $Q pair $QUENCH_VM_P6_ADDR --profile decent-scale --tare 180 || exit 12
            $Q pair $QUENCH_VM_P7_ADDR --profile level-bottle --random --level-curve \(level.levelCurve!.description) || exit 13
            $Q pair F0:00:00:00:00:99 --profile weight-scale --timeout 3; echo "absent: exit $?"
            $Q devices
            """
        let result = try LiveVM.runScript(script, in: dir, peripherals: [
            "--profile weight-scale --addr F0:F1:F2:F3:F4:F5 --trace \(weight.path) --log \(log.path)",
            "--profile decent-scale --addr F0:F1:F2:F3:F4:F6 --trace \(decent.path) --drop-at \(dropAt):5 --log \(log.path)",
            "--profile level-bottle --random --addr C3:11:22:33:44:55 --trace \(level.path) --log \(log.path)",
            "--profile mi-scale --addr F0:F1:F2:F3:F4:F7 --start-on scan --trace \(mi.path) --log \(log.path)",
            // 600 mL in a 180 g bottle; a kitchen scale, a level bottle and a bathroom scale at rest.
            "--profile weight-scale --addr F0:F1:F2:F3:F4:A5 --value 0.78 --interval 0.1",
            "--profile decent-scale --addr F0:F1:F2:F3:F4:A6 --value 500",
            "--profile level-bottle --random --addr C3:11:22:33:44:A5 --value 100",
            "--profile mi-scale --addr F0:F1:F2:F3:F4:A7 --value 0.7",
        ], timeout: 420, watching: [.printed("sip", atLeast: 8, in: printed, flag: "sips-printed")])
        #expect(result.status == 0, "the script in the VM failed (exit \(result.status))")
        let out = result.output
        // The scan saw every profile.
        for p in ["weight-scale", "decent-scale", "level-bottle", "mi-scale"] { #expect(out.contains(p), "scan/pair output lacks \(p)") }
        #expect(out.contains("C3:11:22:33:44:A5  random"), "the level bottle is saved with its random address")
        // The absent device fails cleanly at its configured timeout: the error names the 3 s it was given.
        // (Not timed here: the emulated guest runs as slowly as the host is busy.)
        #expect(out.contains("was not seen advertising within 3.0 s"))
        #expect(out.contains("absent: exit 1\n"), "the absent device's pair did not fail with exit 1")
        #expect(out.contains("link down; retrying"), "the decent scale's link drop was not seen")

        // `quench record`: a trace v1 file of the idle weight scale (600 mL + 180 g bottle), with its header.
        let recorded = dir.appendingPathComponent("recorded.csv")
        if let text = try? String(contentsOf: recorded, encoding: .utf8) {
            let (header, readings) = try TraceParser.parse(text)
            #expect(header.sensor == .weight && header.unit == .g, "recorded header: \(header)")
            #expect(header.started != nil)
            #expect(header["device"] == "F0:F1:F2:F3:F4:A5" && header["profile"] == "weight-scale", "recorded header: \(header)")
            #expect(header["empty-weight-g"] == "180" && header["capacity-ml"] == "750")
            #expect(readings.count >= 5, "\(readings.count) readings recorded in 4 s (10 a second sent; a busy guest keeps fewer)")
            #expect(readings.allSatisfy { $0.value.map { abs($0 - 780) <= 1 } ?? false }, "recorded values: \(readings.compactMap(\.value))")
            #expect(out.contains("wrote \(recorded.path): \(readings.count) readings from F0:F1:F2:F3:F4:A5"))
        } else {
            Issue.record("quench record wrote no \(recorded.path)")
        }

        let stored = LiveVM.storedSips(dir)
        LiveVM.expectSips(stored, "F0:F1:F2:F3:F4:F5", weight.truth, tolerance: 5)
        LiveVM.expectSips(stored, "F0:F1:F2:F3:F4:F6", decent.truth, tolerance: 3)
        LiveVM.expectSips(stored, "C3:11:22:33:44:55", level.truth, tolerance: 3)
        LiveVM.expectSips(stored, "F0:F1:F2:F3:F4:F7", mi.truth, tolerance: 5)
    }

    @Test("quenchd, the service's binary: two devices at once, links dropped mid-sip and while idle, SIGTERM after the last sip stores it")
    func serviceBinary() throws {
        guard let quench = LiveVM.quench, let quenchd = builtExecutable("quenchd") else {
            Issue.record("no quench and quenchd beside the test binary (swift build first)")
            return
        }
        let dir = try LiveVM.workDirectory(beside: quench)
        defer { try? FileManager.default.removeItem(at: dir) }

        // The weight scale's trace ends 3 s after its last sip: nothing confirms that
        // sip but the stop, which must judge and store it before quenchd exits.
        let weight = try LiveVM.writeTrace(Scenario(.clean(unit: .g).with(.noise), seed: 31, initialML: 700)
            .idle(10).sip(ml: 35).idle(9).sip(ml: 50).idle(9).sip(ml: 28).idle(3), name: "weight.csv", in: dir)
        let level = try LiveVM.writeTrace(Scenario(.clean(unit: .mm, sampleRate: 5).with(.noise), seed: 32, initialML: 600)
            .idle(10).sip(ml: 45).idle(9).sip(ml: 60).idle(10), name: "level.csv", in: dir)
        let sips = weight.truth.filter { $0.kind == .sip }
        let midSip = TraceWriter.fixed(sips[0].tStart + 0.8, places: 1)
        let idle = TraceWriter.fixed(sips[1].tEnd + 3, places: 1)
        let database = try LiveVM.pairedDatabase([
            .init(address: "F0:F1:F2:F3:F4:F5", profile: "weight-scale", capacityML: 750, tareG: 180),
            .init(address: "C3:11:22:33:44:56", profile: "level-bottle", random: true, levelCurve: level.levelCurve),
        ], in: dir)
        let log = dir.appendingPathComponent("devices.jsonl")

        let script = """
            Q=\(quench)
            export QUENCH_DB=/tmp/q.sqlite
            set -x
            cp \(database) $QUENCH_DB
            \(quenchd) --json --log-level info &
            pid=$!
            # The traces' clocks start at quenchd's subscriptions; stopped once both have ended
            # (and the guest has had 2 s for the last readings on their way).
            \(LiveVM.awaitFlag("traces-ended", in: dir))
            sleep 2
            kill -TERM $pid
            wait $pid
            echo "quenchd exit $?"
            \(LiveVM.copyDatabase(to: dir))
            """
        let result = try LiveVM.runScript(script, in: dir, peripherals: [
            "--profile weight-scale --addr F0:F1:F2:F3:F4:F5 --trace \(weight.path) --drop-at \(midSip):4 --drop-at \(idle):4 --log \(log.path)",
            "--profile level-bottle --random --addr C3:11:22:33:44:56 --trace \(level.path) --log \(log.path)",
        ], timeout: 360, watching: [.events("end", atLeast: 2, in: log, flag: "traces-ended")])
        #expect(result.status == 0, "the script in the VM failed (exit \(result.status))")
        let out = result.output
        #expect(out.contains("quenchd exit 0"), "quenchd did not stop cleanly on SIGTERM")
        #expect(out.components(separatedBy: "link down; retrying").count - 1 >= 2, "the weight scale's two link drops were not both seen")

        let stored = LiveVM.storedSips(dir)
        LiveVM.expectSips(stored, "F0:F1:F2:F3:F4:F5", weight.truth, tolerance: 5)
        LiveVM.expectSips(stored, "C3:11:22:33:44:56", level.truth, tolerance: 3)
        let identities = LiveVM.storedEvents(dir).filter { !$0.deleted }.map(\.identity)
        #expect(identities.count == stored.values.map(\.count).reduce(0, +), "only the sips are stored, each once: \(identities)")
    }

    @Test("""
        quenchd started with nothing paired waits; `quench pair` meanwhile starts the scale in the same process; \
        killed (SIGKILL) in the middle of a sip and started again, the detector resumes from its checkpoint: every sip stored once
        """)
    func firstPairingThenKilledMidSip() throws {
        guard let quench = LiveVM.quench, let quenchd = builtExecutable("quenchd") else {
            Issue.record("no quench and quenchd beside the test binary (swift build first)")
            return
        }
        let dir = try LiveVM.workDirectory(beside: quench)
        defer { try? FileManager.default.removeItem(at: dir) }
        // The trace's clock starts at the pairing; the waiting quenchd then sees the new device (it polls
        // the database) and connects: 45 s of the idle bottle leave it room on a busy host. The second
        // sip's lift is long: quenchd is killed 4 s into it, and the new one (up again within seconds)
        // reconnects while the bottle is still off the scale or after it is back; either way only the
        // checkpoint knows the level before. The next sip waits 30 s after it: a loaded guest took 20 s
        // to start a program (seen), and a restart after it would judge the two as one.
        let weight = try LiveVM.writeTrace(Scenario(.clean(unit: .g).with(.noise), seed: 41, initialML: 700)
            .idle(45).sip(ml: 40).idle(12).sip(ml: 60, liftSeconds: 16).idle(30).sip(ml: 30).idle(10), name: "weight.csv", in: dir)
        let sips = weight.truth.filter { $0.kind == .sip }
        let killAt = TraceWriter.fixed(sips[1].tStart + 4, places: 1)
        let log = dir.appendingPathComponent("scale.jsonl")
        let script = """
            Q=\(quench)
            export QUENCH_DB=/tmp/q.sqlite
            set -x
            \(quenchd) --json --log-level info &
            pid=$!
            sleep 3
            kill -0 $pid || { echo "quenchd exited with nothing paired"; exit 13; }
            $Q pair $QUENCH_VM_P1_ADDR --capacity 750 --tare 180 || exit 11
            # Killed once the scale has sent the reading at trace time \(killAt) (4 s into the second sip's lift).
            \(LiveVM.awaitFlag("kill-now", in: dir))
            kill -KILL $pid
            wait $pid
            echo "first quenchd: $?"
            \(quenchd) --json --log-level info &
            pid=$!
            \(LiveVM.awaitFlag("trace-ended", in: dir))
            sleep 2
            kill -TERM $pid
            wait $pid
            echo "quenchd exit $?"
            \(LiveVM.copyDatabase(to: dir))
            """
        let result = try LiveVM.runScript(script, in: dir, peripherals: [
            "--profile weight-scale --addr F0:F1:F2:F3:F4:F5 --trace \(weight.path) --log \(log.path)",
        ], timeout: 420, watching: [.sent(atOrAfter: sips[1].tStart + 4, in: log, flag: "kill-now"),
                                    .events("end", atLeast: 1, in: log, flag: "trace-ended")])
        #expect(result.status == 0, "the script in the VM failed (exit \(result.status))")
        let out = result.output
        #expect(out.contains("waiting for a pairing: no paired devices"), "quenchd did not say it waits")
        #expect(out.contains("[QuenchGateway] gateway starting"), "the pairing did not start the device")
        #expect(out.contains("first quenchd: 137"), "the first quenchd was killed")
        #expect(out.contains("resuming the detector from its checkpoint"), "the second quenchd did not resume")
        #expect(out.contains("quenchd exit 0"), "quenchd did not stop cleanly on SIGTERM")
        let stored = LiveVM.storedSips(dir)
        LiveVM.expectSips(stored, "F0:F1:F2:F3:F4:F5", weight.truth, tolerance: 5)
        let identities = LiveVM.storedEvents(dir).filter { !$0.deleted }.map(\.identity)
        #expect(identities.count == sips.count, "each sip stored once: \(identities)")
    }
}
#endif

#if os(Linux)
// Nested in "quench in ble-vm", whose .serialized covers it: one VM at a time
// from these suites, so the timing-sensitive runs are not starved of CPU.
extension LiveVMTests {
/// The HidrateSpark on the real stack: ../shared/ble-vm's emulated bottle
/// (both firmwares) paired and run by the built `quench`.
@Suite("HidrateSpark in ble-vm")
struct HidrateSparkVMTests {
    /// What the emulator logged: each sip's true wall time and mL, per address, and what it lost or had acknowledged.
    struct BottleLog {
        var sips: [String: [(time: Double, ml: Double)]] = [:]
        var lost: [String: Int] = [:]
        var acked: [String: Int] = [:]
        /// Records sent (a record sent twice was resent).
        var sent: [String: Int] = [:]
    }

    static func readLog(_ url: URL) -> BottleLog {
        var log = BottleLog()
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { return log }
        for line in text.split(separator: "\n") {
            guard let obj = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let event = obj["event"] as? String, let device = obj["device"] as? String else { continue }
            let address = device.split(separator: " ").first.map(String.init) ?? device
            switch event {
            case "logged":
                // Kept from before the start: logged at the start with a negative t; live: logged as drunk.
                guard let ts = obj["ts"] as? Double, let t = obj["t"] as? Double, let ml = obj["ml"] as? Double else { continue }
                log.sips[address, default: []].append((ts + min(t, 0), ml))
            case "lost" where (obj["reason"] as? String) == "bottle memory full": log.lost[address, default: 0] += 1
            case "acked": log.acked[address, default: 0] += 1
            case "sent" where (obj["pending"] as? Int ?? 0) > 0: log.sent[address, default: 0] += 1
            default: break
            }
        }
        return log
    }

    @Test("both firmwares: kept sips drained with their true times, live sips, a link drop, a clock ten minutes fast, a full memory")
    func bothFirmwares() throws {
        guard let (quench, dir) = try LiveVM.workspace() else { return }
        defer { try? FileManager.default.removeItem(at: dir) }
        // Trace clock: from the guest's first scan, which is `run`'s (the bottles are paired on the host):
        // the live sips (90 s on) and the legacy bottle's link drop (at 102 s) come after run has drained
        // what they kept. Paired in the guest first, a busy host's guest took 84 s over the two pairings and
        // run 60 s more to connect, and the live sips were drained as kept ones (seen in CI). They are
        // paired in the guest afterwards, into a database of their own, to see pairing on the real stack.
        let legacy = dir.appendingPathComponent("legacy-sips.csv")
        try "t_start,t_end,kind,ml\n-7210,-7200,sip,120\n-3605,-3600,sip,45\n-65,-60,sip,30\n90,92,sip,25\n95,97,sip,25\n112,114,sip,30\n"
            .write(to: legacy, atomically: true, encoding: .utf8)
        let modern = dir.appendingPathComponent("modern-sips.csv")
        try "t_start,t_end,kind,ml\n-5005,-5000,sip,100\n-4005,-4000,sip,50\n-3005,-3000,sip,60\n-2005,-2000,sip,71\n-1005,-1000,sip,80\n100,102,sip,40\n"
            .write(to: modern, atomically: true, encoding: .utf8)
        let bottleLog = dir.appendingPathComponent("bottles.jsonl")
        let database = try LiveVM.pairedDatabase([
            .init(address: "C8:2A:3F:00:3F:01", profile: "hidrate-spark", name: "h2o-3F2A"),
            .init(address: "C8:2A:3F:00:3F:02", profile: "hidrate-spark", capacityML: 710, name: "h2o-3F2A"),
        ], in: dir)
        let script = """
            Q=\(quench)
            export QUENCH_DB=/tmp/q.sqlite
            set -x
            cp \(database) $QUENCH_DB
            $Q run --json --log-level info &
            run=$!
            # Stopped once every sip the bottles logged (6 each) and still keep has been acknowledged: the
            # legacy one's 3 kept and 3 live, the modern one's 3 kept (of 5) and 1 live, or one fewer kept
            # when a slow guest let its live sip come before the drain (its full memory drops the oldest).
            \(LiveVM.awaitFlag("all-acked", in: dir, seconds: 240))
            sleep 2
            kill -TERM $run
            wait $run || exit 15
            $Q doctor; echo "doctor exit $?"
            QUENCH_DB=/tmp/pair.sqlite $Q pair $QUENCH_VM_P1_ADDR || exit 11
            QUENCH_DB=/tmp/pair.sqlite $Q pair $QUENCH_VM_P2_ADDR --capacity 710 || exit 12
            $Q scan --timeout 3 || exit 10
            $Q devices
            \(LiveVM.copyDatabase(to: dir))
            """
        let result = try LiveVM.runScript(script, in: dir, peripherals: [
            "--profile hidrate-spark --firmware legacy --addr C8:2A:3F:00:3F:01 --sips \(legacy.path) --clock-offset 600 --drop-at 102:4 --start-on scan --log \(bottleLog.path)",
            "--profile hidrate-spark --firmware modern --bottle-ml 710 --memory 3 --addr C8:2A:3F:00:3F:02 --sips \(modern.path) --start-on scan --log \(bottleLog.path)",
        ], timeout: 420, watching: [.events(in: bottleLog, flag: "all-acked") { tally in
            let logged = tally["logged"] ?? 0
            return logged == 12 && (tally["acked"] ?? 0) >= logged - (tally["lost: bottle memory full"] ?? 0)
        }])
        #expect(result.status == 0, "the script in the VM failed (exit \(result.status))")
        let out = result.output
        #expect(out.components(separatedBy: "hidrate-spark").count > 4, "scan and pair recognise the bottles")
        // Paired after the drain: both firmwares told apart on the real stack, nothing left in them.
        #expect(out.contains("bottle: legacy firmware, 0 sips kept in it"), "pair says what the legacy bottle keeps")
        #expect(out.contains("bottle: modern firmware, 0 sips kept in it"), "pair says what the modern bottle keeps")
        // 10 min as the guest measures it: a starved guest's own clock ran 32 s behind the host's (seen), and said 9.
        #expect(out.range(of: #"the bottle's clock is (9|10|11) min fast"#, options: .regularExpression) != nil, "\(out)")
        #expect(out.contains("re-stamped"))
        // 150 mL dropped; the modern frame gives the first sip in percent (60 mL as 8 % of 710), so about 153.
        #expect(out.range(of: #"the bottle logged about 15\d mL before the oldest sip it still keeps"#, options: .regularExpression) != nil)
        #expect(out.contains("drained 3 sips the bottle kept"))
        #expect(out.contains("link down; retrying"), "the legacy bottle's link drop was not seen")
        // `doctor` on the real stack: the adapter up, both bottles heard just now with their battery.
        #expect(out.range(of: #"ok    adapter hci0: [0-9A-F:]{17}, up"#, options: .regularExpression) != nil, "doctor: \(out)")
        #expect(out.contains("ok    device C8:2A:3F:00:3F:01 (h2o-3F2A): last heard") && out.contains(", battery 87 %"))
        #expect(out.contains("\nhealthy\n") && out.contains("doctor exit 0"))

        let truth = Self.readLog(bottleLog)
        let stored = LiveVM.storedSipsWithTimes(dir)
        // 2 dropped before anything connected; a third when a slow guest let the live sip come first.
        #expect((2...3).contains(truth.lost["C8:2A:3F:00:3F:02"] ?? 0), "the modern bottle's memory held 3 of 5: \(truth.lost)")
        for (address, tolerance) in [("C8:2A:3F:00:3F:01", 0.5), ("C8:2A:3F:00:3F:02", 0.005 * 710)] {
            // What the bottle still had: its sips minus those its full memory dropped.
            let want = Array((truth.sips[address] ?? []).dropFirst(truth.lost[address] ?? 0))
            let got = stored[address] ?? []
            #expect(got.count == want.count, "\(address): stored \(got), the bottle's \(want)")
            #expect(truth.acked[address] == want.count, "\(address): acknowledged \(truth.acked[address] ?? 0)")
            let offset = LiveVM.guestClockOffset(stored: got, truth: want)
            for (g, w) in zip(got, want) {
                #expect(abs(g.ml - w.ml) <= tolerance, "\(address): \(w.ml) mL stored as \(g.ml) mL")
                #expect(abs(g.time - offset - w.time) <= 2.5, "\(address): drunk at \(w.time), stored at \(g.time) (guest clock \(offset) s off)")
            }
        }
    }

    @Test("quenchd killed (SIGKILL) in the middle of a long drain, then started again at once: every kept sip stored once")
    func killedMidDrain() throws {
        guard let quench = LiveVM.quench, let quenchd = builtExecutable("quenchd") else {
            Issue.record("no quench and quenchd beside the test binary (swift build first)")
            return
        }
        let dir = try LiveVM.workDirectory(beside: quench)
        defer { try? FileManager.default.removeItem(at: dir) }
        var csv = "t_start,t_end,kind,ml\n"
        for i in 0..<300 { csv += "\(-50000 + i * 150),\(-49995 + i * 150),sip,\(15 + i % 9)\n" }
        let sips = dir.appendingPathComponent("sips.csv")
        try csv.write(to: sips, atomically: true, encoding: .utf8)
        let bottleLog = dir.appendingPathComponent("bottle.jsonl")
        let script = """
            Q=\(quench)
            export QUENCH_DB=/tmp/q.sqlite
            set -x
            $Q pair $QUENCH_VM_P1_ADDR --profile hidrate-spark || exit 11
            \(quenchd) --log-level info &
            pid=$!
            # Killed in the middle of the drain: once the bottle has had 30 of its 300 records acknowledged.
            \(LiveVM.awaitFlag("thirty-acked", in: dir, seconds: 60))
            kill -KILL $pid
            wait $pid
            echo "first quenchd: $?"
            \(quenchd) --log-level info &
            pid=$!
            # Stopped once the bottle has had all 300 acknowledged, or 180 s after: a fixed 25 s left a
            # starved CI guest's second quenchd 15 s to drain, and it stored 228 (2026-11-28).
            \(LiveVM.awaitFlag("all-acked", in: dir))
            kill -TERM $pid
            wait $pid || exit 15
            \(LiveVM.copyDatabase(to: dir))
            """
        let result = try LiveVM.runScript(script, in: dir, peripherals: [
            "--profile hidrate-spark --firmware legacy --memory 400 --addr C8:2A:3F:00:3F:03 --sips \(sips.path) --log \(bottleLog.path)",
        ], timeout: 300, watching: [.events("acked", atLeast: 30, in: bottleLog, flag: "thirty-acked"),
                                    .events("acked", atLeast: 300, in: bottleLog, flag: "all-acked")])
        #expect(result.status == 0, "the script in the VM failed (exit \(result.status))")
        #expect(result.output.contains("first quenchd: 137"), "the first quenchd was killed mid-drain")
        let truth = Self.readLog(bottleLog)
        let address = "C8:2A:3F:00:3F:03"
        let stored = LiveVM.storedSipsWithTimes(dir)[address] ?? []
        let want = truth.sips[address] ?? []
        #expect(want.count == 300)
        #expect(stored.count == 300, "stored \(stored.count) of the bottle's 300")
        #expect(truth.acked[address] == 300)
        let offset = LiveVM.guestClockOffset(stored: stored, truth: want)
        for (g, w) in zip(stored, want) {
            #expect(abs(g.ml - w.ml) <= 0.5 && abs(g.time - offset - w.time) <= 2, "drunk \(w), stored \(g) (guest clock \(offset) s off)")
        }
        print("records sent \(truth.sent[address] ?? 0) times for 300 sips (a resend per kill between storing and acknowledging)")
    }

    @Test("the link dropped again and again in the middle of a long drain: each unacknowledged record resent, every sip stored once")
    func dropsMidDrain() throws {
        guard let (quench, dir) = try LiveVM.workspace() else { return }
        defer { try? FileManager.default.removeItem(at: dir) }
        var csv = "t_start,t_end,kind,ml\n"
        for i in 0..<300 { csv += "\(-50000 + i * 150),\(-49995 + i * 150),sip,\(15 + i % 9)\n" }
        let sips = dir.appendingPathComponent("sips.csv")
        try csv.write(to: sips, atomically: true, encoding: .utf8)
        // The bottle saved as paired (no scan, no pairing): `run` starts draining as soon as the guest is up.
        let device = try LiveVM.pairedHidrateSpark("C8:2A:3F:00:3F:04", in: dir)
        let bottleLog = dir.appendingPathComponent("bottle.jsonl")
        // Half a second without a link every 1.5 s, from 1 s after `run`'s first connect (the bottle's clock
        // starts at the guest's first scan, however slow the guest was to get there; idle, the whole drain
        // took under 4 s) to 40 s; then every 5 s to 300 s, for a starved guest's drain (CI, 2026-11-28: it
        // began after 40 s, and nothing was resent). The guest does not drop the link itself: a mgmt
        // Disconnect crashed its kernel (hci_chan_del, the bug the harness runs a case again for).
        let times = Array(stride(from: 1.0, through: 40, by: 1.5)) + Array(stride(from: 45.0, through: 300, by: 5))
        let drops = times.map { "--drop-at \(TraceWriter.fixed($0, places: 1)):0.5" }.joined(separator: " ")
        let script = """
            Q=\(quench)
            export QUENCH_DB=/tmp/q.sqlite
            set -x
            $Q import \(device.path) || exit 10
            $Q run --log-level info &
            run=$!
            # Stopped once the bottle has had all 300 acknowledged (a busy guest took over 45 s).
            \(LiveVM.awaitFlag("all-acked", in: dir))
            sleep 1
            kill -TERM $run
            wait $run || exit 15
            \(LiveVM.copyDatabase(to: dir))
            """
        let result = try LiveVM.runScript(script, in: dir, peripherals: [
            // Advertising every 0.1 s, not the harness's once a second: after each half-second drop the
            // gateway reconnects at the next advertisement, and at one a second the drops left too little
            // link for the drain (CI at 01818c9: 134 of 300 acknowledged in 187 s).
            "--profile hidrate-spark --firmware modern --memory 400 --addr C8:2A:3F:00:3F:04 --sips \(sips.path) --start-on scan --log \(bottleLog.path) \(drops) --adv-interval 100",
        ], timeout: 360, watching: [.events("acked", atLeast: 300, in: bottleLog, flag: "all-acked")])
        #expect(result.status == 0, "the script in the VM failed (exit \(result.status))")
        #expect(result.output.components(separatedBy: "link down; retrying").count - 1 >= 2, "the drops were not seen")
        let truth = Self.readLog(bottleLog)
        let address = "C8:2A:3F:00:3F:04"
        let stored = LiveVM.storedSipsWithTimes(dir)[address] ?? []
        let want = truth.sips[address] ?? []
        #expect(want.count == 300)
        #expect(stored.count == 300, "stored \(stored.count) of the bottle's 300")
        #expect(truth.acked[address] == 300)
        #expect((truth.sent[address] ?? 0) > 300, "no record was resent: the drops missed the drain")
        let offset = LiveVM.guestClockOffset(stored: stored, truth: want)
        for (g, w) in zip(stored, want) {
            // Modern frames carry seconds-ago, so a frame the starved guest read late is stamped that much
            // late (one by 4.8 s, seen with six guests on two cores); the legacy tests hold 2.5 s.
            #expect(abs(g.ml - w.ml) <= 0.005 * 591 && abs(g.time - offset - w.time) <= 8, "drunk \(w), stored \(g) (guest clock \(offset) s off)")
        }
        print("records sent \(truth.sent[address] ?? 0) times for 300 sips across the drops")
    }
}
}
#endif

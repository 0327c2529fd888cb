#if os(Linux)
import Foundation
import QuenchCore
import QuenchSimulator
import QuenchTestSupport
import Testing

// Nested in "quench in ble-vm", whose .serialized covers it (one VM at a time).
extension LiveVMTests {
/// The adapter taken away under a running `quenchd` on the real stack: a
/// second process in the guest powers hci0 off through the management
/// socket (btmgmt), and on again later.
@Suite("adapter power in ble-vm")
struct AdapterVMTests {
    @Test("hci0 powered off and on under a running quenchd: sips before, during and after stored once each")
    func poweredOffAndOn() throws {
        guard let (quench, dir) = try LiveVM.workspace() else { return }
        guard let quenchd = builtExecutable("quenchd") else {
            Issue.record("no quenchd beside the test binary (swift build first)")
            return
        }
        defer { try? FileManager.default.removeItem(at: dir) }
        // Both devices saved as paired (made on the host): the bottle's clock starts at the guest's first
        // scan, quenchd's first connect, so however long the guest took to boot or to start quenchd. A sip
        // every 2.5 s from 18 s to 93 s; the adapter goes off once quenchd has had three of them (so some
        // fall before), for 8 s (some while it is off), and on again well before the last (some after).
        var csv = "t_start,t_end,kind,ml\n"
        for i in 0..<31 { csv += "\(18 + Double(i) * 2.5),\(20 + Double(i) * 2.5),sip,\(20 + i % 7 * 5)\n" }
        let sips = dir.appendingPathComponent("sips.csv")
        try csv.write(to: sips, atomically: true, encoding: .utf8)
        // The level bottle streams from quenchd's subscription: one sip settled well before the outage
        // and one well after it. The outage lasts until the gateway powers hci0 again (~2 s), but the
        // first connect after it can hang for the whole 10 s connect timeout (seen in CI), and a busy
        // guest takes up to 20 s a program: readings lost in that gap would merge the two sips into
        // one, so the second comes ~75 s after the first.
        let level = try LiveVM.writeTrace(Scenario(.clean(unit: .mm, sampleRate: 5).with(.noise), seed: 41, initialML: 600)
            .idle(8).sip(ml: 45).idle(70).sip(ml: 60).idle(10), name: "level.csv", in: dir)
        let database = try LiveVM.pairedDatabase([
            .init(address: "C8:2A:3F:00:3F:05", profile: "hidrate-spark"),
            .init(address: "C3:11:22:33:44:57", profile: "level-bottle", random: true, levelCurve: level.levelCurve),
        ], in: dir)
        let bottleLog = dir.appendingPathComponent("bottle.jsonl")
        let levelLog = dir.appendingPathComponent("level.jsonl")
        let script = """
            Q=\(quench)
            export QUENCH_DB=/tmp/q.sqlite
            power() { script -qc "btmgmt --index 0 power $1" /dev/null; echo "power $1 at $(date +%s.%N)"; }
            cp \(database) $QUENCH_DB
            \(quenchd) --json --log-level info &
            pid=$!
            \(LiveVM.awaitFlag("three-acked", in: dir))
            power off
            sleep 8
            power on
            # Stopped once the level bottle's trace has ended and the bottle's last sip is stored.
            \(LiveVM.awaitFlag("level-ended", in: dir))
            \(LiveVM.awaitFlag("all-acked", in: dir))
            sleep 2
            kill -TERM $pid
            wait $pid
            echo "quenchd exit $?"
            \(LiveVM.copyDatabase(to: dir))
            """
        let result = try LiveVM.runScript(script, in: dir, peripherals: [
            "--profile hidrate-spark --firmware legacy --addr C8:2A:3F:00:3F:05 --sips \(sips.path) --start-on scan --log \(bottleLog.path)",
            "--profile level-bottle --random --addr C3:11:22:33:44:57 --trace \(level.path) --log \(levelLog.path)",
        ], timeout: 420, watching: [.events("acked", atLeast: 3, in: bottleLog, flag: "three-acked"),
                                    .events("end", atLeast: 1, in: levelLog, flag: "level-ended"),
                                    .events("acked", atLeast: 31, in: bottleLog, flag: "all-acked")])
        #expect(result.status == 0, "the script in the VM failed (exit \(result.status))")
        let out = result.output
        #expect(out.contains("quenchd exit 0"), "quenchd stopped cleanly after the adapter came back")
        #expect(out.contains("link down; retrying"), "the links dropped with the adapter")
        // btmgmt under script(1) writes terminal codes and carriage returns around the lines.
        func stamp(_ what: String) -> Double? {
            guard let r = out.range(of: "power \(what) at [0-9.]+", options: .regularExpression) else { return nil }
            return Double(out[r].split(separator: " ").last ?? "")
        }
        guard let guestOff = stamp("off"), let guestOn = stamp("on") else {
            Issue.record("the script did not power the adapter off and on: \(out)")
            return
        }

        let truth = HidrateSparkVMTests.readLog(bottleLog)
        let bottle = "C8:2A:3F:00:3F:05"
        let want = truth.sips[bottle] ?? []
        let stored = LiveVM.storedSipsWithTimes(dir)[bottle] ?? []
        // The stored times and the power stamps are the guest's clock, the bottle's log the host's.
        let clockOffset = LiveVM.guestClockOffset(stored: stored, truth: want)
        let (off, on) = (guestOff - clockOffset, guestOn - clockOffset)
        let during = want.filter { $0.time >= off && $0.time <= on + 3 }
        print("guest clock \(clockOffset) s off the host's; bottle sips: \(want.filter { $0.time < off }.count) before the power off, \(during.count) while off or reconnecting, "
              + "\(want.filter { $0.time > on + 3 }.count) after; \(stored.count) stored")
        #expect(!during.isEmpty, "no sip fell in the outage (off \(off), on \(on)): the test proves nothing")
        #expect(want.contains { $0.time < off } && want.contains { $0.time > on + 3 })
        #expect(stored.count == want.count, "stored \(stored.count) of the bottle's \(want.count)")
        for (g, w) in zip(stored, want) {
            #expect(abs(g.ml - w.ml) <= 0.5 && abs(g.time - clockOffset - w.time) <= 2.5, "drunk \(w), stored \(g) (guest clock \(clockOffset) s off)")
        }
        LiveVM.expectSips(LiveVM.storedSips(dir), "C3:11:22:33:44:57", level.truth, tolerance: 3)
    }
}
}
#endif

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
        // The bottle's clock starts at the guest's first scan (the first `quench pair`), not with the emulator,
        // so however long the guest takes to boot: the adapter goes off ~30 s later (two pairings, then 24 s)
        // and on 8 s after; a sip every 2.5 s from 20 s to 60 s, so some fall before, some while the adapter
        // is off, some after.
        var csv = "t_start,t_end,kind,ml\n"
        for i in 0..<17 { csv += "\(18 + Double(i) * 2.5),\(20 + Double(i) * 2.5),sip,\(20 + i % 7 * 5)\n" }
        let sips = dir.appendingPathComponent("sips.csv")
        try csv.write(to: sips, atomically: true, encoding: .utf8)
        // The level bottle streams from its first subscription (pairing): one sip settled well before the
        // outage and one well after it. Its first lift waits 10 s, for quenchd to start and connect after
        // the pairing (a 1 s wait lost that sip on a busy host). The outage lasts until the gateway powers
        // hci0 again (~2 s), but the first connect after it can hang for the whole 10 s connect timeout
        // (seen in CI): readings lost in that gap would merge the two sips into one, so the second comes
        // ~40 s after the first, ~55 s after the pairing (the adapter is back ~35 s after it, ~45 s at worst).
        let level = try LiveVM.writeTrace(Scenario(.clean(unit: .mm, sampleRate: 5).with(.noise), seed: 41, initialML: 600)
            .idle(10).sip(ml: 45).idle(40).sip(ml: 60).idle(12), name: "level.csv", in: dir)
        let bottleLog = dir.appendingPathComponent("bottle.jsonl")
        let script = """
            Q=\(quench)
            export QUENCH_DB=/tmp/q.sqlite
            power() { script -qc "btmgmt --index 0 power $1" /dev/null; echo "power $1 at $(date +%s.%N)"; }
            $Q pair $QUENCH_VM_P1_ADDR --profile hidrate-spark || exit 11
            $Q pair $QUENCH_VM_P2_ADDR --profile level-bottle --random --level-curve \(level.curve!) || exit 12
            \(quenchd) --json --log-level info &
            pid=$!
            sleep 24
            power off
            sleep 8
            power on
            sleep 42
            kill -TERM $pid
            wait $pid
            echo "quenchd exit $?"
            $Q log --json --limit 200
            """
        let result = try LiveVM.runScript(script, in: dir, peripherals: [
            "--profile hidrate-spark --firmware legacy --addr C8:2A:3F:00:3F:05 --sips \(sips.path) --start-on scan --log \(bottleLog.path)",
            "--profile level-bottle --random --addr C3:11:22:33:44:57 --trace \(level.path)",
        ], timeout: 200)
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
        let stored = LiveVM.storedSipsWithTimes(out)[bottle] ?? []
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
        LiveVM.expectSips(LiveVM.storedSips(out), "C3:11:22:33:44:57", level.truth, tolerance: 3)
    }
}
}
#endif

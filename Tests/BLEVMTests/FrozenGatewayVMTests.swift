#if os(Linux)
import Foundation
import QuenchCore
import QuenchSimulator
import QuenchTestSupport
import Testing

// Nested in "quench in ble-vm", whose .serialized covers it (one VM at a time).
extension LiveVMTests {
/// A gateway that gets no CPU for a while, as in a starved guest (CI, 2026-11-28: `quench run` took
/// 56 s to start, then heard nothing from a broadcast scale for minutes while its GATT devices went on).
@Suite("a frozen gateway in ble-vm")
struct FrozenGatewayVMTests {
    @Test("quench run stopped (SIGSTOP) for 12 s while it scans beside seven other advertisers, then let go: it hears the broadcast scale's sip")
    func hearsTheScaleAfterAFreeze() throws {
        guard let (quench, dir) = try LiveVM.workspace() else { return }
        defer { try? FileManager.default.removeItem(at: dir) }
        // The scale's clock starts at run's first scan; run is frozen from 2 s on, for 12 s, over the
        // end of the kernel's first 10 s of discovery. The sip comes well after it is let go.
        let mi = try LiveVM.writeTrace(Scenario(.clean(unit: .g, sampleRate: 4).with(.noise), seed: 51, initialML: 650)
            .idle(24).sip(ml: 60).idle(10), name: "mi.csv", in: dir)
        let database = try LiveVM.pairedDatabase([.init(address: "F0:F1:F2:F3:F4:F7", profile: "mi-scale", tareG: 180)], in: dir)
        let log = dir.appendingPathComponent("devices.jsonl")
        let printed = dir.appendingPathComponent("run.jsonl")
        let script = """
            \(LiveVM.startRun(quench, database: database, printed: printed))
            \(LiveVM.awaitFlag("scanning", in: dir))
            kill -STOP $run
            sleep 12
            kill -CONT $run
            echo "let go at $(date +%s.%N)"
            \(LiveVM.awaitFlag("trace-ended", in: dir))
            \(LiveVM.awaitFlag("sip-printed", in: dir, seconds: 60))
            \(LiveVM.stopRun(printed: printed, in: dir))
            """
        let result = try LiveVM.runScript(script, in: dir, peripherals: [
            "--profile mi-scale --addr F0:F1:F2:F3:F4:F7 --start-on scan --trace \(mi.path) --log \(log.path)",
            // Others in the room, not paired: their reports reach the frozen gateway's socket too, every
            // 0.1 s (as the scanner's failure in CI was seen: not the harness's once a second).
            "--profile weight-scale --addr F0:F1:F2:F3:F4:A5 --value 0.78 --interval 0.1 --adv-interval 100",
            "--profile decent-scale --addr F0:F1:F2:F3:F4:A6 --value 500 --adv-interval 100",
            "--profile level-bottle --random --addr C3:11:22:33:44:A5 --value 100 --adv-interval 100",
            "--profile mi-scale --addr F0:F1:F2:F3:F4:A7 --value 0.7 --interval 0.1",
            "--profile weight-scale --addr F0:F1:F2:F3:F4:A8 --value 0.5 --interval 0.1 --adv-interval 100",
            "--profile mi-scale --addr F0:F1:F2:F3:F4:A9 --value 0.9 --interval 0.1",
            "--profile level-bottle --random --addr C3:11:22:33:44:AA --value 80 --adv-interval 100",
        ], timeout: 300, watching: [.sent(atOrAfter: 2, in: log, flag: "scanning"),
                                    .events("end", atLeast: 1, in: log, flag: "trace-ended"),
                                    .printed("sip", atLeast: 1, in: printed, flag: "sip-printed")])
        #expect(result.status == 0, "the script in the VM failed (exit \(result.status))")
        #expect(result.output.contains("let go at"), "run was not frozen and let go")
        LiveVM.expectSips(LiveVM.storedSips(dir), "F0:F1:F2:F3:F4:F7", mi.truth, tolerance: 5)
    }
}
}
#endif

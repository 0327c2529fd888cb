#if os(Linux)
import Foundation
import QuenchTestSupport
import Testing

/// The whole path on the real kernel stack (../shared/ble-vm): the timer's command
/// decides and records a reminder while `quench run` holds the emulated kitchen
/// scale's link; the scale logs each write to 0x36F5 it receives.
@Suite("reminder signals in ble-vm", .serialized, .enabled(if: getenv("QUENCH_VM").map { String(cString: $0) } != "1", "runs outside the VM"))
struct ReminderSignalVMTests {
    @Test("quench remind --notify during quench run: the paired scale's display blinks, the four writes in order, once")
    func timerDecidesGatewayShows() throws {
        guard let (quench, dir) = try LiveVM.workspace() else { return }
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = dir.appendingPathComponent("scale.log").path
        // Hourly mode over the whole day: with nothing drunk and no reminder yet, one is due at once.
        let script = """
            Q=\(quench)
            export QUENCH_DB=/tmp/q.sqlite
            set -x
            $Q pair $QUENCH_VM_P1_ADDR --profile decent-scale --tare 180 || exit 11
            $Q remind set --mode hourly --window 00:00-24:00 --every 60min || exit 12
            $Q run --seconds 24 --log-level info > /tmp/run.log 2>&1 &
            run=$!
            # The reminder once the gateway holds the scale's link (not after a fixed wait).
            \(LiveVM.awaitGuest(#"[[ $(< /tmp/run.log) == *"connected and subscribed"* ]]"#, seconds: 60))
            $Q remind --notify || exit 13
            wait $run; status=$?
            cat /tmp/run.log
            [ $status -eq 0 ] || exit 14
            """
        let result = try LiveVM.runScript(script, in: dir, peripherals: [
            "--profile decent-scale --addr F0:F1:F2:F3:F4:C1 --log \(log)",
        ], timeout: 180)
        #expect(result.status == 0, "the script in the VM failed (exit \(result.status))")
        #expect(result.output.contains("reminder for me shown"), "the gateway did not say it showed the reminder")
        let writes = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").compactMap { line -> String? in
            guard let obj = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  obj["event"] as? String == "write", obj["char"] as? String == "36f5" else { return nil }
            return obj["hex"] as? String
        }
        #expect(writes == ["030a0000000009", "030a0101000009", "030a0000000009", "030a0101000009"], "writes to 36f5: \(writes)")
    }
}
#endif

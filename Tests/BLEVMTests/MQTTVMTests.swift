#if os(Linux)
import Foundation
import QuenchCore
import QuenchSimulator
import QuenchTestSupport
import Testing

// Nested in "quench in ble-vm", whose .serialized covers it (one VM at a time).
extension LiveVMTests {
/// The whole way on the real stack: a level bottle's sips through the kernel,
/// the gateway (`quench run --mqtt`), the store and its outbox, to Debian's
/// mosquitto started in the guest and a `mosquitto_sub` there.
@Suite("MQTT in ble-vm")
struct MQTTVMTests {
    @Test("quench run --mqtt: each sip the bottle makes reaches a subscriber as an event, with the state and discovery")
    func runPublishes() throws {
        guard MosquittoBroker.isInstalled else {
            Issue.record("SKIPPED: \(MosquittoBroker.missing)")
            return
        }
        // The guest's subscriber and its probe of the broker (exit 9 in the script without them).
        guard ["/usr/bin/mosquitto_sub", "/usr/bin/mosquitto_pub"].allSatisfy(FileManager.default.isExecutableFile(atPath:)) else {
            Issue.record("SKIPPED: no mosquitto_sub and mosquitto_pub (apt-get install -y mosquitto-clients; .ci/run does it)")
            return
        }
        guard let (quench, dir) = try LiveVM.workspace() else { return }
        defer { try? FileManager.default.removeItem(at: dir) }
        let level = try LiveVM.writeTrace(Scenario(.clean(unit: .mm, sampleRate: 5).with(.noise), seed: 51, initialML: 550)
            .idle(6).sip(ml: 45).idle(8).sip(ml: 30).idle(6), name: "level.csv", in: dir)
        let database = try LiveVM.pairedDatabase([
            .init(address: "C3:11:22:33:44:58", profile: "level-bottle", random: true, levelCurve: level.levelCurve),
        ], in: dir)
        let log = dir.appendingPathComponent("level.jsonl")
        let received = dir.appendingPathComponent("mqtt.txt")
        let script = """
            Q=\(quench)
            export QUENCH_DB=/tmp/q.sqlite
            printf 'listener 18830 127.0.0.1\\nallow_anonymous true\\nuser root\\n' > /tmp/broker.conf
            \(MosquittoBroker.path!) -c /tmp/broker.conf -d || exit 9
            # On once the broker answers (not after a fixed wait).
            n=0; until mosquitto_pub -h 127.0.0.1 -p 18830 -t quench-probe -n 2>/dev/null; do n=$((n + 1)); [ $n -lt 200 ] || exit 9; sleep 0.1; done
            mosquitto_sub -h 127.0.0.1 -p 18830 -v -t 'quench/#' -t 'homeassistant/#' > \(received.path) &
            sub=$!
            cp \(database) $QUENCH_DB
            printf '[mqtt]\\nbroker = "mqtt://127.0.0.1:18830"\\nnode = "vmpi"\\nnode_id = "vmpi"\\n' > /tmp/quench.toml
            QUENCH_CONFIG=/tmp/quench.toml $Q run --mqtt --json --log-level info &
            run=$!
            # The bottle's clock starts at the gateway's subscription; stopped once its trace has ended.
            \(LiveVM.awaitFlag("trace-ended", in: dir))
            sleep 2
            kill -TERM $run
            wait $run || exit 15
            # The subscriber has the gateway's last word (offline) before it is stopped.
            n=0; until grep -q '^quench/vmpi/status offline' \(received.path); do n=$((n + 1)); [ $n -lt 100 ] || break; sleep 0.1; done
            kill $sub
            \(LiveVM.copyDatabase(to: dir))
            """
        let result = try LiveVM.runScript(script, in: dir, peripherals: [
            "--profile level-bottle --random --addr C3:11:22:33:44:58 --trace \(level.path) --log \(log.path)",
        ], timeout: 270, watching: [.events("end", atLeast: 1, in: log, flag: "trace-ended")])
        #expect(result.status == 0, "the script in the VM failed (exit \(result.status))")
        let stored = LiveVM.storedSips(dir)
        LiveVM.expectSips(stored, "C3:11:22:33:44:58", level.truth, tolerance: 3)

        let lines = ((try? String(contentsOf: received, encoding: .utf8)) ?? "").split(separator: "\n")
        func payloads(_ topic: String) -> [[String: Any]] {
            lines.filter { $0.hasPrefix(topic + " ") }.compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.dropFirst(topic.count + 1).utf8)) as? [String: Any]
            }
        }
        let events = payloads("quench/vmpi/event").compactMap { $0["event"] as? [String: Any] }
        let sips = events.filter { $0["kind"] as? String == "sip" && $0["device"] as? String == "C3:11:22:33:44:58" }
        #expect(sips.map { $0["ml"] as? Double ?? 0 } == stored["C3:11:22:33:44:58"] ?? [],
                "each stored sip published once, in order: \(sips.map { $0["ml"] ?? "?" })")
        let state = try #require(payloads("quench/vmpi/person/1/state").last)
        // The state says volumes to a tenth of a mL.
        #expect(abs((state["intake_ml"] as? Double ?? 0) - (stored["C3:11:22:33:44:58"] ?? []).reduce(0, +)) <= 0.05 + 1e-9, "\(state)")
        #expect(lines.contains { $0.hasPrefix("homeassistant/sensor/quench_vmpi/c31122334458_remaining/config {") })
        #expect(lines.contains("quench/vmpi/status online") && lines.last { $0.hasPrefix("quench/vmpi/status") } == "quench/vmpi/status offline",
                "online while running, offline after")
        // The bottle's link was up while the gateway ran, and recorded down when it stopped.
        let device = payloads("quench/vmpi/device/c31122334458/state")
        #expect(device.contains { $0["link_up"] as? Bool == true })
    }
}
}
#endif

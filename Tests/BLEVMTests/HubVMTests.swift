#if canImport(Glibc)
import Foundation
import QuenchCore
import QuenchSimulator
import QuenchStore
import QuenchTestSupport
import Testing

/// Issue 25 on the real kernel stack: two gateways in one guest, each on its own
/// adapter (`--adapter hci0`, `hci1`; `run.sh --adapters 2` gives the guest both on
/// one radio), hear one broadcast scale. Each stores the sips as its own detector
/// judged them; then, on the host, both databases go to a real mosquitto (`quench
/// mqtt run` each) and a hub (`quench hub run`), which stores each sip once.
@Suite("two gateways on two adapters and a hub", .serialized, .enabled(if: environment("QUENCH_VM") != "1", "runs outside the VM"),
       .enabled(if: MosquittoBroker.isInstalled, Comment(rawValue: MosquittoBroker.missing)))
struct HubVMTests {
    @Test("one broadcast scale heard on hci0 and hci1 by two gateways: each stores its sips, the hub each sip once")
    func oneScaleTwoAdapters() throws {
        guard let (quench, dir) = try LiveVM.workspace() else { return }
        defer { try? FileManager.default.removeItem(at: dir) }
        let mi = try LiveVM.writeTrace(Scenario(.clean(unit: .g, sampleRate: 4).with(.noise), seed: 25, initialML: 700)
            .idle(LiveVMTests.leadIn + 4).sip(ml: 55).idle(10).sip(ml: 35).idle(16), name: "mi.csv", in: dir)
        // Two databases of their own (a copied file would be one gateway to the hub: one database id).
        let paired = [LiveVM.Paired(address: "F0:F1:F2:F3:F4:F7", profile: "mi-scale", tareG: 180)]
        let kitchen = try LiveVM.pairedDatabase(paired, in: dir, name: "kitchen-paired.sqlite")
        let hall = try LiveVM.pairedDatabase(paired, in: dir, name: "hall-paired.sqlite")
        let log = dir.appendingPathComponent("devices.jsonl")
        let script = """
            Q=\(quench)
            echo "adapters: $HCIS"
            cp \(kitchen) /tmp/kitchen.sqlite
            cp \(hall) /tmp/hall.sqlite
            $Q run --db /tmp/kitchen.sqlite --adapter hci0 --log-level info &
            a=$!
            $Q run --db /tmp/hall.sqlite --adapter hci1 --log-level info &
            b=$!
            \(LiveVM.awaitFlag("traces-ended", in: dir))
            sleep 8
            kill -TERM $a $b
            wait $a || exit 15
            wait $b || exit 16
            cp /tmp/kitchen.sqlite* /tmp/hall.sqlite* \(dir.path)/
            """
        let result = try LiveVM.runScript(script, in: dir, peripherals: [
            "--profile mi-scale --addr F0:F1:F2:F3:F4:F7 --start-on scan --trace \(mi.path) --log \(log.path)",
        ], timeout: 300, adapters: 2, watching: [.events("end", atLeast: 1, in: log, flag: "traces-ended")])
        #expect(result.status == 0, "guest script exit \(result.status)")
        #expect(result.output.contains("adapters: hci0 hci1"), "the guest has both adapters")
        let truth = mi.truth.filter { $0.kind == .sip }
        var each: [String: [Double]] = [:]
        var identities: Set<String> = []
        for node in ["kitchen", "hall"] {
            let store = try IntakeStore(path: dir.appendingPathComponent("\(node).sqlite").path, mode: .existing)
            let found = try store.events(EventQuery(kinds: [.sip], order: .byID))
            each[node] = found.map(\.ml)
            identities.formUnion(found.map(\.identity))
        }
        // Each gateway stamps a sip with its own clock: the same sip has two identities, which only the hub's rule joins.
        print("truth \(truth.map(\.ml)); kitchen (hci0) \(each["kitchen"] ?? []); hall (hci1) \(each["hall"] ?? []); \(identities.count) identities")
        #expect(each.values.allSatisfy { !$0.isEmpty }, "each adapter's gateway heard the scale: \(each)")

        // The host: a broker, each gateway's publisher, and a hub.
        let broker = try MosquittoBroker()
        var running: [Process] = []
        defer { for p in running { kill(p.processIdentifier, SIGKILL); p.waitUntilExit() } }
        for node in ["kitchen", "hall"] {
            running.append(try startQuench(["mqtt", "run", "--db", dir.appendingPathComponent("\(node).sqlite").path, "--broker", broker.url,
                                            "--node-id", node, "--seconds", "60"]))
        }
        let hubPath = dir.appendingPathComponent("hub.sqlite").path
        running.append(try startQuench(["hub", "run", "--db", hubPath, "--broker", broker.url, "--seconds", "60"]))
        var sips: [IntakeEvent] = []
        let end = Date().addingTimeInterval(30)
        repeat {
            Thread.sleep(forTimeInterval: 0.5)
            let hub = try? IntakeStore(path: hubPath, mode: .existing)
            let settled = (try? hub?.hubGateways().count == 2 && hub?.hubGateways().allSatisfy { !$0.missing } == true) ?? false
            if settled, let found = try? hub?.events(EventQuery(kinds: [.sip], order: .byID)) { sips = found }
        } while sips.count < truth.count && Date() < end
        Thread.sleep(forTimeInterval: 1)
        sips = try IntakeStore(path: hubPath, mode: .existing).events(EventQuery(kinds: [.sip], order: .byID))
            .sorted { $0.time.secondsSince1970 < $1.time.secondsSince1970 }
        print("hub: \(sips.map(\.ml))")
        #expect(sips.count == truth.count, "each sip once at the hub: \(sips.map(\.ml)), truth \(truth.map(\.ml))")
        for (got, want) in zip(sips, truth) {
            #expect(abs(got.ml - want.ml) <= 5, "\(want.ml) mL at the hub as \(got.ml) mL")
        }
    }
}
#endif

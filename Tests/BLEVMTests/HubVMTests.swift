#if canImport(Glibc)
import Foundation
import QuenchCore
import QuenchSimulator
import QuenchStore
import QuenchTestSupport
import Testing

/// Issue 25 on the real kernel stack: two gateways in one guest, each on its own
/// adapter (`--adapter hci0`, `hci1`; `run.sh --adapters 2` gives the guest both on
/// one radio), each with its `quench mqtt run` on a mosquitto in the guest, and
/// `--hand-over`. They hear one broadcast scale: each stores the sips as its own
/// detector judged them. And a HidrateSpark (one central at a time) is carried from
/// the room of `hci0` to the room of `hci1` (`--near`): the first gateway holds it,
/// the second leaves it alone until the first one's link is lost, then takes it and
/// drains what was drunk on the way. Then, on the host, both databases go to a real
/// mosquitto and a hub (`quench hub run`), which stores each sip once.
@Suite("two gateways on two adapters and a hub", .serialized, .enabled(if: environment("QUENCH_VM") != "1", "runs outside the VM"),
       .enabled(if: MosquittoBroker.isInstalled, Comment(rawValue: MosquittoBroker.missing)))
struct HubVMTests {
    static let scale = "F0:F1:F2:F3:F4:F7", bottle = "C8:2A:3F:00:3F:06"

    @Test("hci0 and hci1: a scale both hear (each gateway its sips, the hub each once); a bottle carried from one to the other at 40 s (held by one, then drained by the other; each sip once)")
    func twoAdaptersTwoRooms() throws {
        guard let (quench, dir) = try LiveVM.workspace() else { return }
        defer { try? FileManager.default.removeItem(at: dir) }
        let mi = try LiveVM.writeTrace(Scenario(.clean(unit: .g, sampleRate: 4).with(.noise), seed: 25, initialML: 700)
            .idle(LiveVMTests.leadIn + 4).sip(ml: 55).idle(10).sip(ml: 35).idle(16), name: "mi.csv", in: dir)
        // Two databases of their own (a copied file would be one gateway to the hub: one database id).
        // Both paired with the scale and the bottle, on the host: every program the starved guest need not start counts.
        let paired = [LiveVM.Paired(address: Self.scale, profile: "mi-scale", tareG: 180)]
        let device = try LiveVM.pairedHidrateSpark(Self.bottle, in: dir)
        for room in ["kitchen", "hall"] {
            let path = try LiveVM.pairedDatabase(paired, in: dir, name: "\(room)-paired.sqlite")
            let imported = try runQuench(["import", "--db", path, device.path])
            #expect(imported.status == 0, "\(imported.stderr)")
        }
        // The bottle's sips: two in the first room, three after the move (its clock starts at the guest's first scan).
        var csv = "t_start,t_end,kind,ml\n"
        for (i, t) in [20, 28, 50, 58, 66].enumerated() { csv += "\(t - 3),\(t),sip,\(30 + 5 * i)\n" }
        let sips = dir.appendingPathComponent("sips.csv")
        try csv.write(to: sips, atomically: true, encoding: .utf8)
        let (scaleLog, bottleLog) = (dir.appendingPathComponent("scale.jsonl"), dir.appendingPathComponent("bottle.jsonl"))
        let broker = "mqtt://127.0.0.1:18830"
        let script = """
            Q=\(quench)
            echo "adapters: $HCIS"
            printf 'listener 18830 127.0.0.1\\nallow_anonymous true\\nuser root\\n' > /tmp/broker.conf
            \(MosquittoBroker.path!) -c /tmp/broker.conf -d || exit 9
            cp \(dir.path)/kitchen-paired.sqlite /tmp/kitchen.sqlite
            cp \(dir.path)/hall-paired.sqlite /tmp/hall.sqlite
            # The publishers connect (and retry) on their own while the broker comes up.
            $Q mqtt run --db /tmp/kitchen.sqlite --broker \(broker) --node-id kitchen --log-level info &
            p1=$!
            $Q mqtt run --db /tmp/hall.sqlite --broker \(broker) --node-id hall --log-level info &
            p2=$!
            $Q run --db /tmp/kitchen.sqlite --adapter hci0 --hand-over --log-level info &
            a=$!
            $Q run --db /tmp/hall.sqlite --adapter hci1 --hand-over --log-level info &
            b=$!
            \(LiveVM.awaitFlag("bottle-acked", in: dir, seconds: 240))
            \(LiveVM.awaitFlag("scale-ended", in: dir))
            sleep 8
            kill -TERM $a $b
            wait $a || exit 15
            wait $b || exit 16
            kill -TERM $p1 $p2
            wait $p1 $p2
            cp /tmp/kitchen.sqlite* /tmp/hall.sqlite* \(dir.path)/
            """
        let result = try LiveVM.runScript(script, in: dir, peripherals: [
            "--profile mi-scale --addr \(Self.scale) --start-on scan --trace \(mi.path) --log \(scaleLog.path)",
            // Only hci0 hears the bottle from the start, only hci1 from 40 s (its link to hci0 is lost then).
            "--profile hidrate-spark --firmware modern --addr \(Self.bottle) --sips \(sips.path) --start-on scan --near 0:0 --near 40:1 --log \(bottleLog.path)",
        ], timeout: 330, adapters: 2, watching: [.events("end", atLeast: 1, in: scaleLog, flag: "scale-ended"),
                                                 .events("acked", atLeast: 5, in: bottleLog, flag: "bottle-acked")])
        #expect(result.status == 0, "guest script exit \(result.status)")
        #expect(result.output.contains("adapters: hci0 hci1"), "the guest has both adapters")
        let truth = mi.truth.filter { $0.kind == .sip }
        let bottleTruth = LiveVMTests.HidrateSparkVMTests.readLog(bottleLog)
        #expect(bottleTruth.acked[Self.bottle] == 5, "the bottle had \(bottleTruth.acked[Self.bottle] ?? 0) of 5 acknowledged")
        var scaleSips: [String: [Double]] = [:], bottleSips: [String: [IntakeEvent]] = [:]
        for node in ["kitchen", "hall"] {
            let store = try IntakeStore(path: dir.appendingPathComponent("\(node).sqlite").path, mode: .existing)
            scaleSips[node] = try store.events(EventQuery(device: Self.scale, kinds: [.sip], order: .byID)).map(\.ml)
            bottleSips[node] = try store.events(EventQuery(device: Self.bottle, kinds: [.sip], order: .byID))
        }
        // Each gateway stamps a scale's sip with its own clock: the same sip has two identities, which only the hub's rule joins.
        print("scale: truth \(truth.map(\.ml)); kitchen (hci0) \(scaleSips["kitchen"] ?? []); hall (hci1) \(scaleSips["hall"] ?? [])")
        #expect(scaleSips.values.allSatisfy { !$0.isEmpty }, "each adapter's gateway heard the scale: \(scaleSips)")
        // The bottle: the hall's gateway left it alone while hci0's held it, then took it; each sip in one history.
        let (kitchenBottle, hallBottle) = (bottleSips["kitchen"] ?? [], bottleSips["hall"] ?? [])
        print("bottle: kitchen (hci0) \(kitchenBottle.map(\.ml)); hall (hci1) \(hallBottle.map(\.ml)); truth \((bottleTruth.sips[Self.bottle] ?? []).map(\.ml))")
        // The deferral shows only if the hall heard the bottle in the seconds between the kitchen's claim
        // and its connection (a connected bottle stops advertising): under load it sometimes did not, and
        // the run was right all the same. Each sip in one history, below, is what must hold.
        if !result.output.contains("another gateway has the bottle") {
            print("note: the hall's gateway did not hear the bottle while the kitchen's claim was fresh; no deferral to see this run")
        }
        #expect(!kitchenBottle.isEmpty && hallBottle.count >= 3, "kitchen \(kitchenBottle.count), hall \(hallBottle.count): the sips after the move are the hall's")
        #expect(Set(kitchenBottle.map(\.identity)).isDisjoint(with: hallBottle.map(\.identity)) && kitchenBottle.count + hallBottle.count == 5)

        // The host: a broker, each gateway's publisher, and a hub.
        let hostBroker = try MosquittoBroker()
        var running: [Process] = []
        defer { for p in running { kill(p.processIdentifier, SIGKILL); p.waitUntilExit() } }
        for node in ["kitchen", "hall"] {
            running.append(try startQuench(["mqtt", "run", "--db", dir.appendingPathComponent("\(node).sqlite").path, "--broker", hostBroker.url,
                                            "--node-id", node, "--seconds", "60"]))
        }
        let hubPath = dir.appendingPathComponent("hub.sqlite").path
        running.append(try startQuench(["hub", "run", "--db", hubPath, "--broker", hostBroker.url, "--seconds", "60"]))
        func hubSips(_ device: String) -> [IntakeEvent] {
            ((try? IntakeStore(path: hubPath, mode: .existing).events(EventQuery(device: device, kinds: [.sip], order: .byID))) ?? [])
                .sorted { $0.time.secondsSince1970 < $1.time.secondsSince1970 }
        }
        let end = Date().addingTimeInterval(30)
        repeat {
            Thread.sleep(forTimeInterval: 0.5)
            let hub = try? IntakeStore(path: hubPath, mode: .existing)
            let settled = (try? hub?.hubGateways().count == 2 && hub?.hubGateways().allSatisfy { !$0.missing } == true) ?? false
            if settled, hubSips(Self.scale).count >= truth.count, hubSips(Self.bottle).count >= 5 { break }
        } while Date() < end
        Thread.sleep(forTimeInterval: 1)
        let atHub = hubSips(Self.scale)
        print("hub: scale \(atHub.map(\.ml)); bottle \(hubSips(Self.bottle).map(\.ml))")
        #expect(atHub.count == truth.count, "each scale sip once at the hub: \(atHub.map(\.ml)), truth \(truth.map(\.ml))")
        for (got, want) in zip(atHub, truth) {
            #expect(abs(got.ml - want.ml) <= 5, "\(want.ml) mL at the hub as \(got.ml) mL")
        }
        #expect(hubSips(Self.bottle).count == 5, "each of the bottle's sips once at the hub")
    }
}
#endif

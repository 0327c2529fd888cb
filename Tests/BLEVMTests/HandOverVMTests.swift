#if canImport(Glibc)
import Foundation
import QuenchCore
import QuenchStore
import QuenchTestSupport
import Testing

/// Issue 25 on the real kernel stack: a HidrateSpark (one central at a time) carried
/// from the room of `hci0` to the room of `hci1` (`--near`), with a gateway on each
/// adapter (`quench run --hand-over`), each with its `quench mqtt run`, on a mosquitto
/// in the guest. The first gateway holds the bottle, the second leaves it alone; when
/// the bottle leaves, the first one's link is lost and the second takes the bottle and
/// drains what was drunk on the way. Every sip is stored once.
@Suite("a connected bottle carried between two adapters' rooms", .serialized, .enabled(if: environment("QUENCH_VM") != "1", "runs outside the VM"),
       .enabled(if: MosquittoBroker.isInstalled, Comment(rawValue: MosquittoBroker.missing)))
struct HandOverVMTests {
    @Test("held by hci0's gateway, carried to hci1's at 40 s: its link lost, the other gateway drains the rest; each sip once")
    func bottleCarriedBetweenAdapters() throws {
        guard let (quench, dir) = try LiveVM.workspace() else { return }
        defer { try? FileManager.default.removeItem(at: dir) }
        let address = "C8:2A:3F:00:3F:06"
        // Two sips in the first room, three after the move (the bottle's clock starts at the guest's first scan).
        var csv = "t_start,t_end,kind,ml\n"
        for (i, t) in [20, 28, 50, 58, 66].enumerated() { csv += "\(t - 3),\(t),sip,\(30 + 5 * i)\n" }
        let sips = dir.appendingPathComponent("sips.csv")
        try csv.write(to: sips, atomically: true, encoding: .utf8)
        let device = dir.appendingPathComponent("device.json")
        try """
            {"format": "quench-export", "version": 1, "events": [], "devices": [{"address": "\(address)",
             "profile": "hidrate-spark", "address_type": "public", "added_at": {"seconds_since1970": 1790000000},
             "calibration": {"unit": "percent", "density": 1, "capacity_ml": 591,
                             "level_curve": {"points": [{"level": 0, "ml": 0}, {"level": 100, "ml": 591}]}}}]}
            """.write(to: device, atomically: true, encoding: .utf8)
        let bottleLog = dir.appendingPathComponent("bottle.jsonl")
        let broker = "mqtt://127.0.0.1:18830"
        let script = """
            Q=\(quench)
            set -x
            printf 'listener 18830 127.0.0.1\\nallow_anonymous true\\nuser root\\n' > /tmp/broker.conf
            \(MosquittoBroker.path!) -c /tmp/broker.conf -d || exit 9
            for room in kitchen hall; do $Q import --db /tmp/$room.sqlite \(device.path) || exit 10; done
            # The publishers connect (and retry) on their own while the broker comes up.
            $Q mqtt run --db /tmp/kitchen.sqlite --broker \(broker) --node-id kitchen --log-level info &
            p1=$!
            $Q mqtt run --db /tmp/hall.sqlite --broker \(broker) --node-id hall --log-level info &
            p2=$!
            $Q run --db /tmp/kitchen.sqlite --adapter hci0 --hand-over --log-level info &
            a=$!
            $Q run --db /tmp/hall.sqlite --adapter hci1 --hand-over --log-level info &
            b=$!
            \(LiveVM.awaitFlag("all-acked", in: dir, seconds: 240))
            sleep 1
            kill -TERM $a $b
            wait $a || exit 15
            wait $b || exit 16
            kill -TERM $p1 $p2
            wait $p1 $p2
            cp /tmp/kitchen.sqlite* /tmp/hall.sqlite* \(dir.path)/
            """
        let result = try LiveVM.runScript(script, in: dir, peripherals: [
            // Only hci0 hears it from the start, only hci1 from 40 s (its link to hci0 is lost then).
            "--profile hidrate-spark --firmware modern --addr \(address) --sips \(sips.path) --start-on scan --near 0:0 --near 40:1 --log \(bottleLog.path)",
        ], timeout: 330, adapters: 2, watching: [.events("acked", atLeast: 5, in: bottleLog, flag: "all-acked")])
        #expect(result.status == 0, "the script in the VM failed (exit \(result.status))")
        let truth = LiveVMTests.HidrateSparkVMTests.readLog(bottleLog)
        #expect(truth.acked[address] == 5, "the bottle had \(truth.acked[address] ?? 0) of 5 acknowledged")
        var stored: [String: [IntakeEvent]] = [:]
        for room in ["kitchen", "hall"] {
            let store = try IntakeStore(path: dir.appendingPathComponent("\(room).sqlite").path, mode: .existing)
            stored[room] = try store.events(EventQuery(kinds: [.sip], order: .byID))
        }
        let kitchen = stored["kitchen"] ?? [], hall = stored["hall"] ?? []
        print("kitchen (hci0) \(kitchen.map(\.ml)); hall (hci1) \(hall.map(\.ml)); truth \((truth.sips[address] ?? []).map(\.ml))")
        // The hall's gateway left the bottle alone while hci0's held it, then took it.
        #expect(result.output.contains("another gateway has the bottle"), "the hall's gateway never deferred to the kitchen's")
        #expect(!kitchen.isEmpty && hall.count >= 3, "kitchen \(kitchen.count), hall \(hall.count): the sips after the move are the hall's")
        #expect(Set(kitchen.map(\.identity)).isDisjoint(with: hall.map(\.identity)) && kitchen.count + hall.count == 5,
                "each sip once: kitchen \(kitchen.map(\.ml)), hall \(hall.map(\.ml))")
    }
}
#endif

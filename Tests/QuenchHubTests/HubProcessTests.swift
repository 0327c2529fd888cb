#if canImport(Glibc)
import Foundation
import MQTT
import QuenchCore
import QuenchStore
import QuenchTestSupport
import Testing

/// Issue 25: two gateways (`quench mqtt run`) and a hub (`quench hub run`) as
/// processes on a real mosquitto, each killed with SIGKILL in the middle of a
/// stream of drinks, the broker restarted too: the hub ends with every event of
/// both gateways once, as each gateway has it (edits and deletions included).
@Suite("a hub and two gateways on a real mosquitto (processes)", .serialized,
       .enabled(if: MosquittoBroker.isInstalled, Comment(rawValue: MosquittoBroker.missing)),
       .enabled(if: quenchBinary != nil, "SKIPPED: quench is not built next to the tests (run `swift build`)"))
struct HubProcessTests {
    /// A running `quench …` process, killed (SIGKILL) when done with.
    final class Running {
        let arguments: [String]
        var process: Process?
        /// What it printed, across its restarts: read when a test fails (the hub's log once went unkept).
        let log: String
        private let folder: TemporaryFolder
        init(_ arguments: [String]) throws {
            self.arguments = arguments
            folder = try TemporaryFolder("quench-hub-process")
            log = folder.file("output.log")
            try start()
        }
        func start() throws {
            if !FileManager.default.fileExists(atPath: log) { _ = FileManager.default.createFile(atPath: log, contents: nil) }
            let output = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
            try output.seekToEnd()
            try output.write(contentsOf: Data("--- started: quench \(arguments.joined(separator: " "))\n".utf8))
            process = try startQuench(arguments, output: output, errorLog: log)
        }
        /// The last lines it printed, for a failure's message.
        func tail(_ lines: Int = 60) -> String {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            return "\(arguments.prefix(2).joined(separator: " ")) (\(log)):\n" + text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).joined(separator: "\n")
        }
        func kill9() { signal(SIGKILL) }
        /// Stopped as the service stops it (SIGTERM): a publisher says `offline` as it goes.
        func stop() { signal(SIGTERM) }
        private func signal(_ number: Int32) {
            guard let p = process else { return }
            kill(p.processIdentifier, number)
            p.waitUntilExit()
            process = nil
        }
        deinit { kill9() }
    }

    struct Gateway {
        let node: String
        let path: String
        let store: IntakeStore
        let person: String
        var added = 0

        /// `count` drinks more, in one transaction each (as a gateway stores them).
        mutating func drink(_ count: Int, at base: Timestamp) throws {
            for _ in 0..<count {
                added += 1
                let e = IntakeEvent(identity: "\(node)|sip|\(added)", kind: .sip, ml: Double(10 + added % 40), time: base.adding(Double(added * 60)),
                                    source: .sensor, device: node == "kitchen" ? "C8:2A:3F:00:00:01" : "C8:2A:3F:00:00:02", recordedAt: base,
                                    person: person)
                _ = try store.insert([(event: e, aliases: [])])
            }
        }
    }

    /// identity → (ml, deleted, person) of every event in a database.
    static func contents(_ path: String) throws -> [String: String] {
        let store = try IntakeStore(path: path)
        var all: [String: String] = [:]
        for e in try store.events(EventQuery(includeDeleted: true)) { all[e.identity] = "\(e.ml) \(e.deleted) \(e.person ?? "-")" }
        return all
    }

    /// Waits until `condition` holds, for at least `LiveFixture.starvedMachineWait` whatever `seconds`
    /// says (which still says how soon it happens on an idle machine); asks every 0.2 s, since most
    /// conditions here start a `quench`.
    static func waitFor(seconds: Double, _ condition: () throws -> Bool) -> Bool {
        LiveFixture.waitFor(max(seconds, LiveFixture.starvedMachineWait), every: 0.2) { (try? condition()) ?? false }
    }

    @Test("every event of two gateways at the hub once, across a SIGKILL of the hub, of a gateway and a broker restart")
    func oneHistoryAcrossKills() throws {
        let broker = try MosquittoBroker()
        let folder = try TemporaryFolder("quench-hub")
        let base = Timestamp(secondsSince1970: Double(Int(Date().timeIntervalSince1970 / 86_400) - 1) * 86_400)
        var gateways: [Gateway] = []
        for (node, person) in [("kitchen", "Ada"), ("bedroom", "Bo")] {
            let path = folder.file("\(node).sqlite")
            let store = try IntakeStore(path: path)
            _ = try store.addPerson(name: person)
            gateways.append(Gateway(node: node, path: path, store: store, person: person))
        }
        // History from before any hub: the kitchen's first 30 drinks were never published.
        try gateways[0].drink(30, at: base)
        let runs = try gateways.map { g in
            try Running(["mqtt", "run", "--db", g.path, "--broker", broker.url, "--node-id", g.node, "--seconds", "300"])
        }
        let hubPath = folder.file("hub.sqlite")
        let hub = try Running(["hub", "run", "--db", hubPath, "--broker", broker.url, "--seconds", "300"])

        func expected() throws -> [String: String] {
            try gateways.reduce(into: [:]) { all, g in all.merge(try Self.contents(g.path)) { a, _ in a } }
        }
        #expect(Self.waitFor(seconds: 30) { try Self.contents(hubPath).count == 30 }, "a new hub asks a gateway it sees for its history")

        try gateways[0].drink(20, at: base)
        try gateways[1].drink(20, at: base)
        hub.kill9()
        // While the hub is down: changes wait at the broker in its session.
        try gateways[0].drink(20, at: base)
        try gateways[1].drink(20, at: base)
        _ = try gateways[1].store.setDeleted(id: try #require(gateways[1].store.events(EventQuery()).first?.id), true)
        try hub.start()
        try gateways[0].drink(10, at: base)
        runs[0].kill9()
        try gateways[0].drink(10, at: base)
        try runs[0].start()
        broker.stop()
        try gateways[1].drink(10, at: base)
        let first = try #require(gateways[0].store.events(EventQuery()).last)
        _ = try gateways[0].store.editEvent(id: try #require(first.id), ml: 333, time: nil, note: nil)
        try broker.start()
        try gateways[1].drink(10, at: base)

        let want = try expected()
        #expect(want.count == 150)
        let whole = Self.waitFor(seconds: 60) { try Self.contents(hubPath) == want }
        #expect(whole, "the hub holds what the gateways hold")
        if !whole {
            print(([hub] + runs).map { $0.tail() }.joined(separator: "\n\n"))
            print(try runQuench(["hub", "status", "--db", hubPath]).stdout)
        }
        let got = try Self.contents(hubPath)
        let missing = want.keys.filter { got[$0] == nil }.sorted()
        let differing = want.keys.filter { got[$0] != nil && got[$0] != want[$0] }.sorted()
        #expect(missing.isEmpty && differing.isEmpty, "missing \(missing.prefix(5)), differing \(differing.prefix(5).map { "\($0): \(want[$0]!) vs \(got[$0]!)" })")
        #expect(got.count == want.count, "none doubled")

        print(try runQuench(["hub", "status", "--db", hubPath]).stdout)
        let status = try runQuench(["hub", "status", "--json", "--db", hubPath])
        let listed = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [[String: Any]])
        #expect(Set(listed.compactMap { $0["node"] as? String }) == ["kitchen", "bedroom"], "\(status.stdout)")
        #expect(listed.allSatisfy { ($0["seen_at"] as? String).flatMap(Timestamp.init(iso8601:)) != nil && $0["database_id"] is String },
                "times in ISO 8601, as every JSON the commands print: \(status.stdout)")
        let text = try runQuench(["today", "--db", hubPath, "--person", "Bo"])
        #expect(text.status == 0 && text.stdout.contains("Bo"), "the hub's people are the gateways' (\(text.stdout) \(text.stderr))")
        // The carer's view at the hub: everyone from every room.
        let carer = try runQuench(["carer", "--json", "--db", hubPath])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(carer.stdout.utf8)) as? [String: Any], "\(carer.stderr)")
        let people = Set((report["people"] as? [[String: Any]] ?? []).compactMap { $0["person"] as? String })
        #expect(people.isSuperset(of: ["Ada", "Bo"]), "\(carer.stdout)")
        // Carers' alerts at the hub (docs/hub.md): a threshold set there, the timer's run on the hub's
        // database at noon the next day sends one about Bo, once, and a carer acknowledges it.
        let noon = ["QUENCH_NOW": base.adding(36 * 3600).iso8601, "TZ": "UTC"]
        #expect(try runQuench(["person", "alert", "Bo", "1h", "--db", hubPath]).status == 0)
        let alerts = try runQuench(["carer", "--notify", "--db", hubPath], environment: noon)
        #expect(alerts.status == 0 && alerts.stdout.hasPrefix("carer's alert: Bo has had nothing to drink for ") && !alerts.stdout.contains("Ada"),
                "\(alerts.stdout)\(alerts.stderr)")
        #expect(try runQuench(["carer", "--notify", "--db", hubPath], environment: noon).stdout.isEmpty, "once")
        #expect(try runQuench(["carer", "ack", "Bo", "--db", hubPath], environment: noon).stdout == "Acknowledged the alert about Bo.\n")

        // Each gateway here is a publisher without its Bluetooth service (no quenchd): said, with whose bottles.
        let noBluetooth = "Bluetooth service (quenchd) has not been running since "
        let bothSaid = Self.waitFor(seconds: 10) {
            let said = try runQuench(["carer", "--db", hubPath]).stdout
            return said.contains("The gateway kitchen's \(noBluetooth)") && said.contains("The gateway bedroom's \(noBluetooth)")
        }
        let saidThen = try runQuench(["carer", "--db", hubPath]).stdout
        #expect(bothSaid, "\(saidThen)")
        #expect(try runQuench(["carer", "--db", hubPath]).stdout.contains(": its bottles' drinks (Ada) are not being recorded."))
        // The kitchen's quenchd starts (a process holds its gateway role): its line goes; killed, it comes back.
        let quenchd = try RoleHolderStandIn(role: "gateway", in: gateways[0].store)
        #expect(Self.waitFor(seconds: 15) {
            let said = try runQuench(["carer", "--db", hubPath]).stdout
            return !said.contains("The gateway kitchen's \(noBluetooth)") && said.contains("The gateway bedroom's \(noBluetooth)")
        }, "the kitchen's quenchd runs")
        quenchd.kill9()
        #expect(Self.waitFor(seconds: 15) { try runQuench(["carer", "--db", hubPath]).stdout.contains("The gateway kitchen's \(noBluetooth)") },
                "killed: said again within seconds")

        // The bedroom's publisher stops: the carer's view at the hub says so (its quiet read as Bo not drinking).
        runs[1].stop()
        #expect(Self.waitFor(seconds: 10) {
            let carer = try runQuench(["carer", "--json", "--db", hubPath]).stdout
            let report = try JSONSerialization.jsonObject(with: Data(carer.utf8)) as? [String: Any]
            return (report?["gateways_offline"] as? [[String: Any]])?.compactMap { $0["node"] as? String } == ["bedroom"]
        }, "the hub notes a gateway gone")
        let offline = try runQuench(["carer", "--db", hubPath]).stdout
        #expect(offline.contains("The gateway bedroom has been offline since "))
        // Whose drinks it sent, so a carer knows whose quiet hours may be its (a carer trial read a node id).
        #expect(offline.contains(": drinks logged there (Bo) are not reaching this history."), "\(offline)")
        // Back: no longer said; and the hub asks it for what it may have missed, as it does a new gateway.
        try runs[1].start()
        #expect(Self.waitFor(seconds: 10) { !(try runQuench(["carer", "--db", hubPath]).stdout.contains("offline")) })

        // The hub's own publisher, for Home Assistant (hub.md), online and stopped: no gateway, so not said to be
        // offline (a carer was told "drinks logged there are not reaching this history"). The bedroom stopped after
        // it, and seen offline, shows the hub has read the hub publisher's last word too.
        let own = try Running(["mqtt", "run", "--db", hubPath, "--broker", broker.url, "--node-id", "carehome", "--seconds", "300"])
        #expect(Self.waitFor(seconds: 10) { try runQuench(["mqtt", "status", "--db", hubPath, "--node-id", "carehome"]).stdout.contains("published by") })
        Thread.sleep(forTimeInterval: 1)
        own.stop()
        runs[1].stop()
        #expect(Self.waitFor(seconds: 10) { try runQuench(["carer", "--db", hubPath]).stdout.contains("The gateway bedroom has been offline since ") })
        let said = try runQuench(["carer", "--db", hubPath]).stdout
        #expect(!said.contains("carehome"), "\(said)")

        // The broker gone: the hub hears nobody, and says so, not which gateways' last words it caught (a carer
        // trial saw two of three named, and nothing of the hub); back, the line goes.
        let withoutBroker = "The hub has been without the MQTT broker since "
        broker.stop()
        #expect(Self.waitFor(seconds: 15) { try runQuench(["carer", "--db", hubPath]).stdout.hasPrefix(withoutBroker) }, "the hub's link lost")
        let lost = try runQuench(["carer", "--db", hubPath]).stdout
        #expect(!lost.contains("The gateway "), "the gateways as last heard are stale: \(lost)")
        let lostJSON = try JSONSerialization.jsonObject(with: Data(try runQuench(["carer", "--json", "--db", hubPath]).stdout.utf8)) as? [String: Any]
        #expect((lostJSON?["hub"] as? [String: Any])?["problem"] as? String == "broker_lost", "\(String(describing: lostJSON))")
        try broker.start()
        #expect(Self.waitFor(seconds: 30) { !(try runQuench(["carer", "--db", hubPath]).stdout.contains(withoutBroker)) }, "back")
        // The hub killed: nothing arrives, said in the view and in `hub status` (a dead hub left both as they were).
        hub.kill9()
        let dead = try runQuench(["carer", "--db", hubPath])
        #expect(dead.stdout.hasPrefix("The hub is not running (`quench hub run`, the quench-hub service): nothing logged at the gateways has "
                                      + "reached this history since "), "\(dead.stdout)\(dead.stderr)")
        #expect(try runQuench(["hub", "status", "--db", hubPath]).stdout.contains("The hub is not running"))
        try hub.start()
        #expect(Self.waitFor(seconds: 15) { !(try runQuench(["carer", "--db", hubPath]).stdout.contains("The hub ")) }, "running again")
        _ = runs
    }

    /// Readings of `trace` with a share of its rows lost, as a gateway farther away receives them.
    static func lossy(_ trace: String, dropping share: Double, seed: UInt64) throws -> String {
        var random = FuzzRandom(seed: seed)
        var kept: [Substring] = []
        var header = true
        for line in trace.split(separator: "\n", omittingEmptySubsequences: false) {
            if header || line.isEmpty { kept.append(line) } else if Double(random.next() % 10_000) / 10_000 >= share { kept.append(line) }
            if line.hasPrefix("t,") { header = false }
        }
        return kept.joined(separator: "\n")
    }

    @Test("a scale two gateways hear, each losing other packets: every sip once at the hub, of both gateways' estimates")
    func oneBroadcastScaleTwoGateways() throws {
        let broker = try MosquittoBroker()
        let folder = try TemporaryFolder("quench-hub-broadcast")
        let simulated = try runQuench(["simulate", "--hours", "3", "--seed", "25", "--out", folder.file("t.csv"), "--truth", folder.file("truth.csv")])
        #expect(simulated.status == 0, "\(simulated.stderr)")
        let trace = try String(contentsOfFile: folder.file("t.csv"), encoding: .utf8)
        let truth = try String(contentsOfFile: folder.file("truth.csv"), encoding: .utf8).split(separator: "\n").filter { $0.contains("sip") }
        var detected: [Int] = []
        var identities: Set<String> = []
        var runs: [Running] = []
        for (node, share) in [("kitchen", 0.02), ("hall", 0.2)] {
            try Self.lossy(trace, dropping: share, seed: UInt64(share * 100)).write(toFile: folder.file("\(node).csv"), atomically: true, encoding: .utf8)
            let db = folder.file("\(node).sqlite")
            let replay = try runQuench(["replay", folder.file("\(node).csv"), "--store", "--db", db, "--device", "C8:2A:3F:00:00:07",
                                        "--started", "2026-11-27T08:00:00Z"])
            #expect(replay.status == 0, "\(replay.stderr)")
            let found = try IntakeStore(path: db).events(EventQuery(kinds: [.sip]))
            detected.append(found.count)
            identities.formUnion(found.map(\.identity))
            runs.append(try Running(["mqtt", "run", "--db", db, "--broker", broker.url, "--node-id", node, "--seconds", "120"]))
        }
        let hubPath = folder.file("hub.sqlite")
        let hub = try Running(["hub", "run", "--db", hubPath, "--broker", broker.url, "--seconds", "120"])
        #expect(Self.waitFor(seconds: 30) { try IntakeStore(path: hubPath).hubGateways().count == 2 && (try IntakeStore(path: hubPath).hubGateways().allSatisfy { !$0.missing }) })
        Thread.sleep(forTimeInterval: 1)
        let sips = try IntakeStore(path: hubPath).events(EventQuery(kinds: [.sip], order: .byID)).sorted { $0.time.secondsSince1970 < $1.time.secondsSince1970 }
        print("truth \(truth.count) sips; \(identities.count) identities; kitchen \(detected[0]), hall \(detected[1]); hub \(sips.count): \(sips.map { "\(Int($0.ml))" })")
        #expect(detected.allSatisfy { $0 >= truth.count - 1 }, "each gateway finds the sips: \(detected) of \(truth.count)")
        // The two detectors timed some sips differently (a lost reading at the lift): stored by identity alone, those would count twice.
        #expect(identities.count > detected.max() ?? 0, "\(identities.count) identities")
        #expect(sips.count >= detected.max() ?? 0 && sips.count <= truth.count, "each sip once: \(sips.count) at the hub, \(truth.count) true")
        let apart = zip(sips, sips.dropFirst()).map { $1.time.secondsSince1970 - $0.time.secondsSince1970 }
        #expect(apart.allSatisfy { $0 > IntakeStore.sameDrinkSeconds }, "no drink twice: \(apart)")
        _ = (hub, runs)
    }

    /// The ACL docs/hub.md gives, as it is there (the code block after `<!-- hub-acl -->`).
    static func documentedACL() throws -> String {
        let page = try String(contentsOf: TestPackage.root.appendingPathComponent("docs/hub.md"), encoding: .utf8)
        let after = try #require(page.range(of: "<!-- hub-acl -->\n```\n"))
        let end = try #require(page.range(of: "\n```", range: after.upperBound..<page.endIndex))
        return String(page[after.upperBound..<end.lowerBound]) + "\n"
    }

    /// Publishes one message as `user` and waits for the broker's acknowledgement (a denied
    /// publication is acknowledged too, and dropped: MQTT 3.1.1 has no way to say no).
    static func publish(_ payload: String, on topic: String, as user: String, password: String, port: Int) throws {
        let client = try MQTTClient(clientID: "forger-\(user)")
        try client.setCredentials(user: user, password: password)
        var connected = false, acknowledged = false
        client.onConnect = { connected = $0 == 0 }
        client.onPublish = { _ in acknowledged = true }
        try client.connect(host: "127.0.0.1", port: Int32(port))
        let end = Date().addingTimeInterval(5)
        while !connected, Date() < end { try client.loop(timeoutMS: 50) }
        try #require(connected)
        try client.publish(topic: topic, payload: Array(payload.utf8), qos: 1, retain: false)
        while !acknowledged, Date() < end { try client.loop(timeoutMS: 50) }
        client.disconnect()
        #expect(acknowledged)
    }

    @Test("a gateway first heard through changes that waited for the hub: the drinks it held before its publisher started reach the hub too")
    func historyFromBeforeAGatewaysFirstChange() throws {
        let broker = try MosquittoBroker()
        let folder = try TemporaryFolder("quench-hub-before")
        let hubPath = folder.file("hub.sqlite")
        // The hub's session at the broker (its subscriptions kept), then the hub down.
        let hub = try Running(["hub", "run", "--db", hubPath, "--broker", broker.url, "--seconds", "120"])
        #expect(Self.waitFor(seconds: 15) { (try? String(contentsOfFile: hub.log, encoding: .utf8))?.contains("roster published") == true })
        hub.kill9()
        // Five drinks before the gateway's publisher ever ran: its changes will number only what comes after.
        var g = Gateway(node: "kitchen", path: folder.file("kitchen.sqlite"), store: try IntakeStore(path: folder.file("kitchen.sqlite")), person: "Ada")
        _ = try g.store.addPerson(name: "Ada")
        let base = Timestamp(secondsSince1970: Double(Int(Date().timeIntervalSince1970 / 86_400) - 1) * 86_400)
        try g.drink(5, at: base)
        let publisher = try Running(["mqtt", "run", "--db", g.path, "--broker", broker.url, "--node-id", "kitchen", "--seconds", "120"])
        #expect(Self.waitFor(seconds: 15) { try g.store.outboxStatus().enabled })
        try g.drink(3, at: base)
        #expect(Self.waitFor(seconds: 15) { try g.store.outboxStatus().pending == 0 }, "changes 1–3 at the broker, waiting for the hub")
        // Back, the hub hears changes 1–3 first (queued in its session), then the gateway online: no gap, yet not all.
        try hub.start()
        let all = Self.waitFor(seconds: 30) { try Self.contents(hubPath) == Self.contents(g.path) }
        let held = try Self.contents(hubPath).keys.sorted()
        #expect(all, "the hub holds the gateway's 8 drinks (it held the last 3, 'none missing'): \(held)")
        if !all { print(hub.tail() + "\n\n" + publisher.tail()) }
        let status = try runQuench(["hub", "status", "--db", hubPath]).stdout
        #expect(status.contains("none missing up to its change 3;"), "\(status)")

        // A reminder given at the gateway (a change, on the person's reminder topic; one each for me and Ada), then a drink: the
        // reminder's number is noted, so the drink is no gap, and nothing is asked for (after each reminder, it was).
        let asks = { (try? String(contentsOfFile: hub.log, encoding: .utf8))?.components(separatedBy: "asked a gateway").count ?? 0 }
        let asksBefore = asks()
        var noon = DateComponents()
        (noon.year, noon.month, noon.day, noon.hour) = (Calendar.current.component(.year, from: Date()), Calendar.current.component(.month, from: Date()),
                                                      Calendar.current.component(.day, from: Date()), 12)
        let at = Calendar(identifier: .gregorian).date(from: noon).map { Timestamp(secondsSince1970: $0.timeIntervalSince1970).iso8601 } ?? ""
        let reminded = try runQuench(["remind", "--notify", "--db", g.path], environment: ["QUENCH_NOW": at])
        #expect(reminded.status == 0 && !reminded.stdout.isEmpty, "a reminder at noon, behind the pace: \(reminded.stdout)\(reminded.stderr)")
        try g.drink(1, at: base)
        let last = try g.store.gatewayAnswer(fromSeq: 0).through
        #expect(last >= 5, "a reminder for each person, then the drink: \(last)")
        let noted = Self.waitFor(seconds: 15) { try runQuench(["hub", "status", "--db", hubPath]).stdout.contains("none missing up to its change \(last);") }
        let statusThen = try runQuench(["hub", "status", "--db", hubPath]).stdout
        #expect(noted, "\(statusThen)")
        #expect(asks() == asksBefore, "no gap asked for: \(hub.tail(10))")
    }

    /// A broker queues a limited number of messages for each client (mosquitto: 1,000 by default): a gateway's whole
    /// history sent at once overflowed the hub's queue (260,000 events, 1,300 messages, on a stock mosquitto), and the
    /// hub, missing parts, asked for all of it again, for ever. Here the queue is 40: 15,000 events are 75 messages.
    @Test("a gateway's long history reaches a new hub in windows: a broker that queues 40 messages for the hub drops none of 75")
    func aLongHistoryComesInWindows() throws {
        let broker = try MosquittoBroker(settings: "max_queued_messages 40\n")
        let folder = try TemporaryFolder("quench-hub-windows")
        let hubPath = folder.file("hub.sqlite")
        let g = Gateway(node: "kitchen", path: folder.file("kitchen.sqlite"), store: try IntakeStore(path: folder.file("kitchen.sqlite")), person: "Ada")
        _ = try g.store.addPerson(name: "Ada")
        let base = Timestamp(secondsSince1970: Double(Int(Date().timeIntervalSince1970 / 86_400) - 400) * 86_400)
        // Three at an instant now and then: a window may end between them.
        var drinks: [(event: IntakeEvent, aliases: [String])] = []
        for i in 0..<15_000 {
            let at = base.adding(Double(i / 3 * 120))
            let e = IntakeEvent(identity: "kitchen|sip|\(i)", kind: .sip, ml: Double(10 + i % 40), time: at,
                                source: .sensor, device: "C8:2A:3F:00:00:01", recordedAt: base, person: "Ada")
            drinks.append((event: e, aliases: []))
        }
        _ = try g.store.insert(drinks)
        let hub = try Running(["hub", "run", "--db", hubPath, "--broker", broker.url, "--seconds", "150"])
        let publisher = try Running(["mqtt", "run", "--db", g.path, "--broker", broker.url, "--node-id", "kitchen", "--seconds", "150"])
        let all = Self.waitFor(seconds: 90) { try Self.contents(hubPath) == Self.contents(g.path) }
        let held = try Self.contents(hubPath).count
        #expect(all, "the hub holds the gateway's 15,000 drinks: \(held)")
        if !all { print(hub.tail() + "\n\n" + publisher.tail()) }
        #expect(!broker.log.contains("Outgoing messages are being dropped"), "\(broker.log.suffix(2000))")
        let answers = ((try? String(contentsOfFile: publisher.log, encoding: .utf8)) ?? "").components(separatedBy: "answered a hub").count - 1
        #expect(answers >= 2, "two windows (50 and 25 messages) at least: \(answers)")
        let status = try runQuench(["hub", "status", "--db", hubPath]).stdout
        #expect(status.contains("none missing"), "\(status)")
    }

    @Test("the documented ACL: each gateway logs in as its node id and reaches only its own topics; the hub reads them all")
    func eachGatewayOnlyItsOwnTopics() throws {
        let passwords = ["kitchen": "k-secret", "bedroom": "b-secret", "hub": "h-secret"]
        let broker = try MosquittoBroker(users: passwords, acl: try Self.documentedACL())
        let folder = try TemporaryFolder("quench-hub-acl")
        for (user, password) in passwords {
            _ = FileManager.default.createFile(atPath: folder.file(user), contents: Data((password + "\n").utf8), attributes: [.posixPermissions: 0o600])
        }
        let base = Timestamp(secondsSince1970: 1_790_000_000)
        var runs: [Running] = []
        var bedroomID = ""
        for (node, person) in [("kitchen", "Ada"), ("bedroom", "Bo")] {
            let path = folder.file("\(node).sqlite")
            let store = try IntakeStore(path: path)
            _ = try store.addPerson(name: person)
            var g = Gateway(node: node, path: path, store: store, person: person)
            try g.drink(5, at: base)
            if node == "bedroom" { bedroomID = try store.mqttIdentity().databaseID }
            runs.append(try Running(["mqtt", "run", "--db", path, "--broker", "mqtt://\(node)@127.0.0.1:\(broker.port)",
                                     "--password-file", folder.file(node), "--node-id", node, "--seconds", "120"]))
        }
        let hubPath = folder.file("hub.sqlite")
        let hub = try Running(["hub", "run", "--db", hubPath, "--broker", "mqtt://hub@127.0.0.1:\(broker.port)",
                               "--password-file", folder.file("hub"), "--seconds", "120"])
        #expect(Self.waitFor(seconds: 30) { try Self.contents(hubPath).count == 10 }, "the hub hears both gateways through the ACL")

        // The kitchen's user forging a change on the bedroom's topic: the broker drops it.
        func forged(_ identity: String) -> String {
            """
            {"database_id":"\(bedroomID)","seq":999,"identity":"\(identity)","change":"new","changed_at":"2026-09-21T14:13:20Z",\
            "event":{"identity":"\(identity)","kind":"sip","ml":500,"time":1790000000,"source":"manual","recorded_at":1790000000,"person":"Bo"}}
            """
        }
        try Self.publish(forged("forged-by-kitchen"), on: "quench/bedroom/event", as: "kitchen", password: passwords["kitchen"]!, port: broker.port)
        // The same message from the bedroom's own user is applied: it was the ACL that stopped the other.
        try Self.publish(forged("sent-by-bedroom"), on: "quench/bedroom/event", as: "bedroom", password: passwords["bedroom"]!, port: broker.port)
        #expect(Self.waitFor(seconds: 10) { try Self.contents(hubPath)["sent-by-bedroom"] != nil })
        #expect(try Self.contents(hubPath)["forged-by-kitchen"] == nil, "a gateway cannot write another's topics")
        #expect(try Self.contents(hubPath).count == 11)
        // Its number (999) was never the bedroom's: the bedroom's answer to the hub's question says so.
        #expect(Self.waitFor(seconds: 15) { try IntakeStore(path: hubPath).hubGateways().allSatisfy { !$0.missing } })
        _ = (hub, runs)
    }

    @Test("a gateway restored from a backup is another database to the hub: it asks for everything, and what the gateway holds now is what the hub holds of it")
    func aRestoredGatewayIsAnotherDatabase() throws {
        let broker = try MosquittoBroker()
        let folder = try TemporaryFolder("quench-hub-restore")
        let path = folder.file("kitchen.sqlite")
        let store = try IntakeStore(path: path)
        _ = try store.addPerson(name: "Ada")
        var g = Gateway(node: "kitchen", path: path, store: store, person: "Ada")
        let base = Timestamp(secondsSince1970: 1_790_000_000)
        try g.drink(5, at: base)
        let publisher = try Running(["mqtt", "run", "--db", path, "--broker", broker.url, "--node-id", "kitchen", "--seconds", "120"])
        let hubPath = folder.file("hub.sqlite")
        let hub = try Running(["hub", "run", "--db", hubPath, "--broker", broker.url, "--seconds", "120"])
        #expect(Self.waitFor(seconds: 30) { try Self.contents(hubPath).count == 5 })
        try FileManager.default.createDirectory(atPath: folder.file("backups"), withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let backup = try store.backUp(into: BackupSet(folder: folder.file("backups"), database: path), policy: .standard, at: base)
        try g.drink(3, at: base)
        let first = try #require(store.events(EventQuery(order: .byID)).first)
        _ = try store.editEvent(id: try #require(first.id), ml: 99, time: nil, note: nil)
        #expect(Self.waitFor(seconds: 15) { try Self.contents(hubPath)[first.identity]?.hasPrefix("99.0") == true })
        let restored = try runQuench(["restore", backup.path, "--db", path])
        #expect(restored.status == 0, "\(restored.stderr)")
        try g.drink(2, at: base.adding(86_400))
        let now = try Self.contents(path)
        #expect(now.count == 7 && now[first.identity]?.hasPrefix("\(first.ml)") == true, "the backup's 5, then 2: \(now)")
        #expect(Self.waitFor(seconds: 30) { let held = try Self.contents(hubPath); return now.allSatisfy { held[$0.key] == $0.value } },
                "every event the restored gateway holds, as it holds it (the first drink's edit undone)")
        #expect(try IntakeStore(path: hubPath).hubGateways().count == 2, "the restored history is another database")
        // The one it replaced is not asked (for a whole history it would never give), and hub status says so.
        let restoredID = try store.mqttIdentity().databaseID
        let settled = Self.waitFor(seconds: 15) {
            let status = try runQuench(["hub", "status", "--db", hubPath]).stdout
            return status.contains("another database is at this node now, and this one is not asked")
                && status.contains("(database \(restoredID)): ") && !status.contains("asked for")
        }
        let status = try runQuench(["hub", "status", "--db", hubPath]).stdout
        #expect(settled, "\(status)")
        // What came after the backup and was not restored stays at the hub: it did happen, and the hub heard it.
        #expect(try Self.contents(hubPath).count == 10)
        _ = (publisher, hub)
    }

    @Test("who drinks from which bottle is set once at the hub: a gateway that has it paired gives it to them, a gateway that starts later too")
    func theHubsRosterReachesTheGateways() throws {
        let broker = try MosquittoBroker()
        let folder = try TemporaryFolder("quench-hub-roster")
        let hubPath = folder.file("hub.sqlite")
        let hubStore = try IntakeStore(path: hubPath)
        let gran = try hubStore.addPerson(name: "Gran")
        let (granBottle, kitchenScale, spare) = ("C8:2A:3F:00:00:01", "C8:2A:3F:00:00:02", "C8:2A:3F:00:00:09")
        try hubStore.setRoster(address: granBottle, person: gran.id)
        try hubStore.setRoster(address: spare, person: gran.id)
        let hub = try Running(["hub", "run", "--db", hubPath, "--broker", broker.url, "--seconds", "120"])
        // Two gateways, each with Gran's bottle paired (it goes from room to room) and one device of their own.
        var gateways: [(node: String, store: IntakeStore, running: Running)] = []
        for node in ["kitchen", "bedroom"] {
            let path = folder.file("\(node).sqlite")
            let store = try IntakeStore(path: path)
            for address in [granBottle, kitchenScale] { try store.saveDevice(Device(address: address, profile: "hidrate-spark", addedAt: .wallClockNow)) }
            gateways.append((node, store, try Running(["mqtt", "run", "--db", path, "--broker", broker.url, "--node-id", node, "--seconds", "120"])))
            // The second starts once the roster was published: it has it from the broker's retained copy.
            if node == "kitchen" {
                #expect(Self.waitFor(seconds: 20) { try store.people().contains { $0.name == "Gran" } }, "the kitchen learnt Gran")
            }
        }
        for g in gateways {
            #expect(Self.waitFor(seconds: 20) {
                let owners = try g.store.deviceOwners(), people = try g.store.people()
                return owners[granBottle] == people.first { $0.name == "Gran" }?.id
            }, "\(g.node): Gran's bottle is Gran's")
            let owners = try g.store.deviceOwners(), people = try g.store.people()
            #expect(owners[kitchenScale] == people.first { $0.name == "me" }?.id, "\(g.node): a device the roster does not name keeps its owner")
            #expect(owners[spare] == nil, "\(g.node): a device not paired here is not added")
        }
        // The bottle's next sip at the kitchen (no person given, as a sensor's) is Gran's, there and at the hub.
        let sip = IntakeEvent(identity: "\(granBottle)|sip|1", kind: .sip, ml: 42, time: .wallClockNow, source: .sensor, device: granBottle,
                              recordedAt: .wallClockNow)
        _ = try gateways[0].store.insert([(event: sip, aliases: [])])
        #expect(try Self.contents(folder.file("kitchen.sqlite"))[sip.identity] == "42.0 false Gran")
        #expect(Self.waitFor(seconds: 20) { try Self.contents(hubPath)[sip.identity] == "42.0 false Gran" }, "the hub has Gran's sip as hers")

        // Renamed at the hub: renamed at each gateway (the roster carries the hub's id), not someone new.
        try hubStore.renamePerson(id: gran.id, to: "Granny")
        for g in gateways {
            #expect(Self.waitFor(seconds: 20) { try g.store.people().map(\.name).sorted() == ["Granny", "me"] },
                    "\(g.node): \((try? g.store.people().map(\.name)) ?? [])")
            let owners = try g.store.deviceOwners(), people = try g.store.people()
            #expect(owners[granBottle] == people.first { $0.name == "Granny" }?.id, "\(g.node): her bottle is still hers")
        }
        #expect(try Self.contents(folder.file("kitchen.sqlite"))[sip.identity] == "42.0 false Granny", "her sip went with her")
        // An hour before (sips of one bottle a few seconds apart from two rooms are one sip to the hub).
        let next = IntakeEvent(identity: "\(granBottle)|sip|2", kind: .sip, ml: 18, time: .wallClockNow.adding(-3600), source: .sensor,
                               device: granBottle, recordedAt: .wallClockNow)
        _ = try gateways[1].store.insert([(event: next, aliases: [])])
        #expect(Self.waitFor(seconds: 20) { try Self.contents(hubPath)[next.identity] == "18.0 false Granny" },
                "the hub has her next sip as hers: \((try? Self.contents(hubPath)) ?? [:])")
        #expect(try hubStore.people().map(\.name).sorted() == ["Granny", "me"], "and nobody new at the hub")
        _ = hub
    }

    @Test("quench hub retire: the broker drops the hub's session (no more changes kept for it) and its roster; another hub's roster stays")
    func retiringTheHub() throws {
        let broker = try MosquittoBroker()
        let folder = try TemporaryFolder("quench-hub-retire")
        let hubPath = folder.file("hub.sqlite")
        let hubStore = try IntakeStore(path: hubPath)
        try hubStore.setRoster(address: "C8:2A:3F:00:00:01", person: try hubStore.addPerson(name: "Gran").id)
        let hubClient = "quench-hub-\(try hubStore.mqttIdentity().databaseID)"

        /// What the broker keeps on the roster's topic now, as a gateway arriving now gets it.
        func keptRoster(_ name: String) -> String? {
            let look = TestSubscriber(port: broker.port, clientID: name, topics: ["quench/hub/roster"])
            defer { look.close() }
            // A retained message comes right after the subscription (loopback: milliseconds).
            _ = look.waitFor(seconds: 1.5) { !look.messages.isEmpty }
            return look.messages.last { $0.retain && !$0.payload.isEmpty }.map { String(decoding: $0.payload, as: UTF8.self) }
        }
        /// Connects as the hub would (persistent session) and returns the gateway changes the broker kept for it.
        func keptForTheHub() throws -> [String] {
            let c = try MQTTClient(clientID: hubClient, cleanSession: false)
            var kept: [String] = [], connected = false
            c.onConnect = { connected = $0 == 0 }
            c.onMessage = { kept.append(String(decoding: $0.payload, as: UTF8.self)) }
            try c.connect(host: "127.0.0.1", port: Int32(broker.port))
            let end = Date().addingTimeInterval(1.5)
            while Date() < end, kept.isEmpty { try c.loop(timeoutMS: 50) }
            for _ in 0..<4 { try c.loop(timeoutMS: 50) }
            #expect(connected)
            c.disconnect()
            _ = try? c.loop(timeoutMS: 50)
            return kept
        }
        let gateway = try MQTTClient(clientID: "a-gateway")
        var connected = false
        gateway.onConnect = { connected = $0 == 0 }
        try gateway.connect(host: "127.0.0.1", port: Int32(broker.port))
        #expect(Self.waitFor(seconds: 5) { (try? gateway.loop(timeoutMS: 20)) != nil && connected })
        func change(_ text: String) throws {
            _ = try gateway.publish(topic: "quench/kitchen/event", payload: Array(text.utf8), qos: 1, retain: false)
            for _ in 0..<10 { try gateway.loop(timeoutMS: 20) }
        }

        // The hub runs once (its session and roster are made), and stops.
        var hub: Running? = try Running(["hub", "run", "--db", hubPath, "--broker", broker.url, "--seconds", "60"])
        #expect(Self.waitFor(seconds: 20) { keptRoster("look-1")?.contains("Gran") == true },
                "the hub published its roster")
        // One hub process a database: a second run, or a retire, beside it is refused (two under one client id
        // knocked each other off the broker, over and over; a retire ended the running hub's session).
        for command in [["hub", "run", "--seconds", "5"], ["hub", "retire"]] {
            let beside = try runQuench(command + ["--db", hubPath, "--broker", broker.url])
            #expect(beside.status != 0 && beside.stderr.contains("is this hub now, with its session on the broker; one hub process at a time"),
                    "\(command): \(beside.stderr)")
        }
        #expect(keptRoster("look-1b")?.contains("Gran") == true, "the running hub's roster stays")
        hub?.kill9()
        hub = nil
        // While it is down the broker keeps the gateways' changes for it (the control: that is what retiring ends).
        try change("while down 1")
        #expect(try keptForTheHub() == ["while down 1"])
        try change("while down 2")

        let retired = try runQuench(["hub", "retire", "--db", hubPath, "--broker", broker.url])
        #expect(retired.status == 0 && retired.stdout.contains("session ended, roster cleared"), "\(retired.stdout) \(retired.stderr)")
        #expect(keptRoster("look-2") == nil, "no roster is kept for gateways arriving now")
        try change("after retiring")
        #expect(try keptForTheHub().isEmpty, "nothing kept for the retired hub")

        // A roster another hub publishes (the hub moved to a new machine) is not this hub's to clear.
        let newHub = #"{"hub":"another-database","devices":[]}"#
        _ = try gateway.publish(topic: "quench/hub/roster", payload: Array(newHub.utf8), qos: 1, retain: true)
        for _ in 0..<10 { try gateway.loop(timeoutMS: 20) }
        let again = try runQuench(["hub", "retire", "--json", "--db", hubPath, "--broker", broker.url])
        #expect(again.status == 0 && again.stdout.contains(#""roster_of_another_hub":"another-database""#), "\(again.stdout) \(again.stderr)")
        #expect(keptRoster("look-3") == newHub)
        gateway.disconnect()
    }
}
#endif

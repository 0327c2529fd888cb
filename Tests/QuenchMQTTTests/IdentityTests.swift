#if canImport(Glibc)
import Foundation
import Logging
import MQTT
import QuenchCore
import QuenchHistory
import QuenchMQTT
import QuenchStore
import QuenchTestSupport
import Synchronization
import Testing
import Threading

/// Log lines kept for a test to read (the takeover warning).
struct CapturedLog: LogHandler {
    let lines: LogLines
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .warning

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        lines.lines.withLock { $0.append("\(event.level) \(event.message) \(event.metadata ?? [:])") }
    }
}

final class LogLines: Sendable {
    let lines = Mutex<[String]>([])
    var logger: Logger {
        let box = self
        return Logger(label: "test") { _ in CapturedLog(lines: box) }
    }
    var all: [String] { lines.withLock { $0 } }
}

/// Ids, topics, client ids, availability and what a consumer needs to drop a repeat,
/// as issue 23 found them going wrong; each against a real mosquitto.
@Suite("MQTT ids and availability (real mosquitto)", .serialized,
       .enabled(if: MosquittoBroker.isInstalled, Comment(rawValue: MosquittoBroker.missing)))
struct IdentityTests {
    static var quiet: Logger {
        var l = Logger(label: "test")
        l.logLevel = .critical
        return l
    }

    func database() throws -> (path: String, store: IntakeStore) {
        let path = try TemporaryFolder.create("quench-mqtt-ids") + "/q.sqlite"
        let store = try IntakeStore(path: path)
        let now = Timestamp.wallClockNow
        try store.setGoal(ml: 2000, from: CivilDay(number: Int(now.secondsSince1970 / 86_400) - 2))
        try store.saveDevice(Device(address: "C8:2A:3F:00:3F:2A", name: "desk bottle", profile: "hidrate-spark", addedAt: now))
        try store.recordLink(address: "C8:2A:3F:00:3F:2A", up: true, at: now)
        return (path, store)
    }

    func environment(_ path: String) -> HistoryEnvironment {
        HistoryEnvironment(databasePath: path, now: .wallClockNow, timeZone: LocalZone(identifier: "Europe/London"))
    }

    func json(_ m: MQTTMessage?) -> [String: Any]? {
        m.flatMap { try? JSONSerialization.jsonObject(with: Data($0.payload)) as? [String: Any] }
    }

    /// Runs a publisher on its own thread until the returned stop is called; the report comes back from it.
    func running(_ settings: MQTTSettings, _ path: String, logger: Logger = quiet, stateInterval: Double = 60)
        -> (stop: () -> MQTTPublisher.Report?, started: () -> Bool) {
        let stop = Atomic<Bool>(false)
        let started = Atomic<Bool>(false)
        let done = Mutex<MQTTPublisher.Report?>(nil)
        let ended = Atomic<Bool>(false)
        let env = environment(path)
        let thread = Thread {
            defer { ended.store(true, ordering: .releasing) }
            guard let p = try? MQTTPublisher(settings: settings, environment: env, logger: logger, announcesAvailability: true) else { return }
            p.stateInterval = stateInterval
            started.store(true, ordering: .releasing)
            p.run { stop.load(ordering: .relaxed) }
            done.withLock { $0 = p.report }
        }
        thread.start()
        return ({
            stop.store(true, ordering: .relaxed)
            let end = Date().addingTimeInterval(10)
            while !ended.load(ordering: .acquiring), Date() < end { Thread.sleep(forTimeInterval: 0.02) }
            return done.withLock { $0 }
        }, { started.load(ordering: .acquiring) })
    }

    @Test("two stock Pis (both 'raspberrypi', default settings) on one broker: their own client ids, topics and unique ids, no takeover")
    func twoStockPis() throws {
        let broker = try MosquittoBroker()
        let subscriber = TestSubscriber(port: broker.port, clientID: "sub-two-pis")
        defer { subscriber.close() }
        #expect(subscriber.waitFor(seconds: 5) { broker.log.contains("sub-two-pis") })
        // Two machines: each its own /etc/machine-id, the same host name.
        let folder = try TemporaryFolder.create("quench-machine-ids")
        try "0f3c1e9a5b7d4c2e8f6a1b3c5d7e9f01\n".write(toFile: folder + "/a", atomically: true, encoding: .utf8)
        try "7a2b4c6d8e0f1a3b5c7d9e1f3a5b7c9d\n".write(toFile: folder + "/b", atomically: true, encoding: .utf8)
        let nodes = [NodeID.machine(files: [folder + "/a"]), NodeID.machine(files: [folder + "/b"])]
        #expect(nodes[0] != nil && nodes[1] != nil && nodes[0] != nodes[1])
        #expect(NodeID.machine(files: [folder + "/a"]) == nodes[0], "the same after a reboot")
        #expect(nodes.allSatisfy { $0.map(MQTTSettings.isValidNodeID) == true })

        var publishers: [(stop: () -> MQTTPublisher.Report?, started: () -> Bool)] = []
        var clientIDs: [String] = []
        for node in nodes {
            let (path, store) = try database()
            let s = MQTTSettings(broker: try BrokerAddress(parsing: broker.url), node: "raspberrypi", nodeID: node)
            clientIDs.append(try MQTTPublisher(settings: s, environment: environment(path), logger: Self.quiet, announcesAvailability: true).clientID)
            _ = try store.addManual(ml: 100, at: .wallClockNow, note: nil, identity: "manual|\(node!)")
            publishers.append(running(s, path))
        }
        #expect(clientIDs[0] != clientIDs[1], "\(clientIDs)")
        #expect(subscriber.waitFor(seconds: 10) {
            nodes.allSatisfy { subscriber.last("quench/\($0!)/person/1/state") != nil && subscriber.last("quench/\($0!)/status")?.payload == Array("online".utf8) }
        })
        Thread.sleep(forTimeInterval: 2)
        let reports = publishers.map { $0.stop() }
        for r in reports {
            #expect(r?.connections == 1 && r?.shortConnections == 0, "no takeover: \(String(describing: r))")
        }
        #expect(!broker.log.contains("already connected"), "the broker took no client over")
        let ids = subscriber.messages.filter { $0.topic.hasSuffix("/config") }.compactMap { json($0)?["unique_id"] as? String }
        let byNode = nodes.map { n in Set(ids.filter { $0.hasPrefix("quench_\(n!)_") }) }
        #expect(byNode[0].count == 22 && byNode[1].count == 22 && byNode[0].isDisjoint(with: byNode[1]), "\(byNode)")
        #expect(subscriber.messages.filter { $0.topic.hasSuffix("/event") }.count == 2, "each Pi's one change, once")
    }

    @Test("two databases told one node id: the second waits while the first is online, saying why; retire from it is refused; it takes the node once the first stops")
    func aNodeIdInUseByAnotherDatabaseWaits() throws {
        let broker = try MosquittoBroker()
        let subscriber = TestSubscriber(port: broker.port, clientID: "sub-one-node")
        defer { subscriber.close() }
        #expect(subscriber.waitFor(seconds: 5) { broker.log.contains("sub-one-node") })
        let settings = MQTTSettings(broker: try BrokerAddress(parsing: broker.url), node: "raspberrypi", nodeID: "kitchen")
        let (first, firstStore) = try database()
        let (second, secondStore) = try database()
        let ids = [try firstStore.mqttIdentity().databaseID, try secondStore.mqttIdentity().databaseID]
        #expect(ids[0] != ids[1])
        let owner = { (id: String, will: Bool) in Array(NodeOwner(databaseID: id, hasWill: will).payload.utf8) }
        // A node a `sync` left online (no will: its online stays) keeps nobody out: it did, and a database restored
        // since (another id) was turned away by its own id before the restore (a review).
        let syncing = try MQTTPublisher(settings: settings, environment: environment(second), logger: Self.quiet, announcesAvailability: false)
        _ = try syncing.sync(timeout: 10)
        #expect(subscriber.last("quench/kitchen/database")?.payload == owner(ids[1], false))
        #expect(subscriber.last("quench/kitchen/status")?.payload == Array("online".utf8))
        let one = running(settings, first)
        #expect(subscriber.waitFor(seconds: 10) { subscriber.last("quench/kitchen/database")?.payload == owner(ids[0], true) })
        #expect(subscriber.waitFor(seconds: 10) { subscriber.last("quench/kitchen/status")?.payload == Array("online".utf8) })
        _ = try firstStore.addManual(ml: 111, at: .wallClockNow, note: nil, identity: "manual|first")
        #expect(subscriber.waitFor(seconds: 10) { subscriber.messages.filter { $0.topic == "quench/kitchen/event" }.count == 1 })
        let log = LogLines()
        let two = running(settings, second, logger: log.logger)
        #expect(subscriber.waitFor(seconds: 10) { log.all.contains { $0.contains("is online for another database (\(ids[0]))") } }, "\(log.all)")
        _ = try secondStore.addManual(ml: 222, at: .wallClockNow, note: nil, identity: "manual|second")
        // Nothing of the second's reached the node's topics: its change, its state, its id.
        Thread.sleep(forTimeInterval: 1.5)
        #expect(subscriber.messages.filter { $0.topic == "quench/kitchen/event" }.count == 1)
        #expect(subscriber.last("quench/kitchen/database")?.payload == owner(ids[0], true))
        // The publisher turned away said nothing of the first's node: no `offline` (its will was never set).
        #expect(subscriber.last("quench/kitchen/status")?.payload == Array("online".utf8))
        #expect(!subscriber.messages.contains { $0.topic == "quench/kitchen/status" && $0.payload == Array("offline".utf8) })
        #expect(!subscriber.messages.contains { $0.topic == "quench/kitchen/person/1/state" && String(decoding: $0.payload, as: UTF8.self).contains("222") })
        // Retiring the node from the second database would clear the first's live topics: refused, saying why.
        let retiring = try MQTTPublisher(settings: settings, environment: environment(second), logger: Self.quiet, announcesAvailability: false)
        #expect(throws: MQTTSetupError.self) { _ = try retiring.retire(timeout: 5) }
        #expect(subscriber.last("quench/kitchen/status")?.payload == Array("online".utf8))
        // The first stops (offline): the second takes the node within its backoff.
        let firstReport = one.stop()
        #expect(firstReport?.connections == 1)
        #expect(subscriber.waitFor(seconds: 15) { subscriber.last("quench/kitchen/database")?.payload == owner(ids[1], true) })
        #expect(subscriber.waitFor(seconds: 10) { subscriber.messages.filter { $0.topic == "quench/kitchen/event" && String(decoding: $0.payload, as: UTF8.self).contains("222") }.count == 1 })
        let secondReport = two.stop()
        #expect(secondReport?.connections == 1, "\(String(describing: secondReport))")
    }

    @Test("two publishers told the same client id knock each other off: the log says so, and they back off")
    func takeoverWarned() throws {
        let broker = try MosquittoBroker()
        let logs = [LogLines(), LogLines()]
        var publishers: [(stop: () -> MQTTPublisher.Report?, started: () -> Bool)] = []
        for (i, log) in logs.enumerated() {
            let (path, _) = try database()
            let s = MQTTSettings(broker: try BrokerAddress(parsing: broker.url), clientID: "quench-same", node: "raspberrypi", nodeID: "pi\(i)")
            publishers.append(running(s, path, logger: log.logger))
        }
        let end = Date().addingTimeInterval(15)
        while Date() < end, !logs.contains(where: { $0.all.contains { $0.contains("same client id") } }) { Thread.sleep(forTimeInterval: 0.1) }
        // Four seconds more: each waits longer before the next try (0.5, 1, 2, 4 s), so a handful of
        // connections in all, not one every few milliseconds (700 in 25 s each, before).
        Thread.sleep(forTimeInterval: 4)
        let reports = publishers.map { $0.stop() }
        #expect(reports.compactMap { $0?.connections }.reduce(0, +) <= 24, "\(reports)")
        let warned = logs.flatMap(\.all).filter { $0.contains("same client id") }
        #expect(!warned.isEmpty, "\(logs.map(\.all))")
        #expect(warned.first?.contains("quench-same") == true)
        #expect(reports.compactMap { $0?.shortConnections }.reduce(0, +) >= 3, "\(reports)")
    }

    @Test("`quench mqtt sync` beside a running publisher: refused, saying who publishes; the running one stays connected")
    func onePublisherPerDatabase() throws {
        let broker = try MosquittoBroker()
        let (path, store) = try database()
        let s = MQTTSettings(broker: try BrokerAddress(parsing: broker.url), node: "testpi", nodeID: "testpi")
        let run = running(s, path)
        let subscriber = TestSubscriber(port: broker.port, clientID: "sub-one")
        defer { subscriber.close() }
        #expect(subscriber.waitFor(seconds: 10) { subscriber.last("quench/testpi/status")?.payload == Array("online".utf8) })
        let sync = try runQuench(["mqtt", "sync", "--db", path, "--broker", broker.url, "--node-id", "testpi"])
        #expect(sync.status == 1)
        #expect(sync.stderr.contains("quench mqtt run as node testpi (pid ") && sync.stderr.contains("publishes this database"), "\(sync.stderr)")
        let status = try runQuench(["mqtt", "status", "--db", path, "--node-id", "testpi"])
        #expect(status.stdout.contains("published by quench mqtt run as node testpi (pid "), "\(status.stdout)")
        #expect(status.stdout.contains("node id testpi (from --node-id)") && status.stdout.contains("back within 5 s"), "\(status.stdout)")
        // Asked without --node-id: the running publisher's (it said the machine's id, which nobody publishes under).
        let asked = try runQuench(["mqtt", "status", "--db", path])
        #expect(asked.stdout.contains("node id testpi (from the running publisher)"), "\(asked.stdout)")
        _ = try store.addManual(ml: 210, at: .wallClockNow, note: nil, identity: "manual|beside-sync")
        #expect(subscriber.waitFor(seconds: 5) { subscriber.objects(onTopicsEndingWith: "/event").contains { $0["identity"] as? String == "manual|beside-sync" } })
        let report = run.stop()
        #expect(report?.connections == 1, "never knocked off: \(String(describing: report))")
        // Once it stopped, the next publisher may.
        let after = try runQuench(["mqtt", "sync", "--db", path, "--broker", broker.url, "--node-id", "testpi"])
        #expect(after.status == 0, "\(after.stderr)")
    }

    @Test("people whose names map alike (Ann Lee, ann_lee, Ann.Lee, Zoë, Zoé, 李, 王) get topics and unique ids of their own; a rename changes only the name")
    func peopleApart() throws {
        let broker = try MosquittoBroker()
        let subscriber = TestSubscriber(port: broker.port, clientID: "sub-people-ids")
        defer { subscriber.close() }
        #expect(subscriber.waitFor(seconds: 5) { broker.log.contains("sub-people-ids") })
        let (path, store) = try database()
        let names = ["Ann Lee", "ann_lee", "Ann.Lee", "Zoë", "Zoé", "李", "王"]
        var people: [Person] = []
        for name in names { people.append(try store.addPerson(name: name)) }
        let s = MQTTSettings(broker: try BrokerAddress(parsing: broker.url), node: "Kitchen Pi", nodeID: "testpi")
        _ = try MQTTPublisher(settings: s, environment: environment(path), logger: Self.quiet, announcesAvailability: false).sync(timeout: 10)
        // sync returns once the broker acknowledged everything; its delivery to the subscriber may still be under way.
        func states() -> Set<String> {
            Set(subscriber.messages.filter { $0.topic.hasPrefix("quench/testpi/person/") && $0.topic.hasSuffix("/state") }.map(\.topic))
        }
        func uniqueIDs() -> Set<String> {
            Set(subscriber.messages.filter { $0.topic.hasSuffix("/config") }.compactMap { json($0)?["unique_id"] as? String })
        }
        _ = subscriber.waitFor(seconds: 10) { states().count >= 8 && uniqueIDs().count >= 1 + 8 * 19 + 2 }
        #expect(states().count == 8, "me and seven more: \(states().sorted())")
        #expect(uniqueIDs().count == 1 + 8 * 19 + 2, "the gateway's, nineteen entities each, two for the bottle: \(uniqueIDs().count)")
        let ann = people[0]
        let annTopic = "homeassistant/sensor/quench_testpi/p\(ann.id)_intake_today/config"
        let before = try #require(json(subscriber.last(annTopic)))
        // Her entities are on a device of her own, named for her, via the gateway's.
        let gatewayTopic = "homeassistant/binary_sensor/quench_testpi/gateway/config"
        #expect(before["name"] as? String == "Intake today")
        #expect(((before["device"] as? [String: Any])?["name"] as? String) == "Ann Lee")
        #expect(((json(subscriber.last(gatewayTopic))?["device"] as? [String: Any])?["name"] as? String) == "Quench (Kitchen Pi)")

        // Renamed, and the node renamed: the same topics and unique ids, the new names.
        try store.renamePerson(id: ann.id, to: "Ann Smith")
        var renamed = s
        renamed.node = "Pantry Pi"
        let count = subscriber.messages.count
        _ = try MQTTPublisher(settings: renamed, environment: environment(path), logger: Self.quiet, announcesAvailability: false).sync(timeout: 10)
        #expect(subscriber.waitFor(seconds: 5) {
            ((json(subscriber.last(annTopic))?["device"] as? [String: Any])?["name"] as? String) == "Ann Smith"
        })
        let after = try #require(json(subscriber.last(annTopic)))
        #expect(after["unique_id"] as? String == before["unique_id"] as? String)
        #expect(((json(subscriber.last(gatewayTopic))?["device"] as? [String: Any])?["name"] as? String) == "Quench (Pantry Pi)")
        let newer = subscriber.messages.dropFirst(count)
        #expect(!newer.contains { $0.topic.hasSuffix("/config") && $0.payload.isEmpty }, "nothing cleared: no orphaned entity")
        // Its state may reach the subscriber after its config (each is acknowledged by the broker, not delivered, when sync returns).
        #expect(subscriber.waitFor(seconds: 5) { (json(subscriber.last("quench/testpi/person/\(ann.id)/state"))?["person"] as? String) == "Ann Smith" },
                "\(json(subscriber.last("quench/testpi/person/\(ann.id)/state")) ?? [:])")
    }

    @Test("the hub's own history, published for Home Assistant, does not answer the hub's requests (its whole history, at each reconnect); another hub's, it does")
    func theHubIsNotAnsweredByItsOwnHistory() throws {
        let broker = try MosquittoBroker()
        let subscriber = TestSubscriber(port: broker.port, clientID: "sub-own-hub")
        defer { subscriber.close() }
        #expect(subscriber.waitFor(seconds: 5) { broker.log.contains("sub-own-hub") })
        let (path, store) = try database()
        _ = try store.addManual(ml: 210, at: .wallClockNow, note: nil, identity: "manual|house")
        let own = try store.mqttIdentity().databaseID
        let s = MQTTSettings(broker: try BrokerAddress(parsing: broker.url), node: "house", nodeID: "house")
        let run = running(s, path)
        defer { _ = run.stop() }
        #expect(subscriber.waitFor(seconds: 10) { subscriber.last("quench/house/status")?.payload == Array("online".utf8) })
        let asker = try connectedTestClient("hub-asks", port: broker.port)
        for hub in [own, "0123456789abcdef"] {
            try asker.publishNow("quench/house/sync", GatewayMessages.request(GatewayMessages.Request(hub: hub, fromSeq: 0, databaseID: nil)))
        }
        #expect(subscriber.waitFor(seconds: 10) { !subscriber.messages.filter { $0.topic == "quench/house/answer" }.isEmpty })
        _ = subscriber.waitFor(seconds: 1) { false }
        #expect(subscriber.messages.filter { $0.topic == "quench/house/answer" }.count == 1, "one answer, to the other hub")
    }

    @Test("a window after the first asked of another database (restored since): answered from the start, as this database, not as the other's window")
    func aLaterWindowOfAnotherDatabaseIsAnsweredFromTheStart() throws {
        let broker = try MosquittoBroker()
        let subscriber = TestSubscriber(port: broker.port, clientID: "sub-windows")
        defer { subscriber.close() }
        #expect(subscriber.waitFor(seconds: 5) { broker.log.contains("sub-windows") })
        let (path, store) = try database()
        for i in 0..<5 { _ = try store.addManual(ml: 100 + Double(i), at: Timestamp.wallClockNow.adding(Double(-i * 60)), note: nil, identity: "manual|w\(i)") }
        let own = try store.mqttIdentity().databaseID
        let s = MQTTSettings(broker: try BrokerAddress(parsing: broker.url), node: "house", nodeID: "house")
        let run = running(s, path)
        defer { _ = run.stop() }
        #expect(subscriber.waitFor(seconds: 10) { subscriber.last("quench/house/status")?.payload == Array("online".utf8) })
        let asker = try connectedTestClient("hub-windows", port: broker.port)
        func asked(_ request: String) -> [String: Any]? {
            let before = subscriber.messages.filter { $0.topic == "quench/house/answer" }.count
            try? asker.publishNow("quench/house/sync", request)
            _ = subscriber.waitFor(seconds: 10) { subscriber.messages.filter { $0.topic == "quench/house/answer" }.count > before }
            return json(subscriber.messages.last { $0.topic == "quench/house/answer" })
        }
        // Its own later window: after the cursor, with the first window's change number and wholeness.
        let w3 = try #require(try store.events().first { $0.identity == "manual|w3" })
        let cursor = #""after":{"time":\#(w3.time.secondsSince1970),"id":\#(w3.id ?? 0)},"through":77,"whole":false"#
        let mine = try #require(asked(#"{"hub":"0123456789abcdef","from_seq":0,"database_id":"\#(own)","most_parts":50,\#(cursor)}"#))
        #expect(mine["through"] as? Int == 77 && mine["whole"] as? Bool == false && (mine["events"] as? [Any])?.count == 3, "\(mine)")
        // Another database's: from the start, as itself.
        let other = try #require(asked(#"{"hub":"0123456789abcdef","from_seq":0,"database_id":"fedcba9876543210","most_parts":50,\#(cursor)}"#))
        #expect(other["through"] as? Int != 77 && other["whole"] as? Bool == true && (other["events"] as? [Any])?.count == 5, "\(other)")
    }

    @Test("Home Assistant back online: discovery and every state sent again, unchanged ones too (a broker without persistence kept none)")
    func homeAssistantOnlineGetsEverythingAgain() throws {
        let broker = try MosquittoBroker()
        let subscriber = TestSubscriber(port: broker.port, clientID: "sub-ha-online")
        defer { subscriber.close() }
        #expect(subscriber.waitFor(seconds: 5) { broker.log.contains("sub-ha-online") })
        let (path, _) = try database()
        let s = MQTTSettings(broker: try BrokerAddress(parsing: broker.url), node: "testpi", nodeID: "testpi")
        let run = running(s, path)
        defer { _ = run.stop() }
        let state = "quench/testpi/person/1/state", config = "homeassistant/sensor/quench_testpi/p1_intake_today/config"
        func count(_ topic: String) -> Int { subscriber.messages.filter { $0.topic == topic }.count }
        #expect(subscriber.waitFor(seconds: 10) { count(state) == 1 && count(config) == 1 })
        try connectedTestClient("ha-itself", port: broker.port).publishNow("homeassistant/status", "online")
        #expect(subscriber.waitFor(seconds: 10) { count(state) == 2 && count(config) == 2 }, "state \(count(state)), config \(count(config))")
    }

    @Test("two reminders given during an outage arrive as two messages, each with what was true when it was given")
    func remindersAsGiven() throws {
        let broker = try MosquittoBroker()
        let subscriber = TestSubscriber(port: broker.port, clientID: "sub-reminders-given")
        defer { subscriber.close() }
        #expect(subscriber.waitFor(seconds: 5) { broker.log.contains("sub-reminders-given") })
        let (path, store) = try database()
        let s = MQTTSettings(broker: try BrokerAddress(parsing: broker.url), node: "testpi", nodeID: "testpi")
        let publisher = try MQTTPublisher(settings: s, environment: environment(path), logger: Self.quiet, announcesAvailability: false)
        // No broker reached meanwhile: the two wait in the outbox.
        let first = ReminderGiven(person: "me", personId: 1, at: "2026-11-24T11:00:00+00:00", intakeMl: 100, goalMl: 2000, paceMl: 700,
                                  behindByMl: 600, reason: "behind pace by 600 mL")
        try store.markReminded(at: .wallClockNow, person: 1, message: History.json(first))
        _ = try store.addManual(ml: 300, at: .wallClockNow, note: nil, identity: "manual|between")
        var second = first
        (second.at, second.intakeMl, second.behindByMl, second.reason) = ("2026-11-24T12:00:00+00:00", 400, 400, "behind pace by 400 mL")
        try store.markReminded(at: Timestamp.wallClockNow.adding(1), person: 1, message: History.json(second))
        _ = try publisher.sync(timeout: 10)
        #expect(subscriber.waitFor(seconds: 5) { subscriber.objects(onTopicsEndingWith: "/reminder").count == 2 })
        let got = subscriber.objects(onTopicsEndingWith: "/reminder")
        #expect(got.map { $0["intake_ml"] as? Double } == [100, 400], "\(got)")
        #expect(got.map { $0["reason"] as? String } == ["behind pace by 600 mL", "behind pace by 400 mL"])
        #expect(got.allSatisfy { $0["event_type"] as? String == "reminder" && $0["database_id"] as? String == (try? store.mqttIdentity().databaseID) })
        #expect(Set(got.compactMap { $0["seq"] as? Int }).count == 2)
        #expect(subscriber.messages.filter { $0.topic.hasSuffix("/reminder") }.allSatisfy { $0.topic == "quench/testpi/person/1/reminder" })
    }

    @Test("kill -9 of `quench mqtt run` in the middle of 3 000 changes: all arrive, few twice, each with the database id and seq to drop a repeat")
    func killedMidDrain() throws {
        let broker = try MosquittoBroker()
        let subscriber = TestSubscriber(port: broker.port, clientID: "sub-kill9", topics: ["quench/+/event"])
        defer { subscriber.close() }
        #expect(subscriber.waitFor(seconds: 5) { broker.log.contains("sub-kill9") })
        let (path, store) = try database()
        try store.setOutbox(enabled: true)
        let now = Timestamp.wallClockNow
        let events = (0..<3000).map { i in
            (IntakeEvent(identity: "k9|\(i)", kind: .sip, ml: 10, time: now.adding(Double(-i)), source: .manual, recordedAt: now), [String]())
        }
        _ = try store.insert(events.map { (event: $0.0, aliases: $0.1) })
        let databaseID = try store.mqttIdentity().databaseID
        let arguments = ["mqtt", "run", "--db", path, "--broker", broker.url, "--node-id", "testpi", "--seconds", "90"]
        let first = try startQuench(arguments)
        #expect(subscriber.waitFor(seconds: 30) { subscriber.messages.count >= 1000 })
        kill(first.processIdentifier, SIGKILL)
        first.waitUntilExit()
        let second = try startQuench(arguments)
        // SIGKILL to end it too: a child of the test process may inherit SIGTERM blocked.
        defer { kill(second.processIdentifier, SIGKILL); second.waitUntilExit() }
        func keys() -> [String] { subscriber.objects(onTopicsEndingWith: "/event").map { "\($0["database_id"] ?? "-") \($0["seq"] ?? "-")" } }
        // Counted cheaply while waiting (parsing 5 000 payloads at each look would slow the run it watches).
        #expect(subscriber.waitFor(seconds: 60) { subscriber.messages.count >= 3000 && (try? store.outboxStatus().pending) == 0 })
        #expect(subscriber.waitFor(seconds: 10) { Set(keys()).count >= 3000 }, "received \(Set(keys()).count)")
        let got = subscriber.objects(onTopicsEndingWith: "/event")
        #expect(Set(got.compactMap { $0["identity"] as? String }).count == 3000, "every change")
        #expect(got.allSatisfy { $0["database_id"] as? String == databaseID && $0["seq"] is Int })
        let repeats = got.count - Set(keys()).count
        print("kill -9 mid-drain of 3 000 changes: \(got.count) messages, \(repeats) repeats (all with their database_id and seq)")
        // What was in flight (20) and what was acknowledged but not yet deleted (one turn's worth) at the kill.
        #expect(repeats <= 40, "\(repeats) repeats")
    }

    @Test("availability: sync says online and its entities expire; bottles need the gateway; a dead gateway shows offline")
    func availability() throws {
        let broker = try MosquittoBroker()
        let subscriber = TestSubscriber(port: broker.port, clientID: "sub-availability")
        defer { subscriber.close() }
        #expect(subscriber.waitFor(seconds: 5) { broker.log.contains("sub-availability") })
        let (path, store) = try database()
        // A gateway that crashed: its role still recorded, its pid long gone, its link still "up".
        _ = try store.claimRole("gateway", ProcessHolder(pid: Int32.max - 7, started: 1, command: "quench gateway", since: .wallClockNow)) { _ in false }
        let s = MQTTSettings(broker: try BrokerAddress(parsing: broker.url), node: "testpi", nodeID: "testpi")
        _ = try MQTTPublisher(settings: s, environment: environment(path), logger: Self.quiet, announcesAvailability: false).sync(timeout: 10)
        #expect(subscriber.waitFor(seconds: 5) { subscriber.last("quench/testpi/status")?.payload == Array("online".utf8) }, "sync says online")
        // The gateway's state comes after the status and the configs: once it is here, they are too.
        #expect(subscriber.waitFor(seconds: 5) { subscriber.last("quench/testpi/gateway")?.payload == Array("offline".utf8) }, "the gateway is not running")
        let intake = try #require(json(subscriber.last("homeassistant/sensor/quench_testpi/p1_intake_today/config")))
        #expect(intake["expire_after"] as? Int == 7200, "sync's entities expire once stale")
        let link = try #require(json(subscriber.last("homeassistant/binary_sensor/quench_testpi/c82a3f003f2a_link/config")))
        let topics = (link["availability"] as? [[String: Any]])?.compactMap { $0["topic"] as? String }
        #expect(topics == ["quench/testpi/status", "quench/testpi/gateway"] && link["availability_mode"] as? String == "all")

        // The gateway starts: links cleared (a crash left "up"), and it holds the role while it runs.
        try store.clearLinks(at: .wallClockNow)
        #expect(try store.deviceLinks() == ["C8:2A:3F:00:3F:2A": false])
        let me = ProcessIdentity.current
        _ = try store.claimRole("gateway", ProcessHolder(pid: me.pid, started: me.started, command: "quench gateway", since: .wallClockNow)) { _ in false }
        let run = running(s, path)
        #expect(subscriber.waitFor(seconds: 10) { subscriber.last("quench/testpi/gateway")?.payload == Array("online".utf8) })
        #expect(subscriber.waitFor(seconds: 5) {
            (json(subscriber.last("homeassistant/sensor/quench_testpi/p1_intake_today/config")).map { $0["expire_after"] == nil }) == true
        }, "run says offline itself: no expire_after")
        let bottle = try #require(json(subscriber.last("quench/testpi/device/c82a3f003f2a/state")))
        #expect(bottle["link_up"] as? Bool == false)

        // A gateway killed writes nothing: its bottles go offline within seconds all the same (a carer trial saw
        // a minute, the states' interval, while the docs said "as soon as the gateway's process is gone").
        let gateway = try RoleHolderStandIn(role: "gateway", in: store)
        Thread.sleep(forTimeInterval: 1)
        #expect(subscriber.last("quench/testpi/gateway")?.payload == Array("online".utf8))
        gateway.kill9()
        let killed = Date()
        #expect(subscriber.waitFor(seconds: 10) { subscriber.last("quench/testpi/gateway")?.payload == Array("offline".utf8) }, "offline once killed")
        #expect(Date().timeIntervalSince(killed) < 5, "within seconds: \(Date().timeIntervalSince(killed)) s")
        _ = run.stop()
    }

    /// The hour now, with half a minute of it still to come: a test that sets the day start by it fails
    /// when the hour turns while it runs (a day then starts in the middle of it).
    static func hourWithTimeToSpare(_ calendar: Calendar) -> Int {
        let now = Date()
        let second = calendar.component(.minute, from: now) * 60 + calendar.component(.second, from: now)
        if second >= 3570 { Thread.sleep(forTimeInterval: Double(3601 - second)) }
        return calendar.component(.hour, from: Date())
    }

    /// An HA trial: a day start moved later in the day (the day then starts at this hour, not 23 hours back) began
    /// a cycle at that start, and Home Assistant's statistics counted the drinks since it a second time; moved back,
    /// a third. The cycle the move begins counts from when the one before last counted, and a move back holds it.
    @Test func aDayStartMovedLaterAndBackCountsNoDrinkTwice() throws {
        let broker = try MosquittoBroker()
        let subscriber = TestSubscriber(port: broker.port, clientID: "sub-later")
        defer { subscriber.close() }
        #expect(subscriber.waitFor(seconds: 5) { broker.log.contains("sub-later") })
        let (path, store) = try database()
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "Europe/London")!
        let hour = Self.hourWithTimeToSpare(calendar)
        // The day starts next hour, so today's began 23 hours ago.
        try store.saveSettings(Settings(units: .ml, dayStartHour: (hour + 1) % 24, timeZone: nil))
        let me = try #require(try store.person(named: "me"))
        _ = try store.addManual(ml: 250, at: .wallClockNow.adding(-1), note: nil, identity: "this hour's", person: me.id)
        let s = MQTTSettings(broker: try BrokerAddress(parsing: broker.url), node: "testpi", nodeID: "testpi")
        let run = running(s, path, stateInterval: 600)
        defer { _ = run.stop() }
        let topic = "quench/testpi/person/1/state"
        #expect(subscriber.waitFor(seconds: 10) { (json(subscriber.last(topic))?["intake_since_reset_ml"] as? Double) == 250 })
        let first = try #require(json(subscriber.last(topic)))

        // Later: the day now starts at this hour, and this hour's 250 mL were counted in the cycle before.
        try store.saveSettings(Settings(units: .ml, dayStartHour: hour, timeZone: nil))
        #expect(subscriber.waitFor(seconds: 3) { (json(subscriber.last(topic))?["day_start"] as? String) != first["day_start"] as? String })
        let later = try #require(json(subscriber.last(topic)))
        let reset = try #require(later["last_reset"] as? String)
        #expect(reset != first["last_reset"] as? String && reset != later["day_start"] as? String, "from when it last counted: \(later)")
        #expect(later["intake_ml"] as? Double == 250 && later["intake_since_reset_ml"] as? Double == 0, "\(later)")

        // Back again: held, and a drink now counts once.
        try store.saveSettings(Settings(units: .ml, dayStartHour: (hour + 1) % 24, timeZone: nil))
        _ = try store.addManual(ml: 100, at: .wallClockNow, note: nil, identity: "after", person: me.id)
        #expect(subscriber.waitFor(seconds: 3) { (json(subscriber.last(topic))?["intake_ml"] as? Double) == 350 })
        let back = try #require(json(subscriber.last(topic)))
        #expect(back["last_reset"] as? String == reset && back["intake_since_reset_ml"] as? Double == 100, "\(back)")
    }

    @Test("last_reset never goes back when the day start moves mid-day; a rename or a setting reaches the broker at once, not at the next check")
    func lastResetAndChanges() throws {
        let broker = try MosquittoBroker()
        let subscriber = TestSubscriber(port: broker.port, clientID: "sub-last-reset")
        defer { subscriber.close() }
        #expect(subscriber.waitFor(seconds: 5) { broker.log.contains("sub-last-reset") })
        let (path, store) = try database()
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "Europe/London")!
        let hour = Self.hourWithTimeToSpare(calendar)
        // The day starts this hour; then an hour later, which puts today's start 23 hours back.
        try store.saveSettings(Settings(units: .ml, dayStartHour: hour, timeZone: nil))
        let s = MQTTSettings(broker: try BrokerAddress(parsing: broker.url), node: "testpi", nodeID: "testpi")
        let run = running(s, path, stateInterval: 600)
        let topic = "quench/testpi/person/1/state"
        #expect(subscriber.waitFor(seconds: 10) { subscriber.last(topic) != nil })
        let first = try #require(json(subscriber.last(topic)))
        let reset = try #require(first["last_reset"] as? String)
        #expect(reset == first["day_start"] as? String)
        // A drink of the day before (counted in Home Assistant's cycle before this one), and one of today.
        let start = try #require(Timestamp(iso8601: reset))
        let me = try #require(try store.person(named: "me"))
        _ = try store.addManual(ml: 900, at: start.adding(-3600), note: nil, identity: "yesterday's", person: me.id)
        _ = try store.addManual(ml: 250, at: .wallClockNow, note: nil, identity: "today's", person: me.id)
        #expect(subscriber.waitFor(seconds: 3) { (json(subscriber.last(topic))?["intake_since_reset_ml"] as? Double) == 250 })

        try store.saveSettings(Settings(units: .ml, dayStartHour: (hour + 1) % 24, timeZone: nil))
        #expect(subscriber.waitFor(seconds: 3) { (json(subscriber.last(topic))?["day_start"] as? String) != reset }, "the setting, at once")
        let moved = try #require(json(subscriber.last(topic)))
        #expect(moved["last_reset"] as? String == reset, "held: \(moved)")
        // The day's intake now holds yesterday's 900 mL; what Home Assistant counts since the held reset does not
        // (it counted the 900 twice in its long-term statistics).
        #expect(moved["intake_ml"] as? Double == 1150 && moved["intake_since_reset_ml"] as? Double == 250, "\(moved)")

        // Held across a restart too: the new publisher reads it from the database.
        _ = run.stop()
        let before = subscriber.messages.filter { $0.topic == topic }.count
        let again = running(s, path, stateInterval: 600)
        defer { _ = again.stop() }
        #expect(subscriber.waitFor(seconds: 10) { subscriber.messages.filter { $0.topic == topic }.count > before })
        let restarted = try #require(json(subscriber.last(topic)))
        #expect(restarted["last_reset"] as? String == reset, "held after a restart: \(restarted)")
        #expect(restarted["intake_since_reset_ml"] as? Double == 250, "\(restarted)")
        #expect(restarted["day_start"] as? String != reset)

        try store.renamePerson(id: 1, to: "Sam")
        #expect(subscriber.waitFor(seconds: 3) { (json(subscriber.last(topic))?["person"] as? String) == "Sam" }, "the rename, at once")
        #expect(subscriber.waitFor(seconds: 3) {
            ((json(subscriber.last("homeassistant/sensor/quench_testpi/p1_intake_today/config"))?["device"] as? [String: Any])?["name"] as? String) == "Sam"
        })

        // Someone added: their configs, not everyone's again (three people's 58 went out for each).
        let heard = subscriber.messages.count
        let bo = try store.addPerson(name: "Bo")
        #expect(subscriber.waitFor(seconds: 3) { subscriber.last("homeassistant/sensor/quench_testpi/p\(bo.id)_intake_today/config") != nil })
        Thread.sleep(forTimeInterval: 0.5)
        let resent = subscriber.messages.dropFirst(heard).map(\.topic).filter { $0.hasPrefix("homeassistant/") && !$0.contains("/p\(bo.id)_") }
        #expect(resent.isEmpty, "\(resent)")
    }

    @Test("a password in a URL is never echoed; a password file others can read is warned about")
    func redaction() throws {
        let shown = try runQuench(["config", "show"], environment: ["QUENCH_MQTT": "mqtt://ha:hunter2@127.0.0.1:1"])
        #expect(!shown.stdout.contains("hunter2") && !shown.stderr.contains("hunter2"), "\(shown.stdout)")
        #expect(shown.stdout.contains("mqtt://ha:***@127.0.0.1:1"), "\(shown.stdout)")
        let json = try runQuench(["config", "show", "--json"], environment: ["QUENCH_MQTT": "mqtt://ha:hunter2@127.0.0.1:1"])
        #expect(!json.stdout.contains("hunter2"))
        let (path, _) = try database()
        let run = try runQuench(["mqtt", "run", "--db", path, "--broker", "mqtt://ha:hunter2@127.0.0.1:1", "--seconds", "1"])
        #expect(run.status != 0 && !run.stderr.contains("hunter2") && run.stderr.contains("***"), "\(run.stderr)")
        // A bounded run that never reached its broker exits 1 (it exited 0, as if it had published: a trial).
        let unreached = try runQuench(["mqtt", "run", "--db", path, "--broker", "mqtt://127.0.0.1:1", "--seconds", "1"])
        #expect(unreached.status == 1 && unreached.stderr.contains("quench: error: never reached the MQTT broker mqtt://127.0.0.1:1 in 1 s"),
                "\(unreached.status) \(unreached.stderr)")

        let broker = try MosquittoBroker(users: ["quench": "open sesame"])
        let file = (path as NSString).deletingLastPathComponent + "/password"
        try "open sesame\n".write(toFile: file, atomically: true, encoding: .utf8)
        chmod(file, 0o644)
        let sync = try runQuench(["mqtt", "sync", "--db", path, "--broker", "mqtt://quench@127.0.0.1:\(broker.port)", "--password-file", file,
                                  "--node-id", "testpi"])
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(sync.stderr.contains("can be read by every user") && sync.stderr.contains("chmod o-r"), "\(sync.stderr)")
    }
}
#endif

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

@Suite("broker URLs")
struct BrokerAddressTests {
    @Test("parsed, with defaults per scheme; refused with the reason")
    func parsing() throws {
        #expect(try BrokerAddress(parsing: "mqtt://pi.local") == BrokerAddress(tls: false, host: "pi.local", port: 1883, user: nil))
        #expect(try BrokerAddress(parsing: "mqtts://ha@broker:8884/") == BrokerAddress(tls: true, host: "broker", port: 8884, user: "ha"))
        #expect(try BrokerAddress(parsing: "mqtt://[::1]:1999") == BrokerAddress(tls: false, host: "::1", port: 1999, user: nil))
        #expect(try BrokerAddress(parsing: "mqtts://h").port == 8883)
        for (bad, why) in [("http://h", "mqtt:// or mqtts://"), ("mqtt://u:secret@h", "password in a file"), ("mqtt://h:0", "1 to 65535"),
                           ("mqtt://h:99999", "1 to 65535"), ("mqtt://", "no host"), ("mqtt://h/topic", "no path"), ("mqtt://[::1", "closing ]")] {
            #expect {
                _ = try BrokerAddress(parsing: bad)
            } throws: { error in "\(error)".contains(why) && "\(error)".contains(bad.shownSafely()) }
        }
    }

    /// TLS files named and checked before libmosquitto sees them: it says only "Invalid function
    /// arguments provided." of a CA file that is not there, or a certificate without its key.
    @Test func tlsFilesThatCannotBeUsedAreNamed() throws {
        let folder = try TemporaryFolder()
        let broker = try BrokerAddress(parsing: "mqtts://broker")
        let cert = folder.path + "/client.crt"
        try "x".write(toFile: cert, atomically: true, encoding: .utf8)
        for (settings, said) in [
            (MQTTSettings(broker: broker, caFile: folder.path + "/nonexistent.crt"), "/nonexistent.crt: the CA file cannot be read: No such file or directory"),
            (MQTTSettings(broker: broker, caFile: folder.path), "the CA file is not a regular file"),
            (MQTTSettings(broker: broker, certFile: cert), "client.crt: a client certificate needs its key (--key, mqtt.key_file)"),
            (MQTTSettings(broker: broker, keyFile: cert), "a client key needs its certificate (--cert, mqtt.cert_file)"),
        ] {
            #expect { try settings.checkFiles() } throws: { "\($0)".contains(said) }
        }
    }
}

/// What the publisher sends, checked by a subscriber on a real broker.
@Suite("MQTT publisher (real mosquitto)", .serialized, .enabled(if: MosquittoBroker.isInstalled, Comment(rawValue: MosquittoBroker.missing)))
struct PublisherTests {
    static var logger: Logger {
        var l = Logger(label: "test")
        l.logLevel = .error
        return l
    }

    /// A database with a goal, one paired bottle with what is left in it, and one sip.
    func history() throws -> (path: String, store: IntakeStore) {
        let path = try TemporaryFolder.create("quench-mqtt") + "/q.sqlite"
        let store = try IntakeStore(path: path)
        let now = Timestamp.wallClockNow
        try startTheDayTwelveHoursFromNow(store)
        try store.setGoal(ml: 2000, from: CivilDay(number: Int(now.secondsSince1970 / 86_400) - 2))
        try store.saveDevice(Device(address: "C8:2A:3F:00:3F:2A", name: "desk bottle", profile: "hidrate-spark", addedAt: now))
        try store.recordLink(address: "C8:2A:3F:00:3F:2A", up: true, at: now)
        _ = try store.insert([(IntakeEvent(identity: "dev|sip|1", kind: .sip, ml: 120, time: now.adding(-600), remainingML: 380,
                                           source: .sensor, device: "C8:2A:3F:00:3F:2A", recordedAt: now), [])])
        return (path, store)
    }

    func environment(_ path: String) -> HistoryEnvironment {
        HistoryEnvironment(databasePath: path, now: .wallClockNow, timeZone: LocalZone(identifier: "Europe/London"))
    }

    func settings(_ broker: MosquittoBroker) throws -> MQTTSettings {
        MQTTSettings(broker: try BrokerAddress(parsing: broker.url), node: "testpi", nodeID: "testpi")
    }

    func json(_ m: MQTTMessage?) -> [String: Any]? {
        m.flatMap { try? JSONSerialization.jsonObject(with: Data($0.payload)) as? [String: Any] }
    }

    @Test("sync: discovery configs field by field, retained state, each change once with its identity, the outbox emptied")
    func syncPublishesEverything() throws {
        let broker = try MosquittoBroker()
        let subscriber = TestSubscriber(port: broker.port, clientID: "sub-sync")
        defer { subscriber.close() }
        #expect(subscriber.waitFor(seconds: 5) { broker.log.contains("sub-sync") })
        let (path, store) = try history()
        let publisher = try MQTTPublisher(settings: try settings(broker), environment: environment(path), logger: Self.logger,
                                          announcesAvailability: false)
        // Changes made after the outbox started: an add, its undo, a sensor sip.
        let added = try store.addManual(ml: 250, at: .wallClockNow, note: nil, identity: "manual|a")
        _ = try store.setDeleted(id: added.id!, true)
        _ = try store.insert([(IntakeEvent(identity: "dev|sip|2", kind: .sip, ml: 80, time: .wallClockNow, remainingML: 300,
                                           source: .sensor, device: "C8:2A:3F:00:3F:2A", recordedAt: .wallClockNow), [])])
        let report = try publisher.sync(timeout: 10)
        #expect(report.published == 3 && report.acknowledged == 3 && report.pending == 0, "\(report)")
        #expect(try store.outboxStatus().pending == 0)

        #expect(subscriber.waitFor(seconds: 5) { subscriber.objects(onTopicsEndingWith: "/event").count == 3 })
        let events = subscriber.objects(onTopicsEndingWith: "/event")
        #expect(events.map { "\($0["identity"]!) \($0["change"]!)" } == ["manual|a new", "manual|a deleted", "dev|sip|2 new"])
        #expect(events.map { $0["seq"] as? Int } == [1, 2, 3])
        let row = try #require(events[2]["event"] as? [String: Any], "the row, as `log --json` has it")
        #expect(row["ml"] as? Double == 80 && row["kind"] as? String == "sip" && row["device"] as? String == "C8:2A:3F:00:3F:2A")
        #expect(row["identity"] as? String == "dev|sip|2" && row["at"] as? String != nil && row["remaining_ml"] as? Double == 300)
        #expect((events[1]["event"] as? [String: Any])?["deleted"] as? Bool == true)
        #expect(subscriber.messages.filter { $0.topic.hasSuffix("/event") }.allSatisfy { !$0.retain }, "events are not retained")

        let stateTopic = "quench/testpi/person/1/state"
        #expect(subscriber.waitFor(seconds: 5) { subscriber.last(stateTopic) != nil })
        let state = try #require(json(subscriber.last(stateTopic)))
        #expect(state["intake_ml"] as? Double == 200, "120 + 80, the undone 250 not counted: \(state)")
        #expect(state["goal_ml"] as? Double == 2000)
        #expect(state["progress_percent"] as? Double == 10)
        #expect((state["day_start"] as? String)?.hasSuffix(":00:00+00:00") == true || (state["day_start"] as? String)?.hasSuffix(":00:00+01:00") == true)
        let bottles = try #require(state["bottles"] as? [[String: Any]])
        #expect(bottles.first?["remaining_ml"] as? Double == 300 && bottles.first?["link_up"] as? Bool == true)
        let device = try #require(json(subscriber.last("quench/testpi/device/c82a3f003f2a/state")))
        #expect(device["name"] as? String == "desk bottle")

        // Home Assistant discovery: each config as its MQTT integration documents it.
        let configs = subscriber.messages.filter { $0.topic.hasPrefix("homeassistant/") && $0.topic.hasSuffix("/config") }
        let byTopic = Dictionary(configs.map { ($0.topic, $0) }, uniquingKeysWith: { _, b in b })
        #expect(byTopic.count == 22, "the gateway's, 19 for the person (sensors, controls, the carer's alert and its acknowledgement), 2 for the bottle (no battery known): \(byTopic.keys.sorted())")
        // Retained: a subscriber that comes later gets them from the broker, marked retained.
        let later = TestSubscriber(port: broker.port, clientID: "sub-later", topics: ["homeassistant/#", "quench/testpi/person/#"])
        defer { later.close() }
        // Waited for all of them: counted at 21, the last two were still on their way on a busy machine (CI).
        #expect(later.waitFor(seconds: 10) { later.messages.count >= 23 })
        #expect(later.messages.count == 23 && later.messages.allSatisfy { $0.retain }, "22 configs and the state, retained")
        var uniqueIDs: Set<String> = []
        for (topic, message) in byTopic {
            let c = try #require(json(message), "\(topic)")
            let component = topic.split(separator: "/")[1]
            #expect(["sensor", "binary_sensor", "event", "button", "text", "number"].contains(component))
            #expect((c["availability"] as? [[String: Any]])?.first?["topic"] as? String == "quench/testpi/status")
            // Buttons and the text send only; the rest show a state.
            #expect((c["state_topic"] as? String != nil || ["button", "text"].contains(component)) && c["name"] as? String != nil)
            if ["button", "text", "number"].contains(component) {
                #expect(c["command_topic"] as? String == "quench/testpi/person/1/command", "\(topic)")
                #expect((c["command_template"] as? String)?.contains("'id': 'ha-'") == true, "\(topic): a fresh id each time")
            }
            let id = try #require(c["unique_id"] as? String)
            #expect(uniqueIDs.insert(id).inserted, "unique_id \(id) twice")
            let dev = try #require(c["device"] as? [String: Any])
            #expect((dev["identifiers"] as? [String])?.isEmpty == false && dev["name"] as? String != nil)
            if component == "binary_sensor", c["device_class"] != nil { #expect(["connectivity", "problem", "running"].contains(c["device_class"] as? String)) }
            if c["device_class"] as? String == "volume" || c["device_class"] as? String == "volume_storage" {
                #expect(c["unit_of_measurement"] as? String == "mL")
            }
        }
        let intake = try #require(json(byTopic["homeassistant/sensor/quench_testpi/p1_intake_today/config"]))
        #expect(intake["device_class"] as? String == "volume" && intake["state_class"] as? String == "total")
        #expect(intake["last_reset_value_template"] as? String == "{{ value_json.last_reset }}")
        #expect(intake["value_template"] as? String == "{{ value_json.intake_since_reset_ml }}")
        let remaining = try #require(json(byTopic["homeassistant/sensor/quench_testpi/c82a3f003f2a_remaining/config"]))
        #expect(remaining["device_class"] as? String == "volume_storage" && remaining["state_class"] as? String == "measurement")
        let bottleDevice = try #require(remaining["device"] as? [String: Any])
        #expect(bottleDevice["via_device"] as? String == "quench_testpi")
        #expect((bottleDevice["connections"] as? [[String]]) == [["bluetooth", "C8:2A:3F:00:3F:2A"]])
        let link = try #require(json(byTopic["homeassistant/binary_sensor/quench_testpi/c82a3f003f2a_link/config"]))
        #expect(link["device_class"] as? String == "connectivity" && link["entity_category"] as? String == "diagnostic")
        // Discovery polish: who sent it, the precision shown, the reason and bottles as attributes, the person's own device.
        #expect((intake["origin"] as? [String: Any])?["name"] as? String == "Quench")
        #expect(intake["suggested_display_precision"] as? Int == 0 && intake["json_attributes_topic"] as? String == "quench/testpi/person/1/state")
        let personDevice = try #require(intake["device"] as? [String: Any])
        #expect(personDevice["identifiers"] as? [String] == ["quench_testpi_p1"] && personDevice["name"] as? String == "me")
        #expect(personDevice["via_device"] as? String == "quench_testpi")
        #expect(bottleDevice["model"] as? String == "Smart bottle" && bottleDevice["model_id"] as? String == "hidrate-spark")
        let gateway = try #require(json(byTopic["homeassistant/binary_sensor/quench_testpi/gateway/config"]))
        #expect((gateway["device"] as? [String: Any])?["identifiers"] as? [String] == ["quench_testpi"])
        #expect(gateway["state_topic"] as? String == "quench/testpi/gateway" && gateway["payload_on"] as? String == "online")
        let reminder = try #require(json(byTopic["homeassistant/event/quench_testpi/p1_reminder/config"]))
        #expect(reminder["event_types"] as? [String] == ["reminder"] && reminder["state_topic"] as? String == "quench/testpi/person/1/reminder")
        let lastSip = try #require(json(byTopic["homeassistant/sensor/quench_testpi/p1_last_sip/config"]))
        #expect(lastSip["device_class"] as? String == "timestamp")

        // A forgotten bottle: its configs are cleared with empty retained payloads on the next sync.
        try store.forgetDevice(address: "C8:2A:3F:00:3F:2A")
        let again = try MQTTPublisher(settings: try settings(broker), environment: environment(path), logger: Self.logger,
                                      announcesAvailability: false)
        _ = try again.sync(timeout: 10)
        let cleared = "homeassistant/sensor/quench_testpi/c82a3f003f2a_remaining/config"
        #expect(subscriber.waitFor(seconds: 5) { subscriber.last(cleared)?.payload.isEmpty == true }, "the forgotten bottle's config is cleared")
        #expect(subscriber.last("homeassistant/sensor/quench_testpi/p1_intake_today/config")?.payload.isEmpty == false)
    }

    /// A Home Assistant trial gave the gateway Home Assistant's user, which the documented ACL lets write only
    /// commands: mosquitto acknowledged each change and dropped it, `sync` said all was published, the outbox
    /// let them go. Now the broker must pass on the connection's own first message before any change is sent.
    @Test("a user the broker's ACL does not let write the gateway's topics: nothing is let go, and it is said")
    func aUserTheACLDoesNotLetWriteKeepsTheChanges() throws {
        let page = try String(contentsOf: TestPackage.root.appendingPathComponent("docs/homeassistant.md"), encoding: .utf8)
        let start = try #require(page.range(of: "# /etc/mosquitto/acl"))
        let end = try #require(page.range(of: "\n```", range: start.upperBound..<page.endIndex))
        let acl = String(page[start.lowerBound..<end.lowerBound]) + "\n"
        let broker = try MosquittoBroker(users: ["quench": "q-secret", "homeassistant": "h-secret"], acl: acl)
        let folder = try TemporaryFolder()
        for (user, password) in [("quench", "q-secret"), ("homeassistant", "h-secret")] {
            _ = FileManager.default.createFile(atPath: folder.file(user), contents: Data((password + "\n").utf8), attributes: [.posixPermissions: 0o600])
        }
        let (path, store) = try history()
        func sync(as user: String) throws -> ProcessResult {
            try runQuench(["mqtt", "sync", "--db", path, "--broker", "mqtt://\(user)@127.0.0.1:\(broker.port)", "--password-file", folder.file(user),
                           "--node-id", "acl1", "--timeout", "20"])
        }
        #expect(try sync(as: "quench").status == 0)
        #expect(try runQuench(["add", "43ml", "--db", path]).status == 0)
        let before = try store.outboxStatus().pending
        #expect(before > 0)
        let denied = try sync(as: "homeassistant")
        #expect(denied.status == 1 && denied.stderr.contains("the broker passed on nothing this gateway published within 5 s: does its ACL let the user homeassistant write and read quench/acl1/#?")
                && denied.stderr.contains("kept in the outbox"), "\(denied.status) \(denied.stdout)\(denied.stderr)")
        #expect(try store.outboxStatus().pending == before, "nothing let go")
        // `run` keeps its connection and says so, now and then (it reconnected every 5 s, its will saying offline each time).
        let running = try runQuench(["mqtt", "run", "--db", path, "--broker", "mqtt://homeassistant@127.0.0.1:\(broker.port)",
                                     "--password-file", folder.file("homeassistant"), "--node-id", "acl1", "--seconds", "12"])
        #expect(running.stderr.components(separatedBy: "connected to the MQTT broker").count - 1 == 1
                && running.stderr.contains("changes are kept in the outbox") && running.stderr.contains("does its ACL let the user homeassistant"),
                "\(running.stderr.suffix(3000))")
        #expect(try store.outboxStatus().pending == before, "nothing let go by run either")
        let allowed = try sync(as: "quench")
        #expect(allowed.status == 0 && allowed.stdout.contains("; 0 waiting"), "\(allowed.stdout)\(allowed.stderr)")
        #expect(try store.outboxStatus().pending == 0)
    }

    @Test("retire: every retained message this gateway keeps on the broker is cleared (its configs, states, availability, a claim); another gateway's stay; the next sync announces it again")
    func retireClearsWhatTheGatewayKeeps() throws {
        let broker = try MosquittoBroker()
        let (path, _) = try history()
        _ = try MQTTPublisher(settings: try settings(broker), environment: environment(path), logger: Self.logger, announcesAvailability: false)
            .sync(timeout: 10)
        // Another gateway on the same broker, with its own history.
        let (otherPath, _) = try history()
        let other = MQTTSettings(broker: try BrokerAddress(parsing: broker.url), node: "otherpi", nodeID: "otherpi")
        _ = try MQTTPublisher(settings: other, environment: environment(otherPath), logger: Self.logger, announcesAvailability: false)
            .sync(timeout: 10)
        // And another history on this machine, publishing as the machine's node (no node id given).
        let (machinePath, _) = try history()
        let machine = MQTTSettings(broker: try BrokerAddress(parsing: broker.url), node: "machine")
        _ = try MQTTPublisher(settings: machine, environment: environment(machinePath), logger: Self.logger, announcesAvailability: false)
            .sync(timeout: 10)
        let machineNode = try #require(machine.nodeID)
        // A claim on a connected bottle, as this gateway with hand_over keeps one.
        let claimer = try MQTTClient(clientID: "claim-test")
        var connected = false
        claimer.onConnect = { connected = $0 == 0 }
        try claimer.connect(host: "127.0.0.1", port: Int32(broker.port))
        #expect(LiveFixture.waitFor(5) { (try? claimer.loop(timeoutMS: 20)) != nil && connected })
        _ = try claimer.publish(topic: "quench/testpi/claim/c82a3f003f2a", payload: Array("{}".utf8), qos: 1, retain: true)
        // And what this gateway's connection hears of others: another gateway's claim, the hub's roster.
        _ = try claimer.publish(topic: "quench/otherpi/claim/c82a3f003f2b", payload: Array("{}".utf8), qos: 1, retain: true)
        _ = try claimer.publish(topic: "quench/hub/roster", payload: Array(#"{"hub":"hub1","devices":[]}"#.utf8), qos: 1, retain: true)
        for _ in 0..<10 { try claimer.loop(timeoutMS: 20) }

        /// What the broker keeps now, as a subscriber arriving now gets it (retained, not empty).
        func kept(_ name: String) -> Set<String> {
            let look = TestSubscriber(port: broker.port, clientID: name)
            defer { look.close() }
            _ = look.waitFor(seconds: 3) { false }
            return Set(look.messages.filter { $0.retain && !$0.payload.isEmpty }.map(\.topic))
        }
        let before = kept("look-before")
        let ours = before.filter { $0.hasPrefix("quench/testpi/") || $0.contains("/quench_testpi/") }
        let theirs = before.subtracting(ours)
        #expect(ours.contains("quench/testpi/claim/c82a3f003f2a") && ours.contains("quench/testpi/person/1/state")
                && ours.contains("homeassistant/sensor/quench_testpi/p1_intake_today/config"), "\(ours.sorted())")
        #expect(theirs.isSuperset(of: ["quench/otherpi/claim/c82a3f003f2b", "quench/hub/roster"]), "\(theirs.sorted())")
        #expect(ours.count >= 25 && theirs.count == 2 * ours.count, "\(ours.count) of ours, \(theirs.count) of the other gateways' and the hub's")

        // Retired without its node id (`quench mqtt retire` alone): the node this database holds there by its owner
        // record; not the other database's, nor the machine's, which another history on the machine publishes as
        // (a trial's retire named the machine's node and left testpi's status, commands and owner; a review's would
        // have cleared the machine's node of the other history).
        let unnamed = MQTTSettings(broker: try BrokerAddress(parsing: broker.url), node: "testpi")
        let (cleared, nodes, left) = try MQTTPublisher(settings: unnamed, environment: environment(path), logger: Self.logger,
                                                       announcesAvailability: false).retire(timeout: 10, everyNodeOwned: true)
        #expect(Set(cleared) == ours, "\(Set(cleared).symmetricDifference(ours).sorted())")
        #expect(nodes == ["testpi"] && left == [machineNode], "\(nodes) \(left)")
        #expect(kept("look-after") == theirs, "only the other gateway's are left")
        #expect(try IntakeStore(path: path).announcedTopics().isEmpty)

        // Retired by mistake: the next sync announces everything again.
        _ = try MQTTPublisher(settings: try settings(broker), environment: environment(path), logger: Self.logger, announcesAvailability: false)
            .sync(timeout: 10)
        #expect(kept("look-again").isSuperset(of: ours.subtracting(["quench/testpi/claim/c82a3f003f2a"])))
    }

    @Test("the broker killed (SIGKILL) and restarted in the middle of 300 changes: every change arrives, none is lost")
    func brokerKilledMidStream() throws {
        let broker = try MosquittoBroker()
        let subscriber = TestSubscriber(port: broker.port, clientID: "sub-restart")
        defer { subscriber.close() }
        #expect(subscriber.waitFor(seconds: 5) { broker.log.contains("sub-restart") })
        let (path, store) = try history()
        var fast = try settings(broker)
        fast.maximumBackoff = 0.5
        let s = fast
        let stop = Atomic<Bool>(false)
        let done = Atomic<Bool>(false)
        let finalReport = Mutex<MQTTPublisher.Report?>(nil)
        let env = environment(path)
        // Made and run on its own thread: the publisher belongs to the thread that drives it.
        let thread = Thread {
            guard let publisher = try? MQTTPublisher(settings: s, environment: env, logger: Self.logger, announcesAvailability: true) else { return }
            publisher.run { stop.load(ordering: .relaxed) }
            finalReport.withLock { $0 = publisher.report }
            done.store(true, ordering: .releasing)
        }
        thread.start()
        // Running (and so the outbox started) before the first change.
        #expect(subscriber.waitFor(seconds: 5) { subscriber.last("quench/testpi/status")?.payload == Array("online".utf8) })

        var identities: [String] = []
        for i in 0..<300 {
            let identity = "manual|restart-\(i)"
            _ = try store.addManual(ml: Double(10 + i % 50), at: .wallClockNow, note: nil, identity: identity)
            identities.append(identity)
            if i == 100 { broker.kill() }
            if i == 180 { try broker.start() }
            Thread.sleep(forTimeInterval: 0.005)
        }
        let expected = Set(identities)
        func received() -> [String] {
            subscriber.objects(onTopicsEndingWith: "/event").compactMap { $0["change"] as? String == "new" ? $0["identity"] as? String : nil }
        }
        #expect(subscriber.waitFor(seconds: 30) { Set(received()) == expected },
                "received \(Set(received()).count) of 300; missing \(expected.subtracting(received()).sorted())")
        #expect(subscriber.waitFor(seconds: 10) { (try? store.outboxStatus().pending) == 0 }, "the outbox is emptied once acknowledged")
        stop.store(true, ordering: .relaxed)
        #expect(subscriber.waitFor(seconds: 5) { done.load(ordering: .acquiring) })
        let got = received()
        let duplicates = got.count - Set(got).count
        // QoS 1 is at least once: a message the broker had when it was killed but whose PUBACK was lost comes again.
        print("300 changes, broker killed after 100 and back after 180: \(Set(got).count) received, \(duplicates) more than once")
        #expect((finalReport.withLock { $0 }?.connections ?? 0) >= 2, "reconnected after the restart")
        // The availability: online while running, offline after a clean stop (retained).
        #expect(subscriber.waitFor(seconds: 5) { subscriber.last("quench/testpi/status")?.payload == Array("offline".utf8) })
    }

    @Test("wrong password, or no broker: a clear error and exit 1 from `quench mqtt sync`, nothing taken from the outbox")
    func refusedAndUnreachable() throws {
        let broker = try MosquittoBroker(users: ["quench": "right horse battery"])
        let (path, store) = try history()
        let folder = (path as NSString).deletingLastPathComponent
        try "wrong\n".write(toFile: folder + "/wrong", atomically: true, encoding: .utf8)
        try "right horse battery\n".write(toFile: folder + "/right", atomically: true, encoding: .utf8)
        // As a password file should be (one others can read is a doctor warning of its own).
        chmod(folder + "/wrong", 0o600)
        chmod(folder + "/right", 0o600)
        let url = "mqtt://quench@127.0.0.1:\(broker.port)"
        let never = try runQuench(["mqtt", "status", "--db", path])
        #expect(never.stdout.contains("never started"), "\(never.stdout)")

        // The first attempt starts the outbox even though the broker refuses it.
        let wrong = try runQuench(["mqtt", "sync", "--db", path, "--broker", url, "--password-file", folder + "/wrong", "--node", "testpi"])
        #expect(wrong.status == 1)
        #expect(wrong.stderr.contains("refused the connection") && wrong.stderr.contains("not authorised")
                && wrong.stderr.contains("password file"), "\(wrong.stderr)")
        _ = try store.addManual(ml: 300, at: .wallClockNow, note: nil, identity: "manual|after-refusal")
        let gone = try TestPorts.next()
        let unreachable = try runQuench(["mqtt", "sync", "--db", path, "--broker", "mqtt://127.0.0.1:\(gone)", "--node", "testpi"])
        #expect(unreachable.status == 1)
        #expect(unreachable.stderr.contains("127.0.0.1:\(gone)") && unreachable.stderr.contains("Connection refused"), "\(unreachable.stderr)")
        let missing = try runQuench(["mqtt", "sync", "--db", path, "--broker", url, "--password-file", folder + "/nope"])
        #expect(missing.status != 0 && missing.stderr.contains("password file") && missing.stderr.contains("nope"), "\(missing.stderr)")
        #expect(try store.outboxStatus().pending == 1, "the change waits")

        // What `quench doctor` asks.
        var right = MQTTSettings(broker: try BrokerAddress(parsing: url), passwordFile: folder + "/right", node: "testpi")
        #expect(MQTTPublisher.probe(right) == nil)
        right.passwordFile = folder + "/wrong"
        #expect(MQTTPublisher.probe(right)?.contains("not authorised") == true)

        let ok = try runQuench(["mqtt", "sync", "--db", path, "--broker", url, "--password-file", folder + "/right", "--node", "testpi"])
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(ok.stdout.contains("published 1 change to mqtt://quench@127.0.0.1:\(broker.port) (1 acknowledged)"), "\(ok.stdout)")
        #expect(try store.outboxStatus().pending == 0)
    }

    @Test("mqtts:// with a CA made here (openssl): the broker's certificate is checked, a wrong CA refused",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl"),
                   "SKIPPED: openssl is not installed: apt-get install -y openssl (the CI's .ci/run does)"))
    func tls() throws {
        let folder = try TemporaryFolder.create("quench-tls")
        func openssl(_ args: [String]) throws {
            let r = try runProgram("/usr/bin/openssl", args)
            guard r.status == 0 else { throw BrokerError("openssl \(args.first ?? ""): \(r.stderr)") }
        }
        for name in ["ca", "other-ca"] {
            try openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=Quench test \(name)",
                         "-keyout", "\(folder)/\(name).key", "-out", "\(folder)/\(name).crt"])
        }
        try "subjectAltName=DNS:localhost,IP:127.0.0.1\n".write(toFile: folder + "/san.ext", atomically: true, encoding: .utf8)
        try openssl(["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout", "\(folder)/server.key", "-out", "\(folder)/server.csr"])
        try openssl(["x509", "-req", "-in", "\(folder)/server.csr", "-CA", "\(folder)/ca.crt", "-CAkey", "\(folder)/ca.key", "-CAcreateserial",
                     "-days", "2", "-extfile", "\(folder)/san.ext", "-out", "\(folder)/server.crt"])
        let broker = try MosquittoBroker(tls: .init(certificate: "\(folder)/server.crt", key: "\(folder)/server.key"))
        let tlsPort = try #require(broker.tlsPort)
        let (path, _) = try history()
        let good = try runQuench(["mqtt", "sync", "--db", path, "--broker", "mqtts://localhost:\(tlsPort)", "--ca-file", "\(folder)/ca.crt", "--node", "testpi"])
        #expect(good.status == 0, "\(good.stderr)")
        #expect(good.stdout.contains("mqtts://localhost:\(tlsPort)"))
        let bad = try runQuench(["mqtt", "sync", "--db", path, "--broker", "mqtts://localhost:\(tlsPort)", "--ca-file", "\(folder)/other-ca.crt", "--node", "testpi"])
        #expect(bad.status == 1)
        // The cause, not libmosquitto's "A TLS error occurred".
        #expect(bad.stderr.contains("certificate verify failed") && bad.stderr.contains("--ca-file") && !bad.stderr.contains("A TLS error occurred"),
                "\(bad.stderr)")
        print("wrong CA: \(bad.stderr)")
        // A name the certificate was not made for (it says localhost and 127.0.0.1).
        try openssl(["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=elsewhere", "-keyout", "\(folder)/other.key", "-out", "\(folder)/other.csr"])
        try "subjectAltName=DNS:elsewhere.example\n".write(toFile: folder + "/other.ext", atomically: true, encoding: .utf8)
        try openssl(["x509", "-req", "-in", "\(folder)/other.csr", "-CA", "\(folder)/ca.crt", "-CAkey", "\(folder)/ca.key", "-CAcreateserial",
                     "-days", "2", "-extfile", "\(folder)/other.ext", "-out", "\(folder)/other.crt"])
        let misnamed = try MosquittoBroker(tls: .init(certificate: "\(folder)/other.crt", key: "\(folder)/other.key"))
        let wrongName = try runQuench(["mqtt", "sync", "--db", path, "--broker", "mqtts://localhost:\(try #require(misnamed.tlsPort))",
                                       "--ca-file", "\(folder)/ca.crt", "--node", "testpi"])
        print("wrong name: \(wrongName.stderr)")
        #expect(wrongName.status == 1 && !wrongName.stderr.contains("A TLS error occurred"), "\(wrongName.stderr)")
        // mqtts:// to a plain port: the protocol.
        let plain = try runQuench(["mqtt", "sync", "--db", path, "--broker", "mqtts://localhost:\(broker.port)", "--ca-file", "\(folder)/ca.crt"])
        print("plain port: \(plain.stderr)")
        #expect(plain.status == 1 && !plain.stderr.contains("A TLS error occurred"), "\(plain.stderr)")
        // And plain mqtt:// to the TLS port: the hint says mqtts:// (it said only that the broker closed the connection).
        let toTLS = try runQuench(["mqtt", "sync", "--db", path, "--broker", "mqtt://localhost:\(tlsPort)"])
        #expect(toTLS.status == 1 && toTLS.stderr.contains("mqtts:// then"), "\(toTLS.stderr)")
        // A host name that does not resolve: said in words (libmosquitto's are "Lookup error.").
        let unknown = try runQuench(["mqtt", "sync", "--db", path, "--broker", "mqtt://nosuchhost.invalid:1883"])
        #expect(unknown.status == 1 && unknown.stderr.contains("nosuchhost.invalid:1883: the host name is not known here"), "\(unknown.stderr)")

        // A broker that wants a client certificate signed by its CA. Under TLS 1.3 the handshake succeeds
        // without one and the broker closes the connection after it: the error says what that means.
        let strict = try MosquittoBroker(tls: .init(certificate: "\(folder)/server.crt", key: "\(folder)/server.key", clientCA: "\(folder)/ca.crt"))
        let strictURL = "mqtts://localhost:\(try #require(strict.tlsPort))"
        let noCertificate = try runQuench(["mqtt", "sync", "--db", path, "--broker", strictURL, "--ca-file", "\(folder)/ca.crt", "--node", "testpi"])
        print("no client certificate: \(noCertificate.stderr)")
        #expect(noCertificate.status == 1 && noCertificate.stderr.contains("--cert and --key") && !noCertificate.stderr.contains("The connection was lost"),
                "\(noCertificate.stderr)")
        for (name, ca) in [("client", "ca"), ("stranger", "other-ca")] {
            try openssl(["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=quench \(name)", "-keyout", "\(folder)/\(name).key", "-out", "\(folder)/\(name).csr"])
            try openssl(["x509", "-req", "-in", "\(folder)/\(name).csr", "-CA", "\(folder)/\(ca).crt", "-CAkey", "\(folder)/\(ca).key", "-CAcreateserial",
                         "-days", "2", "-out", "\(folder)/\(name).crt"])
        }
        let stranger = try runQuench(["mqtt", "sync", "--db", path, "--broker", strictURL, "--ca-file", "\(folder)/ca.crt", "--node", "testpi",
                                      "--cert", "\(folder)/stranger.crt", "--key", "\(folder)/stranger.key"])
        print("a client certificate another CA signed: \(stranger.stderr)")
        #expect(stranger.status == 1 && stranger.stderr.contains("client certificate") && !stranger.stderr.contains("The connection was lost"),
                "\(stranger.stderr)")
        let accepted = try runQuench(["mqtt", "sync", "--db", path, "--broker", strictURL, "--ca-file", "\(folder)/ca.crt", "--node", "testpi",
                                      "--cert", "\(folder)/client.crt", "--key", "\(folder)/client.key"])
        #expect(accepted.status == 0, "with its CA's client certificate: \(accepted.stderr)")
    }

    @Test("beside a gateway (`quench run --mqtt`): publishes as changes come, says offline when stopped")
    func background() throws {
        let broker = try MosquittoBroker()
        let subscriber = TestSubscriber(port: broker.port, clientID: "sub-background")
        defer { subscriber.close() }
        #expect(subscriber.waitFor(seconds: 5) { broker.log.contains("sub-background") })
        let (path, store) = try history()
        let publisher = try BackgroundPublisher(settings: try settings(broker), environment: environment(path), logger: Self.logger)
        #expect(subscriber.waitFor(seconds: 5) { subscriber.last("quench/testpi/status")?.payload == Array("online".utf8) })
        _ = try store.addManual(ml: 330, at: .wallClockNow, note: nil, identity: "manual|beside")
        #expect(subscriber.waitFor(seconds: 5) { subscriber.objects(onTopicsEndingWith: "/event").contains { $0["identity"] as? String == "manual|beside" } })
        publisher.stop()
        #expect(subscriber.waitFor(seconds: 5) { subscriber.last("quench/testpi/status")?.payload == Array("offline".utf8) })
        // A clean goodbye: the DISCONNECT reaches the broker, so it does not publish the will as well.
        // (Without it mosquitto logs the client "disconnected due to out of memory", or "closed its connection".)
        #expect(subscriber.waitFor(seconds: 5) {
            broker.log.split(separator: "\n").contains { $0.contains("Client quench-testpi") && $0.hasSuffix(" disconnected.") }
        }, "\(broker.log.suffix(600))")
        Thread.sleep(forTimeInterval: 0.5)
        #expect(subscriber.messages.filter { $0.topic == "quench/testpi/status" && $0.payload == Array("offline".utf8) }.count == 1)
        #expect(throws: MQTTSetupError.self) {
            var s = try settings(broker)
            s.passwordFile = "/nonexistent/password"
            _ = try BackgroundPublisher(settings: s, environment: environment(path), logger: Self.logger)
        }
    }

    @Test("a reminder given while the publisher runs becomes an event message for Home Assistant")
    func reminderPublished() throws {
        let broker = try MosquittoBroker()
        let subscriber = TestSubscriber(port: broker.port, clientID: "sub-reminder")
        defer { subscriber.close() }
        #expect(subscriber.waitFor(seconds: 5) { broker.log.contains("sub-reminder") })
        let (path, store) = try history()
        let s = try settings(broker)
        let env = environment(path)
        let stop = Atomic<Bool>(false)
        let thread = Thread {
            guard let publisher = try? MQTTPublisher(settings: s, environment: env, logger: Self.logger, announcesAvailability: true) else { return }
            publisher.stateInterval = 0.2
            publisher.run { stop.load(ordering: .relaxed) }
        }
        thread.start()
        defer { stop.store(true, ordering: .relaxed) }
        #expect(subscriber.waitFor(seconds: 5) { subscriber.last("quench/testpi/person/1/state") != nil })
        try store.markReminded(at: .wallClockNow)
        #expect(subscriber.waitFor(seconds: 5) { !subscriber.objects(onTopicsEndingWith: "/reminder").isEmpty })
        let event = try #require(subscriber.objects(onTopicsEndingWith: "/reminder").first)
        #expect(event["event_type"] as? String == "reminder" && event["goal_ml"] as? Double == 2000 && event["reason"] as? String != nil)
        #expect(event["person"] as? String == "me")
    }

    @Test("a household: a retained state, entities and reminders per person, each with their own bottles and intake")
    func perPerson() throws {
        let broker = try MosquittoBroker()
        let subscriber = TestSubscriber(port: broker.port, clientID: "sub-people")
        defer { subscriber.close() }
        #expect(subscriber.waitFor(seconds: 5) { broker.log.contains("sub-people") })
        let (path, store) = try history()
        let ann = try store.addPerson(name: "Ann Lee")
        try store.setGoal(ml: 1500, from: CivilDay(number: Int(Timestamp.wallClockNow.secondsSince1970 / 86_400) - 2), person: ann.id)
        try store.saveDevice(Device(address: "C8:2A:3F:00:3F:2B", name: "Ann's bottle", profile: "hidrate-spark", addedAt: .wallClockNow,
                                    person: "Ann Lee"))
        let publisher = try MQTTPublisher(settings: try settings(broker), environment: environment(path), logger: Self.logger,
                                          announcesAvailability: false)
        _ = try store.insert([(IntakeEvent(identity: "dev2|sip|1", kind: .sip, ml: 90, time: .wallClockNow, remainingML: 410,
                                           source: .sensor, device: "C8:2A:3F:00:3F:2B", recordedAt: .wallClockNow), [])])
        try store.markReminded(at: .wallClockNow, person: ann.id)
        _ = try publisher.sync(timeout: 10)

        let meTopic = "quench/testpi/person/1/state", annTopic = "quench/testpi/person/\(ann.id)/state"
        #expect(subscriber.waitFor(seconds: 5) { subscriber.last(meTopic) != nil && subscriber.last(annTopic) != nil })
        let me = try #require(json(subscriber.last(meTopic))), annState = try #require(json(subscriber.last(annTopic)))
        #expect(me["person"] as? String == "me" && me["intake_ml"] as? Double == 120 && me["goal_ml"] as? Double == 2000)
        #expect(annState["person"] as? String == "Ann Lee" && annState["intake_ml"] as? Double == 90 && annState["goal_ml"] as? Double == 1500)
        #expect((annState["bottles"] as? [[String: Any]])?.map { $0["device"] as? String } == ["C8:2A:3F:00:3F:2B"])
        #expect((me["bottles"] as? [[String: Any]])?.map { $0["device"] as? String } == ["C8:2A:3F:00:3F:2A"])

        let configs = subscriber.messages.filter { $0.topic.hasPrefix("homeassistant/") && $0.topic.hasSuffix("/config") }
        let byTopic = Dictionary(configs.map { ($0.topic, $0) }, uniquingKeysWith: { _, b in b })
        #expect(byTopic.count == 43, "the gateway's, 19 per person, 2 per bottle: \(byTopic.keys.sorted())")
        let annIntake = try #require(json(byTopic["homeassistant/sensor/quench_testpi/p\(ann.id)_intake_today/config"]))
        #expect(annIntake["state_topic"] as? String == annTopic && annIntake["name"] as? String == "Intake today")
        #expect((annIntake["device"] as? [String: Any])?["name"] as? String == "Ann Lee", "her own device, named for her")
        #expect(annIntake["unique_id"] as? String == "quench_testpi_p\(ann.id)_intake_today")

        // Her reminder, on her topic, saying whose.
        #expect(subscriber.waitFor(seconds: 5) { subscriber.last("quench/testpi/person/\(ann.id)/reminder") != nil })
        let reminder = try #require(json(subscriber.last("quench/testpi/person/\(ann.id)/reminder")))
        #expect(reminder["person"] as? String == "Ann Lee" && reminder["goal_ml"] as? Double == 1500)
        #expect(subscriber.last("quench/testpi/person/1/reminder") == nil)

        // Removed, her history given to me: her retained state goes with her entities (it stayed on
        // the broker, and a Home Assistant restarted later read her last day from it).
        try store.removePerson(id: ann.id, movingTo: 1)
        _ = try publisher.sync(timeout: 10)
        #expect(subscriber.waitFor(seconds: 5) { subscriber.last(annTopic)?.payload.isEmpty == true }, "her state is cleared")
        #expect(subscriber.last("homeassistant/sensor/quench_testpi/p\(ann.id)_intake_today/config")?.payload.isEmpty == true)
        // Her state is cleared after every one of her entities' configs: cleared before, the entities still
        // listening rendered their templates over an empty payload, an error each in Home Assistant's log.
        let clearedAt = subscriber.messages.enumerated().filter { $0.element.payload.isEmpty }.map { ($0.offset, $0.element.topic) }
        let stateCleared = try #require(clearedAt.first { $0.1 == annTopic }?.0)
        let configsCleared = clearedAt.filter { $0.1.hasPrefix("homeassistant/") && $0.1.contains("/p\(ann.id)_") }.map(\.0)
        #expect(configsCleared.count >= 10 && configsCleared.allSatisfy { $0 < stateCleared }, "\(clearedAt.map(\.1))")
        #expect(subscriber.waitFor(seconds: 5) { json(subscriber.last(meTopic))?["intake_ml"] as? Double == 210 }, "mine, with her 90 mL")
    }
}
#endif

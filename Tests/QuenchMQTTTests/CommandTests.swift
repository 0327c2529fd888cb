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

@Suite("remote commands (Home Assistant's buttons)")
struct RemoteCommandTests {
    func parse(_ s: String) throws(RemoteCommandError) -> RemoteCommand { try RemoteCommand(parsing: Array(s.utf8)) }

    @Test("parsed and bounded; each refusal names the field")
    func parsing() throws {
        #expect(try parse(#"{"id":"ha-1-2","action":"add","amount":"250ml"}"#) == RemoteCommand(id: "ha-1-2", action: .add, amount: .text("250ml")))
        #expect(try parse(#"{"id":"a:b.c_d","action":"goal","amount":2500}"#) == RemoteCommand(id: "a:b.c_d", action: .goal, amount: .millilitres(2500)))
        #expect(try parse(#"{"id":"x","action":"undo"}"#) == RemoteCommand(id: "x", action: .undo))
        #expect(try parse(#"{"id":"x","action":"acknowledge"}"#) == RemoteCommand(id: "x", action: .acknowledge))
        let refusals: [(String, String)] = [
            ("nonsense", "not a JSON object"), ("[1,2]", "not a JSON object"),
            (#"{"action":"undo"}"#, "field 'id'"), (#"{"id":"","action":"undo"}"#, "field 'id'"),
            (#"{"id":"a b","action":"undo"}"#, "field 'id'"), (#"{"id":"\#(String(repeating: "x", count: 65))","action":"undo"}"#, "field 'id'"),
            (#"{"id":"é","action":"undo"}"#, "field 'id'"),
            (#"{"id":"x","action":"drop"}"#, "field 'action' must be add, undo, goal or acknowledge (got drop)"),
            (#"{"id":"x","action":"add"}"#, "field 'amount' is needed to add"),
            (#"{"id":"x","action":"goal","amount":-5}"#, "field 'amount' must be a daily goal between 100 mL and 20 L (in mL)"),
            (#"{"id":"x","action":"goal","amount":1e300}"#, "field 'amount' must be a daily goal between 100 mL and 20 L (in mL)"),
            (#"{"id":"x","action":"goal","amount":99999}"#, "field 'amount' must be a daily goal between 100 mL and 20 L (in mL)"),
            // A field of another type, or one no command takes, is named: `at` was dropped, and the drink went in as now.
            (#"{"id":5,"action":"add","amount":"250ml"}"#, "field 'id' must be text"),
            (#"{"id":"x","action":7}"#, "field 'action' must be text"),
            (#"{"id":"x","action":"add","amount":["250ml"]}"#, "field 'amount' must be text with its unit"),
            (#"{"id":"x","action":"add","amount":true}"#, "field 'amount' must be text with its unit"),
            (#"{"id":"t17","action":"add","amount":"250ml","at":"yesterday"}"#, "field 'at' is not one a command takes (id, action and amount): nothing was done"),
            // A drink's number alone: 8 for someone in fl oz went in as 8 mL.
            (#"{"id":"x","action":"add","amount":8}"#, #"field 'amount' of a drink is text with its unit ("250ml", "8oz"), not a number: 8 could be mL or fl oz"#),
            (#"{"id":"x","action":"add","amount":"\#(String(repeating: "1", count: 40))"}"#, "longer than 32"),
            (String(repeating: " ", count: 1025), "at most 1024"),
        ]
        for (payload, why) in refusals {
            #expect {
                _ = try parse(payload)
            } throws: { error in "\(error)".contains(why) }
        }
        // The id is said back with a refusal whenever it could be read (Home Assistant's Last command ties it to the press).
        #expect { _ = try parse(#"{"id":"t17","action":"add","amount":"250ml","at":"yesterday"}"#) } throws: { ($0 as? RemoteCommandError)?.id == "t17" }
        #expect { _ = try parse(#"{"id":"t18","action":"add","amount":true}"#) } throws: { ($0 as? RemoteCommandError)?.id == "t18" }
    }

    func history() throws -> (HistoryEnvironment, IntakeStore) {
        let path = try TemporaryFolder.create("quench-commands") + "/q.sqlite"
        let store = try IntakeStore(path: path)
        try store.setGoal(ml: 2000, from: CivilDay(number: Int(Timestamp.wallClockNow.secondsSince1970 / 86_400) - 2))
        return (HistoryEnvironment(databasePath: path, now: .wallClockNow, timeZone: LocalZone(identifier: "Europe/London")), store)
    }

    @Test("acknowledge (Home Assistant's button): the carer's alert about the person, once, as the state says; refused in words when none was sent")
    func acknowledgeTheCarersAlert() throws {
        var (env, store) = try history()
        env.now = Timestamp(iso8601: "2026-11-24T12:00:00Z")!  // noon in London: in the waking hours
        let me = try #require(try store.person(named: "me"))
        try store.setPersonAlert(id: me.id, afterMinutes: 60)
        let ack = RemoteCommand(id: "ha-9", action: .acknowledge)
        #expect { try ack.perform(env, person: "me") } throws: { "\($0)".contains("there is no alert about me to acknowledge") }
        // A drink at 10:00 and watched after an hour: at noon the timer sends the alert; the state says it is open.
        _ = try store.addManual(ml: 250, at: Timestamp(iso8601: "2026-11-24T10:00:00Z")!, note: nil, identity: "at ten", person: me.id)
        #expect(try History.deliverCarerAlerts(env).map(\.person) == ["me"])
        #expect(try History.personStates(env).first?.carerAlertOpen == true)
        #expect(try ack.perform(env, person: "me") == "Acknowledged the alert about me.")
        #expect(try ack.perform(env, person: "me") == "The alert about me was already acknowledged at 12:00.", "the same press again")
        let state = try #require(try History.personStates(env).first)
        #expect(!state.carerAlertOpen && state.carerAlertSentAt == "2026-11-24T12:00:00+00:00", "\(state)")
    }

    @Test("the same command twice changes the history once (an add by its identity, an undo by its record)")
    func idempotent() throws {
        let (env, store) = try history()
        let add = RemoteCommand(id: "ha-1", action: .add, amount: .text("250ml"))
        #expect(try add.perform(env, person: "me").hasPrefix("Added #1: sip 250 mL"))
        #expect(try add.perform(env, person: "me").hasPrefix("Already added #1: sip 250 mL"))
        #expect(try store.events().map(\.identity) == ["mqtt|ha-1"])
        // The id again with another amount, or for someone else: refused, naming the drink it was used
        // for (it answered "already added" and stored nothing).
        _ = try store.addPerson(name: "Ann")
        for (amount, person) in [(RemoteCommand.Amount.text("500ml"), "me"), (.text("250ml"), "Ann")] {
            #expect {
                try RemoteCommand(id: "ha-1", action: .add, amount: amount).perform(env, person: person)
            } throws: { "\($0)".contains("the id 'ha-1' was already used for #1, 250 mL for me at ") && "\($0)".contains("a new drink needs an id of its own") }
        }
        #expect(try store.events().map(\.identity) == ["mqtt|ha-1"])
        _ = try RemoteCommand(id: "ha-2", action: .add, amount: .millilitres(100)).perform(env, person: "me")
        let undo = RemoteCommand(id: "ha-3", action: .undo)
        #expect(try undo.perform(env, person: "me").hasPrefix("Deleted #2"))
        #expect(try undo.perform(env, person: "me").hasPrefix("Already deleted #2"), "the same undo again: #1 stays")
        #expect(try store.events().map(\.ml) == [250])
        #expect(try RemoteCommand(id: "ha-4", action: .undo).perform(env, person: "me").hasPrefix("Deleted #1"))
        #expect(throws: HistoryError.self) { try RemoteCommand(id: "ha-5", action: .undo).perform(env, person: "me") }
        #expect(try RemoteCommand(id: "ha-6", action: .goal, amount: .millilitres(2500)).perform(env, person: "me").contains("2,500 mL"))
        #expect {
            try RemoteCommand(id: "ha-6b", action: .goal, amount: .millilitres(50)).perform(env, person: "me")
        } throws: { "\($0)".contains("'50ml'") }  // as sent: it said '50.0ml'
        #expect {
            try RemoteCommand(id: "ha-7", action: .goal, amount: .text("50ml")).perform(env, person: "me")
        } throws: { "\($0)".contains("between 100 mL and 20 L") }
        #expect {
            try RemoteCommand(id: "ha-8", action: .add, amount: .text("lots")).perform(env, person: "me")
        } throws: { "\($0)".contains("lots") }
        #expect(try store.events(EventQuery(includeDeleted: true)).count == 2, "nothing stored by a refusal")
    }

    /// A Home Assistant trial: a goal sent again after a later one undid it; an undo under a drink's id deleted
    /// another person's drink; one under another person's undo said "already deleted" of a drink not theirs.
    @Test("an id names one command, ever: a goal again changes nothing, and an id is refused for another action or person")
    func anIdNamesOneCommand() throws {
        let (env, store) = try history()
        let ann = try store.addPerson(name: "Ann")
        func goal() throws -> Double { try #require(try store.goals(person: nil).last?.ml) }
        _ = try RemoteCommand(id: "g1", action: .goal, amount: .millilitres(2500)).perform(env, person: "me")
        _ = try RemoteCommand(id: "g2", action: .goal, amount: .text("3l")).perform(env, person: "me")
        #expect(try RemoteCommand(id: "g1", action: .goal, amount: .millilitres(2500)).perform(env, person: "me").hasPrefix("Already done at "))
        #expect(try goal() == 3000, "the later goal stays")
        _ = try RemoteCommand(id: "a1", action: .add, amount: .text("300ml")).perform(env, person: "me")
        _ = try RemoteCommand(id: "a2", action: .add, amount: .text("200ml")).perform(env, person: "Ann")
        _ = try RemoteCommand(id: "u1", action: .undo).perform(env, person: "me")
        for (command, person, used) in [(RemoteCommand(id: "a2", action: .undo), "Ann", "drink #2"),
                                        (RemoteCommand(id: "u1", action: .undo), "Ann", "another person's undo"),
                                        (RemoteCommand(id: "g1", action: .undo), "me", "a goal"),
                                        (RemoteCommand(id: "g1", action: .goal, amount: .millilitres(2500)), "Ann", "another goal"),
                                        (RemoteCommand(id: "g1", action: .goal, amount: .millilitres(2600)), "me", "another goal"),
                                        (RemoteCommand(id: "u1", action: .goal, amount: .millilitres(2500)), "me", "an undo"),
                                        (RemoteCommand(id: "a1", action: .goal, amount: .millilitres(2500)), "me", "drink #1")] {
            #expect {
                try command.perform(env, person: person)
            } throws: { "\($0)" == "the id '\(command.id)' was already used for \(used): each command needs an id of its own" }
        }
        #expect {
            try RemoteCommand(id: "u1", action: .add, amount: .text("100ml")).perform(env, person: "me")
        } throws: { "\($0)" == "the id 'u1' was already used for an undo: each command needs an id of its own" }
        #expect(try store.events().map(\.ml) == [200], "Ann's drink stays; me's was undone once")
        // An undo that found nothing is still its person's (a review: another's undo under its id said "nothing to undo").
        let bo = try store.addPerson(name: "Bo")
        #expect(throws: HistoryError.self) { try RemoteCommand(id: "u2", action: .undo).perform(env, person: "Bo") }
        #expect {
            try RemoteCommand(id: "u2", action: .undo).perform(env, person: "Ann")
        } throws: { "\($0)" == "the id 'u2' was already used for another person's undo: each command needs an id of its own" }
        _ = bo
        #expect(try store.goals(person: ann.id).isEmpty && goal() == 3000)
    }

    @Test("a command on a person's topic: carried out, and what became of it published; nobody's topic ignored")
    func handled() throws {
        let (env, store) = try history()
        let settings = MQTTSettings(broker: try BrokerAddress(parsing: "mqtt://127.0.0.1"), node: "testpi", nodeID: "testpi")
        let topics = Topics(settings, nodeID: "testpi")
        let states = try History.personStates(env)
        let topic = topics.command(states[0])
        #expect(topic == "quench/testpi/person/1/command")
        let done = try #require(RemoteCommands.handle(topic: topic, payload: Array(#"{"id":"h1","action":"add","amount":"8oz"}"#.utf8),
                                                      states: states, environment: env, topics: topics, now: .wallClockNow))
        #expect(done.refusal == nil && done.result.topic == topic + "/result" && !done.result.retain)
        #expect(done.result.payload.contains(#""ok":true"#) && done.result.payload.contains(#""id":"h1""#), "\(done.result.payload)")
        #expect(try store.events().map(\.identity) == ["mqtt|h1"])
        // The state's volumes to a tenth of a mL, as its lifetime was (Home Assistant showed 236.5882365 beside 236.6).
        let after = try #require(try History.personStates(env).first)
        #expect(after.intakeMl == 236.6 && after.intakeSinceResetMl == 236.6 && after.lifetimeMl == 236.6, "\(after)")
        let refused = try #require(RemoteCommands.handle(topic: topic, payload: Array(#"{"id":"h2","action":"add","amount":"lots"}"#.utf8),
                                                         states: states, environment: env, topics: topics, now: .wallClockNow))
        #expect(refused.refusal?.contains("lots") == true && refused.result.payload.contains(#""ok":false"#))
        // Someone not here: answered on the result topic (it was only logged), nothing stored.
        let nobody = try #require(RemoteCommands.handle(topic: "quench/testpi/person/99/command", payload: Array(#"{"id":"h3","action":"add","amount":"1l"}"#.utf8),
                                                        states: states, environment: env, topics: topics, now: .wallClockNow))
        #expect(nobody.result.topic == "quench/testpi/person/99/command/result" && nobody.result.payload.contains(#""ok":false"#))
        #expect(nobody.refusal?.contains("nobody here has the id 99") == true && nobody.result.payload.contains(#""id":"h3""#), "\(nobody.result.payload)")
        #expect(try store.events().map(\.identity) == ["mqtt|h1"])
        // A person's name or `01` in the topic is answered too (no answer came, or "nobody here has the id 1").
        for named in ["01", "me"] {
            let wrong = try #require(RemoteCommands.handle(topic: "quench/testpi/person/\(named)/command", payload: Array(#"{"id":"h4","action":"undo"}"#.utf8),
                                                           states: states, environment: env, topics: topics, now: .wallClockNow))
            #expect(wrong.refusal?.hasPrefix("'\(named)' is not a person's id: a person's commands go to …/person/ID/command") == true, "\(wrong.refusal ?? "")")
        }
        #expect(RemoteCommands.handle(topic: "quench/testpi/other", payload: [], states: states, environment: env,
                                      topics: topics, now: .wallClockNow) == nil)
        // An undo's amount is refused, not dropped (the last drink was deleted whatever it was).
        let undoAmount = try #require(RemoteCommands.handle(topic: topic, payload: Array(#"{"id":"h5","action":"undo","amount":"250ml"}"#.utf8),
                                                            states: states, environment: env, topics: topics, now: .wallClockNow))
        #expect(undoAmount.refusal == "field 'amount' is not one an undo takes: nothing was done")
        #expect(try store.events().map(\.identity) == ["mqtt|h1"])
    }
}

/// Commands through a real broker to a running publisher.
@Suite("remote commands (real mosquitto)", .serialized, .enabled(if: MosquittoBroker.isInstalled, Comment(rawValue: MosquittoBroker.missing)))
struct RemoteCommandBrokerTests {
    @Test("published on the command topic: stored once though sent twice, the result published, the state follows")
    func throughTheBroker() throws {
        let broker = try MosquittoBroker()
        let subscriber = TestSubscriber(port: broker.port, clientID: "sub-commands")
        defer { subscriber.close() }
        #expect(subscriber.waitFor(seconds: 5) { broker.log.contains("sub-commands") })
        let path = try TemporaryFolder.create("quench-commands") + "/q.sqlite"
        let store = try IntakeStore(path: path)
        let env = HistoryEnvironment(databasePath: path, now: .wallClockNow, timeZone: LocalZone(identifier: "Europe/London"))
        let settings = MQTTSettings(broker: try BrokerAddress(parsing: broker.url), node: "testpi", nodeID: "testpi")
        var logger = Logger(label: "test")
        logger.logLevel = .error
        let publisher = try BackgroundPublisher(settings: settings, environment: env, logger: logger)
        defer { publisher.stop() }
        #expect(subscriber.waitFor(seconds: 5) { subscriber.last("quench/testpi/person/1/state") != nil })

        // Home Assistant's side: a client of its own, sending the same command twice (a QoS 1 repeat).
        let ha = try MQTTClient(clientID: "ha-test")
        var connected = false
        ha.onConnect = { connected = $0 == 0 }
        try ha.connect(host: "127.0.0.1", port: Int32(broker.port))
        #expect(LiveFixture.waitFor(5) { (try? ha.loop(timeoutMS: 20)) != nil && connected })
        for _ in 0..<2 {
            try ha.publish(topic: "quench/testpi/person/1/command", payload: Array(#"{"id":"ha-42","action":"add","amount":"300ml"}"#.utf8),
                           qos: 1, retain: false)
        }
        for _ in 0..<10 { try ha.loop(timeoutMS: 20) }
        #expect(subscriber.waitFor(seconds: 5) { subscriber.objects(onTopicsEndingWith: "/command/result").count == 2 })
        let results = subscriber.objects(onTopicsEndingWith: "/command/result")
        #expect(results.map { $0["ok"] as? Bool } == [true, true])
        #expect((results.last?["said"] as? String)?.hasPrefix("Already added") == true, "\(results)")
        #expect(try store.events().map(\.ml) == [300])
        #expect(subscriber.waitFor(seconds: 5) {
            (try? JSONSerialization.jsonObject(with: Data(subscriber.last("quench/testpi/person/1/state")?.payload ?? [])) as? [String: Any])?["intake_ml"] as? Double == 300
        })
        ha.disconnect()
    }

    @Test("a retained command is not carried out: the broker would give it again at every start of the publisher")
    func aRetainedCommandIsNotCarriedOut() throws {
        let broker = try MosquittoBroker()
        let subscriber = TestSubscriber(port: broker.port, clientID: "sub-retained")
        defer { subscriber.close() }
        #expect(subscriber.waitFor(seconds: 5) { broker.log.contains("sub-retained") })
        let ha = try connectedTestClient("ha-retained", port: broker.port)
        try ha.publishNow("quench/testpi/person/1/command", #"{"id":"kept-1","action":"add","amount":"300ml"}"#, retain: true)
        ha.disconnect()
        let path = try TemporaryFolder.create("quench-commands") + "/q.sqlite"
        let store = try IntakeStore(path: path)
        let env = HistoryEnvironment(databasePath: path, now: .wallClockNow, timeZone: LocalZone(identifier: "Europe/London"))
        let settings = MQTTSettings(broker: try BrokerAddress(parsing: broker.url), node: "testpi", nodeID: "testpi")
        let log = LogLines()
        let publisher = try BackgroundPublisher(settings: settings, environment: env, logger: log.logger)
        #expect(subscriber.waitFor(seconds: 5) { subscriber.last("quench/testpi/person/1/state") != nil })
        #expect(subscriber.waitFor(seconds: 5) { log.all.contains { $0.contains("a retained command is not carried out") } }, "\(log.all)")
        publisher.stop()
        #expect(try store.events().isEmpty, "nothing added")
        #expect(subscriber.objects(onTopicsEndingWith: "/command/result").isEmpty)
    }
}
#endif

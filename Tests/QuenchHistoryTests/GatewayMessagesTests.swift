import QuenchCore
import QuenchHistory
import QuenchStore
import QuenchTestSupport
import Testing

/// What a hub reads from the broker (issue 25): anyone who can publish there
/// can send it anything, so every field is bounded and a refusal names it.
@Suite("gateway messages: a change, a request, an answer")
struct GatewayMessagesTests {
    static let now = Timestamp(secondsSince1970: 1_790_000_000)
    static let change = """
        {"database_id":"a1b2c3d4e5f60718","seq":7,"identity":"C8:2A:3F:00:00:01|sip|1790000000000","change":"new","changed_at":"2026-09-21T14:13:20Z",\
        "event":{"id":3,"identity":"C8:2A:3F:00:00:01|sip|1790000000000","kind":"sip","ml":24.5,"time":1790000000,"source":"sensor",\
        "device":"C8:2A:3F:00:00:01","deleted":false,"recorded_at":1790000001,"person":"Ada"}}
        """

    @Test("a change as a gateway sends it")
    func aChange() throws {
        let c = try GatewayMessages.change(node: "kitchen", payload: Array(Self.change.utf8), now: Self.now)
        #expect(c.databaseID == "a1b2c3d4e5f60718" && c.seq == 7 && c.node == "kitchen")
        #expect(c.event?.ml == 24.5 && c.event?.person == "Ada" && c.event?.source == .sensor && c.identity == c.event?.identity)
        let gone = try GatewayMessages.change(node: "kitchen", payload: Array(#"{"database_id":"x","seq":8,"identity":"i","change":"deleted"}"#.utf8), now: Self.now)
        #expect(gone.event == nil)
    }

    @Test("each bad field is refused by name", arguments: [
        (#""seq":7"#, #""seq":-1"#, "seq"),
        (#""seq":7"#, #""seq":"7""#, "seq"),
        (#""database_id":"a1b2c3d4e5f60718""#, #""database_id":"../../etc""#, "database_id"),
        (#""database_id":"a1b2c3d4e5f60718""#, #""database_id":"""#, "database_id"),
        (#""ml":24.5"#, #""ml":1e300"#, "ml"),
        (#""time":1790000000"#, #""time":-5"#, "time"),
        (#""kind":"sip""#, #""kind":"lifted""#, "kind"),
        (#""person":"Ada""#, #""person":"A\u0000da""#, "person"),
        (#""identity":"C8:2A:3F:00:00:01|sip|1790000000000","kind""#, #""identity":"other","kind""#, "identity"),
    ])
    func badFields(good: String, bad: String, field: String) {
        let payload = Self.change.replacingOccurrences(of: good, with: bad)
        #expect(payload != Self.change)
        do {
            _ = try GatewayMessages.change(node: "kitchen", payload: Array(payload.utf8), now: Self.now)
            Issue.record("accepted \(bad)")
        } catch {
            #expect("\(error)".contains(field), "\(error)")
        }
    }

    @Test("a request and an answer, both ways; an answer's parts are bounded")
    func requestAndAnswer() throws {
        let r = try GatewayMessages.request(payload: Array(GatewayMessages.request(.init(hub: "hub1", fromSeq: 12)).utf8))
        #expect(r == .init(hub: "hub1", fromSeq: 12))
        let about = GatewayMessages.Request(hub: "hub1", fromSeq: 12, databaseID: "gw1")
        #expect(about.fromSeq(answering: "gw1") == 12 && about.fromSeq(answering: "gw2") == 0, "another database answers with everything")
        #expect(try GatewayMessages.request(payload: Array(GatewayMessages.request(about).utf8)) == about)
        let events = (0..<450).map { i in
            IntakeEvent(identity: "e\(i)", kind: .sip, ml: 10, time: Self.now.adding(Double(i)), source: .manual, recordedAt: Self.now, person: "Bo")
        }
        let parts = GatewayMessages.answer(databaseID: "gw1", to: about, through: 99, whole: false, events: events)
        #expect(parts.count == 3)
        let read = try parts.map { try GatewayMessages.answer(payload: Array($0.utf8), now: Self.now) }
        #expect(read.map(\.part) == [1, 2, 3] && read.allSatisfy { $0.parts == 3 && $0.through == 99 && $0.databaseID == "gw1" })
        #expect(read.flatMap(\.events).map(\.identity) == events.map(\.identity))
        // Whom it answers, and from where: another hub's answer is not taken for its own.
        #expect(read.allSatisfy { $0.hub == "hub1" && $0.fromSeq == 12 && $0.whole == false })
        let whole = try GatewayMessages.answer(payload: Array(GatewayMessages.answer(databaseID: "gw2", to: about, through: 5, whole: true, events: [])[0].utf8),
                                               now: Self.now)
        #expect(whole.fromSeq == 0 && whole.whole == true, "asked about another database: from the start")
        #expect(whole.isFor(hub: "hub1") && !whole.isFor(hub: "hub2"), "another hub's answer is not its own")
        // A gateway's answer from before it said these: read, with none of them.
        let older = try GatewayMessages.answer(payload: Array(#"{"database_id":"g","through":1,"part":1,"parts":1,"events":[]}"#.utf8), now: Self.now)
        #expect(older.hub == nil && older.fromSeq == nil && older.whole == nil && older.isFor(hub: "hub2"))
        // A reminder's message, as a gateway sends it: its number only; a bad one refused.
        let reminder = try GatewayMessages.reminderNumber(node: "kitchen", payload: Array(#"{"database_id":"gw1","seq":7,"event_type":"reminder","reason":"behind"}"#.utf8))
        #expect(reminder.isNumberOnly && reminder.seq == 7 && reminder.databaseID == "gw1" && reminder.node == "kitchen")
        #expect(throws: HistoryError.self) { _ = try GatewayMessages.reminderNumber(node: "k", payload: Array(#"{"database_id":"g","seq":-1}"#.utf8)) }
        // An event past a bound is left out alone, said why; the rest of its part is read (refused whole, it was sent again for ever).
        var huge = events[0]
        huge.ml = 1_000_000
        let mixed = try GatewayMessages.answer(payload: Array(GatewayMessages.answer(databaseID: "gw1", to: about,
                                                                                     through: 5, whole: false, events: [huge, events[1]])[0].utf8), now: Self.now)
        #expect(mixed.events.map(\.identity) == ["e1"] && mixed.refused.count == 1 && mixed.refused[0].contains("events[0]"), "\(mixed.refused)")
        #expect(GatewayMessages.answer(databaseID: "gw1", to: about, through: 5, whole: false, events: []).count == 1, "nothing to send is one empty part")
        #expect(throws: HistoryError.self) { _ = try GatewayMessages.answer(payload: Array(#"{"database_id":"g","through":1,"part":1,"parts":1,"events":[],"hub":"a b"}"#.utf8), now: Self.now) }
        #expect(throws: HistoryError.self) { _ = try GatewayMessages.answer(payload: Array(#"{"database_id":"g","through":1,"part":3,"parts":2,"events":[]}"#.utf8), now: Self.now) }
        #expect(throws: HistoryError.self) { _ = try GatewayMessages.request(payload: Array(#"{"hub":"h","from_seq":9007199254740993}"#.utf8)) }
    }

    @Test("an answer in windows: the hub says how many messages it takes; the last part of a window says where the next starts, and the request for it carries the first window's through and whole")
    func anAnswerInWindows() throws {
        let asked = GatewayMessages.Request(hub: "hub1", fromSeq: 0, databaseID: "gw1", mostParts: 50)
        #expect(try GatewayMessages.request(payload: Array(GatewayMessages.request(asked).utf8)) == asked)
        let event = IntakeEvent(identity: "e", kind: .sip, ml: 10, time: Self.now, source: .manual, recordedAt: Self.now, person: "Bo")
        let cursor = GatewayMessages.AnswerCursor(time: Self.now.secondsSince1970, id: 10_000)
        let cut = try GatewayMessages.answer(payload: Array(GatewayMessages.answer(databaseID: "gw1", to: asked, through: 7, whole: true,
                                                                                   events: [event], next: cursor)[0].utf8), now: Self.now)
        #expect(cut.next == cursor)
        let next = try #require(GatewayMessages.Request(continuing: cut, mostParts: 50))
        #expect(next.after == cursor && next.through == 7 && next.whole == true && next.fromSeq == 0 && next.databaseId == "gw1" && next.hub == "hub1")
        #expect(try GatewayMessages.request(payload: Array(GatewayMessages.request(next).utf8)) == next)
        // The end of an answer (or a gateway's from before windows) goes on nowhere.
        let end = try GatewayMessages.answer(payload: Array(GatewayMessages.answer(databaseID: "gw1", to: asked, through: 7, whole: true, events: [event])[0].utf8),
                                             now: Self.now)
        #expect(end.next == nil && GatewayMessages.Request(continuing: end, mostParts: 50) == nil)
        // Bounded: a window of 1 to 500 messages; a cursor in the years a history holds; a later window says the first's through and whole.
        for bad in [#"{"hub":"h","from_seq":0,"most_parts":0}"#, #"{"hub":"h","from_seq":0,"most_parts":100000}"#,
                    #"{"hub":"h","from_seq":0,"after":{"time":-1,"id":1},"through":3,"whole":true}"#,
                    #"{"hub":"h","from_seq":0,"after":{"time":1.8e9,"id":-1},"through":3,"whole":true}"#,
                    #"{"hub":"h","from_seq":0,"after":{"time":1.8e9,"id":1}}"#] {
            #expect(throws: HistoryError.self, "\(bad)") { _ = try GatewayMessages.request(payload: Array(bad.utf8)) }
        }
        #expect(throws: HistoryError.self) {
            _ = try GatewayMessages.answer(payload: Array(#"{"database_id":"g","through":1,"part":1,"parts":1,"events":[],"next":{"time":-5,"id":1}}"#.utf8), now: Self.now)
        }
    }

    static let claim = StoredClaim(device: "C8:2A:3F:00:3F:2A", claim: DeviceClaim(
        gateway: "a1b2c3d4e5f60718", rssi: -61, heardAt: Timestamp(secondsSince1970: now.secondsSince1970 - 4), holding: true, at: now))

    @Test("a claim the broker sends as it is said is on this gateway's clock: a sender's clock hours off is no stale or future claim")
    func aLiveClaimIsOnThisClock() throws {
        let rule = HandOverRule()
        for off in [-3 * 3600.0, 3 * 3600.0] {
            var skewed = Self.claim
            skewed.claim.at = Self.now.adding(off)
            skewed.claim.heardAt = Self.now.adding(off - 4)
            let payload = Array(GatewayMessages.claim(skewed).utf8)
            let live = try GatewayMessages.claim(payload: payload, now: Self.now, live: true)
            #expect(live == Self.claim, "\(off)")
            #expect(rule.isFresh(live.claim, now: Self.now))
            // Retained (sent at subscription, said who knows when): the sender's times, stale or refused.
            if off < 0 {
                #expect(!rule.isFresh(try GatewayMessages.claim(payload: payload, now: Self.now).claim, now: Self.now))
            } else {
                #expect(throws: HistoryError.self) { try GatewayMessages.claim(payload: payload, now: Self.now) }
            }
        }
        // A live claim's other times are not after its own.
        var heardLater = Self.claim
        heardLater.claim.heardAt = Self.now.adding(600)
        #expect(throws: HistoryError.self) { try GatewayMessages.claim(payload: Array(GatewayMessages.claim(heardLater).utf8), now: Self.now, live: true) }
    }

    @Test("a claim on a connected bottle, both ways; a bad field is refused by name")
    func aClaim() throws {
        let text = GatewayMessages.claim(Self.claim)
        #expect(try GatewayMessages.claim(payload: Array(text.utf8), now: Self.now) == Self.claim)
        var unheard = Self.claim
        unheard.claim.rssi = nil
        unheard.claim.heardAt = nil
        #expect(try GatewayMessages.claim(payload: Array(GatewayMessages.claim(unheard).utf8), now: Self.now) == unheard)
        // Let go two seconds ago: said in the claim (absent, as from a gateway before it, when it never held the bottle).
        var released = Self.claim
        released.claim.holding = false
        released.claim.heldUntil = Timestamp(secondsSince1970: Self.now.secondsSince1970 - 2)
        let releasedText = GatewayMessages.claim(released)
        #expect(releasedText.contains("held_until") && !text.contains("held_until"), "\(releasedText)")
        #expect(try GatewayMessages.claim(payload: Array(releasedText.utf8), now: Self.now) == released)
        let ahead = Timestamp(secondsSince1970: Self.now.secondsSince1970 + 3600).iso8601
        #expect(throws: HistoryError.self) {
            try GatewayMessages.claim(payload: Array(releasedText.replacingOccurrences(of: released.claim.heldUntil!.iso8601, with: ahead).utf8), now: Self.now)
        }
        do {
            _ = try GatewayMessages.claim(payload: Array(releasedText.replacingOccurrences(of: released.claim.heldUntil!.iso8601, with: "yesterday").utf8), now: Self.now)
            Issue.record("accepted held_until \"yesterday\"")
        } catch {
            #expect("\(error)".contains("held_until"), "\(error)")
        }
        for (good, bad, field) in [
            (#""rssi":-61"#, #""rssi":-300"#, "rssi"),
            (#""device":"C8:2A:3F:00:3F:2A""#, #""device":"c8:2a:3f:00:3f:2a/../x""#, "device"),
            (#""database_id":"a1b2c3d4e5f60718""#, #""database_id":"a b""#, "database_id"),
            (#""holding":true"#, #""holding":"yes""#, "holding"),
            // Dated ahead of this clock by more than a minute: it would hold the bottle until then.
            (#""at":"\#(Self.now.iso8601)""#, #""at":"\#(Timestamp(secondsSince1970: Self.now.secondsSince1970 + 3600).iso8601)""#, "at"),
        ] {
            let payload = text.replacingOccurrences(of: good, with: bad)
            #expect(payload != text, "\(good) is not in \(text)")
            do {
                _ = try GatewayMessages.claim(payload: Array(payload.utf8), now: Self.now)
                Issue.record("accepted \(bad)")
            } catch {
                #expect("\(error)".contains(field), "\(error)")
            }
        }
    }

    static let roster = GatewayMessages.roster(hub: "hub1", [RosterEntry(address: "C8:2A:3F:00:00:01", person: "Gran")])

    @Test("the hub's roster, both ways; a bad address or name is refused by name")
    func aRoster() throws {
        let read = try GatewayMessages.roster(payload: Array(Self.roster.utf8))
        #expect(read.hub == "hub1" && read.entries == [RosterEntry(address: "C8:2A:3F:00:00:01", person: "Gran")])
        // With the hub's ids (person_id), as a hub sends them since 2026-11-29.
        let withIDs = GatewayMessages.roster(hub: "hub1", [RosterEntry(address: "C8:2A:3F:00:00:01", person: "Gran", personId: 7)])
        #expect(withIDs.contains(#""person_id":7"#), "\(withIDs)")
        #expect(try GatewayMessages.roster(payload: Array(withIDs.utf8)).entries == [RosterEntry(address: "C8:2A:3F:00:00:01", person: "Gran", personId: 7)])
        for (bad, field) in [(#""address":"C8:2A:3F:00:00:01/#""#, "devices[0].address"), (#""person":"""#, "devices[0].person"),
                             (#""person":"\#(String(repeating: "G", count: 300))""#, "devices[0].person"), (#""hub":"../x""#, "hub")] {
            let key = bad.prefix { $0 != ":" }
            let payload = Self.roster.replacingOccurrences(of: #"\#(key):"[^"]*""#, with: bad, options: .regularExpression)
            #expect(payload != Self.roster)
            #expect { _ = try GatewayMessages.roster(payload: Array(payload.utf8)) } throws: { "\($0)".contains(field) }
        }
    }

    @Test("fuzz: cut, garbled and oversized messages are refused, never a crash")
    func fuzz() {
        var random = FuzzRandom(seed: 25)
        let bases = [Self.change, GatewayMessages.request(.init(hub: "hub1", fromSeq: 3)), GatewayMessages.claim(Self.claim), Self.roster]
            + GatewayMessages.answer(databaseID: "gw1", to: .init(hub: "hub1", fromSeq: 3), through: 9, whole: false, events: [
                IntakeEvent(identity: "e", kind: .sip, ml: 10, time: Self.now, source: .manual, recordedAt: Self.now),
            ])
        let alphabet = Array("{}[]\":,0123456789.-+eE\\u tfnalsr".utf8) + [0, 0xFF, 0xC3]
        var refused = 0
        for i in 0..<3000 {
            let input = random.mutate(Array(bases[i % bases.count].utf8), alphabet: alphabet, cutting: true)
            if (try? GatewayMessages.change(node: "n", payload: input, now: Self.now)) == nil { refused += 1 }
            _ = try? GatewayMessages.request(payload: input)
            _ = try? GatewayMessages.answer(payload: input, now: Self.now)
            _ = try? GatewayMessages.claim(payload: input, now: Self.now)
            _ = try? GatewayMessages.roster(payload: input)
        }
        #expect(refused > 2000, "most mutations break a change: \(refused)")
        let huge = Array(repeating: UInt8(ascii: " "), count: GatewayMessages.largestPayload + 1)
        #expect(throws: HistoryError.self) { _ = try GatewayMessages.change(node: "n", payload: huge, now: Self.now) }
    }
}

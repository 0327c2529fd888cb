import Foundation
import QuenchCore
import QuenchStore
import QuenchTestSupport
import Testing
@testable import QuenchHistory

/// A household on one history: the fixture's person (`me`, the kitchen scale's
/// 15 sips) and Ann with a bottle of her own, each with their own goal, units,
/// totals, log, stats and reminders.
@Suite struct PeopleTests {
    static let annBottle = "AA:00:00:00:00:0A"

    /// The fixture plus Ann: a goal of 1.5 L, ounces, her bottle and two sips today.
    func household() throws -> HistoryFixture {
        let fixture = try HistoryFixture()
        let env = fixture.environment()
        _ = try History.addPerson(env, name: "Ann", goal: "1.5l", units: "oz", json: false)
        let store = try IntakeStore(path: fixture.path, mode: .existing)
        try store.saveDevice(Device(address: Self.annBottle, name: "Ann's bottle", addedAt: HistoryFixture.now.adding(-86_400 * 30), person: "ann"))
        let sips = [DetectedEvent(kind: .sip, t: 10, start: 0, end: 5, ml: 300, remainingML: 400),
                    DetectedEvent(kind: .sip, t: 3610, start: 3600, end: 3605, ml: 200, remainingML: 200)]
        try store.ingest(sips, device: Self.annBottle, started: Timestamp(iso8601: "2026-03-04T09:00:00Z")!)
        return fixture
    }

    func env(_ fixture: HistoryFixture, _ person: String?) -> HistoryEnvironment {
        var e = fixture.environment()
        e.person = person
        return e
    }

    func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    func message(_ body: () throws -> Void) -> String {
        do { try body(); return "" } catch { return "\(error)" }
    }

    /// `log --device` takes a paired device as `today` and `devices` show it: its name, or its
    /// address in any case (only the stored address, exactly, found anything: "No events.").
    @Test func logFindsADeviceByItsNameOrAddressInAnyCase() throws {
        let fixture = try household()
        for text in ["Ann's bottle", "ann's BOTTLE", Self.annBottle.lowercased(), Self.annBottle] {
            let log = try History.log(env(fixture, "Ann"), since: nil, until: nil, device: text, limit: nil, includeDeleted: false, csv: true, json: false)
            #expect(log.split(separator: "\n").count == 3, "\(text): \(log)")
        }
        let other = try History.log(env(fixture, "Ann"), since: nil, until: nil, device: "the kitchen scale", limit: nil, includeDeleted: false, csv: false, json: false)
        #expect(other == "No events.", "\(other)")
    }

    @Test("with several people, a per-person command without one fails, naming them")
    func severalPeopleNeedAName() throws {
        let f = try household()
        let commands: [(String, () throws -> Void)] = [
            ("today", { _ = try History.today(env(f, nil), json: false) }),
            ("log", { _ = try History.log(env(f, nil), since: nil, until: nil, device: nil, limit: nil, includeDeleted: false, csv: false, json: false) }),
            ("stats", { _ = try History.stats(env(f, nil), days: 7, json: false) }),
            ("calendar", { _ = try History.calendar(env(f, nil), month: nil, json: false) }),
            ("goal", { _ = try History.showGoal(env(f, nil), json: false) }),
            ("remind", { _ = try History.remind(env(f, nil), json: false) }),
            ("add", { _ = try History.add(env(f, nil), amount: "250ml", at: nil, note: nil, json: false) }),
            ("undo", { _ = try History.undo(env(f, nil), json: false) }),
        ]
        for (name, command) in commands {
            #expect(message(command) == "several people share this history (me, Ann): say whose with --person NAME (or QUENCH_PERSON, or `person` in the config file)",
                    "\(name)")
        }
        #expect(message { _ = try History.today(env(f, "Bob"), json: false) }.hasPrefix("nobody is called 'Bob' (people: me, Ann;"))
        // A recommendation saves nothing, but for someone nobody is it is refused too (it was answered, 200 on the page's API).
        #expect(message { _ = try History.recommendGoal(env(f, "Bob"), weight: "25kg", exercise: nil, save: false, json: false) }
                    .hasPrefix("nobody is called 'Bob' (people: me, Ann;"))
        #expect(try History.recommendGoal(env(f, nil), weight: "25kg", exercise: nil, save: false, json: false).contains("900 mL a day"),
                "naming nobody, as anywhere")
        // Names are matched without regard to case.
        #expect(try json(History.today(env(f, "ANN"), json: true))["person"] as? String == "Ann")
    }

    @Test("two people, two bottles: totals, goals, units, log and stats apart")
    func isolation() throws {
        let f = try household()
        let me = try json(History.today(env(f, "me"), json: true))
        let ann = try json(History.today(env(f, "ann"), json: true))
        #expect(me["person"] as? String == "me" && me["intake_ml"] as? Double == 500 && me["goal_ml"] as? Double == 2000)
        #expect(ann["person"] as? String == "Ann" && ann["intake_ml"] as? Double == 500 && ann["goal_ml"] as? Double == 1500)
        #expect(ann["units"] as? String == "oz" && me["units"] as? String == "ml")
        #expect((ann["bottles"] as? [[String: Any]])?.map { $0["device"] as? String } == [Self.annBottle], "her bottle only")
        #expect((me["bottles"] as? [[String: Any]])?.map { $0["device"] as? String } == [HistoryFixture.device])
        #expect(try History.today(env(f, "ann"), json: false).hasPrefix("Today (Ann), Wednesday 4 March 2026"))

        let annLog = try History.log(env(f, "ann"), since: nil, until: nil, device: nil, limit: nil, includeDeleted: false, csv: false, json: true)
        #expect(annLog.split(separator: "\n").count == 2 && annLog.contains("\"person\":\"Ann\"") && !annLog.contains("\"person\":\"me\""))
        let meLog = try History.log(env(f, "me"), since: nil, until: nil, device: nil, limit: nil, includeDeleted: false, csv: false, json: true)
        #expect(meLog.split(separator: "\n").count == 17 && !meLog.contains("Ann"))

        let annStats = try json(History.stats(env(f, "ann"), days: 7, json: true))
        #expect(annStats["total_ml"] as? Double == 500 && annStats["sips"] as? Int == 2 && annStats["person"] as? String == "Ann")
        let meStats = try json(History.stats(env(f, "me"), days: 7, json: true))
        #expect(meStats["sips"] as? Int == 16)

        _ = try History.setGoal(env(f, "ann"), amount: "1800ml", from: nil, json: false)
        #expect(try json(History.showGoal(env(f, "me"), json: true))["current_ml"] as? Double == 2000, "her goal is hers")
        let annGoal = try json(History.showGoal(env(f, "ann"), json: true))
        #expect(annGoal["current_ml"] as? Double == 1800 && (annGoal["history"] as? [Any])?.count == 1 && annGoal["person"] as? String == "Ann")
        let calendar = try json(History.calendar(env(f, "ann"), month: "2026-03", json: true))
        #expect(calendar["total_ml"] as? Double == 500 && calendar["person"] as? String == "Ann")
        // The day's chart: her sips only (it drew the whole household's).
        let annDay = try History.dayTimeline(env(f, "ann"), date: "2026-03-04")
        #expect(annDay.sips.count == 2 && annDay.sips.reduce(0) { $0 + $1.ml } == 500, "\(annDay.sips)")
        #expect(try History.dayTimeline(env(f, "me"), date: "2026-03-04").sips.reduce(0) { $0 + $1.ml } == 500)

        _ = try History.setReminders(env(f, "ann"), mode: "off", window: nil, after: nil, every: nil, slack: nil, json: false)
        #expect(try json(History.remind(env(f, "ann"), json: true))["mode"] as? String == "off")
        #expect(try json(History.remind(env(f, "me"), json: true))["mode"] as? String == "pace")
    }

    @Test("a manual drink names the person; undo takes back their own; delete by id checks a named person")
    func manualDrinks() throws {
        let f = try household()
        let added = try json(History.add(env(f, "ann"), amount: "8oz", at: "11:00", note: "juice", json: true))
        #expect(added["person"] as? String == "Ann" && (added["today_ml"] as? Double ?? 0) > 736)
        #expect(try json(History.today(env(f, "me"), json: true))["intake_ml"] as? Double == 500, "not mine")
        let undone = try json(History.undo(env(f, "me"), json: true))
        // My event stored last (the fixture stores the lunch of the 2nd last), not Ann's juice.
        #expect((undone["event"] as? [String: Any])?["ml"] as? Double == 330, "my last stored, not Ann's juice")
        let id = try #require((added["event"] as? [String: Any])?["id"] as? Int)
        #expect(message { _ = try History.delete(env(f, "me"), id: Int64(id), json: false) } == "event \(id) is Ann's, not me's")
        // Without a name, the id says whose.
        #expect(try History.delete(env(f, nil), id: Int64(id), json: false).contains("Today (Ann): "))
        #expect(try History.restore(env(f, "ann"), id: Int64(id), json: false).hasPrefix("Restored #\(id)"))
    }

    /// One bottle's events in a household with nobody named: everyone's from it, each with whose (a carer checking a
    /// bottle moved between residents was asked whose history to read); a person named still narrows it to theirs.
    @Test func oneDevicesLogWithNobodyNamedIsEveryonesWithWhose() throws {
        let f = try household()
        let store = try IntakeStore(path: f.path, mode: .existing)
        try store.ingest([DetectedEvent(kind: .sip, t: 10, start: 0, end: 5, ml: 120, remainingML: 80)], device: Self.annBottle,
                         started: Timestamp(iso8601: "2026-03-04T11:00:00Z")!)
        let me = try #require(try store.events().first { $0.ml == 120 })
        _ = try store.editEvent(id: try #require(me.id), ml: nil, time: nil, note: nil, person: try #require(try store.people().first { $0.name == "me" }?.id))
        let all = try History.log(env(f, nil), since: nil, until: nil, device: Self.annBottle, limit: nil, includeDeleted: false, csv: false, json: false)
        let lines = all.split(separator: "\n")
        #expect(lines.first?.hasSuffix("Note  Person") == true, "\(all)")
        #expect(lines.filter { $0.hasSuffix(" Ann") }.count == 2 && lines.filter { $0.hasSuffix(" me") }.count == 1, "\(all)")
        let hers = try History.log(env(f, "ann"), since: nil, until: nil, device: Self.annBottle, limit: nil, includeDeleted: false, csv: false, json: false)
        #expect(!hers.contains("Person") && hers.split(separator: "\n").count == 3, "\(hers)")
        // Without a device, nobody named is still refused, naming everyone.
        #expect(throws: HistoryError.self) { try History.log(env(f, nil), since: nil, until: nil, device: nil, limit: nil, includeDeleted: false, csv: false, json: false) }
    }

    @Test("edit mends a drink's amount (in the person's units), time and note; checks a named person; refuses nothing to change and bad values")
    func editADrink() throws {
        let f = try household()
        let added = try json(History.add(env(f, "ann"), amount: "8oz", at: "11:00", note: "juice", json: true))
        let id = Int64(try #require((added["event"] as? [String: Any])?["id"] as? Int))
        let before = try #require(try json(History.today(env(f, "ann"), json: true))["intake_ml"] as? Double)
        // A bare number is Ann's unit (fl oz); the note emptied; a time earlier that day.
        let edited = try json(History.edit(env(f, "ann"), id: id, amount: "10", at: "10:15", note: "", json: true))
        let event = try #require(edited["event"] as? [String: Any])
        #expect(edited["action"] as? String == "edited")
        #expect(abs((event["ml"] as? Double ?? 0) - 10 * VolumeUnit.millilitresPerUSFluidOunce) < 0.001)
        #expect(event["note"] == nil, "the note removed: \(event)")
        #expect((event["at"] as? String)?.contains("T10:15:00") == true, "\(event)")
        let after = try #require(try json(History.today(env(f, "ann"), json: true))["intake_ml"] as? Double)
        #expect(abs(after - before - 2 * VolumeUnit.millilitresPerUSFluidOunce) < 0.001, "the day's total follows")
        #expect(message { _ = try History.edit(env(f, "me"), id: id, amount: "1l", at: nil, note: nil, json: false) } == "event \(id) is Ann's, not me's")
        #expect(message { _ = try History.edit(env(f, "ann"), id: id, amount: nil, at: nil, note: nil, json: false) }
                    .hasPrefix("nothing to change"))
        #expect(message { _ = try History.edit(env(f, "ann"), id: id, amount: "9l", at: nil, note: nil, json: false) }.contains("in one drink"))
        #expect(message { _ = try History.edit(env(f, "ann"), id: id, amount: "0.0001ml", at: nil, note: nil, json: false) }
                    .contains("less than 1 mL, too little to be a drink"))
        #expect(message { _ = try History.edit(env(f, "ann"), id: id, amount: nil, at: "2999-01-01 10:00", note: nil, json: false) }.contains("in the future"))
        #expect(message { _ = try History.edit(env(f, "ann"), id: 99_999, amount: "1oz", at: nil, note: nil, json: false) }.contains("99999"))
        // Nothing half-done: the refused edits left it as it was.
        let unchanged = try json(History.today(env(f, "ann"), json: true))["intake_ml"] as? Double
        #expect(unchanged == after)

        // Poured away, not drunk (a carer's trial: a pour the scale took for a drink could only be deleted): a pour
        // now, out of the day's total, and kept in the log as one; a drink again with --kind sip.
        let poured = try json(History.edit(env(f, "ann"), id: id, amount: nil, at: nil, note: nil, kind: "pour", json: true))
        #expect((poured["event"] as? [String: Any])?["kind"] as? String == "pour", "\(poured)")
        let withoutIt = try #require(try json(History.today(env(f, "ann"), json: true))["intake_ml"] as? Double)
        #expect(abs(after - withoutIt - 10 * VolumeUnit.millilitresPerUSFluidOunce) < 0.001, "a pour is not drunk")
        #expect(try History.edit(env(f, "ann"), id: id, amount: nil, at: nil, note: nil, kind: "SIP", json: false).contains(": sip "))
        #expect(try json(History.today(env(f, "ann"), json: true))["intake_ml"] as? Double == after)
        #expect(message { _ = try History.edit(env(f, "ann"), id: id, amount: nil, at: nil, note: nil, kind: "refill", json: false) }
                    == "--kind: 'refill' is not sip (drunk) or pour (poured away)")
    }

    @Test("adding everyone to a new history says who the first person, me, is and what to do; not once me has drunk")
    func theFirstPersonIsNamedWhenOthersAreAdded() throws {
        let folder = try TemporaryFolder()
        func env(_ person: String? = nil) -> HistoryEnvironment {
            var e = HistoryEnvironment(databasePath: folder.path + "/new.sqlite", now: HistoryFixture.now, timeZone: LocalZone(identifier: "UTC")!)
            e.person = person
            return e
        }
        let added = try History.addPerson(env(), name: "Ann", goal: nil, units: nil, json: false)
        #expect(added.hasPrefix("Added Ann. The history's first person is still called me, with nothing of theirs: "
                                + "`quench person rename me NAME` names them, `quench person remove me` removes them.\n"), "\(added)")
        #expect(!(try History.addPerson(env(), name: "Ben", goal: nil, units: "oz", json: true)).contains("first person"), "not in JSON")
        _ = try History.add(env("me"), amount: "250ml", at: nil, note: nil, json: false)
        #expect(try History.addPerson(env(), name: "Cy", goal: nil, units: nil, json: false).hasPrefix("Added Cy.\n"), "me drinks: nothing to say")
    }

    @Test("a drink from a shared bottle given to who really drank it: both days follow, the report is the new drinker's")
    func aDrinkGoesToWhoDrankIt() throws {
        let f = try household()
        let added = try json(History.add(env(f, "ann"), amount: "300ml", at: "11:00", note: nil, json: true))
        let id = Int64(try #require((added["event"] as? [String: Any])?["id"] as? Int))
        func intake(_ who: String) throws -> Double { try #require(try json(History.today(env(f, who), json: true))["intake_ml"] as? Double) }
        let (ann, me) = (try intake("ann"), try intake("me"))
        let moved = try json(History.edit(env(f, nil), id: id, amount: nil, at: nil, note: nil, to: "ME", json: true))
        #expect(moved["person"] as? String == "me" && moved["from"] as? String == "Ann", "the report is the new drinker's: \(moved)")
        #expect(try intake("ann") == ann - 300 && intake("me") == me + 300)
        // Said as a gift, in words: whose it is now and whose it was.
        let back = try History.edit(env(f, nil), id: id, amount: nil, at: nil, note: nil, to: "ann", json: false)
        #expect(back.hasPrefix("Edited #\(id): sip 10.1 oz at ") && back.contains(", now Ann's (was me's)\nToday (Ann): "), "in Ann's ounces: \(back)")
        _ = try History.edit(env(f, nil), id: id, amount: nil, at: nil, note: nil, to: "me", json: true)
        #expect(message { _ = try History.edit(env(f, nil), id: id, amount: nil, at: nil, note: nil, to: "Nobody", json: false) }
                    .hasPrefix("--to: nobody is called 'Nobody' (people: me, Ann"))
        #expect(message { _ = try History.edit(env(f, "ann"), id: id, amount: nil, at: nil, note: nil, to: "ann", json: false) }
                    == "event \(id) is me's, not ann's", "a named person must still be the drinker")
        #expect(try intake("me") == me + 300, "the refused moves changed nothing")
        // One named by a shell (QUENCH_PERSON) is not: the id names the drink.
        var shell = env(f, "ann")
        shell.personNamedIn = "$QUENCH_PERSON"
        // A bare amount given with --to is in the new drinker's units (Ann's ounces), as the answer is.
        let given = try json(History.edit(shell, id: id, amount: "10", at: nil, note: nil, to: "ann", json: true))
        #expect(given["person"] as? String == "Ann" && abs(((given["event"] as? [String: Any])?["ml"] as? Double ?? 0) - 295.7) < 0.1, "\(given)")
        // A deleted drink is restored before it is edited: its restore would not undo the edit.
        _ = try History.delete(env(f, nil), id: id, json: false)
        #expect(message { _ = try History.edit(env(f, nil), id: id, amount: "200ml", at: nil, note: nil, json: false) }
                    == "event \(id) is deleted: `quench restore \(id)` brings it back, then it can be edited")
    }

    @Test("reassigning a bottle: the past stays with whoever drank it, the next sips are the new owner's")
    func reassignment() throws {
        let f = try household()
        #expect(message { _ = try History.assignDevice(env(f, nil), address: Self.annBottle, json: false) } == "say whose it is now with --person NAME")
        #expect(message { _ = try History.assignDevice(env(f, "me"), address: "AA:AA:AA:AA:AA:AA", json: false) }.hasPrefix("no device AA:AA:AA:AA:AA:AA is paired"))
        _ = try History.assignDevice(env(f, "me"), address: Self.annBottle, json: false)
        let store = try IntakeStore(path: f.path, mode: .existing)
        try store.ingest([DetectedEvent(kind: .sip, t: 10, start: 0, end: 5, ml: 75, remainingML: 125)], device: Self.annBottle,
                         started: Timestamp(iso8601: "2026-03-04T11:50:00Z")!)
        #expect(try json(History.today(env(f, "ann"), json: true))["intake_ml"] as? Double == 500)
        #expect(try json(History.today(env(f, "me"), json: true))["intake_ml"] as? Double == 575)
        let people = try json(History.people(env(f, nil), json: true))["people"] as? [[String: Any]]
        #expect(people?.map { $0["devices"] as? [String] } == [[Self.annBottle, HistoryFixture.device], []])
        // Their ids, which MQTT's topics name them by.
        #expect(people?.map { $0["id"] as? Int } == (try store.people().map { Int($0.id) }), "\(String(describing: people))")
    }

    @Test("someone else's bottle this morning: assign --since gives its events from then on, a refill too, and says how many")
    func assignSince() throws {
        let f = try household()
        let store = try IntakeStore(path: f.path, mode: .existing)
        // Ann's bottle (sips at 09:00 and 10:00) was me's from 09:30: the 10:00 sip and a refill at 10:30 with it.
        try store.ingest([DetectedEvent(kind: .refill, t: 10, start: 0, end: 5, ml: 400, remainingML: 600)], device: Self.annBottle,
                         started: Timestamp(iso8601: "2026-03-04T10:30:00Z")!)
        let me = try #require(try json(History.today(env(f, "me"), json: true))["intake_ml"] as? Double)
        #expect(message { _ = try History.assignDevice(env(f, "me"), address: Self.annBottle, since: "9:30am", json: false) }
                    .hasPrefix("--since: "), "a time not read is refused, naming the option")
        // Under an older spelling of its address too (a trace replayed as aa-00-…): found, as `deviceLabel` finds it.
        try store.ingest([DetectedEvent(kind: .sip, t: 10, start: 0, end: 5, ml: 20, remainingML: 580)], device: "aa-00-00-00-00-0a",
                         started: Timestamp(iso8601: "2026-03-04T09:30:00Z")!, person: "Ann")
        #expect(message { _ = try History.assignDevice(env(f, "me"), address: Self.annBottle, since: "2026-03-04 13:00", json: false) }
                    == "--since: invalid time '2026-03-04 13:00': that has not come yet", "now is 12:00")
        let said = try History.assignDevice(env(f, "me"), address: Self.annBottle, since: "09:30", json: false)
        #expect(said.hasPrefix("AA:00:00:00:00:0A is now me's; 3 of its events since 2026-03-04 09:30 are now me's, the earlier ones stay with whoever drank them.\n"),
                "\(said)")
        #expect(try json(History.today(env(f, "ann"), json: true))["intake_ml"] as? Double == 300)
        #expect(try json(History.today(env(f, "me"), json: true))["intake_ml"] as? Double == me + 220, "the sip at 09:30 exactly moved too")
        #expect(try store.events(EventQuery(device: Self.annBottle, kinds: [.refill])).map(\.person) == ["me"])
        // Again: nothing more to give, and said so in JSON as in words.
        let again = try json(History.assignDevice(env(f, "me"), address: Self.annBottle, since: "09:30", json: true))
        #expect(again["moved"] as? Int == 0 && again["paired"] as? Bool == true, "\(again)")
        #expect(try History.assignDevice(env(f, "me"), address: Self.annBottle, since: "09:30", json: false)
                    .hasPrefix("AA:00:00:00:00:0A is now me's; its events since 2026-03-04 09:30 were me's already."))
        // A deleted one goes with them, so its restore stays theirs.
        let deleted = try #require(try store.events(EventQuery(device: Self.annBottle)).last?.id)
        _ = try store.setDeleted(id: deleted, true)
        _ = try History.assignDevice(env(f, "ann"), address: Self.annBottle, since: "09:30", json: false)
        #expect(try store.events(EventQuery(device: Self.annBottle, includeDeleted: true)).filter { $0.deleted }.map(\.person) == ["Ann"])
        _ = try History.assignDevice(env(f, "me"), address: Self.annBottle, since: "09:30", json: false)
        // Named by QUENCH_PERSON, or by a name they had before: not taken to give a device away.
        var shell = env(f, "me")
        shell.personNamedIn = "$QUENCH_PERSON"
        #expect(message { _ = try History.assignDevice(shell, address: Self.annBottle, since: "09:30", json: false) }.hasPrefix("say whose it is now with --person NAME"))
        // A bottle replayed into the history and never paired: its events are given, and it is said that it is not paired.
        try store.ingest([DetectedEvent(kind: .sip, t: 10, start: 0, end: 5, ml: 60, remainingML: 300)], device: "BB:00:00:00:00:0B",
                         started: Timestamp(iso8601: "2026-03-04T11:00:00Z")!, person: "me")
        #expect(try History.assignDevice(env(f, "ann"), address: "bb:00:00:00:00:0b", since: "today", json: false)
                    .hasPrefix("BB:00:00:00:00:0B is not paired; 1 of its events since 2026-03-04 04:00 is now Ann's."))
        #expect(try History.assignDevice(env(f, "ann"), address: "bb:00:00:00:00:0b", since: "today", json: false)
                    .hasPrefix("BB:00:00:00:00:0B is not paired; its events since 2026-03-04 04:00 were Ann's already."), "a retry is not an error")
        #expect(message { _ = try History.assignDevice(env(f, "ann"), address: "CC:00:00:00:00:0C", since: "today", json: false) }
                    .hasPrefix("no device CC:00:00:00:00:0C is paired"))
        // At a hub the roster decides who has a bottle: refused, saying where to do it.
        _ = try store.applyGatewayChanges([GatewayChange(databaseID: "0123456789abcdef", node: "east", seq: 1, identity: "east|x", event: nil)])
        #expect(message { _ = try History.assignDevice(env(f, "ann"), address: Self.annBottle, since: "today", json: false) }
                    .hasPrefix("this is a hub's history: `quench hub assign AA:00:00:00:00:0A --person NAME`"))
    }

    @Test("the reminder timer serves the household: without a name, each person's reminder that is due")
    func remindersForEveryone() throws {
        let f = try household()
        var at = env(f, nil)
        at.now = Timestamp(iso8601: "2026-03-04T15:00:00Z")!
        let deliveries = try History.deliverReminders(at, command: nil)
        #expect(deliveries.map(\.delivered) == [true, true], "\(deliveries.map(\.text))")
        #expect(deliveries.map { $0.text.prefix(18) } == ["reminder (me): dri", "reminder (Ann): dr"])
        at.now = at.now.adding(600)
        #expect(try History.deliverReminders(at, command: nil).allSatisfy { !$0.delivered }, "not again within the hour")
        at.person = "ann"
        #expect(try History.deliverReminders(at, command: nil).count == 1)
    }

    @Test("pairing: whose the device will be, known before any wait, and said only in a household")
    func pairingOwner() throws {
        let f = try household()
        #expect(message { _ = try History.pairingOwner(env(f, nil)) }.hasPrefix("several people share this history"))
        #expect(try History.pairingOwner(env(f, "ANN")) == "Ann")
        let single = try HistoryFixture()
        #expect(try History.pairingOwner(env(single, nil)) == nil)
        var none = env(single, "bob")
        none.databasePath = single.directory + "/not-yet.sqlite"
        #expect(message { _ = try History.pairingOwner(none) }.hasPrefix("nobody is called 'bob' (people: me;"))
        #expect(!FileManager.default.fileExists(atPath: none.databasePath), "no database made")
    }

    @Test("people: listed; renamed with everything theirs; removed only when nothing would be lost")
    func renameAndRemove() throws {
        let f = try household()
        let listing = try History.people(env(f, nil), json: false)
        #expect(listing == """
            Name  Goal today  Units           Devices            Events
            me      2,000 mL  mL (household)  C4:7C:8D:6A:12:34      17
            Ann      50.7 oz  oz              AA:00:00:00:00:0A       2
            """, "\(listing.debugDescription)")
        _ = try History.setPersonUnits(env(f, nil), name: "ann", units: "household", json: false)
        #expect(try json(History.today(env(f, "ann"), json: true))["units"] as? String == "ml")
        #expect(try History.setPersonUnits(env(f, nil), name: "ann", units: "oz", json: false).hasPrefix("Ann now sees oz."))
        #expect(message { _ = try History.setPersonUnits(env(f, nil), name: "ann", units: "cups", json: false) }.hasPrefix("unknown unit 'cups'"))
        _ = try History.renamePerson(env(f, nil), from: "ann", to: "Annie", json: false)
        #expect(try json(History.today(env(f, "Annie"), json: true))["intake_ml"] as? Double == 500)
        // The name before still finds her (a bookmarked page, QUENCH_PERSON in a unit), in any case.
        #expect(try json(History.today(env(f, "ANN"), json: true))["person"] as? String == "Annie")
        // Not for a command whose object the person is: "units ann" would have changed Annie's (the review).
        #expect(message { _ = try History.setPersonUnits(env(f, nil), name: "ann", units: "household", json: false) }.hasPrefix("nobody is called 'ann'"))
        #expect(message { _ = try History.renamePerson(env(f, nil), from: "Annie", to: "ME", json: false) }.contains("there is already someone called me"))
        #expect(message { _ = try History.addPerson(env(f, nil), name: "a/b", goal: nil, units: nil, json: false) }.contains("cannot be a person's name"))

        #expect(message { _ = try History.removePerson(env(f, nil), name: "Annie", moveTo: nil, json: false) }
                == "Annie still has 2 events and device AA:00:00:00:00:0A; nothing was removed (give them to someone with --move-to NAME)")
        // A deleted event is not one `log` lists: counted apart (it was counted as one of hers).
        let undone = try json(History.undo(env(f, "Annie"), json: true))
        let listed = try json(History.people(env(f, nil), json: true))["people"] as? [[String: Any]] ?? []
        #expect(listed.map { $0["events"] as? Int } == [17, 1] && listed.map { $0["deleted_events"] as? Int } == [0, 1], "\(listed)")
        let table = try History.people(env(f, nil), json: false)
        #expect(table.hasSuffix("AA:00:00:00:00:0A  1 (+1 deleted)"), "\(table)")
        #expect(message { _ = try History.removePerson(env(f, nil), name: "Annie", moveTo: nil, json: false) }
                .hasPrefix("Annie still has 2 events (1 of them deleted, which restore brings back) and device"))
        _ = try History.restore(env(f, nil), id: try #require((undone["event"] as? [String: Any])?["id"] as? Int64, "\(undone)"), json: false)
        _ = try History.addPerson(env(f, nil), name: "Guest", goal: nil, units: nil, json: false)
        #expect(try History.removePerson(env(f, nil), name: "guest", moveTo: nil, json: false)
                == "Removed Guest.")
        // What goes with them is said: a carer who removed someone to add them again found their
        // threshold and goal back at the defaults, with no word of it.
        _ = try History.setPersonAlert(env(f, nil), name: "Annie", after: "90min", json: false)
        let removed = try History.removePerson(env(f, nil), name: "Annie", moveTo: "me", json: false)
        #expect(removed
                == "Removed Annie; 2 events and AA:00:00:00:00:0A now me's. Their own settings were removed with them (not given to anyone): "
                + "a daily goal of 50.7 oz, a carer's alert after 1 h 30 min.", "\(removed)")
        // One person again: no name needed, and nothing was lost.
        #expect(try json(History.today(env(f, nil), json: true))["intake_ml"] as? Double == 1000)
        #expect(message { _ = try History.removePerson(env(f, nil), name: "me", moveTo: nil, json: false) }.contains("cannot remove the only person"))
    }

    @Test("an export from before a rename, imported again: nothing new, and nobody added under the name before (an empty Ann came back, whom --person ann then found)")
    func anExportFromBeforeARenameIsTheirs() throws {
        let f = try household()
        let folder = try TemporaryFolder("quench-rename-export")
        for format in History.ExportFormat.allCases {
            let file = folder.file("before.\(format)")
            try History.export(env(f, nil), format: format, since: nil, until: nil).write(toFile: file, atomically: true, encoding: .utf8)
            _ = try History.renamePerson(env(f, nil), from: "ann", to: "Annette", json: false)
            let report = try json(History.importFile(env(f, nil), path: file, json: true))
            #expect(report["inserted"] as? Int == 0 && report["people_added"] as? Int == 0, "\(format): \(report)")
            let people = try json(History.people(env(f, nil), json: true))["people"] as? [[String: Any]] ?? []
            #expect(people.compactMap { $0["name"] as? String } == ["me", "Annette"], "\(format): \(people)")
            #expect(try json(History.today(env(f, "ann"), json: true))["person"] as? String == "Annette")
            _ = try History.renamePerson(env(f, nil), from: "Annette", to: "Ann", json: false)
        }
    }

    @Test("someone the hub's roster gave a device is renamed at the hub, not at a gateway alone (the hub would count them as someone new)")
    func theHubsPeopleAreRenamedAtTheHub() throws {
        let f = try household()
        let store = try IntakeStore(path: f.path, mode: .existing)
        _ = try store.applyRoster([RosterEntry(address: Self.annBottle, person: "Ann", personId: 7)], at: HistoryFixture.now)
        #expect(message { _ = try History.renamePerson(env(f, nil), from: "ann", to: "Annie", json: false) }
                    .hasPrefix("Ann is the hub's (its roster gives them a device here): rename them at the hub, which renames them at every gateway "
                               + "(`quench person rename Ann Annie --db HUB.sqlite`)"))
        #expect(try store.people().map(\.name) == ["me", "Ann"], "nobody renamed")
        // Someone the hub does not know is renamed here as ever.
        #expect(try History.renamePerson(env(f, nil), from: "me", to: "Sam", json: false).hasPrefix("Renamed me to Sam."))
    }

    @Test("export then import, two people: the same people, goals, devices and events, each theirs")
    func exportImportRoundTrip() throws {
        let f = try household()
        _ = try History.setGoal(env(f, "ann"), amount: "1800ml", from: "2026-03-01", json: false)
        // Her nights: days of her own and a carer's threshold travel with her.
        _ = try History.setPersonDayStart(env(f, nil), name: "Ann", hour: "11", json: true)
        _ = try History.setPersonAlert(env(f, nil), name: "Ann", after: "3h", json: true)
        // Her waking window, which her threshold counts in (a move reset it to 08:00-22:00).
        _ = try History.setReminders(env(f, "ann"), mode: nil, window: "07:00-21:00", after: nil, every: nil, slack: nil, json: true)
        // And the first person's, whom a new database has already: theirs were dropped on the way.
        _ = try History.setReminders(env(f, "me"), mode: nil, window: "07:30-22:30", after: "45min", every: "30min", slack: nil, json: true)
        _ = try History.setPersonAlert(env(f, nil), name: "me", after: "2h", json: true)
        let exported = try History.export(env(f, nil), format: .json, since: nil, until: nil)
        #expect(exported.contains("\"wake_from_minute\" : 420"), "\(exported.prefix(1500))")
        #expect(exported.contains("\"version\" : 2") && exported.contains("\"people\" : ["))
        #expect(exported.contains("\"day_start_hour\" : 11") && exported.contains("\"alert_after_minutes\" : 180"), "\(exported.prefix(900))")
        let file = f.directory + "/backup.json"
        try exported.write(toFile: file, atomically: true, encoding: .utf8)

        var fresh = env(f, nil)
        fresh.databasePath = f.directory + "/fresh.sqlite"
        let report = try json(History.importFile(fresh, path: file, json: true))
        #expect(report["inserted"] as? Int == 19 && report["people_added"] as? Int == 1 && report["goals"] as? Int == 3)
        #expect(report["people_given_settings"] as? [String] == ["me"], "said: \(report)")
        #expect(try History.export(fresh, format: .json, since: nil, until: nil) == exported, "the same export back")
        var freshAnn = fresh
        freshAnn.person = "Ann"
        let annGoals = try json(History.showGoal(freshAnn, json: true))
        #expect(annGoals["current_ml"] as? Double == 1500 && (annGoals["history"] as? [Any])?.count == 2, "her goals came with her")
        let annThere = try IntakeStore(path: fresh.databasePath, mode: .existing).person(named: "Ann")
        #expect(annThere?.dayStartHour == 11 && annThere?.alertAfterMinutes == 180, "and her days and threshold")
        let annWindow = try IntakeStore(path: fresh.databasePath, mode: .existing).reminder(person: try #require(annThere).id).settings
        #expect(annWindow.wakeFromMinute == 420 && annWindow.wakeUntilMinute == 1260, "and her waking window: \(annWindow)")
        #expect(try History.export(fresh, format: .csv, since: nil, until: nil) == History.export(env(f, nil), format: .csv, since: nil, until: nil))

        // Into a database whose `me` set reminders of their own: those are kept; the threshold they had not set is the file's.
        var own = env(f, nil)
        own.databasePath = f.directory + "/own.sqlite"
        _ = try History.setReminders({ var e = own; e.person = "me"; return e }(), mode: nil, window: "06:00-20:00", after: nil, every: nil, slack: nil, json: true)
        #expect(try History.importFile(own, path: file, json: false).contains("Given the file's settings where theirs were the defaults: me."))
        let ownStore = try IntakeStore(path: own.databasePath, mode: .existing)
        let ownMe = try #require(try ownStore.person(named: "me"))
        #expect(try ownStore.reminder(person: ownMe.id).settings.wakeFromMinute == 360 && ownMe.alertAfterMinutes == 120)

        // One person's export holds theirs alone.
        let annOnly = try History.export(env(f, "ann"), format: .csv, since: nil, until: nil)
        #expect(annOnly.split(separator: "\n").count == 3 && annOnly.hasSuffix(",Ann"))
    }

    /// A household moved to a new machine: its export names Sam (the first person, renamed) and Ann.
    /// The new database's default `me`, with nothing of the file's, is removed; it stayed, an empty
    /// extra person in `people` and the carer's view. Kept when the file makes anything theirs.
    @Test func aHouseholdsImportIntoANewDatabaseLeavesNoEmptyDefaultPerson() throws {
        let f = try household()
        _ = try History.renamePerson(env(f, nil), from: "me", to: "Sam", json: true)
        let file = f.directory + "/household.json"
        try History.export(env(f, nil), format: .json, since: nil, until: nil).write(toFile: file, atomically: true, encoding: .utf8)
        var fresh = env(f, nil)
        fresh.databasePath = f.directory + "/moved.sqlite"
        let said = try History.importFile(fresh, path: file, json: false)
        #expect(said.hasSuffix("The new database's first person, me, had nothing of the file's and was removed."), "\(said)")
        #expect(try IntakeStore(path: fresh.databasePath, mode: .existing).people().map(\.name) == ["Sam", "Ann"])
        // Into a database that was there already, nobody is removed.
        var again = env(f, nil)
        again.databasePath = f.directory + "/existing.sqlite"
        _ = try IntakeStore(path: again.databasePath)
        _ = try History.importFile(again, path: file, json: false)
        #expect(try IntakeStore(path: again.databasePath, mode: .existing).people().map(\.name) == ["me", "Sam", "Ann"])
    }

    @Test("an export from before people imports into the selected person; without one, the refusal says where")
    func oldExportsImportIntoTheSelectedPerson() throws {
        let f = try household()
        let old = """
            {"format": "quench-export", "version": 1, "goals": [{"start_day": "2026-01-01", "ml": 2200, "set_at": {"seconds_since1970": 1}}],
             "events": [{"kind": "sip", "ml": 111, "time": 1772618400}]}
            """
        let file = f.directory + "/old.json"
        try old.write(toFile: file, atomically: true, encoding: .utf8)
        #expect(message { _ = try History.importFile(env(f, nil), path: file, json: false) }
            .contains("several people share this history (me, Ann)"))
        _ = try History.importFile(env(f, "ann"), path: file, json: false)
        let ann = try json(History.today(env(f, "ann"), json: true))
        #expect(ann["intake_ml"] as? Double == 611)

        let csv = "kind,ml,time,person\nsip,50,1772618400,Bob\nsip,60,1772618401,bad/name\n"
        let csvFile = f.directory + "/people.csv"
        try csv.write(toFile: csvFile, atomically: true, encoding: .utf8)
        #expect(message { _ = try History.importFile(env(f, nil), path: csvFile, json: false) }
            == "cannot import \(csvFile) line 3: person 'bad/name': a name without control characters, '/', '+', '#' or ','; nothing was imported")
        #expect(try IntakeStore(path: f.path, mode: .existing).people().map(\.name) == ["me", "Ann"], "Bob was not kept either")
    }

    /// Issue 24: `import --person NAME` makes the file NAME's. One person's file
    /// (whatever it calls them) goes to them whole: events, goals, devices; a
    /// file holding several people's history is refused, naming them, rather
    /// than merged or silently given to each of them.
    @Test("import --person: one person's file becomes theirs; several people's is refused, naming them")
    func importWithAPersonMakesTheFileTheirs() throws {
        let f = try household()
        let one = """
            {"format": "quench-export", "version": 2, "people": [{"name": "Zed", "units": "oz", "goals": [{"start_day": "2026-02-01", "ml": 1700, "set_at": {"seconds_since1970": 1}}]}],
             "devices": [{"address": "F0:00:00:00:00:0F", "added_at": {"seconds_since1970": 1}, "person": "Zed"}],
             "events": [{"kind": "sip", "ml": 77, "time": 1772618400, "person": "Zed"}, {"kind": "sip", "ml": 23, "time": 1772618500}]}
            """
        let file = f.directory + "/zed.json"
        try one.write(toFile: file, atomically: true, encoding: .utf8)
        let report = try json(History.importFile(env(f, "ann"), path: file, json: true))
        #expect(report["inserted"] as? Int == 2 && report["people_added"] as? Int == 0, "\(report)")
        let store = try IntakeStore(path: f.path, mode: .existing)
        #expect(try store.people().map(\.name) == ["me", "Ann"], "Zed was not added: the file is Ann's")
        #expect(try store.events(EventQuery(includeDeleted: true)).filter { $0.ml == 77 || $0.ml == 23 }.allSatisfy { $0.person == "Ann" })
        #expect(try store.device(address: "F0:00:00:00:00:0F")?.person == "Ann")
        let annGoals = try json(History.showGoal(env(f, "ann"), json: true))
        #expect((annGoals["history"] as? [Any])?.count == 2, "the file's goal is hers too: \(annGoals)")

        let csv = "kind,ml,time,person\nsip,50,1772619400,Bob\nsip,60,1772619401,Cy\nsip,70,1772619402,bob\n"
        let several = f.directory + "/several.csv"
        try csv.write(toFile: several, atomically: true, encoding: .utf8)
        let before = try store.events(EventQuery(includeDeleted: true)).count
        #expect(message { _ = try History.importFile(env(f, "me"), path: several, json: false) }
            == "cannot import \(several): it holds the history of 2 people (Bob, Cy), and --person me would make all of it theirs: "
            + "import it without a person (no --person, QUENCH_PERSON or `person` in the config file) to give each their own, "
            + "or import one person's export (`quench export --person NAME`) with --person; nothing was imported")
        #expect(try store.events(EventQuery(includeDeleted: true)).count == before && store.people().count == 2)
        // Without a person, each keeps their own, added when missing.
        let report2 = try json(History.importFile(env(f, nil), path: several, json: true))
        #expect(report2["people_added"] as? Int == 2 && report2["inserted"] as? Int == 3)
        #expect(try store.people().map(\.name) == ["me", "Ann", "Bob", "Cy"])
        // A person who is not in the household is refused before anything is read.
        #expect(message { _ = try History.importFile(env(f, "Dee"), path: file, json: false) }.hasPrefix("nobody is called 'Dee'"))
    }
}

import Foundation
import QuenchCore
import Testing
@testable import QuenchStore

/// A household: people, whose rows are theirs, and the migration that made
/// one person of the history that came before.
@Suite("people in the store")
struct PeopleStoreTests {
    /// A database as Quench wrote it at schema v6 (migrations 1 to 6 only), with
    /// events, goals, a reminder, a device and the outbox on.
    static func version6(_ path: String) throws {
        // An empty owner-only file, as Quench creates it (SQLite is not asked to create it).
        #expect(FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]))
        let db = try SQLiteConnection(path: path, readOnly: false, busyTimeout: 5)
        try db.execute("PRAGMA foreign_keys = ON")
        try db.transaction(immediate: true) {
            for migration in Schema.migrations.prefix(6) { try db.execute(migration.sql) }
            try db.execute("PRAGMA user_version = 6")
        }
        try db.execute("""
            INSERT INTO device (address, name, profile, sensor, added_at) VALUES ('C4:7C:8D:6A:12:34', 'Kitchen scale', 'weight-scale', 'weight', 1790000000);
            INSERT INTO intake_event (identity, kind, ml, time, remaining_ml, source, device, deleted, recorded_at)
                VALUES ('C4:7C:8D:6A:12:34|sip|1790000100000', 'sip', 120, 1790000100, 480, 'sensor', 'C4:7C:8D:6A:12:34', 0, 1790000101),
                       ('C4:7C:8D:6A:12:34|sip|1790000200000', 'sip', 80, 1790000200, 400, 'sensor', 'C4:7C:8D:6A:12:34', 1, 1790000201),
                       ('manual|tea', 'sip', 250, 1790000300, NULL, 'manual', NULL, 0, 1790000301);
            INSERT INTO goal (start_day, ml, set_at) VALUES ('2026-01-01', 2000, 1790000000), ('2026-02-01', 2500, 1790000001);
            INSERT INTO reminder (id, mode, wake_from_minute, wake_until_minute, slack_ml, after_minutes, every_minutes, last_reminded_at, snoozed_until)
                VALUES (1, 'hourly', 420, 1380, 100, 45, 90, 1790000400, NULL);
            UPDATE settings SET units = 'oz', day_start_hour = 5 WHERE id = 1;
            UPDATE mqtt_outbox_state SET enabled = 1 WHERE id = 1;
            DELETE FROM mqtt_outbox;
            """)
    }

    @Test("a v6 database becomes one person's, `me`: every event, goal, reminder setting and device")
    func migrationFromVersion6() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("v6.sqlite")
        try Self.version6(path)
        let store = try IntakeStore(path: path, mode: .existing)

        let version = try store.read("test") { db in try db.first("PRAGMA user_version") { row -> Int in row[0] } }
        #expect(version == Schema.migrations.count)
        let people = try store.people()
        #expect(people.map(\.name) == [Person.defaultName] && people[0].units == nil, "units follow the household's setting")
        let me = people[0]

        let events = try store.events(EventQuery(includeDeleted: true, order: .byID))
        #expect(events.count == 3 && events.allSatisfy { $0.person == "me" })
        #expect(try store.events(EventQuery(includeDeleted: true, person: me.id)).count == 3)
        #expect(try store.goals(person: me.id).map(\.ml) == [2000, 2500])
        let reminder = try store.reminder(person: me.id)
        #expect(reminder.settings == ReminderSettings(mode: .hourly, wakeFromMinute: 420, wakeUntilMinute: 1380, slackML: 100,
                                                      afterMinutes: 45, everyMinutes: 90))
        #expect(reminder.lastRemindedAt == Timestamp(secondsSince1970: 1_790_000_400))
        #expect(try store.listDevices().map(\.person) == ["me"])
        #expect(try store.settings().units == .usFluidOunce && store.settings().dayStartHour == 5)

        // Daily totals per person go through their own index.
        let plan = try store.read("test") { db in
            try db.all("EXPLAIN QUERY PLAN SELECT SUM(ml) FROM intake_event WHERE kind = 'sip' AND deleted = 0 AND person = 1 AND time >= 0 AND time < 2e9") { row -> String in row[3] }
        }
        #expect(plan.contains { $0.contains("intake_event_person_live_sip") }, "\(plan)")

        // The outbox triggers still fire, and a reminder's names the person.
        try store.markReminded(at: Timestamp(secondsSince1970: 1_790_000_900), person: me.id)
        _ = try store.addManual(ml: 100, at: Timestamp(secondsSince1970: 1_790_000_950), note: nil, identity: "manual|later", person: me.id)
        _ = try store.setDeleted(id: events[0].id!, true)
        #expect(try store.outbox(after: 0, limit: 10).map { "\($0.identity) \($0.change)" }
                == ["reminder|me reminder", "manual|later new", "C4:7C:8D:6A:12:34|sip|1790000100000 deleted"])
        // An event stored later from the device is its owner's.
        try store.ingest(sips(1, from: 10), device: "C4:7C:8D:6A:12:34", started: Timestamp(secondsSince1970: 1_790_001_000))
        #expect(try store.events(EventQuery(limit: 1)).first?.person == "me")
        // A reminder is claimed once: another process that read the same last one gives none.
        let last = try store.reminder(person: me.id).lastRemindedAt
        #expect(try store.claimReminder(at: Timestamp(secondsSince1970: 1_790_001_800), person: me.id, lastWas: last))
        #expect(try !store.claimReminder(at: Timestamp(secondsSince1970: 1_790_001_801), person: me.id, lastWas: last))
        #expect(try store.reminder(person: me.id).lastRemindedAt == Timestamp(secondsSince1970: 1_790_001_800))
    }

    /// One name, one person, as people read names: SQLite's NOCASE folded only ASCII, so
    /// "ZOË" was added beside "Zoë" and no name could reach the second.
    @Test func aNameIsTakenWhateverItsCaseOrItsAccentsEncoding() throws {
        let dir = NSTemporaryDirectory() + "people-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try IntakeStore(path: dir + "/q.sqlite")
        let zoe = try store.addPerson(name: "Zoë")
        let asa = try store.addPerson(name: "ÅSA")
        for (taken, by) in [("ZOË", "Zoë"), ("zoe\u{0308}", "Zoë"), ("åsa", "ÅSA"), ("A\u{030A}sa", "ÅSA")] {
            let error = #expect(throws: StoreError.self, "\(taken)") { try store.addPerson(name: taken) }
            #expect(error?.description.contains("there is already someone called \(by)") == true, "\(String(describing: error))")
        }
        #expect(try store.person(named: "zoe\u{0308}")?.id == zoe.id)
        #expect(try store.person(named: "åsa")?.id == asa.id)
        let ben = try store.addPerson(name: "Ben")
        #expect(throws: StoreError.self) { try store.renamePerson(id: ben.id, to: "ZOË") }
        try store.renamePerson(id: zoe.id, to: "ZOË")  // their own name, in another case
        #expect(try store.people().map(\.name) == ["me", "ZOË", "ÅSA", "Ben"])
        #expect(Person.problem(withName: "Zo\u{FFFD}") == "a name in UTF-8 (it holds bytes that are not)")
        // Case as Unicode folds it, not as lowercased() alone: ß is SS, a final ς is Σ.
        #expect(Person.sameName("Strauß", "STRAUSS") && Person.sameName("ΝΙΚΟΣ", "Νικος") && !Person.sameName("Zoe", "Zoë"))
    }

    @Test("a waking window past midnight (a night shift) is kept, from a v6 database too; one that ends when it starts is refused, by the table as well")
    func aNightsWindowIsKept() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("v6.sqlite")
        try Self.version6(path)
        let store = try IntakeStore(path: path, mode: .existing)
        let me = try #require(try store.person(named: "me"))
        var night = try store.reminder(person: me.id).settings
        (night.wakeFromMinute, night.wakeUntilMinute) = (20 * 60, 8 * 60)
        #expect(night.problem == nil)
        try store.saveReminderSettings(night, person: me.id)
        #expect(try store.reminder(person: me.id).settings == night)
        #expect(try store.reminder(person: me.id).lastRemindedAt == Timestamp(secondsSince1970: 1_790_000_400), "the row's history kept by the rebuild")
        var allDay = night
        (allDay.wakeFromMinute, allDay.wakeUntilMinute) = (0, 1440)
        #expect(allDay.problem == nil)
        var never = night
        never.wakeUntilMinute = never.wakeFromMinute
        #expect(never.problem == .window)
        let refused = try store.write("test") { db in
            do { try db.run("UPDATE reminder SET wake_until_minute = wake_from_minute WHERE person = ?", [me.id]); return false } catch { return true }
        }
        #expect(refused, "the table's own check")
        #expect(try store.reminder(person: me.id).settings == night)
        // Their days of their own: none until set, an hour of the day when set.
        #expect(me.dayStartHour == nil)
        try store.setPersonDayStart(id: me.id, hour: 14)
        #expect(try store.person(id: me.id)?.dayStartHour == 14)
        #expect(throws: StoreError.self) { try store.setPersonDayStart(id: me.id, hour: 24) }
        try store.setPersonDayStart(id: me.id, hour: nil)
        #expect(try store.person(named: "me")?.dayStartHour == nil)
    }

    @Test("two people: events by device owner, goals, reminders and totals apart; reassigning keeps the past")
    func isolationAndReassignment() throws {
        let dir = TemporaryDirectory()
        let store = try IntakeStore(path: dir.file("q.sqlite"))
        let me = try #require(try store.people().first)
        let ann = try store.addPerson(name: "Ann", units: .usFluidOunce)
        #expect(throws: StoreError.self) { try store.addPerson(name: "ann") }
        #expect(throws: StoreError.self) { try store.addPerson(name: " spaced") }
        try store.saveDevice(Device(address: "AA:00:00:00:00:01", addedAt: t0))
        try store.saveDevice(Device(address: "AA:00:00:00:00:02", addedAt: t0, person: "ann"))
        #expect(try store.deviceOwners() == ["AA:00:00:00:00:01": me.id, "AA:00:00:00:00:02": ann.id])

        try store.ingest(sips(3, ml: 10), device: "AA:00:00:00:00:01", started: t0)
        try store.ingest(sips(2, ml: 50), device: "AA:00:00:00:00:02", started: t0)
        try store.setGoal(ml: 1500, from: CivilDay(parsing: "2026-01-01")!, person: ann.id)
        try store.setGoal(ml: 2500, from: CivilDay(parsing: "2026-01-01")!, person: me.id)
        try store.saveReminderSettings(ReminderSettings(mode: .off, wakeFromMinute: 0, wakeUntilMinute: 600, slackML: 0, afterMinutes: 0, everyMinutes: 5),
                                       person: ann.id)
        let day = [DaySegment(from: t0.adding(-3600), until: t0.adding(86_400), shift: 0)]
        #expect(try store.sipTotalsByDay(day, person: me.id).values.map(\.ml) == [30])
        #expect(try store.sipTotalsByDay(day, person: ann.id).values.map(\.ml) == [100])
        #expect(try store.sipTotalsByDay(day).values.map(\.ml) == [130], "the household's")
        #expect(try store.goals(person: ann.id).map(\.ml) == [1500] && store.goals(person: me.id).map(\.ml) == [2500])
        #expect(try store.reminder(person: ann.id).settings.mode == .off && store.reminder(person: me.id).settings.mode == .pace)
        #expect(try store.lastSip(before: t0.adding(86_400), person: ann.id)?.ml == 50)

        // The bottle changes hands: what was drunk stays with whoever drank it.
        #expect(try store.assignDevice(address: "AA:00:00:00:00:01", to: ann.id))
        try store.ingest(sips(1, ml: 40, from: 600), device: "AA:00:00:00:00:01", started: t0)
        #expect(try store.sipTotalsByDay(day, person: me.id).values.map(\.ml) == [30])
        #expect(try store.sipTotalsByDay(day, person: ann.id).values.map(\.ml) == [140])
        #expect(try store.holdings(of: me.id) == PersonHoldings(events: 3, deleted: 0, devices: []))

        // Removing: refused while they have history, unless it goes to someone; never the last person.
        #expect(throws: StoreError.self) { try store.removePerson(id: ann.id, movingTo: nil) }
        try store.removePerson(id: ann.id, movingTo: me.id)
        #expect(try store.people().map(\.name) == ["me"])
        #expect(try store.holdings(of: me.id) == PersonHoldings(events: 6, deleted: 0, devices: ["AA:00:00:00:00:01", "AA:00:00:00:00:02"]))
        #expect(throws: StoreError.self) { try store.removePerson(id: me.id, movingTo: nil) }
        // Someone added next never gets Ann's id: Home Assistant's entities and topics hang on it.
        let cat = try store.addPerson(name: "Cat")
        #expect(cat.id > ann.id, "\(cat.id) after \(ann.id)")
        try store.removePerson(id: cat.id, movingTo: nil)
        #expect(try store.addPerson(name: "Dan").id > cat.id)
        try store.renamePerson(id: me.id, to: "Sam")
        #expect(try store.events(EventQuery(limit: 1)).first?.person == "Sam")
    }

    @Test("the hub's roster at a gateway: its paired devices to their people, someone new added once, the rest as they were; again, nothing")
    func aRosterApplied() throws {
        let dir = TemporaryDirectory()
        let store = try IntakeStore(path: dir.file("q.sqlite"))
        for address in ["C8:2A:3F:00:00:01", "C8:2A:3F:00:00:02", "C8:2A:3F:00:00:03"] {
            try store.saveDevice(Device(address: address, profile: "hidrate-spark", addedAt: .wallClockNow))
        }
        let roster = [RosterEntry(address: "C8:2A:3F:00:00:01", person: "Gran"), RosterEntry(address: "C8:2A:3F:00:00:02", person: "gran"),
                      RosterEntry(address: "C8:2A:3F:00:00:09", person: "Gran")]
        // Two devices to one person not known here: added once (names match as the store matches them), both given.
        #expect(try store.applyRoster(roster, at: .wallClockNow).devices == Array(roster.prefix(2)))
        let people = try store.people()
        let gran = try #require(people.first { $0.name == "Gran" })
        #expect(people.count == 2)
        let owners = try store.deviceOwners()
        #expect(owners["C8:2A:3F:00:00:01"] == gran.id && owners["C8:2A:3F:00:00:02"] == gran.id)
        #expect(owners["C8:2A:3F:00:00:03"] == people.first { $0.name == "me" }?.id && owners["C8:2A:3F:00:00:09"] == nil)
        #expect(try store.applyRoster(roster, at: .wallClockNow).isEmpty)
    }

    @Test("a name before a rename finds its person in any case, ASCII or not; whoever takes the name after takes it")
    func formerNames() throws {
        let dir = TemporaryDirectory()
        let store = try IntakeStore(path: dir.file("q.sqlite"))
        let zoe = try store.addPerson(name: "Zoë")
        try store.renamePerson(id: zoe.id, to: "Zoe A")
        #expect(try store.person(formerlyNamed: "ZOË")?.id == zoe.id, "SQLite's NOCASE does not fold Ë")
        // Someone new, in another case: the name is theirs, not an alias any more.
        let other = try store.addPerson(name: "ZOË")
        #expect(try store.person(formerlyNamed: "zoë") == nil)
        try store.renamePerson(id: other.id, to: "Zed")
        #expect(try store.person(formerlyNamed: "zoë")?.id == other.id, "the name's last holder, not its first")
        // A swap leaves neither name an alias (each is someone's now).
        try store.renamePerson(id: zoe.id, to: "Tmp")
        try store.renamePerson(id: other.id, to: "Zoe A")
        try store.renamePerson(id: zoe.id, to: "Zed")
        #expect(try store.person(formerlyNamed: "Zed") == nil && store.person(formerlyNamed: "zoe a") == nil)
        #expect(try store.person(formerlyNamed: "tmp")?.id == zoe.id)
    }

    @Test("a person the hub renames is renamed at the gateway, with their history and devices; not when the new name is someone else's here; a swap, swapped")
    func aRenameAtTheHub() throws {
        let dir = TemporaryDirectory()
        let store = try IntakeStore(path: dir.file("q.sqlite"))
        let bottle = "C8:2A:3F:00:00:01"
        try store.saveDevice(Device(address: bottle, profile: "hidrate-spark", addedAt: .wallClockNow))
        // A gateway that already knew Gran by name links her to the hub's id 7.
        let gran = try store.addPerson(name: "Gran")
        var applied = try store.applyRoster([RosterEntry(address: bottle, person: "Gran", personId: 7)], at: .wallClockNow)
        #expect(applied.devices.map(\.address) == [bottle] && applied.linked == 1 && applied.renamed.isEmpty)
        _ = try store.addManual(ml: 30, at: .wallClockNow, note: nil, identity: "manual|gran", person: gran.id)
        #expect(try store.events(EventQuery(limit: 1)).first?.person == "Gran")

        // Renamed at the hub: the same person here, her sip and her bottle with her.
        applied = try store.applyRoster([RosterEntry(address: bottle, person: "Granny", personId: 7)], at: .wallClockNow)
        #expect(applied.renamed == [PersonRename(from: "Gran", to: "Granny")] && applied.devices.isEmpty && applied.linked == 0)
        #expect(try store.person(id: gran.id)?.name == "Granny")
        #expect(try store.people().map(\.name).sorted() == ["Granny", "me"])
        #expect(try store.events(EventQuery(limit: 1)).first?.person == "Granny")
        #expect(try store.deviceOwners()[bottle] == gran.id)
        #expect(try store.applyRoster([RosterEntry(address: bottle, person: "Granny", personId: 7)], at: .wallClockNow).isEmpty)
        // Her name before still finds her here, as after a rename here (a page bookmarked at this gateway).
        #expect(try store.person(formerlyNamed: "gran")?.id == gran.id)

        // A new name that is someone else's here: nobody is renamed, and the bottle stays hers.
        let ann = try store.addPerson(name: "Ann")
        applied = try store.applyRoster([RosterEntry(address: bottle, person: "ann", personId: 7)], at: .wallClockNow)
        #expect(applied.isEmpty, "\(applied)")
        #expect(try store.person(id: gran.id)?.name == "Granny" && store.person(id: ann.id)?.name == "Ann")
        #expect(try store.deviceOwners()[bottle] == gran.id)

        // Two names the hub swapped (Ann linked to its id 8 first): swapped here too, each keeping
        // their own history and bottle.
        let spare = "C8:2A:3F:00:00:05"
        #expect(try store.applyRoster([RosterEntry(address: spare, person: "Ann", personId: 8)], at: .wallClockNow).linked == 1)
        applied = try store.applyRoster([RosterEntry(address: bottle, person: "Ann", personId: 7),
                                         RosterEntry(address: spare, person: "Granny", personId: 8)], at: .wallClockNow)
        #expect(Set(applied.renamed) == [PersonRename(from: "Granny", to: "Ann"), PersonRename(from: "Ann", to: "Granny")], "\(applied)")
        #expect(try store.person(id: gran.id)?.name == "Ann" && store.person(id: ann.id)?.name == "Granny")
        #expect(try store.deviceOwners()[bottle] == gran.id)
        #expect(try store.events(EventQuery(limit: 1)).first?.person == "Ann", "her sip went with her")

        // A roster from a hub that sends no ids still matches by name (someone new, then given).
        let other = "C8:2A:3F:00:00:02"
        try store.saveDevice(Device(address: other, profile: "hidrate-spark", addedAt: .wallClockNow))
        applied = try store.applyRoster([RosterEntry(address: other, person: "Bo")], at: .wallClockNow)
        #expect(applied.devices.map(\.person) == ["Bo"] && applied.linked == 0)
    }
}

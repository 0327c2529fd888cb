import Foundation
import QuenchCore
@testable import QuenchStore
import QuenchTestSupport
import Testing
@testable import QuenchHistory

@Suite struct HistoryTransferTests {
    @Test func exportImportRoundTripLosesNothing() throws {
        let source = try HistoryFixture()
        let env = source.environment()
        _ = try History.delete(env, id: 3, json: false)
        _ = try History.settings(env, units: "oz", dayStart: "05:00", timeZone: "Europe/London", json: false)
        #expect(try History.settings(env, units: nil, dayStart: nil, timeZone: nil, json: false).contains("Day starts  05:00"), "taken as settings shows it")
        _ = try History.add(env, amount: "250ml", at: "09:00", note: "tea, \"builder's\"\nsecond line", json: false)
        for format in History.ExportFormat.allCases {
            let exported = try History.export(env, format: format, since: nil, until: nil)
            let target = try HistoryFixture(populate: false)
            let file = target.directory + "/export.\(format.rawValue)"
            try FileManager.default.createDirectory(atPath: target.directory, withIntermediateDirectories: true)
            try exported.write(toFile: file, atomically: true, encoding: .utf8)
            let first = try History.importFile(target.environment(), path: file, json: true)
            #expect(first.contains("\"inserted\":18"), "\(format): \(first)")
            #expect(try History.export(target.environment(), format: format, since: nil, until: nil) == exported, "\(format)")
            // Importing again changes nothing.
            let second = try History.importFile(target.environment(), path: file, json: true)
            #expect(second.contains("\"duplicates\":18") && second.contains("\"inserted\":0"), "\(format): \(second)")
            #expect(try History.export(target.environment(), format: format, since: nil, until: nil) == exported, "\(format)")
            if format == .json {
                #expect(try History.stats(target.environment(), days: 30, json: true) == History.stats(env, days: 30, json: true))
            }
        }
    }

    @Test("rows from elsewhere that are alike (two glasses in one minute, two people at dinner) are each a drink, and a second import finds each")
    func alikeRowsAreEachADrink() throws {
        let f = try HistoryFixture(populate: false)
        try FileManager.default.createDirectory(atPath: f.directory, withIntermediateDirectories: true)
        let file = f.directory + "/dinner.csv"
        try ("kind,ml,at,person\nsip,250,2026-03-02T19:00:00Z,me\nsip,250,2026-03-02T19:00:00Z,ann\n"
             + "sip,250,2026-03-02T19:00:00Z,ann\nsip,200,2026-03-02T19:00:00Z,ann\n").write(toFile: file, atomically: true, encoding: .utf8)
        let first = try History.importFile(f.environment(), path: file, json: true)
        #expect(first.contains("\"inserted\":4") && first.contains("\"duplicates\":0"), "\(first)")
        let again = try History.importFile(f.environment(), path: file, json: true)
        #expect(again.contains("\"inserted\":0") && again.contains("\"duplicates\":4"), "\(again)")
        let store = try IntakeStore(path: f.path)
        let events = try store.events()
        #expect(events.map(\.ml).reduce(0, +) == 950)
        #expect(events.filter { $0.person == "ann" }.count == 3 && events.filter { $0.person == "me" }.count == 1)
    }

    /// Two people's spreadsheets, each imported for its person, share a row (both had 250 mL at 08:58): the second
    /// person's was taken for the first's and dropped (a household's trial: "Imported 187 of 189, 2 already stored").
    /// Each is theirs now; importing either file again adds nothing, nor after one of the drinks was moved to the
    /// other person (`edit --to`); and a row an earlier version stored without its person in its identity is not doubled.
    @Test func twoPeoplesFilesWithTheSameRowEachKeepTheirs() throws {
        let f = try HistoryFixture(populate: false)
        try FileManager.default.createDirectory(atPath: f.directory, withIntermediateDirectories: true)
        let shared = "sip,250,2026-02-11T08:58:00Z\nsip,330,2026-02-27T17:51:00Z\n"
        let anna = f.directory + "/anna.csv", bjorn = f.directory + "/bjorn.csv"
        try ("kind,ml,at\n" + shared + "sip,100,2026-02-12T09:00:00Z\n").write(toFile: anna, atomically: true, encoding: .utf8)
        try ("kind,ml,at\n" + shared + "sip,200,2026-02-12T10:00:00Z\n").write(toFile: bjorn, atomically: true, encoding: .utf8)
        let store = try IntakeStore(path: f.path)
        for name in ["Anna", "Björn"] { _ = try store.addPerson(name: name) }
        func importing(_ file: String, for person: String) throws -> String {
            var environment = f.environment()
            environment.person = person
            return try History.importFile(environment, path: file, json: true)
        }
        for (file, person) in [(anna, "Anna"), (bjorn, "Björn")] {
            let report = try importing(file, for: person)
            #expect(report.contains("\"inserted\":3") && report.contains("\"duplicates\":0"), "\(person): \(report)")
        }
        func mL(_ person: String) throws -> Double { try store.events().filter { $0.person == person }.map(\.ml).reduce(0, +) }
        #expect(try mL("Anna") == 680 && mL("Björn") == 780)
        for (file, person) in [(anna, "Anna"), (bjorn, "Björn")] {
            let again = try importing(file, for: person)
            #expect(again.contains("\"inserted\":0") && again.contains("\"duplicates\":3"), "\(person): \(again)")
        }
        // Anna's 100 mL was Björn's: moved, it stays his when her file comes again.
        let hers = try #require(try store.events().first { $0.person == "Anna" && $0.ml == 100 })
        let bjornID = try #require(try store.people().first { $0.name == "Björn" }?.id)
        _ = try store.editEvent(id: try #require(hers.id), ml: nil, time: nil, note: nil, person: bjornID)
        let afterMove = try importing(anna, for: "Anna")
        #expect(afterMove.contains("\"inserted\":0") && afterMove.contains("\"duplicates\":3"), "\(afterMove)")
        #expect(try mL("Anna") == 580 && mL("Björn") == 880)
        // An earlier version's identity for a row (no person in it): found, whoever's it is.
        let legacy = f.directory + "/legacy.csv"
        try "kind,ml,at\nsip,150,2026-02-13T07:00:00Z\n".write(toFile: legacy, atomically: true, encoding: .utf8)
        _ = try importing(legacy, for: "Anna")
        try SQLiteConnection(path: f.path, readOnly: false, busyTimeout: 1)
            .execute("UPDATE intake_event SET identity = substr(identity, 1, instr(identity, '|@') - 1) WHERE ml = 150")
        let identities = try store.events().map(\.identity)
        #expect(identities.contains { $0.hasSuffix("|150.0") }, "\(identities)")
        let legacyAgain = try importing(legacy, for: "Björn")
        #expect(legacyAgain.contains("\"inserted\":0") && legacyAgain.contains("\"duplicates\":1"), "\(legacyAgain)")

        // A household's file, both at dinner, then one person's own file with that row: found, once each (a review:
        // alike rows numbered across the file made Bob's `#2`, and his own file's row a second drink).
        let house = f.directory + "/house.csv"
        try "kind,ml,at,person\nsip,275,2026-02-20T19:00:00Z,Anna\nsip,275,2026-02-20T19:00:00Z,Björn\n".write(toFile: house, atomically: true, encoding: .utf8)
        let both = try History.importFile(f.environment(), path: house, json: true)
        #expect(both.contains("\"inserted\":2"), "\(both)")
        let his = f.directory + "/his.csv"
        try "kind,ml,at\nsip,275,2026-02-20T19:00:00Z\n".write(toFile: his, atomically: true, encoding: .utf8)
        #expect(try importing(his, for: "Björn").contains("\"duplicates\":1"))
        // Renamed since: the file comes again under the new name, and its rows are found.
        try store.renamePerson(id: bjornID, to: "Bjorn")
        let renamed = try importing(bjorn, for: "Bjorn")
        #expect(renamed.contains("\"inserted\":0") && renamed.contains("\"duplicates\":3"), "\(renamed)")

        // Moved to a new Pi by an export (the people get other ids there): the files come again, nothing is doubled.
        let exported = f.directory + "/all.json"
        try History.export(f.environment(), format: .json, since: nil, until: nil).write(toFile: exported, atomically: true, encoding: .utf8)
        let moved = try HistoryFixture(populate: false)
        try FileManager.default.createDirectory(atPath: moved.directory, withIntermediateDirectories: true)
        _ = try IntakeStore(path: moved.path).addPerson(name: "Zed")  // ids taken there before the household's
        _ = try History.importFile(moved.environment(), path: exported, json: true)
        var there = moved.environment()
        there.person = "Anna"
        let annaThere = try History.importFile(there, path: anna, json: true)
        #expect(annaThere.contains("\"inserted\":0") && annaThere.contains("\"duplicates\":3"), "\(annaThere)")
    }

    @Test func badImportsWriteNothing() throws {
        let f = try HistoryFixture(populate: false)
        try FileManager.default.createDirectory(atPath: f.directory, withIntermediateDirectories: true)
        let cases = [
            "kind,ml,at\nsip,250,2026-03-02T09:00:00Z\nsip,-3,2026-03-02T10:00:00Z\n",
            "kind,ml,at\nsip,250,2026-03-02T09:00:00Z\nsip,250,yesterday\n",
            "kind,ml,at\nsip,250\n",
            "kind,ml,at\nlifted,250,2026-03-02T09:00:00Z\n",
            "when,amount\n09:00,250\n",
            "{\"format\": \"other\", \"version\": 1, \"events\": []}",
            "{not json",
        ]
        for (i, text) in cases.enumerated() {
            let file = f.directory + "/bad\(i).csv"
            try text.write(toFile: file, atomically: true, encoding: .utf8)
            #expect(throws: HistoryError.self, "case \(i)") { try History.importFile(f.environment(), path: file, json: false) }
        }
        // A CSV from elsewhere with only kind, ml and at imports, as source `import`.
        let file = f.directory + "/other.csv"
        try "kind,ml,at\nsip,250,2026-03-02T09:00:00Z\nsip,200,2026-03-02T10:00:00Z\n".write(toFile: file, atomically: true, encoding: .utf8)
        _ = try History.importFile(f.environment(), path: file, json: false)
        _ = try History.importFile(f.environment(), path: file, json: false)
        let store = try IntakeStore(path: f.path)
        let events = try store.events()
        #expect(events.count == 2 && events.allSatisfy { $0.source == .imported })
    }
}

@Suite(.serialized, .enabled(if: quenchBinary != nil, "SKIPPED: the quench executable is not built next to the tests (run `swift build` first)"))
struct HistoryProcessTests {
    @Test func corruptDatabaseIsRefusedAndLeftAlone() throws {
        let f = try HistoryFixture(populate: false)
        try FileManager.default.createDirectory(atPath: f.directory, withIntermediateDirectories: true)
        let junk = Data(repeating: 0x5A, count: 4096)
        try junk.write(to: URL(fileURLWithPath: f.path))
        let csv = f.directory + "/one.csv"
        try "kind,ml,at\nsip,250,2026-03-02T09:00:00Z\n".write(toFile: csv, atomically: true, encoding: .utf8)
        for command in [["today"], ["add", "250ml"], ["import", csv]] {
            let result = try runQuench(command + ["--db", f.path])
            #expect(result.status != 0)
            #expect(result.stderr.contains("not an SQLite database"), "\(result.stderr)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: f.path)) == junk)
    }

    @Test func missingDatabaseIsAClearError() throws {
        let result = try runQuench(["stats", "--db", "/nonexistent-dir/quench.sqlite"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("no database at /nonexistent-dir/quench.sqlite"))
    }

    @Test func readOnlyDatabaseReadsButRefusesWrites() throws {
        let f = try HistoryFixture()
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: f.path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: f.path) }
        let before = try Data(contentsOf: URL(fileURLWithPath: f.path))
        let read = try runQuench(["log", "--db", f.path, "--limit", "2"])
        #expect(read.status == 0, "\(read.stderr)")
        let write = try runQuench(["add", "250ml", "--db", f.path])
        #expect(write.status != 0)
        #expect(write.stderr.contains("read-only"), "\(write.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: f.path)) == before)
    }

    /// A person named by the environment or a file is said to come from there: the person at the
    /// keyboard did not type it (it said only "nobody is called 'nobody'").
    @Test func anUnknownPersonSaysWhereItWasNamed() throws {
        let f = try HistoryFixture()
        let fromEnvironment = try runQuench(["today", "--db", f.path], environment: ["QUENCH_PERSON": "nobody"])
        #expect(fromEnvironment.status != 0 && fromEnvironment.stderr.contains("person ($QUENCH_PERSON): nobody is called 'nobody'"), "\(fromEnvironment.stderr)")
        let config = f.directory + "/q.toml"
        try "person = \"nobody\"\n".write(toFile: config, atomically: true, encoding: .utf8)
        #expect(chmod(config, 0o600) == 0)
        let fromFile = try runQuench(["today", "--db", f.path], environment: ["QUENCH_CONFIG": config])
        #expect(fromFile.status != 0 && fromFile.stderr.contains("person (\(config):1): nobody is called 'nobody'"), "\(fromFile.stderr)")
        let typed = try runQuench(["today", "--db", f.path, "--person", "nobody"], environment: ["QUENCH_PERSON": "me"])
        #expect(typed.status != 0 && typed.stderr.contains("quench: error: nobody is called 'nobody'"), "\(typed.stderr)")
    }

    /// A negative number does not hide --help's answer.
    @Test func helpBesideANegativeNumberIsStillHelp() throws {
        let help = try runQuench(["simulate", "--hours", "-1", "--help"])
        #expect(help.status == 0 && help.stdout.contains("USAGE: quench simulate"), "\(help.stdout)\(help.stderr)")
    }

    @Test func badInputExitsNonZero() throws {
        let f = try HistoryFixture()
        for (args, message) in [
            (["add", "5cups"], "unknown unit 'cups' (a volume takes ml, cl, l, or oz or fl oz for US fluid ounces)"),
            (["add", "9000ml"], "more than 5,000 mL"),
            (["add", "250ml", "--at", "2026-02-30 10:00"], "--at: invalid time"),
            (["add", "250ml", "--at", "1969-12-31 23:00"], "--at: invalid time '1969-12-31 23:00': before 1970"),
            // A day alone was its start (04:00): a carer's "yesterday's glass" went to 04:00.
            (["add", "250ml", "--at", "2026-11-20"], "--at: invalid time '2026-11-20': a drink needs its time of day too: '2026-11-20 12:30'"),
            (["add", "250ml", "--at", "yesterday"], "--at: invalid time 'yesterday': a drink needs its time of day too"),
            // Not offered a day alone among the forms, which it then refuses.
            (["add", "250ml", "--at", "lunch"], "--at: invalid time 'lunch': expected HH:MM, YYYY-MM-DD HH:MM or an ISO 8601 time"),
            // As `settings` shows it, 04:00, is taken; a day starts on the hour.
            (["settings", "--day-start", "4:30"], "--day-start '4:30' is not a whole hour from 0 to 23 (e.g. 4 or 04:00)"),
            (["remind", "set", "--after", "nan"], "--after: invalid amount 'nan'"),
            (["remind", "set", "--every", "1e300m"], "--every: "),
            (["today", "--units", "gallons"], "unknown unit 'gallons' (units are ml, or oz for US fluid ounces)"),
            (["person", "units", "me", "gallons"], "unknown unit 'gallons' (their units are ml, oz for US fluid ounces, or household)"),
            (["calendar", "--month", "2026-13"], "--month: invalid date"),
            (["delete", "4242"], "there is no event 4242"),
            (["remind", "snooze", "3"], "duration: invalid amount '3': give a unit: 3min or 3h"),
            (["remind", "set", "--window", "7-"], "--window '7-': '' is not a time of day; expected HH:MM-HH:MM or whole hours H-H"),
            (["goal", "set", "2000ml", "--from", "0999-01-01"], "--from: invalid date '0999-01-01': before 1970"),
            (["add", "250ml", "--at", "9:3x"], "--at: invalid time '9:3x': the time of day should be HH:MM or HH:MM:SS"),
            // ArgumentParser takes a word starting with - for options: a negative is named, or given to its option.
            (["add", "-50ml"], "'-50ml' is a negative number, and nothing here takes one; to take a drink back: `quench undo`"),
            (["delete", "-3"], "'-3' is a negative number, and nothing here takes one"),
            // `-2h` is `-2 -h` to ArgumentParser: it printed the help and exited 0, setting nothing.
            (["person", "alert", "me", "-2h"], "'-2h' is a negative number, and nothing here takes one"),
            (["remind", "snooze", "-1.5h"], "'-1.5h' is a negative number, and nothing here takes one"),
            (["remind", "set", "--after", "-2h"], "--after: "),
            (["today", "--date", "-1"], "--date: invalid date '-1'"),
            // A slack no day could use up: reminders would never come (it was taken).
            (["remind", "set", "--slack", "99999ml"], "--slack: invalid amount '99999ml': up to 2,000 mL behind the pace, please"),
            // The carer's threshold names its own range, not the 0 to 24 hours of any duration.
            (["person", "alert", "me", "999h"], "after: invalid amount '999h': between 15 min and 24 h, please"),
            // A duration's words are a duration's (it offered "such as 250ml"), and a bare 0 is not offered as 0min or 0h.
            (["person", "alert", "me", "nan"], "after: invalid amount 'nan': expected a number followed by a unit, a time such as 30min or 2h"),
            (["person", "alert", "me", "0"], "after: invalid amount '0': give a unit, and a time between 15 min and 24 h"),
            (["person", "alert", "me", "20"], "after: invalid amount '20': give a unit: 20min"),
            (["today", "--date", "tomorrow"], "--date: invalid date 'tomorrow': expected YYYY-MM-DD, today or yesterday"),
        ] {
            let result = try runQuench(args + ["--db", f.path])
            #expect(result.status != 0, "\(args)")
            #expect(result.stderr.contains(message), "\(args): \(result.stderr)")
        }
    }

    /// `--window 7-23` is what people type: whole hours (it said "invalid date").
    @Test func aWindowOfWholeHours() throws {
        let f = try HistoryFixture()
        let result = try runQuench(["remind", "set", "--window", "7-23", "--db", f.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("07:00-23:00"), "\(result.stdout)")
    }

    @Test func twoProcessesWriteAtOnce() throws {
        let f = try HistoryFixture(populate: false)
        try FileManager.default.createDirectory(atPath: f.directory, withIntermediateDirectories: true)
        // Two imports of 5 000 events each and a run of adds, all at once, on a database
        // that none of them has created yet.
        var files: [String] = []
        for p in 0..<2 {
            var csv = "kind,ml,at,device\n"
            for i in 0..<5000 {
                csv += "sip,\(10 + i % 40),\(Timestamp(secondsSince1970: 1_770_000_000 + Double(i) * 61).iso8601),dev\(p)\n"
            }
            let file = f.directory + "/p\(p).csv"
            try csv.write(toFile: file, atomically: true, encoding: .utf8)
            files.append(file)
        }
        let imports = try files.map { try startQuench(["import", $0, "--db", f.path]) }
        var addStatuses: [Int32] = []
        for _ in 0..<8 { addStatuses.append(try runQuench(["add", "100ml", "--db", f.path]).status) }
        for process in imports {
            let err = (process.standardError as! Pipe).fileHandleForReading.readDataToEndOfFile()
            _ = (process.standardOutput as! Pipe).fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(String(decoding: err, as: UTF8.self))")
        }
        #expect(addStatuses.allSatisfy { $0 == 0 })
        let store = try IntakeStore(path: f.path)
        #expect(try store.events(EventQuery(includeDeleted: true)).count == 10_008)
    }

    /// `quench` with several people: --person, QUENCH_PERSON, the refusal without either, and the people commands.
    @Test func aHouseholdOnTheCommandLine() throws {
        let f = try HistoryFixture()
        let db = ["--db", f.path]
        #expect(try runQuench(["today"] + db).status == 0, "one person: no flag needed")
        let added = try runQuench(["person", "add", "ann", "--goal", "1500ml", "--units", "oz"] + db)
        #expect(added.status == 0 && added.stdout.hasPrefix("Added ann.\n"), "\(added.stderr)")
        for command in [["today"], ["log"], ["stats"], ["calendar"], ["goal"], ["remind"], ["add", "250ml"], ["undo"]] {
            let refused = try runQuench(command + db)
            #expect(refused.status == 1, "\(command)")
            #expect(refused.stderr == "quench: error: several people share this history (me, ann): say whose with --person NAME "
                    + "(or QUENCH_PERSON, or `person` in the config file)\n", "\(command): \(refused.stderr)")
        }
        let drink = try runQuench(["add", "250ml", "--person", "ann", "--json"] + db)
        #expect(drink.status == 0 && drink.stdout.contains("\"person\":\"ann\""), "\(drink.stderr)")
        // A person set for a shell does not cut an export (a move to a new Pi) down to theirs; --person does.
        let everyone = try runQuench(["export"] + db)
        let shellPerson = try runQuench(["export"] + db, environment: ["QUENCH_PERSON": "ann"])
        #expect(shellPerson.status == 0 && shellPerson.stdout == everyone.stdout && everyone.stdout.contains(",me\n") && everyone.stdout.contains(",ann\n"))
        #expect(shellPerson.stderr == "quench: export: everyone's history, not only ann's (named in $QUENCH_PERSON): --person ann for theirs alone\n",
                "\(shellPerson.stderr)")
        let hers = try runQuench(["export", "--person", "ann"] + db, environment: ["QUENCH_PERSON": "me"])
        #expect(hers.stderr.isEmpty && !hers.stdout.contains(",me\n") && hers.stdout.contains(",ann\n"), "\(hers.stdout)")
        let today = try runQuench(["today", "--json"] + db, environment: ["QUENCH_PERSON": "ann"])
        #expect(today.stdout.contains("\"intake_ml\":250") && today.stdout.contains("\"person\":\"ann\""), "\(today.stdout)")
        // Whose day, inside the one pair of brackets on another day (it said "… 2026 (ann) (day starts …)").
        let yesterday = try runQuench(["today", "--date", "yesterday", "--person", "ann"] + db)
        let heading = yesterday.stdout.prefix { $0 != "\n" }
        #expect(heading.contains(" 2026 (ann; day starts "), "\(heading)")
        #expect(!heading.contains(") ("), "\(heading)")
        let todays = try runQuench(["today", "--person", "ann"] + db).stdout.prefix { $0 != "\n" }
        #expect(todays.hasPrefix("Today (ann), "), "\(todays)")
        let unknown = try runQuench(["today", "--person", "bob"] + db)
        #expect(unknown.status == 1 && unknown.stderr.contains("nobody is called 'bob' (people: me, ann;"))
        let assigned = try runQuench(["devices", "assign", HistoryFixture.device, "--person", "ann"] + db)
        #expect(assigned.status == 0 && assigned.stdout.hasPrefix("\(HistoryFixture.device) is now ann's"), "\(assigned.stderr)")
        let people = try runQuench(["people", "--json"] + db)
        #expect(people.stdout.contains("\"devices\":[\"\(HistoryFixture.device)\"],\"events\":1"), "\(people.stdout)")
        let listed = try runQuench(["devices", "--json"] + db)
        #expect(listed.stdout.contains("\"person\":\"ann\""), "\(listed.stdout)")
        let refusedRemoval = try runQuench(["person", "remove", "ann"] + db)
        #expect(refusedRemoval.status == 1 && refusedRemoval.stderr.contains("ann still has 1 event and device"))
        #expect(try runQuench(["person", "rename", "ann", "Anna"] + db).status == 0)
        #expect(try runQuench(["person", "remove", "Anna", "--move-to", "me"] + db).status == 0)
        #expect(try runQuench(["today"] + db).status == 0, "one person again")
    }

    @Test func killedMidImportLeavesNothingPartial() throws {
        let f = try HistoryFixture(populate: false)
        try FileManager.default.createDirectory(atPath: f.directory, withIntermediateDirectories: true)
        _ = try runQuench(["add", "300ml", "--db", f.path])  // what was there before must survive
        var csv = "kind,ml,time,device,note\n"
        for i in 0..<60_000 { csv += "sip,\(5 + i % 50),\(1_700_000_000 + i * 7),killme,note number \(i) to make pages\n" }
        let file = f.directory + "/big.csv"
        try csv.write(toFile: file, atomically: true, encoding: .utf8)
        let process = try startQuench(["import", file, "--db", f.path])
        // Wait for the transaction to spill pages into the WAL, then kill -9.
        let wal = f.path + "-wal"
        let deadline = Date().addingTimeInterval(60)
        var walSize = 0
        while Date() < deadline, process.isRunning {
            walSize = (try? FileManager.default.attributesOfItem(atPath: wal)[.size] as? Int) ?? 0
            if walSize > 2_000_000 { break }
            usleep(2000)
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal, "the import finished before it could be killed (WAL \(walSize) bytes)")
        let store = try IntakeStore(path: f.path)
        let events = try store.events(EventQuery(includeDeleted: true))
        #expect(events.count == 1)
        #expect(events.first?.ml == 300)
        #expect(try runQuench(["today", "--db", f.path]).status == 0)
    }

    /// Issue 19: a history holding the largest and strangest values each door
    /// takes (the command line, the store under pairing and the gateway, an
    /// import) exports as JSON and as CSV, and each export imports into a fresh
    /// database unchanged. One past each limit is refused at the door.
    @Test func everyExportOfTheStrangestHistoryImportsBackUnchanged() throws {
        let f = try HistoryFixture(populate: false)
        try FileManager.default.createDirectory(atPath: f.directory, withIntermediateDirectories: true)
        let db = ["--db", f.path]
        let name = StrangeText.longestName
        #expect(try runQuench(["person", "add", name, "--units", "oz"] + db).status == 0)
        for (who, note) in [(name, StrangeText.longestNote), ("me", "tea, \"builder's\"\nsecond line"), ("me", "")] {
            let added = try runQuench(["add", "250ml", "--person", who, "--note", note] + db)
            #expect(added.status == 0, "\(added.stderr)")
        }
        // The stores' own doors: what pairing saves, what the gateway ingests.
        let store = try IntakeStore(path: f.path)
        let definition = "{\n  \"name\": \"" + StrangeText.line(64).replacing("\\", with: "").replacing("\"", with: "") + "\"\n}"
        try store.saveDevice(Device(address: "C8:2A:3F:00:3F:2A", name: StrangeText.line(TextField.deviceName.maxCharacters),
                                    profile: StrangeText.line(TextField.profile.maxCharacters), addedAt: Timestamp(secondsSince1970: 1_790_000_000),
                                    addressType: "random", profileDefinition: definition))
        try store.ingest([DetectedEvent(kind: .sip, t: 5, start: 1, end: 4, ml: 42, remainingML: 100)],
                         device: StrangeText.line(TextField.eventDevice.maxCharacters), started: Timestamp(secondsSince1970: 1_790_000_000))
        // `devices assign` takes the address in any case.
        let assigned = try runQuench(["devices", "assign", "c8-2a-3f-00-3f-2a", "--person", name] + db)
        #expect(assigned.status == 0, "\(assigned.stderr)")
        // The import's door: an identity at its limit, and what a CSV from elsewhere spells.
        let identity = StrangeText.line(TextField.identity.maxCharacters)
        let csv = "identity,kind,ml,time,note,person\n" + CSV.line([identity, "pour", "12.5", "1790000100", StrangeText.longestNote, name]) + "\n"
        let incoming = f.directory + "/incoming.csv"
        try csv.write(toFile: incoming, atomically: true, encoding: .utf8)
        let imported = try runQuench(["import", incoming] + db)
        #expect(imported.status == 0, "\(imported.stderr)")

        for format in ["json", "csv"] {
            let exported = try runQuench(["export", "--format", format] + db)
            #expect(exported.status == 0, "\(exported.stderr)")
            #expect(exported.stdout.contains("👩‍👩‍👧"))
            let file = f.directory + "/export.\(format)"
            try exported.stdout.write(toFile: file, atomically: true, encoding: .utf8)
            let fresh = ["--db", f.directory + "/fresh-\(format).sqlite"]
            let back = try runQuench(["import", file] + fresh)
            #expect(back.status == 0, "\(format): \(back.stderr)")
            #expect(try runQuench(["export", "--format", format] + fresh).stdout == exported.stdout, "\(format): the same export back")
            let original = try IntakeStore(path: f.path).events(EventQuery(includeDeleted: true, order: .byID))
            let copy = try IntakeStore(path: f.directory + "/fresh-\(format).sqlite").events(EventQuery(includeDeleted: true, order: .byID))
            #expect(copy == original, "\(format): every event, field by field")
            #expect(original.count == 5 && original.contains { $0.note == StrangeText.longestNote && $0.person == name })
        }
        let device = try #require(try IntakeStore(path: f.directory + "/fresh-json.sqlite").device(address: "C8:2A:3F:00:3F:2A"))
        #expect(device == (try store.device(address: "C8:2A:3F:00:3F:2A")), "the device, its name, profile and file, whose it is")

        // One past each limit: refused at the door, with the field named, and nothing written.
        let refusals: [([String], String)] = [
            (["add", "250ml", "--note", StrangeText.longestNote + "x"], "note has 1001 characters, at most 1000"),
            (["add", "250ml", "--note", "\u{1B}[31mred"], "note holds the control character U+001B"),
            (["person", "add", StrangeText.longestName + "x"], "a name of 1 to 40 characters"),
            (["person", "rename", "me", "bad\u{7}bell"], "without control characters"),
            (["devices", "assign", "ZZ", "--person", "me"], "'ZZ' is not a Bluetooth address"),
        ]
        for (command, message) in refusals {
            let refused = try runQuench(command + db)
            #expect(refused.status != 0 && refused.stderr.contains(message), "\(command.prefix(2)): \(refused.stderr)")
            #expect(!refused.stderr.contains("\u{1B}") && !refused.stderr.contains("\u{7}"), "the refusal is safe to print")
        }
        #expect(try IntakeStore(path: f.path).events(EventQuery(includeDeleted: true)).count == 5)
    }

    /// Issue 19: an import of 50 000 events (14 years of ten drinks a day) while
    /// another process adds drink after drink: the import reads its file without
    /// the lock and writes in one short transaction, and a writer waits its turn.
    /// Every `add` succeeds, and the import lands whole. (Imports of ten years,
    /// 388 000 events, are measured in docs/benchmarks-store.md, not here.)
    @Test func aLargeImportWhileAddingKeepsEveryoneWriting() throws {
        let f = try HistoryFixture(populate: false)
        try FileManager.default.createDirectory(atPath: f.directory, withIntermediateDirectories: true)
        _ = try runQuench(["add", "300ml", "--db", f.path])
        var csv = "kind,ml,time,device,note\n"
        for i in 0..<50_000 { csv += "sip,\(5 + i % 50),\(1_700_000_000 + i * 7),big,note number \(i) to make pages\n" }
        let file = f.directory + "/big.csv"
        try csv.write(toFile: file, atomically: true, encoding: .utf8)
        let importing = try startQuench(["import", file, "--db", f.path])
        var adds: [ProcessResult] = []
        while importing.isRunning || adds.count < 20 {
            adds.append(try runQuench(["add", "10ml", "--db", f.path]))
        }
        let err = (importing.standardError as! Pipe).fileHandleForReading.readDataToEndOfFile()
        importing.waitUntilExit()
        #expect(importing.terminationStatus == 0, "\(String(decoding: err, as: UTF8.self))")
        let failed = adds.filter { $0.status != 0 }
        #expect(failed.isEmpty, "\(failed.count) of \(adds.count) adds failed: \(failed.first?.stderr ?? "")")
        let events = try IntakeStore(path: f.path).events(EventQuery(includeDeleted: true))
        #expect(events.count == 1 + 50_000 + adds.count)
    }

    /// Killed while it reads the file, before it writes: nothing of it, no staging left, the database usable.
    @Test func killedWhileReadingLeavesNothing() throws {
        let f = try HistoryFixture(populate: false)
        try FileManager.default.createDirectory(atPath: f.directory, withIntermediateDirectories: true)
        _ = try runQuench(["add", "300ml", "--db", f.path])
        // From a pipe whose writer stays open: the import is still reading, never at its end, when it is killed.
        let fifo = f.directory + "/in.csv"
        #expect(mkfifo(fifo, 0o600) == 0)
        let importing = try startQuench(["import", fifo, "--db", f.path])
        let writer = open(fifo, O_WRONLY)  // waits for the import to open it
        #expect(writer >= 0)
        var rows = "kind,ml,time\n"
        for i in 0..<5000 { rows += "sip,10,\(1_700_000_000 + i)\n" }
        // More than a pipe holds: written only as the import reads (and stages) it.
        let written = rows.withCString { write(writer, $0, strlen($0)) }
        #expect(written == rows.utf8.count)
        kill(importing.processIdentifier, SIGKILL)
        importing.waitUntilExit()
        close(writer)
        #expect(importing.terminationReason == .uncaughtSignal)
        let added = try runQuench(["add", "100ml", "--db", f.path])
        #expect(added.status == 0, "\(added.stderr)")
        #expect(try IntakeStore(path: f.path).events(EventQuery(includeDeleted: true)).map(\.ml).sorted() == [100, 300])
    }
}

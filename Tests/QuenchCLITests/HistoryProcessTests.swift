import Foundation
import QuenchCore
import QuenchStore
import QuenchTestSupport
import Testing
@testable import QuenchHistory

@Suite struct HistoryTransferTests {
    @Test func exportImportRoundTripLosesNothing() throws {
        let source = try HistoryFixture()
        let env = source.environment()
        _ = try History.delete(env, id: 3, json: false)
        _ = try History.settings(env, units: "oz", dayStart: 5, timeZone: "Europe/London", json: false)
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

    @Test func badInputExitsNonZero() throws {
        let f = try HistoryFixture()
        for (args, message) in [
            (["add", "5cups"], "unknown unit 'cups' (a volume takes ml, cl, l, or oz or fl oz for US fluid ounces)"),
            (["add", "9000ml"], "more than 5,000 mL"),
            (["add", "250ml", "--at", "2026-02-30 10:00"], "invalid date"),
            (["today", "--units", "gallons"], "unknown unit 'gallons' (units are ml, or oz for US fluid ounces)"),
            (["person", "units", "me", "gallons"], "unknown unit 'gallons' (their units are ml, oz for US fluid ounces, or household)"),
            (["calendar", "--month", "2026-13"], "--month: invalid date"),
            (["delete", "4242"], "there is no event 4242"),
            (["remind", "snooze", "3"], "invalid amount '3': give a unit: 3min or 3h"),
            (["remind", "set", "--window", "7-"], "--window '7-': '' is not a time of day; expected HH:MM-HH:MM or whole hours H-H"),
            (["goal", "set", "2000ml", "--from", "0999-01-01"], "--from: invalid date '0999-01-01': before 1970"),
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
        let today = try runQuench(["today", "--json"] + db, environment: ["QUENCH_PERSON": "ann"])
        #expect(today.stdout.contains("\"intake_ml\":250") && today.stdout.contains("\"person\":\"ann\""), "\(today.stdout)")
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
        for i in 0..<150_000 { csv += "sip,\(5 + i % 50),\(1_700_000_000 + i * 7),killme,note number \(i) to make pages\n" }
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
}

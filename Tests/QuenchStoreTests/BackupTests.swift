import Foundation
import QuenchCore
import QuenchTestSupport
@testable import QuenchStore
import Testing

/// Backups and restores against real files, with real processes writing
/// into the database meanwhile (`quench add` in a loop: each add one commit).
@Suite(.enabled(if: quenchBinary != nil, "SKIPPED: quench is not built (swift build)"))
struct BackupTests {
    /// A shell loop of `quench add`, one commit each (note `wN`), printing N once
    /// it is committed; it stops when the file `stop` appears (or after `limit` adds).
    final class Writer {
        let process: Process
        let stop: String

        init(database: String, folder: TemporaryFolder, prefix: String = "w", limit: Int = 100_000) throws {
            stop = folder.file("stop-\(prefix)")
            let script = """
                i=0
                while [ ! -e "$STOP" ] && [ $i -lt \(limit) ]; do
                  i=$((i+1))
                  "$QUENCH" add 10ml --note "\(prefix)$i" --db "$DB" > /dev/null || exit 1
                  echo $i
                done
                """
            process = try startQuench(["-c", script], environment: ["QUENCH": quenchBinary!, "DB": database, "STOP": stop],
                                      executable: "/bin/sh")
        }

        /// Stops the loop; the numbers it committed, in order.
        func finish() throws -> [Int] {
            _ = FileManager.default.createFile(atPath: stop, contents: nil)
            let output = (process.standardOutput as! Pipe).fileHandleForReading.readDataToEndOfFile()
            let errors = (process.standardError as! Pipe).fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "the writer failed: \(String(decoding: errors, as: UTF8.self))")
            return String(decoding: output, as: UTF8.self).split(separator: "\n").compactMap { Int($0) }
        }
    }

    /// The writer's note numbers in a database (`wN`), sorted.
    static func written(_ path: String, prefix: String = "w") throws -> [Int] {
        let db = try SQLiteConnection(path: path, readOnly: true, busyTimeout: 5)
        return try db.all("SELECT note FROM intake_event WHERE note LIKE ? || '%'", [prefix]) { row -> String in row[0] }
            .compactMap { Int($0.dropFirst(prefix.count)) }.sorted()
    }

    /// Every event row, as text, in id order: what "the same history" means here.
    static func rows(_ path: String) throws -> [String] {
        let db = try SQLiteConnection(path: path, readOnly: true, busyTimeout: 5)
        return try db.all("SELECT id, identity, kind, ml, time, source, coalesce(note, ''), deleted, person FROM intake_event ORDER BY id") { row in
            let id: Int64 = row[0], identity: String = row[1], kind: String = row[2], ml: Double = row[3], time: Double = row[4]
            let source: String = row[5], note: String = row[6], deleted: Int = row[7], person: Int64? = row[8]
            return "\(id)|\(identity)|\(kind)|\(ml)|\(time)|\(source)|\(note)|\(deleted)|\(person ?? -1)"
        }
    }

    /// A raw connection to a new, empty database file.
    static func newDatabase(_ path: String) throws -> SQLiteConnection {
        _ = FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
        return try SQLiteConnection(path: path, readOnly: false, busyTimeout: 1)
    }

    static func integrity(_ path: String) throws -> [String] {
        let db = try SQLiteConnection(path: path, readOnly: true, busyTimeout: 5)
        return try db.all("PRAGMA integrity_check") { row -> String in row[0] }
    }

    static func waitUntil(_ seconds: Double = 30, _ condition: () throws -> Bool) rethrows -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if try condition() { return true }
            usleep(20_000)
        }
        return try condition()
    }

    static func day(_ n: Double) -> Timestamp { t0.adding(n * 86_400) }

    @Test func aBackupTakenWhileAnotherProcessWritesIsWholeAndAPrefixOfItsWrites() throws {
        let folder = TemporaryFolder()
        let path = folder.file("quench.sqlite")
        let store = try IntakeStore(path: path)
        let set = BackupSet(folder: folder.path, database: path)
        let writer = try Writer(database: path, folder: folder)
        var seen: [Int] = []
        for round in 0..<3 {
            // Backups while it writes: wait for some writes past the last backup's.
            #expect(try Self.waitUntil { try Self.written(path).count >= (seen.last ?? 0) + 5 }, "the writer is writing")
            let outcome = try store.backUp(into: set, policy: .standard, at: Self.day(Double(round)))
            #expect(try Self.integrity(outcome.path) == ["ok"])
            let inBackup = try Self.written(outcome.path)
            // One snapshot: every add committed before it, none after (the adds commit one by one, in order).
            #expect(inBackup == Array(1...max(1, inBackup.count)), "round \(round): a prefix of the writes, no gap")
            #expect(inBackup.count > seen.count, "round \(round): it grew")
            #expect(outcome.events == inBackup.count)
            seen = inBackup
        }
        let committed = try writer.finish()
        #expect(committed.count >= seen.count)
        #expect(try Self.written(path) == committed, "the database has every write the writer saw committed")
        // A backup is one file, owner-only, with nothing beside it.
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(!names.contains { $0.hasPrefix(".") || $0.hasSuffix("-journal") }, "\(names)")
        let mode = (try FileManager.default.attributesOfItem(atPath: set.list()![0].path)[.posixPermissions] as? Int) ?? 0
        #expect(mode == 0o600)
    }

    @Test func restoreWhileAnotherProcessWritesLosesNothing() throws {
        let folder = TemporaryFolder()
        let path = folder.file("quench.sqlite")
        let store = try IntakeStore(path: path)
        for i in 0..<20 { _ = try store.addManual(ml: 100, at: t0.adding(Double(i) * 60), note: "b\(i)", identity: "manual|b\(i)") }
        let backup = try store.backUp(into: BackupSet(folder: folder.path, database: path), policy: .standard, at: t0).path
        let backupRows = try Self.rows(backup)
        let writer = try Writer(database: path, folder: folder)
        #expect(try Self.waitUntil { try Self.written(path).count >= 5 })
        let outcome = try IntakeStore.restore(backup: backup, into: path, at: t0.adding(3600))
        let restoredAt = try Self.written(path)
        let committed = try writer.finish()
        let kept = try #require(outcome.keptPath)

        #expect(try Self.integrity(path) == ["ok"])
        #expect(try Self.integrity(kept) == ["ok"])
        // The kept file holds exactly what was replaced: the backup's events and the writes before the restore.
        let replaced = try Self.written(kept)
        #expect(replaced == Array(1...max(1, replaced.count)))
        #expect(outcome.replacedEvents == 20 + replaced.count)
        // The restored history: the backup's rows, then only what was written after.
        let now = try Self.rows(path)
        #expect(Array(now.prefix(backupRows.count)) == backupRows)
        let after = try Self.written(path)
        #expect(Set(after).isDisjoint(with: replaced), "nothing is in both")
        #expect((replaced + after).sorted() == committed, "every committed write is in the kept file or the restored history")
        _ = restoredAt
    }

    @Test func restorePutsTheBackupBackAndKeepsTheHistoryItReplaced() throws {
        let folder = TemporaryFolder()
        let path = folder.file("quench.sqlite")
        let store = try IntakeStore(path: path)
        for i in 0..<10 { _ = try store.addManual(ml: 100, at: t0.adding(Double(i) * 60), note: "a\(i)", identity: "manual|a\(i)") }
        try store.notePublishedNode("kitchen")
        let backup = try store.backUp(into: BackupSet(folder: folder.path, database: path), policy: .standard, at: t0)
        let atBackup = try Self.rows(path)
        for i in 0..<5 { _ = try store.addManual(ml: 50, at: t0.adding(Double(100 + i) * 60), note: "later", identity: "manual|l\(i)") }
        _ = try store.setDeleted(id: 1, true)
        // Published since the backup: the outbox's numbers have moved on.
        try store.setOutbox(enabled: true)
        _ = try store.addManual(ml: 20, at: t0.adding(200 * 60), note: nil, identity: "manual|published")
        let lastBefore = try #require(store.outbox(after: 0, limit: 100).last?.seq)
        let beforeRestore = try Self.rows(path)

        // What a killed copy of an earlier run left (its process gone): cleared by this one.
        let finished = try startQuench(["--version"])
        finished.waitUntilExit()
        let dead = finished.processIdentifier
        for name in [".quench-replaced-20260101T000000Z.sqlite.partial-\(dead)", ".quench-replaced-20260101T000000Z.sqlite.partial-\(dead)-journal",
                     ".quench.sqlite.restore-\(dead)"] {
            _ = FileManager.default.createFile(atPath: folder.file(name), contents: Data("x".utf8))
        }
        let idBefore = try store.mqttIdentity()
        let outcome = try IntakeStore.restore(backup: backup.path, into: path, at: t0.adding(7200))
        #expect(try Self.rows(path) == atBackup, "the restored history is the backup's")
        // Its change numbers start again from the backup's: to a hub it is another database (docs/hub.md).
        let idAfter = try store.mqttIdentity()
        #expect(idAfter.databaseID != idBefore.databaseID && idAfter.nodeID == idBefore.nodeID, "\(idBefore) \(idAfter)")
        // Nor the node it published as: restored as a hub, the old Pi may go on as that gateway (the review).
        #expect(idBefore.publishedNode == "kitchen" && idAfter.publishedNode == nil, "\(idBefore) \(idAfter)")
        #expect(try store.events().count == 10, "a store opened before sees it too")
        #expect(outcome.backupVersion == IntakeStore.schemaVersion)
        #expect(outcome.keptPath == folder.file("quench-replaced-20260302T093000Z.sqlite"))
        #expect(try Self.rows(outcome.keptPath!) == beforeRestore, "the replaced history is kept whole")
        #expect(outcome.replacedEvents == 16)
        // The database is still in WAL mode, and writable.
        _ = try store.addManual(ml: 10, at: .wallClockNow, note: nil, identity: "manual|after")
        let db = try SQLiteConnection(path: path, readOnly: true, busyTimeout: 5)
        #expect(try db.first("PRAGMA journal_mode") { row -> String in row[0] } == "wal")
        // Nothing staged is left beside it.
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(!names.contains { $0.hasPrefix(".") }, "\(names)")
        // The restored history's changes are numbered on from the replaced one's, so a publisher running on sends them.
        try store.setOutbox(enabled: true)
        _ = try store.addManual(ml: 30, at: t0.adding(300 * 60), note: nil, identity: "manual|after-restore")
        #expect(try store.outbox(after: lastBefore, limit: 100).map(\.identity) == ["manual|after-restore"])
    }

    /// `quench restore` killed (SIGKILL) at any moment: the database holds one history or the
    /// other, whole, never a mix; what the killed one staged is cleared by the next.
    @Test func aRestoreKilledAnywhereLeavesOneHistoryOrTheOther() throws {
        let folder = TemporaryFolder()
        let original = folder.file("original.sqlite")
        do {
            let store = try IntakeStore(path: original)
            _ = try store.ingest(sips(3000, ml: 30), device: "old", started: t0)
        }
        let backupSource = folder.file("source.sqlite")
        let backup: String
        do {
            let store = try IntakeStore(path: backupSource)
            _ = try store.ingest(sips(60_000, every: 30, ml: 12), device: "new", started: t0)
            backup = try store.backUp(into: BackupSet(folder: folder.path, database: backupSource), policy: .standard, at: t0).path
        }
        let oldRows = try Self.rows(original)
        let newRows = try Self.rows(backup)
        var outcomes: [String: Int] = [:]
        // The delays span the whole run (about 0.5 s here: start, staged copy and its check, then the replacement).
        let delays = [0, 100] + Array(stride(from: 250, through: 750, by: 50)) + [1000]
        for (round, delay) in delays.enumerated() {
            let place = folder.file("round-\(round)")
            try FileManager.default.createDirectory(atPath: place, withIntermediateDirectories: false)
            let live = place + "/quench.sqlite"
            try FileManager.default.copyItem(atPath: original, toPath: live)
            let process = try startQuench(["restore", backup, "--db", live])
            usleep(useconds_t(delay * 1000))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            #expect(try Self.integrity(live) == ["ok"], "killed after \(delay) ms")
            let rows = try Self.rows(live)
            let which = rows == oldRows ? "old" : rows == newRows ? "new" : "a mix"
            #expect(which != "a mix", "killed after \(delay) ms: \(rows.count) rows")
            outcomes[which, default: 0] += 1
            print("restore killed after \(delay) ms: the \(which) history")
            // The next restore clears what the killed one left, and succeeds.
            let again = try IntakeStore.restore(backup: backup, into: live, at: t0.adding(Double(round)))
            #expect(again.events == 60_000)
            let left = try FileManager.default.contentsOfDirectory(atPath: place).filter { $0.hasPrefix(".") }
            #expect(left.isEmpty, "killed after \(delay) ms: \(left)")
        }
        #expect(outcomes.values.reduce(0, +) == delays.count, "\(outcomes)")
    }

    @Test func restoreIntoAMissingDatabaseMakesIt() throws {
        let folder = TemporaryFolder()
        let source = folder.file("old.sqlite")
        let store = try IntakeStore(path: source)
        _ = try store.addManual(ml: 100, at: t0, note: nil, identity: "manual|x")
        let backup = try store.backUp(into: BackupSet(folder: folder.path, database: source), policy: .standard, at: t0)
        let outcome = try IntakeStore.restore(backup: backup.path, into: folder.file("new.sqlite"), at: t0)
        #expect(outcome.keptPath == nil)
        #expect(try IntakeStore(path: folder.file("new.sqlite"), mode: .existing).events().count == 1)
    }

    /// Each refused file: the error says which file and why, and the database is as it was.
    @Test(arguments: ["text", "damaged", "foreign", "foreign-with-version", "newer", "missing", "folder", "live-wal", "empty", "itself", "writable"])
    func restoreRefusesWhatIsNotABackupItCanUse(_ kind: String) throws {
        let folder = TemporaryFolder()
        let path = folder.file("quench.sqlite")
        let store = try IntakeStore(path: path)
        for i in 0..<300 {
            _ = try store.addManual(ml: 100, at: t0.adding(Double(i) * 60), note: String(repeating: "n", count: 200), identity: "manual|\(i)")
        }
        let before = try Self.rows(path)
        var bad = folder.file("bad.sqlite")
        let expected: (StoreError.Code, String)
        switch kind {
        case "empty":  // a copy that never got its bytes: SQLite would take it for an empty database
            try Data().write(to: URL(fileURLWithPath: bad))
            expected = (.notADatabase, "is an empty file, not a backup")
        case "itself":  // its log beside it too: said as what it is, not as a database in use
            bad = path
            expected = (.invalidValue, "is the database itself")
        case "writable":  // a good backup anyone could have rewritten (a Pi trial's 0666 file was restored)
            let good = try store.backUp(into: BackupSet(folder: folder.path, database: path), policy: .standard, at: t0).path
            try FileManager.default.moveItem(atPath: good, toPath: bad)
            chmod(bad, 0o666)
            expected = (.untrusted, "mode 0666, so a user other than its owner could have written it, so it was not restored (fix: chmod go-w")
        case "text":
            try Data("id,kind,ml\n1,sip,100\n".utf8).write(to: URL(fileURLWithPath: bad))
            expected = (.notADatabase, "is not an SQLite database")
        case "damaged":
            let good = try store.backUp(into: BackupSet(folder: folder.path, database: path), policy: .standard, at: t0).path
            var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: good)))
            // A page in the middle of the table overwritten: the header still reads, the tree does not.
            let page = 4096
            for i in (page * 5)..<(page * 6) where i < bytes.count { bytes[i] = UInt8(truncatingIfNeeded: i &* 7) }
            try Data(bytes).write(to: URL(fileURLWithPath: bad))
            expected = (.corrupt, "is damaged")
        case "foreign":
            let db = try Self.newDatabase(bad)
            try db.execute("CREATE TABLE recipe (name TEXT); INSERT INTO recipe VALUES ('soup')")
            expected = (.notADatabase, "not Quench's")
        case "foreign-with-version":
            let db = try Self.newDatabase(bad)
            try db.execute("CREATE TABLE intake_event (id INTEGER); PRAGMA user_version = 3")
            expected = (.notADatabase, "says it is Quench's schema v3, but")
        case "newer":
            let db = try Self.newDatabase(bad)
            try Schema.migrate(db)
            try db.execute("CREATE TABLE from_the_future (x); PRAGMA user_version = \(IntakeStore.schemaVersion + 1)")
            expected = (.schemaTooNew, "newer Quench (schema v\(IntakeStore.schemaVersion + 1)")
        case "missing":
            expected = (.cannotOpen, "cannot be read")
        case "folder":
            try FileManager.default.createDirectory(atPath: bad, withIntermediateDirectories: false)
            expected = (.notADatabase, "is not a regular file")
        default:  // a database with a live write-ahead log beside it
            let other = try IntakeStore(path: bad)
            _ = try other.addManual(ml: 1, at: t0, note: nil, identity: "manual|wal")
            try Data([1, 2, 3]).write(to: URL(fileURLWithPath: bad + "-wal"))
            expected = (.invalidValue, "write-ahead log")
        }
        let namesBefore = Set(try FileManager.default.contentsOfDirectory(atPath: folder.path))
        do {
            _ = try IntakeStore.restore(backup: bad, into: path, at: t0.adding(3600))
            Issue.record("\(kind) was restored")
        } catch {
            #expect(error.code == expected.0, "\(kind): \(error)")
            #expect(error.message.hasPrefix(bad), "\(kind) names the file: \(error.message)")
            #expect(error.message.contains(expected.1), "\(kind): \(error.message)")
            #expect(error.message.hasSuffix("nothing was replaced"), "\(kind): \(error.message)")
        }
        #expect(try Self.rows(path) == before, "\(kind): the history is as it was")
        let namesAfter = Set(try FileManager.default.contentsOfDirectory(atPath: folder.path))
        #expect(namesAfter.subtracting(["quench.sqlite-wal", "quench.sqlite-shm"]) == namesBefore.subtracting(["quench.sqlite-wal", "quench.sqlite-shm"]),
                "\(kind): no file left or kept: \(namesAfter.subtracting(namesBefore))")
    }

    /// A Pi trial: a history damaged in the middle still answers most reads, and only the nightly backup's
    /// check of its copy said so, naming the copy. `damage()` finds it; the backup names the history; a
    /// restore into it (which keeps what it replaces by copying it) says how to move it aside, and then works.
    @Test func aDamagedHistoryIsSaidAsItsOwnAndARestoreSaysTheWayBack() throws {
        let folder = TemporaryFolder()
        let path = folder.file("quench.sqlite")
        let good = folder.file("good.sqlite")
        do {
            let store = try IntakeStore(path: path)
            for i in 0..<300 {
                _ = try store.addManual(ml: 100, at: t0.adding(Double(i) * 60), note: String(repeating: "n", count: 200), identity: "manual|\(i)")
            }
            #expect(try store.damage() == nil)
            _ = try store.backUp(into: BackupSet(folder: folder.path, database: path), policy: .standard, at: t0)
            try FileManager.default.moveItem(atPath: try #require(BackupSet(folder: folder.path, database: path).list()?.first?.path), toPath: good)
        }
        // A page of the events' table overwritten (the last connection's close moved the log into the file).
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seek(toOffset: 4096 * 12)
        try handle.write(contentsOf: Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7) }))
        try handle.close()

        let store = try IntakeStore(path: path, mode: .existing)
        let damage = try #require(try store.damage())
        #expect(!damage.contains("***") && !damage.contains("\n"), "\(damage)")
        let backups = folder.file("backups")
        try FileManager.default.createDirectory(atPath: backups, withIntermediateDirectories: false)
        do {
            _ = try store.backUp(into: BackupSet(folder: backups, database: path), policy: .standard, at: t0.adding(86_400))
            Issue.record("a damaged history was backed up")
        } catch {
            #expect(error.code == .corrupt && error.message.hasPrefix("the database \(path) is damaged (")
                    && error.message.hasSuffix("): no backup was taken, and the backups before it in \(backups) are kept"), "\(error.message)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: backups).isEmpty, "no copy left behind")
        do {
            _ = try IntakeStore.restore(backup: good, into: path, at: t0.adding(86_400))
            Issue.record("restored into a damaged history")
        } catch {
            #expect(error.code == .corrupt && error.message.contains("cannot restore into \(path): it is damaged")
                    && error.message.contains("(mv \(path) \(path).damaged") && error.message.hasSuffix("nothing was replaced"), "\(error.message)")
        }
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
            try FileManager.default.moveItem(atPath: path + suffix, toPath: path + ".damaged" + suffix)
        }
        #expect(try IntakeStore.restore(backup: good, into: path, at: t0.adding(86_400)).events == 300, "the way said works")
    }

    @Test func rotationKeepsSevenDaysThenFourWeeks() {
        // Backups at 03:30 every day for 60 days, plus a manual one at 20:00 on some days; day 0 is a Monday.
        let monday = Timestamp(iso8601: "2026-09-07T03:30:00Z")!
        var times: [Timestamp] = []
        for d in 0..<60 {
            times.append(monday.adding(Double(d) * 86_400))
            if d % 3 == 0 { times.append(monday.adding(Double(d) * 86_400 + 16.5 * 3600)) }
        }
        let kept = BackupSet.kept(times, policy: .standard).map { times[$0] }.sorted(by: >)
        let day59 = monday.adding(59 * 86_400)  // a Friday (week 8 holds days 56...62)
        var expected: [Timestamp] = []
        // The newest of each of the last seven days: days 59...53 (the 20:00 one where there is one).
        for d in stride(from: 59, through: 53, by: -1) {
            expected.append(monday.adding(Double(d) * 86_400 + (d % 3 == 0 ? 16.5 * 3600 : 0)))
        }
        // Days 53...59 cover weeks 7 and 8; then the newest of weeks 6, 5, 4, 3: their Sundays (days 48, 41, 34, 27).
        for d in [48, 41, 34, 27] {
            expected.append(monday.adding(Double(d) * 86_400 + (d % 3 == 0 ? 16.5 * 3600 : 0)))
        }
        #expect(kept == expected, "\(kept.map(\.iso8601))")
        _ = day59
        #expect(BackupSet.kept(times, policy: BackupSet.Policy(daily: 1, weekly: 0)).count == 1)
        #expect(BackupSet.kept(Array(times.prefix(3)), policy: .standard).count == 2, "two days, two kept")
    }

    @Test func backupRemovesOnlyWhatThePolicyDropsAndNothingElseInTheFolder() throws {
        let folder = TemporaryFolder()
        let path = folder.file("quench.sqlite")
        let store = try IntakeStore(path: path)
        _ = try store.addManual(ml: 100, at: t0, note: nil, identity: "manual|x")
        let backups = folder.file("backups")
        try FileManager.default.createDirectory(atPath: backups, withIntermediateDirectories: false)
        let set = BackupSet(folder: backups, database: path)
        // Twenty daily backups so far, and files that are not backups.
        for d in 0..<20 { _ = try store.backUp(into: set, policy: BackupSet.Policy(daily: 1000, weekly: 0), at: Self.day(Double(d))) }
        let others = ["notes.txt", "quench-latest.sqlite", "quench-20260101T000000Z.sqlite.bak", "other-20260302T073000Z.sqlite"]
        for name in others { _ = FileManager.default.createFile(atPath: backups + "/" + name, contents: Data("x".utf8)) }
        #expect(set.list()?.count == 20)

        let outcome = try store.backUp(into: set, policy: BackupSet.Policy(daily: 3, weekly: 2), at: Self.day(20))
        let times = ((set.list() ?? []).map(\.takenAt))
        // t0 is Monday 2 March: day 20 is Sunday 22 March. Days 20, 19, 18 (week of 16 March), then weeks of 9 and 2 March (their Sundays, days 13 and 6).
        #expect(times == [20, 19, 18, 13, 6].map { Self.day(Double($0)) }, "\(times.map(\.iso8601))")
        #expect(outcome.removed.count == 16)
        #expect(outcome.kept.map(\.takenAt) == times)
        for name in others { #expect(FileManager.default.fileExists(atPath: backups + "/" + name), "\(name) is not a backup: left alone") }
        // More backups in the same second: each gets a name of its own that sorts as the newest,
        // never the name of one the rotation just removed.
        var previous = try #require(set.list()?.first?.path)
        for n in 2...4 {
            let again = try store.backUp(into: set, policy: .standard, at: Self.day(20))
            #expect(again.path.hasSuffix("Z-\(n).sqlite"), "\(again.path)")
            #expect(set.list()?.first?.path == again.path)
            #expect(again.removed.map(\.path) == [previous], "the older one of the day goes")
            previous = again.path
        }
    }

    @Test func aBackupIntoAMissingFolderFailsAndNamesIt() throws {
        let folder = TemporaryFolder()
        let path = folder.file("quench.sqlite")
        let store = try IntakeStore(path: path)
        do {
            _ = try store.backUp(into: BackupSet(folder: folder.file("usb"), database: path), policy: .standard, at: t0)
            Issue.record("backed up into nowhere")
        } catch {
            #expect(error.code == .cannotOpen)
            #expect(error.message.contains(folder.file("usb")) && error.message.contains("does not exist"))
        }
    }
}

import Foundation
import QuenchCore
import QuenchTestSupport
@testable import QuenchStore
import Testing

/// Databases written by each earlier version of Quench with its own code
/// (`Tests/Fixtures/schemas/`, how each was made: its MANIFEST), opened by this one.
@Suite struct UpgradeTests {
    struct Fixture: Sendable, CustomStringConvertible {
        var file: String
        var version: Int
        var description: String { file }
    }

    static let folder = TestPackage.fixtures.appendingPathComponent("schemas").path

    /// The MANIFEST's lines: `FILE<TAB>VERSION<TAB>COMMIT<TAB>how`.
    static let fixtures: [Fixture] = {
        guard let text = try? String(contentsOfFile: folder + "/MANIFEST.tsv", encoding: .utf8) else { return [] }
        return text.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count >= 3, let version = Int(fields[1]) else { return nil }
            return Fixture(file: String(fields[0]), version: version)
        }
    }()

    /// The history as the old version wrote it, read without Quench: identity, kind, mL, time, note, deleted.
    static func events(_ path: String) throws -> [String] {
        let db = try SQLiteConnection(path: path, readOnly: true, busyTimeout: 5)
        return try db.all("SELECT identity, kind, ml, time, coalesce(note, ''), deleted FROM intake_event ORDER BY id") { row in
            let identity: String = row[0], kind: String = row[1], ml: Double = row[2], time: Double = row[3]
            let note: String = row[4], deleted: Int = row[5]
            return "\(identity)|\(kind)|\(ml)|\(time)|\(note)|\(deleted)"
        }
    }

    /// A writable copy of a fixture in a folder of its own (the committed file is never opened for writing).
    static func copy(_ fixture: Fixture, into folder: TemporaryFolder) throws -> String {
        let path = folder.file("quench.sqlite")
        try FileManager.default.copyItem(atPath: Self.folder + "/" + fixture.file, toPath: path)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        return path
    }

    /// The schema of the newest release that people may have on disk (0.5.0 as of main before
    /// 2026-11-28: v8). Migrations appended since have not shipped, so no database holds them yet;
    /// when a version with a newer schema ships, raise this and add that version's file.
    static let shippedSchema = 8

    /// The newest shipped schema's file: the upgrade most people will make.
    static var newest: Fixture? { fixtures.first { $0.version == shippedSchema } }

    @Test func everyEarlierVersionHasAFixture() throws {
        let versions = Set(Self.fixtures.map(\.version))
        #expect(Self.shippedSchema <= IntakeStore.schemaVersion)
        #expect(versions == Set(1...Self.shippedSchema), "a real database for every shipped schema version (MANIFEST.tsv)")
        #expect(Self.fixtures.contains { $0.file.contains("grdb") }, "and the GRDB era's way of counting them")
    }

    @Test(arguments: fixtures)
    func upgradesKeepingACopyOfTheOldFile(_ fixture: Fixture) throws {
        let folder = TemporaryFolder()
        let path = try Self.copy(fixture, into: folder)
        let before = try Self.events(path)
        let original = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(!before.isEmpty)
        do {
            let raw = try SQLiteConnection(path: path, readOnly: true, busyTimeout: 5)
            #expect(try Schema.appliedCount(raw) == fixture.version, "the fixture is at the version its MANIFEST says")
            #expect(try Schema.shapeProblem(raw, version: fixture.version) == nil, "the old code made what the migrations say")
        }

        let store = try IntakeStore(path: path, mode: .existing)
        let raw = try SQLiteConnection(path: path, readOnly: true, busyTimeout: 5)
        #expect(try Schema.appliedCount(raw) == IntakeStore.schemaVersion)
        #expect(try Self.events(path) == before, "every event, as it was")
        // "me" made by v7's migration from the one-person history; v7 on, the old quench added "ann" (make-fixture.sh).
        #expect(try store.people().map(\.name) == (fixture.version >= 8 ? ["me", "ann"] : ["me"]))
        #expect(try store.events().count == before.filter { $0.hasSuffix("|0") }.count, "the live ones")
        #expect(try store.settings().units == .usFluidOunce, "the old version's settings survive")
        // Still usable: a new event, a goal.
        _ = try store.addManual(ml: 100, at: .wallClockNow, note: nil, identity: "manual|after-upgrade")

        // The copy kept before the upgrade: named with the old version, the old history, at the old version.
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        let copies = names.filter { $0.hasPrefix("quench-schema-v\(fixture.version)-") && $0.hasSuffix(".sqlite") }
        try #require(copies.count == 1, "\(names)")
        let copy = folder.file(copies[0])
        #expect(try Self.events(copy) == before)
        // Said, for a service's log: an upgrade made without a word was a Pi trial's finding.
        #expect(store.upgradeNotice == "upgraded the database \(path) from schema v\(fixture.version) to v\(IntakeStore.schemaVersion); "
                + "the copy as it was is \(copy)", "\(store.upgradeNotice ?? "nil")")
        let kept = try SQLiteConnection(path: copy, readOnly: true, busyTimeout: 5)
        #expect(try Schema.appliedCount(kept) == fixture.version)
        #expect(try kept.all("PRAGMA integrity_check") { row -> String in row[0] } == ["ok"])
        _ = original

        // Opening again finds nothing to do, and keeps no second copy.
        #expect(try IntakeStore(path: path, mode: .existing).upgradeNotice == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains("-schema-v") }.count == 1)
    }

    /// The copies earlier upgrades kept go after 30 days, when the next upgrade comes; this one's stays, and so
    /// does anything that is not such a copy.
    @Test func anUpgradeRemovesEarlierUpgradesCopiesAfterAMonth() throws {
        let fixture = try #require(Self.newest)
        let folder = TemporaryFolder()
        let path = try Self.copy(fixture, into: folder)
        let old = Timestamp.wallClockNow.adding(-40 * 86_400).compactStamp, recent = Timestamp.wallClockNow.adding(-10 * 86_400).compactStamp
        let names = ["quench-schema-v3-\(old).sqlite", "quench-schema-v12-\(old)-2.sqlite", "quench-schema-v27-\(recent).sqlite",
                     "quench-schema-v3-notes.sqlite", "quench-\(old).sqlite", "other-schema-v3-\(old).sqlite"]
        for name in names { try Data("x".utf8).write(to: URL(fileURLWithPath: folder.file(name))) }
        _ = try IntakeStore(path: path, mode: .existing)
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: folder.path))
        #expect(!left.contains(names[0]) && !left.contains(names[1]), "a month old: removed: \(left.sorted())")
        #expect(Set(names.dropFirst(2)).isSubset(of: left), "recent, or not an upgrade's copy: kept: \(left.sorted())")
        #expect(left.contains { $0.hasPrefix("quench-schema-v\(fixture.version)-") }, "this upgrade's: \(left.sorted())")
    }

    @Test(arguments: fixtures)
    func aBackupFromAnEarlierVersionRestoresUpgraded(_ fixture: Fixture) throws {
        let folder = TemporaryFolder()
        let live = folder.file("live.sqlite")
        let store = try IntakeStore(path: live)
        _ = try store.addManual(ml: 1, at: t0, note: nil, identity: "manual|live")
        // A copy to read (SQLite would leave side files beside the committed one).
        let backupFolder = TemporaryFolder()
        let backup = try Self.copy(fixture, into: backupFolder)
        let before = try Self.events(backup)
        let outcome = try IntakeStore.restore(backup: backup, into: live, at: t0)
        #expect(outcome.backupVersion == fixture.version)
        #expect(try Self.events(live) == before)
        #expect(try store.settings().units == .usFluidOunce)
        let raw = try SQLiteConnection(path: live, readOnly: true, busyTimeout: 5)
        #expect(try Schema.appliedCount(raw) == IntakeStore.schemaVersion)
        #expect(try raw.first("PRAGMA page_size") { row -> Int in row[0] } == 4096, "the live page size (the fixtures have 512)")
        #expect(try raw.all("PRAGMA integrity_check") { row -> String in row[0] } == ["ok"])
    }

    @Test func noUpgradeWithoutItsCopy() throws {
        let fixture = try #require(Self.newest)
        let folder = TemporaryFolder()
        let path = try Self.copy(fixture, into: folder)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        do {
            _ = try IntakeStore(path: path, mode: .existing, upgradeBackupFolder: folder.file("not-there"))
            Issue.record("upgraded without a copy")
        } catch {
            #expect(error.message.contains("needs an upgrade from schema v\(fixture.version) to v\(IntakeStore.schemaVersion)"), "\(error)")
            #expect(error.message.contains(folder.file("not-there")) && error.message.hasSuffix("nothing was changed"), "\(error)")
        }
        let raw = try SQLiteConnection(path: path, readOnly: true, busyTimeout: 5)
        #expect(try Schema.appliedCount(raw) == fixture.version, "still the old version")
        _ = before
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { !$0.hasPrefix("quench.sqlite") }.isEmpty,
                "nothing half-written left")
    }

    /// Several processes opening the same old database at once: one upgrades it, taking one copy; the
    /// others wait for its transaction and find nothing left to do.
    @Test(.enabled(if: quenchBinary != nil, "SKIPPED: quench is not built (swift build)"))
    func processesOpeningAnOldDatabaseAtOnceUpgradeItOnceWithOneCopy() throws {
        let fixture = try #require(Self.newest)
        let folder = TemporaryFolder()
        let path = try Self.copy(fixture, into: folder)
        let processes = try (0..<4).map { _ in try startQuench(["log", "--json", "--person", "me", "--db", path]) }
        for process in processes {
            _ = (process.standardOutput as? Pipe)?.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
        }
        let copies = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains("-schema-v") }
        #expect(copies.count == 1, "\(copies)")
        let raw = try SQLiteConnection(path: path, readOnly: true, busyTimeout: 5)
        #expect(try Schema.appliedCount(raw) == IntakeStore.schemaVersion)
    }

    /// A database a newer Quench wrote (going back to an older version after an upgrade) is read, but
    /// nothing is written into it: this version would leave the tables it does not know out of step.
    /// Before, `quench add` and the gateway wrote into it, and only a restore refused it.
    @Test func aNewerQuenchsDatabaseIsReadNotWritten() throws {
        let folder = TemporaryFolder()
        let path = folder.file("quench.sqlite")
        let t = Timestamp(secondsSince1970: 1_790_000_000)
        _ = try IntakeStore(path: path).insert([IntakeEvent(identity: "a", kind: .sip, ml: 25, time: t, source: .manual, recordedAt: t)])
        try SQLiteConnection(path: path, readOnly: false, busyTimeout: 5).execute("PRAGMA user_version = \(IntakeStore.schemaVersion + 1)")
        let store = try IntakeStore(path: path, mode: .existing)
        #expect(store.newerSchema == IntakeStore.schemaVersion + 1)
        #expect(try store.events().map(\.ml) == [25], "still read")
        func refused(_ write: () throws(StoreError) -> Void) {
            do {
                try write()
                Issue.record("written")
            } catch {
                #expect(error.code == .schemaTooNew, "\(error)")
                #expect(error.message.contains("was written by a newer Quench (schema v\(IntakeStore.schemaVersion + 1); this one knows up to v\(IntakeStore.schemaVersion))"), "\(error)")
            }
        }
        refused { () throws(StoreError) in _ = try store.insert([IntakeEvent(identity: "b", kind: .sip, ml: 50, time: t, source: .manual, recordedAt: t)]) }
        refused { () throws(StoreError) in _ = try store.importing(wrap: { (e: StoreError) in e }) { (_: ImportSession) throws(StoreError) in } }
        #expect(store.newerSchemaRefusal(doing: "logging")?.code == .schemaTooNew, "what the gateway and the hub ask at start")
        let raw = try SQLiteConnection(path: path, readOnly: true, busyTimeout: 5)
        #expect(try Schema.appliedCount(raw) == IntakeStore.schemaVersion + 1)
        #expect(try store.events().map(\.ml) == [25])
    }

    /// An upgrade that fails is undone whole, and leaves no copy: kept, a service restarted after each
    /// failure wrote a whole copy every few seconds until the disk was full. Its error says so, and is one
    /// the units do not restart on (`upgradeFailed`, exit 78).
    @Test func aFailedUpgradeLeavesNoCopy() throws {
        let folder = TemporaryFolder()
        let path = folder.file("quench.sqlite")
        _ = try IntakeStore(path: path)
        // The last migration's tables are there, but the file says it is one version older: that migration fails.
        try SQLiteConnection(path: path, readOnly: false, busyTimeout: 5).execute("PRAGMA user_version = \(IntakeStore.schemaVersion - 1)")
        for _ in 0..<3 {
            do {
                _ = try IntakeStore(path: path, mode: .existing)
                Issue.record("opened")
            } catch {
                #expect(error.code == .upgradeFailed, "\(error)")
                #expect(error.message.hasPrefix("the database \(path) could not be upgraded from schema v\(IntakeStore.schemaVersion - 1) to v\(IntakeStore.schemaVersion) ("), "\(error)")
                #expect(error.message.hasSuffix("; nothing was changed"), "\(error)")
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains("-schema-v") }.isEmpty)
        let raw = try SQLiteConnection(path: path, readOnly: true, busyTimeout: 5)
        #expect(try Schema.appliedCount(raw) == IntakeStore.schemaVersion - 1, "nothing changed")
    }

    /// A new database has nothing to keep: no copy.
    @Test func aNewDatabaseIsMadeWithoutACopy() throws {
        let folder = TemporaryFolder()
        _ = try IntakeStore(path: folder.file("quench.sqlite"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains("schema") }.isEmpty)
    }
}

import Foundation
import QuenchCore
import Testing
@testable import QuenchStore

@Suite struct IntakeStoreTests {
    @Test func createsFileAndDirectoryOwnerOnly() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("nested/deeper/quench.sqlite")
        // Only Quench's own default location gets its folder made; a named path's folder must exist.
        #expect(throws: StoreError.self) { try IntakeStore(path: path) }
        #expect(!FileManager.default.fileExists(atPath: dir.file("nested")))
        let store = try IntakeStore(path: path, mode: .createWithFolder)
        try store.ingest(sips(3), device: "A", started: t0)
        let file = try FileManager.default.attributesOfItem(atPath: path)
        let folder = try FileManager.default.attributesOfItem(atPath: dir.file("nested/deeper"))
        #expect((file[.posixPermissions] as? Int) == 0o600)
        #expect((folder[.posixPermissions] as? Int) == 0o700)
        let mode = try store.read("test") { db in try db.first("PRAGMA journal_mode") { row -> String in row[0] } }
        #expect(mode == "wal")
    }

    @Test func migrationsAreNamedAndRecorded() throws {
        let dir = TemporaryDirectory()
        let store = try IntakeStore(path: dir.file("q.sqlite"))
        let version = try store.read("test") { db in try db.first("PRAGMA user_version") { row -> Int in row[0] } }
        #expect(version == Schema.migrations.count)
        // Shipped migrations keep their names and order; later ones are appended (their count is not fixed here).
        #expect(Array(Schema.migrations.map(\.identifier).prefix(9)) == ["v1: devices, intake events, goals, settings", "v2: device address type and profile definition",
                                                      "v3: device battery and cap", "v4: reminders",
                                                      "v5: events stamped before the clock was set", "v6: mqtt outbox", "v7: people",
                                                      "v8: met-goal spans for streaks", "v9: detector checkpoints"])
        #expect(Set(Schema.migrations.map(\.identifier)).count == Schema.migrations.count)
        // Reopening applies nothing new and keeps data.
        try store.ingest(sips(2), device: "A", started: t0)
        let again = try IntakeStore(path: dir.file("q.sqlite"), mode: .existing)
        #expect(try count(again) == 2)
    }

    /// Quench once recorded migrations in GRDB's table: such a file must open with its
    /// data, get only the migrations it lacks, and never have v1 run again.
    @Test func databasesFromTheGRDBEraKeepTheirDataAndGetOnlyWhatTheyLack() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("old.sqlite")
        // The file as that version left it: v1 only, recorded by name. (Made from
        // v1's own SQL: a later migration's rows, v7's foreign keys, cannot be rewound.)
        #expect(FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]))
        let raw = try SQLiteConnection(path: path, readOnly: false, busyTimeout: 1)
        try raw.execute(Schema.migrations[0].sql)
        try raw.execute("""
            CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
            INSERT INTO grdb_migrations VALUES ('v1: devices, intake events, goals, settings');
            INSERT INTO device (address, name, added_at) VALUES ('C4:7C:8D:6A:12:34', 'desk', 1);
            PRAGMA user_version = 0;
            """)
        let store = try IntakeStore(path: path, mode: .existing)
        let device = try #require(try store.device(address: "C4:7C:8D:6A:12:34"))
        #expect(device.name == "desk")
        #expect(device.addressType == nil)
        try store.saveDevice(Device(address: "AA:BB:CC:DD:EE:FF", addedAt: t0, addressType: "random"))
        #expect(try store.device(address: "AA:BB:CC:DD:EE:FF")?.addressType == "random")
        let version = try store.read("test") { db in try db.first("PRAGMA user_version") { row -> Int in row[0] } }
        #expect(version == Schema.migrations.count)
    }

    @Test func ingestIsIdempotent() throws {
        let dir = TemporaryDirectory()
        let store = try IntakeStore(path: dir.file("q.sqlite"))
        var events = sips(10)
        events.append(DetectedEvent(kind: .lifted, t: 1, start: 1, end: 1, ml: 0))
        events.append(DetectedEvent(kind: .refill, t: 900, start: 890, end: 899, ml: 480, remainingML: 750))
        let first = try store.ingest(events, device: "C4:7C:8D:6A:12:34", started: t0)
        #expect(first == IngestResult(inserted: 11, duplicates: 0, skipped: 1))
        let second = try store.ingest(events, device: "C4:7C:8D:6A:12:34", started: t0)
        #expect(second == IngestResult(inserted: 0, duplicates: 11, skipped: 1))
        // The same events from another device are other events.
        let other = try store.ingest(events, device: "other", started: t0)
        #expect(other.inserted == 11)
        // Sub-millisecond jitter in the start time is the same event.
        let jittered = events.map { e in var e = e; e.start += 0.0002; return e }
        #expect(try store.ingest(jittered, device: "other", started: t0).duplicates == 11)
        let stored = try store.events(EventQuery(device: "C4:7C:8D:6A:12:34", order: .byID))
        #expect(stored.count == 11)
        #expect(stored[0].identity == "C4:7C:8D:6A:12:34|sip|\(Int64(t0.secondsSince1970 * 1000))")
        #expect(stored[0].time == t0)
        #expect(stored[0].traceTime == 0)
        #expect(stored[0].remainingML == 500)
        #expect(stored[10].kind == .refill)
    }

    @Test func failedIngestLeavesNothing() throws {
        let dir = TemporaryDirectory()
        let store = try IntakeStore(path: dir.file("q.sqlite"))
        try store.ingest(sips(5), device: "A", started: t0)
        // The last event breaks a schema rule (ml ≤ 100 000) after 1000 rows were
        // inserted inside the transaction: all of them must go.
        var events = sips(1000, from: 10_000)
        events.append(DetectedEvent(kind: .pour, t: 99_999, start: 99_990, end: 99_995, ml: 500_000))
        #expect {
            try store.ingest(events, device: "A", started: t0)
        } throws: { error in
            (error as? StoreError)?.code == .invalidValue && (error as? StoreError)?.cause is SQLiteError
        }
        #expect(try count(store) == 5)
    }

    @Test func fullDiskIsATypedErrorAndWritesNothing() throws {
        let dir = TemporaryDirectory()
        let store = try IntakeStore(path: dir.file("q.sqlite"))
        try store.ingest(sips(5), device: "A", started: t0)
        // SQLite reports SQLITE_FULL when the page limit is reached, exactly as on a full disk.
        try store.read("test") { db in
            let pages = try db.first("PRAGMA page_count") { row -> Int in row[0] }!
            try db.execute("PRAGMA max_page_count = \(pages + 2)")
        }
        do {
            try store.ingest(sips(20_000, from: 100_000), device: "A", started: t0)
            Issue.record("ingest should have failed on a full database")
        } catch {
            #expect(error.code == .diskFull)
            #expect((error.cause as? SQLiteError)?.primaryCode == 13)  // SQLITE_FULL
            #expect(error.description.contains("disk is full"))
        }
        #expect(try count(store) == 5)
    }

    @Test func notADatabaseIsRefusedAndLeftUntouched() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("notes.sqlite")
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try garbage.write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try IntakeStore(path: path)
        } throws: { error in
            (error as? StoreError)?.code == .notADatabase
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == garbage)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }

    @Test func missingFileWithExistingModeIsNotFound() throws {
        let dir = TemporaryDirectory()
        #expect {
            _ = try IntakeStore(path: dir.file("none.sqlite"), mode: .existing)
        } throws: { error in
            (error as? StoreError)?.code == .notFound
        }
        #expect(!FileManager.default.fileExists(atPath: dir.file("none.sqlite")))
    }

    @Test func readOnlyFileReadsButRefusesWrites() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("q.sqlite")
        do {
            let store = try IntakeStore(path: path)
            try store.ingest(sips(4), device: "A", started: t0)
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path) }
        let store = try IntakeStore(path: path, mode: .existing)
        #expect(store.isReadOnly)
        #expect(try store.events().count == 4)
        #expect {
            try store.ingest(sips(2, from: 5000), device: "A", started: t0)
        } throws: { error in
            (error as? StoreError)?.code == .readOnly
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test func twoConnectionsWritingAtOnceBothSucceed() async throws {
        let dir = TemporaryDirectory()
        let path = dir.file("q.sqlite")
        _ = try IntakeStore(path: path)
        // Two independent connections (as two processes would have), each writing
        // 40 batches; the busy timeout makes each wait for the other's transaction.
        try await withThrowingTaskGroup(of: Int.self) { group in
            for writer in 0..<2 {
                group.addTask {
                    let store = try IntakeStore(path: path)
                    var inserted = 0
                    for batch in 0..<40 {
                        inserted += try store.ingest(sips(250, every: 1, from: Double(batch * 1000)), device: "dev\(writer)", started: t0).inserted
                    }
                    return inserted
                }
            }
            var total = 0
            for try await n in group { total += n }
            #expect(total == 2 * 40 * 250)
        }
        #expect(try count(try IntakeStore(path: path)) == 20_000)
    }

    @Test func softDeleteAndRestore() throws {
        let dir = TemporaryDirectory()
        let store = try IntakeStore(path: dir.file("q.sqlite"))
        try store.ingest(sips(3), device: "A", started: t0)
        let newest = try #require(try store.deleteNewest())
        #expect(newest.deleted && newest.time == t0.adding(120))
        #expect(try store.events().count == 2)
        #expect(try store.events(EventQuery(includeDeleted: true)).count == 3)
        let restored = try store.setDeleted(id: newest.id!, false)
        #expect(!restored.deleted)
        #expect(throws: StoreError.self) { try store.setDeleted(id: 999, true) }
        // A drink added after them but given an earlier time is what an undo takes back: the last stored.
        let forgotten = try store.addManual(ml: 200, at: t0.adding(-3600), note: "forgot", identity: "manual|forgot", recordedAt: t0.adding(600))
        #expect(try store.deleteNewest()?.id == forgotten.id)
    }

    @Test func sipTotalsGroupBySegmentShift() throws {
        let dir = TemporaryDirectory()
        let store = try IntakeStore(path: dir.file("q.sqlite"))
        // 07:30Z and 23:30Z on 2026-03-02; with shift +1 h the second falls on the 3rd.
        try store.ingest([DetectedEvent(kind: .sip, t: 1, start: 0, end: 1, ml: 100),
                          DetectedEvent(kind: .sip, t: 57_601, start: 57_600, end: 57_601, ml: 50),
                          DetectedEvent(kind: .refill, t: 60_000, start: 59_999, end: 60_000, ml: 300)],
                         device: "A", started: t0)
        let day = Timestamp.daysFromCivil(year: 2026, month: 3, day: 2)
        let totals = try store.sipTotalsByDay([DaySegment(from: t0.adding(-86_400), until: t0.adding(86_400), shift: 3600)])
        #expect(totals[day] == DayTotal(ml: 100, sips: 1))
        #expect(totals[day + 1] == DayTotal(ml: 50, sips: 1))
    }

    @Test func devicesGoalsAndSettings() throws {
        let dir = TemporaryDirectory()
        let store = try IntakeStore(path: dir.file("q.sqlite"))
        let curve = try LevelCurve(parsing: "0:0,100:500,200:1000")
        let calibration = try BottleCalibration(unit: .mm, levelCurve: curve, capacityML: 1000)
        try store.saveDevice(Device(address: "6E:0A:00:00:00:01", name: "DIY bottle", profile: "diy-level",
                                    calibration: calibration, addedAt: t0))
        try store.saveDevice(Device(address: "C4:7C:8D:6A:12:34", name: "Scale", profile: "weight-scale", sensor: .weight, addedAt: t0))
        var devices = try store.listDevices()
        #expect(devices.count == 2)
        #expect(devices[0].calibration == calibration && devices[0].sensor == .level)
        // Re-pairing replaces the record.
        try store.saveDevice(Device(address: "6E:0A:00:00:00:01", name: "Blue bottle", addedAt: t0))
        #expect(try store.device(address: "6E:0A:00:00:00:01")?.name == "Blue bottle")
        #expect(try store.forgetDevice(address: "C4:7C:8D:6A:12:34"))
        #expect(try !store.forgetDevice(address: "C4:7C:8D:6A:12:34"))
        devices = try store.listDevices()
        #expect(devices.map(\.address) == ["6E:0A:00:00:00:01"])

        try store.setGoal(ml: 2000, from: CivilDay(parsing: "2026-01-01")!, setAt: t0)
        try store.setGoal(ml: 2500, from: CivilDay(parsing: "2026-03-01")!, setAt: t0)
        try store.setGoal(ml: 2400, from: CivilDay(parsing: "2026-03-01")!, setAt: t0)
        #expect(try store.goals().map(\.ml) == [2000, 2400])
        #expect(throws: StoreError.self) { try store.setGoal(ml: -1, from: CivilDay(number: 0)) }

        #expect(try store.settings() == .defaults)
        try store.saveSettings(Settings(units: .usFluidOunce, dayStartHour: 5, timeZone: "America/New_York"))
        #expect(try store.settings() == Settings(units: .usFluidOunce, dayStartHour: 5, timeZone: "America/New_York"))
        #expect(throws: StoreError.self) { try store.saveSettings(Settings(units: .ml, dayStartHour: 24, timeZone: nil)) }
    }

    @Test func schemaRefusesInvalidRows() throws {
        let dir = TemporaryDirectory()
        let store = try IntakeStore(path: dir.file("q.sqlite"))
        for sql in [
            "INSERT INTO intake_event (identity, kind, ml, time, source, recorded_at) VALUES ('x', 'lifted', 10, 1, 'sensor', 1)",
            "INSERT INTO intake_event (identity, kind, ml, time, source, recorded_at) VALUES ('x', 'sip', -10, 1, 'sensor', 1)",
            "INSERT INTO intake_event (identity, kind, ml, time, source, recorded_at) VALUES ('x', 'sip', 10, 1, 'phone', 1)",
            "INSERT INTO goal (start_day, ml, set_at) VALUES ('March 1', 2000, 1)",
            "INSERT INTO device (address, calibration, added_at) VALUES ('A', '{not json', 1)",
        ] {
            #expect {
                try store.write("test") { db in try db.execute(sql) }
            } throws: { error in
                (error as? StoreError)?.code == .invalidValue && ((error as? StoreError)?.cause as? SQLiteError)?.sql == sql
            }
        }
    }

    @Test func locationFollowsFlagsEnvironmentAndXDG() {
        #expect(StoreLocation.resolve(explicit: "/x.sqlite", environment: ["QUENCH_DB": "/y"]) == "/x.sqlite")
        #expect(StoreLocation.resolve(explicit: nil, environment: ["QUENCH_DB": "/y", "XDG_DATA_HOME": "/d"]) == "/y")
        #expect(StoreLocation.resolve(explicit: nil, environment: ["XDG_DATA_HOME": "/d", "HOME": "/h"]) == "/d/quench/quench.sqlite")
        #expect(StoreLocation.resolve(explicit: nil, environment: ["XDG_DATA_HOME": "rel", "HOME": "/h"]) == "/h/.local/share/quench/quench.sqlite")
    }

    @Test func civilDays() {
        let day = CivilDay(parsing: "2026-03-02")!
        #expect(day.description == "2026-03-02")
        #expect(day.weekday == 1)  // a Monday
        #expect(CivilDay(parsing: "2026-02-29") == nil)
        #expect(CivilDay(parsing: "2026-3-2") == nil)
        #expect(CivilDay(number: 0).description == "1970-01-01")
    }
}

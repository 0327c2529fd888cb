import Foundation
import QuenchCore
@testable import QuenchStore
import Testing

/// The detectors' checkpoints in the store: one row per device, written alone
/// or in the transaction of an event, read back checked.
@Suite struct CheckpointStoreTests {
    static func checkpoint(_ device: String = "F0:F1:F2:F3:F4:F5", readings: Int = 200) throws -> DetectorCheckpoint {
        var detector = SipDetector(calibration: try BottleCalibration(unit: .g))
        var events: [DetectedEvent] = []
        for i in 0..<readings { detector.process(Reading(t: Double(i) / 10, value: 900 + Double(i % 3)), into: &events) }
        return DetectorCheckpoint(device: device, detector: detector, t: Double(readings - 1) / 10, wall: t0.secondsSince1970,
                                  bootID: "boot", sinceBoot: 12)
    }

    static func stored(_ store: IntakeStore, _ device: String = "F0:F1:F2:F3:F4:F5") throws -> DetectorCheckpoint? {
        if case .usable(let c) = try store.checkpoint(device: device) { return c }
        return nil
    }

    @Test func savedAndReadBackWhole() throws {
        let dir = TemporaryDirectory()
        let store = try IntakeStore(path: dir.file("q.sqlite"))
        guard case .none = try store.checkpoint(device: "F0:F1:F2:F3:F4:F5") else { Issue.record("a checkpoint before any"); return }
        let saved = try Self.checkpoint()
        try store.saveCheckpoint(saved)
        try store.saveCheckpoint(try Self.checkpoint(readings: 300))  // replaces it
        let read = try #require(try Self.stored(store))
        #expect(read.t == 29.9 && read.bootID == "boot" && read.sinceBoot == 12 && read.wall == t0.secondsSince1970)
        #expect(read.detector.phase == .settled && read.detector.lastReadingT == 29.9)
        #expect(read.problem(device: "F0:F1:F2:F3:F4:F5", calibration: try BottleCalibration(unit: .g), configuration: .init()) == nil)
        let rows = try store.read("test") { db in try db.first("SELECT COUNT(*) FROM detector_checkpoint") { row -> Int in row[0] } }
        #expect(rows == 1)
        // One small row: the detector's state is fixed in size (a 32-sample ring and some numbers).
        let size = try store.read("test") { db in try db.first("SELECT length(state) FROM detector_checkpoint") { row -> Int in row[0] } } ?? 0
        #expect(size > 500 && size < DetectorCheckpoint.maximumBytes / 4, "\(size) bytes")
        print("a detector checkpoint: \(size) bytes of JSON")
        try store.removeCheckpoint(device: "F0:F1:F2:F3:F4:F5")
        guard case .none = try store.checkpoint(device: "F0:F1:F2:F3:F4:F5") else { Issue.record("not removed"); return }
    }

    /// The checkpoint written with an event lands with it or not at all.
    @Test func writtenInTheEventsTransaction() throws {
        let dir = TemporaryDirectory()
        let store = try IntakeStore(path: dir.file("q.sqlite"))
        let sip = IntakeEvent.sensor(sips(1)[0], device: "F0:F1:F2:F3:F4:F5", started: t0)
        let result = try store.insert([(sip, [])], checkpoint: try Self.checkpoint())
        #expect(result.inserted == 1)
        #expect(try Self.stored(store)?.t == 19.9)

        var refused = IntakeEvent.sensor(sips(1, from: 600)[0], device: "F0:F1:F2:F3:F4:F5", started: t0)
        refused.ml = -5  // the schema refuses it: the transaction, checkpoint included, is rolled back
        #expect(throws: StoreError.self) { try store.insert([(refused, [])], checkpoint: try Self.checkpoint(readings: 400)) }
        #expect(try Self.stored(store)?.t == 19.9)
        #expect(try count(store) == 1)
    }

    /// Another version, an oversized or undecodable row: ignored with the reason, never trusted.
    @Test func aForeignOrCorruptRowIsUnusableWithItsReason() throws {
        let dir = TemporaryDirectory()
        let store = try IntakeStore(path: dir.file("q.sqlite"))
        let cases: [(version: Int, state: String, reason: String)] = [
            (DetectorCheckpoint.formatVersion + 1, "{}", "format version"),
            (DetectorCheckpoint.formatVersion, String(repeating: " ", count: DetectorCheckpoint.maximumBytes + 1) + "{}", "more than"),
            (DetectorCheckpoint.formatVersion, "{\"device\": \"F0:F1:F2:F3:F4:F5\", \"t\": 1}", "does not decode"),
            (DetectorCheckpoint.formatVersion, "not json at all", "does not decode"),
        ]
        for c in cases {
            try store.write("test") { db in
                try db.run("INSERT OR REPLACE INTO detector_checkpoint (device, version, saved_at, state) VALUES ('X', ?, 0, ?)",
                           [c.version, c.state])
            }
            switch try store.checkpoint(device: "X") {
            case .unusable(let reason): #expect(reason.contains(c.reason), "\(reason)")
            default: Issue.record("version \(c.version), \(c.state.prefix(40)): not refused")
            }
        }
    }
}

/// The count of changes shown (schema v29): what a page and the MQTT publisher wait on moves with
/// every change to what they show, and not with a gateway's housekeeping, which SQLite's data version
/// counts too (each checkpoint made every open page fetch everything again).
@Suite struct ShownChangesTests {
    /// Every table is either counted (three triggers) or named here as not shown: a table added without a
    /// decision, or rebuilt by a migration that dropped its triggers, fails this.
    @Test func everyTableIsCountedOrNamedAsNotShown() throws {
        let dir = TemporaryDirectory()
        let store = try IntakeStore(path: dir.file("q.sqlite"))
        let notShown: Set<String> = ["detector_checkpoint", "device_claim", "met_span", "mqtt_outbox", "mqtt_outbox_state", "mqtt_published",
                                     "mqtt_announced", "mqtt_last_reset", "remote_command", "unsynced_stamp", "person_retired", "hub_change",
                                     "hub_estimate", "hub_local_deletion", "shown_change", "sqlite_sequence"]
        let (tables, triggers) = try store.read("listing") { db in
            (Set(try db.all("SELECT name FROM sqlite_master WHERE type = 'table'") { row -> String in row[0] }),
             Set(try db.all("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'shown_change_%'") { row -> String in row[0] }))
        }
        #expect(tables.subtracting(notShown) == Set(Schema.shownTables), "\(tables.subtracting(notShown).symmetricDifference(Schema.shownTables))")
        for table in Schema.shownTables {
            for change in ["insert", "update", "delete"] { #expect(triggers.contains("shown_change_\(table)_\(change)"), "\(table) \(change)") }
        }
    }

    @Test func aGatewaysHousekeepingIsNotAChangeShown() throws {
        let dir = TemporaryDirectory()
        let page = try IntakeStore(path: dir.file("q.sqlite"))
        let gateway = try IntakeStore(path: dir.file("q.sqlite"))  // another connection, as another process
        let start = try page.shownChanges(), version = try page.dataVersion()
        try gateway.saveCheckpoint(try CheckpointStoreTests.checkpoint())
        try gateway.saveClaim(device: "F0:F1:F2:F3:F4:F5", DeviceClaim(gateway: "8e1f20aa4c7d9b01", rssi: -60, heardAt: t0, holding: true, at: t0))
        try gateway.setOutbox(enabled: true)
        _ = try gateway.acknowledgeOutbox(through: 0)
        #expect(try page.dataVersion() != version, "the commits are seen")
        #expect(try page.shownChanges() == start, "and are not changes shown")
        // A role claimed is (the carer's view says whether the hub runs); claimed again by the same process, nothing is written.
        let holder = ProcessHolder(pid: 4242, started: 7, command: "quench hub run", since: t0)
        #expect(try gateway.claimRole("hub", holder) { _ in false } == nil)
        let claimed = try page.shownChanges()
        #expect(claimed > start)
        let before = try page.dataVersion()
        #expect(try gateway.claimRole("hub", holder) { _ in false } == nil)
        #expect(try page.shownChanges() == claimed && page.dataVersion() == before)
        // Each change shown moves it: a drink, its edit, a person, a goal, a device.
        var last = claimed
        func moved(_ what: String, _ change: () throws -> Void) throws {
            try change()
            let now = try page.shownChanges()
            #expect(now > last, "\(what)")
            last = now
        }
        try moved("a drink") { _ = try gateway.addManual(ml: 250, at: t0, note: nil, identity: "manual|shown") }
        try moved("a person") { _ = try gateway.addPerson(name: "Ben") }
        try moved("a goal") { try gateway.setGoal(ml: 2400, from: CivilDay(number: 20_000)) }
        // A restore goes past the count the live history had: the backup's own (written when it had one drink fewer
        // and no person) could equal it, and pages, the publisher and a gateway waiting for a pairing saw no change.
        let backups = dir.file("backups")
        try FileManager.default.createDirectory(atPath: backups, withIntermediateDirectories: false)
        let backup = try page.backUp(into: BackupSet(folder: backups, database: dir.file("q.sqlite")), policy: .standard, at: t0)
        _ = try gateway.addManual(ml: 100, at: t0, note: nil, identity: "manual|after-the-backup")
        last = try page.shownChanges()
        try moved("a restore") { _ = try IntakeStore.restore(backup: backup.path, into: dir.file("q.sqlite"), at: t0) }
        try moved("a checkpoint with a drink") {
            _ = try gateway.insert([(IntakeEvent.sensor(sips(1)[0], device: "F0:F1:F2:F3:F4:F5", started: t0), [])],
                                   checkpoint: try CheckpointStoreTests.checkpoint(readings: 300))
        }
    }
}

/// The write-ahead log grown while a reader held its snapshot is cut back once checkpointed: it stayed
/// at its largest for as long as a process had the file open (a review: a `quench log` paused in a pager).
@Suite struct WriteAheadLogTests {
    @Test func aLogGrownBehindAReaderIsCutBack() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("q.sqlite")
        let store = try IntakeStore(path: path)
        let reader = try SQLiteConnection(path: path, readOnly: true, busyTimeout: 5)
        try reader.execute("BEGIN")
        _ = try reader.first("SELECT COUNT(*) FROM intake_event") { row -> Int in row[0] }
        let note = String(repeating: "long note ", count: 20)
        for batch in 0..<60 {
            let events = (0..<400).map { i in
                IntakeEvent(identity: "manual|wal-\(batch)-\(i)", kind: .sip, ml: 100, time: t0.adding(Double(batch * 400 + i)),
                            source: .manual, note: note, recordedAt: t0)
            }
            _ = try store.insert(events)
        }
        func walSize() -> Int { (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0 }
        let grown = walSize()
        #expect(grown > 2 * IntakeStore.walSizeLimit, "\(grown) bytes behind the reader")
        try reader.execute("COMMIT")
        // The next writes checkpoint it whole (the reader is gone) and start it again, cut back to the limit.
        for n in 0..<3 { _ = try store.addManual(ml: 10, at: t0.adding(-Double(n + 1)), note: nil, identity: "manual|after-\(n)") }
        #expect(walSize() <= IntakeStore.walSizeLimit, "\(walSize()) bytes after the checkpoint, from \(grown)")
    }
}

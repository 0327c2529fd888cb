import BluetoothWire
import QuenchCore
#if canImport(Glibc)
import Glibc
#endif

/// What an ingestion did.
public struct IngestResult: Sendable, Hashable, Codable {
    /// Events newly stored.
    public var inserted: Int
    /// Events already in the store (same identity): left as they were.
    public var duplicates: Int
    /// Diagnostic events (`lifted`, `placed`), which are not history.
    public var skipped: Int

    public init(inserted: Int = 0, duplicates: Int = 0, skipped: Int = 0) {
        self.inserted = inserted
        self.duplicates = duplicates
        self.skipped = skipped
    }
}

/// Which events `events(_:)` returns.
public struct EventQuery: Sendable, Hashable {
    /// Inclusive lower bound on `time`.
    public var since: Timestamp?
    /// Exclusive upper bound on `time`.
    public var until: Timestamp?
    public var device: String?
    /// Only this person's events (`Person.id`); nil: everyone's.
    public var person: Int64?
    public var kinds: Set<EventKind>?
    public var includeDeleted: Bool
    public var limit: Int?
    /// Newest first (the log) or oldest first by id (exports).
    public var order: Order
    /// Only the events after this one in the log's order (newest first: by time, then id): the next
    /// page of a log cut short. A time alone cannot say it: events share an instant (an import's).
    public var olderThan: LogPosition?

    public enum Order: Sendable, Hashable { case newestFirst, byID }

    /// Where an event stands in the log's order.
    public struct LogPosition: Sendable, Hashable {
        public var time: Timestamp
        public var id: Int64
        public init(time: Timestamp, id: Int64) { self.time = time; self.id = id }
    }

    public init(
        since: Timestamp? = nil, until: Timestamp? = nil, device: String? = nil, kinds: Set<EventKind>? = nil,
        includeDeleted: Bool = false, limit: Int? = nil, order: Order = .newestFirst, person: Int64? = nil
    ) {
        self.person = person
        self.since = since
        self.until = until
        self.device = device
        self.kinds = kinds
        self.includeDeleted = includeDeleted
        self.limit = limit
        self.order = order
    }
}

/// A stretch of time over which local time is UTC plus a constant shift; used to
/// group sips by local day in SQL (see `sipTotalsByDay`).
public struct DaySegment: Sendable, Hashable {
    public var from: Timestamp
    public var until: Timestamp
    /// Seconds added to UTC epoch seconds so that whole multiples of 86 400 fall on
    /// day boundaries: the zone's UTC offset minus the day start hour.
    public var shift: Int

    public init(from: Timestamp, until: Timestamp, shift: Int) {
        self.from = from
        self.until = until
        self.shift = shift
    }
}

/// Intake of one day.
public struct DayTotal: Sendable, Hashable {
    public var ml: Double
    public var sips: Int
    public init(ml: Double, sips: Int) {
        self.ml = ml
        self.sips = sips
    }
}

extension IntakeStore {
    static let eventColumns = "id, identity, kind, ml, time, remaining_ml, source, device, trace_time, note, deleted, recorded_at, "
        + "(SELECT name FROM person WHERE person.id = intake_event.person)"

    // MARK: - Ingestion

    /// Stores the events a detector made final, in one transaction: all or nothing.
    /// Replaying the same trace, or receiving an event again, inserts nothing new
    /// (identity = device + kind + start to the millisecond; a trace stored with its
    /// device named and without is the same trace: `sameDetectedEventStored`).
    ///
    /// - Parameters:
    ///   - events: detector output; `lifted`/`placed` are skipped.
    ///   - device: the device's address or label; nil when unknown.
    ///   - started: wall-clock time of the trace's t = 0.
    ///   - source: `.sensor` for detector output.
    ///   - recordedAt: when the rows are written (injectable for tests).
    ///   - person: whose the events are (a replayed trace's `--person`); nil: the device's owner, else the first person.
    @discardableResult
    public func ingest(
        _ events: [DetectedEvent], device: String?, started: Timestamp, source: EventSource = .sensor,
        recordedAt: Timestamp = .wallClockNow, person: String? = nil
    ) throws(StoreError) -> IngestResult {
        var rows: [IntakeEvent] = []
        rows.reserveCapacity(events.count)
        var skipped = 0
        for event in events {
            guard !event.kind.isDiagnostic else { skipped += 1; continue }
            guard event.ml.isFinite, event.ml > 0, event.start.isFinite else {
                throw StoreError(.invalidValue, path: path, "cannot store a \(event.kind.rawValue) of \(event.ml) mL at t=\(event.start); nothing was stored")
            }
            var row = IntakeEvent.sensor(event, device: device, started: started, source: source, recordedAt: recordedAt)
            row.person = person
            rows.append(row)
        }
        let what = "storing \(rows.count) event\(rows.count == 1 ? "" : "s")"
        var result = try write(what) { db in
            var result = IngestResult()
            // A named event needs looking up under the unnamed identity only if the
            // history has unnamed ones at all (one probe of the identity index): the
            // gateway's and the benchmarks' ingests then cost what they did.
            let anyUnnamed = try db.first("SELECT 1 FROM intake_event WHERE identity >= '-|' AND identity < '-}' LIMIT 1", []) { _ in true }
            let unnamedStored = device == nil || anyUnnamed == true
            for row in rows {
                if unnamedStored, try Self.sameDetectedEventStored(row, db) {
                    result.duplicates += 1
                } else {
                    let one = try Self.insertRows([row], keepingIDs: false, db)
                    result.inserted += one.inserted
                    result.duplicates += one.duplicates
                }
            }
            return result
        }
        result.skipped = skipped
        return result
    }

    /// Whether a detector's event is stored already under another name. A trace
    /// stored once with its device named (`--device`, `# device:`) and once without
    /// is one trace, not two: the device says whose readings they were, the kind and
    /// the moment (to the millisecond) which event. So a named event is the unnamed
    /// one of its kind and time (`-|kind|ms`), and an unnamed one is any device's
    /// detected event (one with a trace time) of its kind and time.
    static func sameDetectedEventStored(_ row: IntakeEvent, _ db: SQLiteConnection) throws -> Bool {
        if row.device != nil {
            let unnamed = IntakeEvent.sensorIdentity(device: nil, kind: row.kind, time: row.time)
            return try db.first("SELECT 1 FROM intake_event WHERE identity = ?", [unnamed]) { _ in true } ?? false
        }
        return try db.first("""
            SELECT 1 FROM intake_event INDEXED BY intake_event_time
            WHERE time = ? AND kind = ? AND trace_time IS NOT NULL LIMIT 1
            """, [row.time.secondsSince1970, row.kind.rawValue]) { _ in true } ?? false
    }

    /// Stores whole events (an import, or a manual drink): ids are kept when free,
    /// identities make it idempotent, one transaction.
    @discardableResult
    public func insert(_ events: [IntakeEvent]) throws(StoreError) -> IngestResult {
        try insert(events, keepingIDs: true)
    }

    /// Stores rows in one transaction; `keepingIDs` keeps each row's id when it is free.
    public func insert(_ events: [IntakeEvent], keepingIDs: Bool) throws(StoreError) -> IngestResult {
        let what = "storing \(events.count) event\(events.count == 1 ? "" : "s")"
        try checkIntake(events, what)
        return try write(what) { db in try Self.insertRows(events, keepingIDs: keepingIDs, db) }
    }

    /// Refuses what is not intake (the detector's diagnostics) before anything is written.
    func checkIntake(_ events: [IntakeEvent], _ what: String) throws(StoreError) {
        for event in events where event.kind.isDiagnostic {
            throw StoreError(.invalidValue, path: path, "\(what) failed: \(event.kind.rawValue) is not an intake event; nothing was stored")
        }
    }

    static func insertRows(_ events: [IntakeEvent], keepingIDs: Bool, _ db: SQLiteConnection) throws -> IngestResult {
        // A kept id is used only when no other row has it. Without a person, the
        // event is whoever owns the device now (the gateway's case), else the first person's.
        let sql = """
            INSERT INTO intake_event (id, identity, kind, ml, time, remaining_ml, source, device, trace_time, note, deleted, recorded_at, person)
            VALUES (CASE WHEN ?1 IS NULL OR EXISTS (SELECT 1 FROM intake_event WHERE id = ?1) THEN NULL ELSE ?1 END,
                    ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12,
                    coalesce(?13, (SELECT person FROM device WHERE address = ?8), (SELECT min(id) FROM person)))
            ON CONFLICT (identity) DO NOTHING
            """
        var result = IngestResult()
        var ids: [String: Int64] = [:]
        for e in events {
            if let problem = e.textProblem {
                throw StoreError(.invalidValue, path: nil, "cannot store event \(e.identity.shownSafely(limit: 80)): \(problem); nothing was stored")
            }
            var person: Int64?
            if let name = e.person {
                if let id = ids[name] { person = id } else {
                    person = try personID(named: name, db)
                    ids[name] = person
                }
            }
            try db.run(sql, [
                keepingIDs ? e.id : nil, e.identity, e.kind.rawValue, e.ml, e.time.secondsSince1970,
                e.remainingML, e.source.rawValue, TextField.eventDevice.stored(e.device), e.traceTime, TextField.note.stored(e.note), e.deleted,
                e.recordedAt.secondsSince1970, person,
            ])
            if db.changes > 0 { result.inserted += 1 } else { result.duplicates += 1 }
        }
        return result
    }

    /// Stores one drink typed by a person and returns it with its id (`person` nil: the first person's).
    public func addManual(ml: Double, at time: Timestamp, note: String?, identity: String, recordedAt: Timestamp = .wallClockNow,
                          person: Int64? = nil) throws(StoreError) -> IntakeEvent {
        let note = TextField.note.stored(note)
        if let note, let problem = TextField.note.problem(note) {
            throw StoreError(.invalidValue, path: path, "adding a drink failed: \(problem); nothing was stored")
        }
        var event = IntakeEvent(
            identity: identity, kind: .sip, ml: ml, time: IntakeEvent.roundedToMillisecond(time),
            source: .manual, note: note, recordedAt: recordedAt)
        (event.id, event.person) = try write("adding a drink") { db in
            let person = try Self.personOrFirst(person, db)
            try db.run("""
                INSERT INTO intake_event (identity, kind, ml, time, source, note, deleted, recorded_at, person)
                VALUES (?, 'sip', ?, ?, 'manual', ?, 0, ?, ?)
                """, [identity, event.ml, event.time.secondsSince1970, note, recordedAt.secondsSince1970, person])
            let id = db.lastInsertedRowID
            return (id, try db.first("SELECT name FROM person WHERE id = ?", [person]) { row -> String in row[0] })
        }
        return event
    }

    // MARK: - Editing

    /// Changes a drink's amount, time or note (nil: unchanged; an empty note removes it); returns it as
    /// it now is. The event keeps its identity: a sync or a publisher sees a `changed` event.
    @discardableResult
    /// `person`: the id of whoever really drank it (the outbox's `changed` row then carries it
    /// to Home Assistant and the hub, as for an amount or a time).
    public func editEvent(id: Int64, ml: Double?, time: Timestamp?, note: String??, person: Int64? = nil,
                          kind: EventKind? = nil) throws(StoreError) -> IntakeEvent {
        let stored = note.map { TextField.note.stored($0) }
        if let stored, let text = stored, let problem = TextField.note.problem(text) {
            throw StoreError(.invalidValue, path: path, "editing event \(id) failed: \(problem); nothing was changed")
        }
        return try write("editing event \(id)") { db in
            // One statement: the outbox's `changed` row and the met-span triggers fire once per edit.
            try db.run("""
                UPDATE intake_event SET ml = coalesce(?1, ml), time = coalesce(?2, time), note = CASE WHEN ?3 THEN ?4 ELSE note END,
                                        person = coalesce(?6, person), kind = coalesce(?7, kind)
                WHERE id = ?5
                """, [ml, time.map { IntakeEvent.roundedToMillisecond($0).secondsSince1970 }, stored != nil, stored ?? nil, id, person,
                      kind?.rawValue])
            guard let event = try Self.event(id: id, db) else { throw StoreError.noSuchEvent(id, path: path) }
            return event
        }
    }

    // MARK: - Deleting and restoring

    /// Soft-deletes (or restores) an event; returns it as it now is.
    @discardableResult
    public func setDeleted(id: Int64, _ deleted: Bool) throws(StoreError) -> IntakeEvent {
        try write(deleted ? "deleting event \(id)" : "restoring event \(id)") { db in
            try Self.noteHubLocalDeletion(id: id, deleted: deleted, db)
            try db.run("UPDATE intake_event SET deleted = ? WHERE id = ?", [deleted, id])
            guard let event = try Self.event(id: id, db) else {
                throw StoreError.noSuchEvent(id, path: path)
            }
            return event
        }
    }

    /// Soft-deletes the live event of `person` (nil: anyone's) stored last (by id, whatever its time); nil when there is none.
    public func deleteNewest(person: Int64? = nil) throws(StoreError) -> IntakeEvent? {
        try write("undoing the last event") { db in try Self.deleteNewest(person: person, db) }
    }

    static func deleteNewest(person: Int64?, _ db: SQLiteConnection) throws -> IntakeEvent? {
        // The last stored, not the latest in time: `add 200ml --at 08:00` then `undo` takes back that drink.
        guard let id = try db.first("SELECT id FROM intake_event WHERE deleted = 0 AND (?1 IS NULL OR person = ?1) ORDER BY id DESC LIMIT 1",
                                    [person], { row -> Int64 in row[0] }) else {
            return nil
        }
        try noteHubLocalDeletion(id: id, deleted: true, db)
        try db.run("UPDATE intake_event SET deleted = 1 WHERE id = ?", [id])
        return try Self.event(id: id, db)
    }

    // MARK: - Reading

    public func event(id: Int64) throws(StoreError) -> IntakeEvent? {
        try read("reading event \(id)") { db in try Self.event(id: id, db) }
    }

    public func events(_ query: EventQuery = EventQuery()) throws(StoreError) -> [IntakeEvent] {
        let (sql, arguments) = Self.select(query)
        return try read("reading events") { db in try db.all(sql, arguments, Self.event) }
    }

    /// Runs `body` on one read snapshot of the history: every query it makes sees
    /// the same rows, even while a gateway writes.
    public func reading<T>(_ body: (EventReader) throws(StoreError) -> T) throws(StoreError) -> T {
        try read("reading events") { db in try body(EventReader(db: db, path: path)) }
    }

    /// The SQL of an event query and its parameters.
    static func select(_ query: EventQuery) -> (sql: String, arguments: [any SQLiteBindable]) {
        var conditions: [String] = []
        var arguments: [any SQLiteBindable] = []
        if let since = query.since { conditions.append("time >= ?"); arguments.append(since.secondsSince1970) }
        if let until = query.until { conditions.append("time < ?"); arguments.append(until.secondsSince1970) }
        if let position = query.olderThan {
            conditions.append("(time < ? OR (time = ? AND id < ?))")
            arguments += [position.time.secondsSince1970, position.time.secondsSince1970, position.id]
        }
        if let device = query.device { conditions.append("device = ?"); arguments.append(device) }
        if let person = query.person { conditions.append("person = ?"); arguments.append(person) }
        if let kinds = query.kinds {
            conditions.append("kind IN (\(kinds.map { "'\($0.rawValue)'" }.sorted().joined(separator: ",")))")
        }
        if !query.includeDeleted { conditions.append("deleted = 0") }
        var sql = "SELECT \(Self.eventColumns) FROM intake_event"
        if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
        sql += query.order == .newestFirst ? " ORDER BY time DESC, id DESC" : " ORDER BY id"
        // A parameter, not a literal: the statement is prepared once whatever the limit.
        if let limit = query.limit { sql += " LIMIT ?"; arguments.append(max(0, limit)) }
        return (sql, arguments)
    }

    /// Moves events (by identity) to new times, in one transaction: a device
    /// whose clock was found to be off corrects what it reported. Returns how
    /// many rows changed; the identities stay, so a resend still matches.
    public func restamp(_ changes: [(identity: String, time: Timestamp)]) throws(StoreError) -> Int {
        for change in changes where !IntakeEvent.plausibleTime.contains(change.time.secondsSince1970) {
            throw StoreError(.invalidValue, path: path, "cannot move an event to \(change.time.secondsSince1970): not a time between 1970 and 9999")
        }
        return try write("re-stamping \(changes.count) events") { db in
            var changed = 0
            for change in changes {
                try db.run("UPDATE intake_event SET time = ? WHERE identity = ?",
                           [IntakeEvent.roundedToMillisecond(change.time).secondsSince1970, change.identity])
                changed += db.changes
            }
            return changed
        }
    }

    /// Stores rows, each unless one of its `aliases` (identities the same
    /// record may already be stored under: a device's resend whose time is
    /// known to a second or so) is there; looked up and written in one
    /// transaction. Ids are not kept.
    /// `unsynced`: the rows were stamped before the wall clock was synchronised,
    /// at these places on the boot's monotonic clock (kept with them, in the same
    /// transaction, for `restampUnsynced`).
    /// `checkpoint`: the device's detector after these events, saved in the same
    /// transaction (so a restart never judges a stored event again, nor misses one).
    public func insert(_ rows: [(event: IntakeEvent, aliases: [String])], unsynced: [UnsyncedStamp?] = [],
                       checkpoint: DetectorCheckpoint? = nil) throws(StoreError) -> IngestResult {
        let what = "storing \(rows.count) event\(rows.count == 1 ? "" : "s")"
        try checkIntake(rows.map(\.event), what)
        let checkpointText = try checkpoint.map { (c) throws(StoreError) -> String in try Self.encode(c, path: path) }
        return try write(what) { db in
            if let checkpoint, let checkpointText { try Self.save(checkpoint, checkpointText, db) }
            var result = IngestResult()
            for (i, (event, aliases)) in rows.enumerated() {
                let stored = try aliases.contains { alias in
                    try db.first("SELECT 1 FROM intake_event WHERE identity = ?", [alias], { _ in true }) == true
                }
                if stored {
                    result.duplicates += 1
                } else {
                    let one = try Self.insertRows([event], keepingIDs: false, db)
                    result.inserted += one.inserted
                    result.duplicates += one.duplicates
                    if one.inserted > 0, i < unsynced.count, let stamp = unsynced[i] {
                        try db.run("INSERT OR REPLACE INTO unsynced_stamp (identity, boot_id, since_boot) VALUES (?, ?, ?)",
                                   [event.identity, stamp.bootID, stamp.sinceBoot])
                    }
                }
            }
            return result
        }
    }

    /// Once the wall clock is synchronised: every event of boot `bootID` stamped
    /// before it was gets the time `wall(sinceBoot)`, in one transaction.
    /// Returns how many moved, and by how much (the last one's shift, seconds).
    public func restampUnsynced(bootID: String, wall: (Double) -> Timestamp) throws(StoreError) -> (count: Int, shift: Double) {
        try write("re-stamping events stamped before the clock was set") { db in
            var pending: [(String, Double)] = []
            try db.run("SELECT identity, since_boot FROM unsynced_stamp WHERE boot_id = ?", [bootID]) { row in
                pending.append((row[0], row[1]))
            }
            var count = 0
            var shift = 0.0
            for (identity, sinceBoot) in pending {
                let time = IntakeEvent.roundedToMillisecond(wall(sinceBoot))
                let old = try db.first("SELECT time FROM intake_event WHERE identity = ?", [identity]) { row -> Double in row[0] }
                guard let old, IntakeEvent.plausibleTime.contains(time.secondsSince1970) else { continue }
                try db.run("UPDATE intake_event SET time = ? WHERE identity = ?", [time.secondsSince1970, identity])
                count += db.changes
                shift = time.secondsSince1970 - old
            }
            try db.run("DELETE FROM unsynced_stamp WHERE boot_id = ?", [bootID])
            return (count, shift)
        }
    }

    /// Stamps left from other boots, which nothing can correct any more (the
    /// monotonic clock they were measured on is gone): forgotten, and counted
    /// so the caller can say so. Their events stay, with the times they have.
    public func forgetUnsynced(otherThan bootID: String) throws(StoreError) -> Int {
        try write("forgetting stamps of earlier boots") { db in
            try db.run("DELETE FROM unsynced_stamp WHERE boot_id <> ?", [bootID])
            return db.changes
        }
    }

    /// How many stored events still wait for the clock (doctor, tests).
    public func unsyncedCount() throws(StoreError) -> Int {
        try read("counting events stamped before the clock was set") { db in
            try db.first("SELECT COUNT(*) FROM unsynced_stamp") { row -> Int in row[0] } ?? 0
        }
    }

    /// Live sips grouped by day: the key of a sip at `time` in segment `s` is
    /// `floor((time + s.shift) / 86400)`. Segments must not overlap.
    /// `person`: only theirs (through `intake_event_person_live_sip`); nil: the household's.
    public func sipTotalsByDay(_ segments: [DaySegment], person: Int64? = nil) throws(StoreError) -> [Int: DayTotal] {
        try read("adding up intake") { db in
            var totals: [Int: DayTotal] = [:]
            let sql = person == nil ? """
                SELECT (CAST(time AS INTEGER) + ?1) / 86400 AS day, SUM(ml), COUNT(*)
                FROM intake_event WHERE kind = 'sip' AND deleted = 0 AND time >= ?2 AND time < ?3
                GROUP BY day
                """ : """
                SELECT (CAST(time AS INTEGER) + ?1) / 86400 AS day, SUM(ml), COUNT(*)
                FROM intake_event INDEXED BY intake_event_person_live_sip
                WHERE kind = 'sip' AND deleted = 0 AND person = ?4 AND time >= ?2 AND time < ?3
                GROUP BY day
                """
            // Times are after 1970 and shifts under a day, so integer division floors.
            for segment in segments where segment.until > segment.from {
                var arguments: [any SQLiteBindable] = [segment.shift, segment.from.secondsSince1970, segment.until.secondsSince1970]
                if let person { arguments.append(person) }
                try db.run(sql, arguments) { row in
                    let day: Int = row[0]
                    let ml: Double = row[1]
                    let sips: Int = row[2]
                    totals[day, default: DayTotal(ml: 0, sips: 0)].ml += ml
                    totals[day, default: DayTotal(ml: 0, sips: 0)].sips += sips
                }
            }
            return totals
        }
    }

    /// The newest live sip before `time` (`person`: theirs; nil: anyone's).
    public func lastSip(before time: Timestamp, person: Int64? = nil) throws(StoreError) -> IntakeEvent? {
        try read("reading the last sip") { db in
            if let person {
                return try db.first("""
                    SELECT \(Self.eventColumns) FROM intake_event INDEXED BY intake_event_person_live_sip
                    WHERE kind = 'sip' AND deleted = 0 AND person = ? AND time < ? ORDER BY time DESC LIMIT 1
                    """, [person, time.secondsSince1970], Self.event)
            }
            return try db.first("""
                SELECT \(Self.eventColumns) FROM intake_event INDEXED BY intake_event_live_sip
                WHERE kind = 'sip' AND deleted = 0 AND time < ? ORDER BY time DESC LIMIT 1
                """, [time.secondsSince1970], Self.event)
        }
    }

    /// For each device with an event since `since` that knew what was left in the
    /// bottle: its newest such event. `owner`: only the devices that are theirs now,
    /// and devices nobody paired (a replayed trace's, the demo's) whose events are theirs.
    /// `before`: as it stood then (an earlier day's view); nil: now.
    public func latestRemaining(since: Timestamp, before: Timestamp? = nil, owner: Int64? = nil) throws(StoreError) -> [IntakeEvent] {
        try read("reading what is left in the bottles") { db in
            // SQLite returns the bare columns of the row holding MAX(time) in each group.
            let ids = try db.all("""
                SELECT id, MAX(time) FROM intake_event
                WHERE time >= ?1 AND (?3 IS NULL OR time < ?3) AND deleted = 0 AND remaining_ml IS NOT NULL AND device IS NOT NULL
                    AND (?2 IS NULL OR device IN (SELECT address FROM device WHERE person = ?2)
                         OR (person = ?2 AND device NOT IN (SELECT address FROM device)))
                GROUP BY device ORDER BY device
                """, [since.secondsSince1970, owner, before?.secondsSince1970]) { row -> Int64 in row[0] }
            return try ids.compactMap { id in try Self.event(id: id, db) }
        }
    }

    /// The oldest live sip's time (`person`: theirs), to bound "all time" questions.
    public func firstSipTime(person: Int64? = nil) throws(StoreError) -> Timestamp? {
        try read("reading the first sip") { db in
            // Two statements, so each is answered from the front of its partial index.
            try (person == nil
                 ? db.first("SELECT MIN(time) FROM intake_event WHERE kind = 'sip' AND deleted = 0", []) { row -> Double? in row[0] }
                 : db.first("SELECT MIN(time) FROM intake_event INDEXED BY intake_event_person_live_sip WHERE kind = 'sip' AND deleted = 0 AND person = ?",
                            [person]) { row -> Double? in row[0] })
                .flatMap { $0 }.map(Timestamp.init(secondsSince1970:))
        }
    }

    /// The label events of `address` are stored under: its printed form (`AA:BB:…`, as pairing stores it),
    /// or the spelling earlier events of it were stored under before addresses were written one way
    /// (`aa:bb:…`, `AA-BB-…`), so that they are found, and not stored again beside themselves.
    public func deviceLabel(of address: BluetoothAddress) throws(StoreError) -> String {
        let printed = address.description
        return try read("reading the events of a device") { db in
            try db.first("""
                SELECT device FROM intake_event WHERE device <> ?1 AND upper(replace(device, '-', ':')) = ?1 LIMIT 1
                """, [printed]) { row -> String in row[0] }
        } ?? printed
    }

    static func event(id: Int64, _ db: SQLiteConnection) throws -> IntakeEvent? {
        try db.first("SELECT \(eventColumns) FROM intake_event WHERE id = ?", [id], event)
    }

    /// Decodes a row selected with `eventColumns`, by position.
    static func event(_ row: SQLiteRow) throws -> IntakeEvent {
        let kindText: String = row[2], sourceText: String = row[6]
        guard let kind = EventKind(rawValue: kindText), let source = EventSource(rawValue: sourceText) else {
            throw StoreError(.corrupt, path: nil, "an event row has kind '\(kindText.shownSafely())' and source '\(sourceText.shownSafely())'")
        }
        return IntakeEvent(
            id: row[0], identity: row[1], kind: kind, ml: row[3],
            time: Timestamp(secondsSince1970: row[4]), remainingML: row[5], source: source,
            device: row[7], traceTime: row[8], note: row[9], deleted: row[10],
            recordedAt: Timestamp(secondsSince1970: row[11]), person: row[12])
    }
}

extension Timestamp {
    /// The current wall-clock time.
    public static var wallClockNow: Timestamp {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Timestamp(secondsSince1970: Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9)
    }
}

/// Reads events one at a time inside `IntakeStore.reading`: an export or a log
/// of ten years never holds more than one row. Valid only inside that call.
public struct EventReader {
    let db: SQLiteConnection
    let path: String

    /// Calls `body` with each event `query` selects, in its order.
    public func forEach(_ query: EventQuery, _ body: (IntakeEvent) -> Void) throws(StoreError) {
        let (sql, arguments) = IntakeStore.select(query)
        do {
            try db.run(sql, arguments) { row in body(try IntakeStore.event(row)) }
        } catch {
            throw StoreError.wrap(error, path: path, doing: "reading events")
        }
    }

    /// The event `id`, from the same snapshot.
    public func event(id: Int64) throws(StoreError) -> IntakeEvent? {
        do {
            return try IntakeStore.event(id: id, db)
        } catch {
            throw StoreError.wrap(error, path: path, doing: "reading event \(id)")
        }
    }
}

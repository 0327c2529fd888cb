import QuenchCore
import Threading

/// What an import stored.
public struct ImportOutcome: Sendable, Hashable {
    public var inserted = 0
    /// Events already stored (same identity), or twice in the file: counted, not doubled.
    public var duplicates = 0
    /// People the file named whom the household did not have.
    public var peopleAdded = 0
    /// People the household had who took some of the file's settings (theirs were the defaults).
    public var peopleGivenSettings: [String] = []
}

extension IntakeStore {
    /// The longest any write may hold the database's lock. Only an import's
    /// last step can take long (it is as long as the file: 200 000 events held
    /// it 5 to 8 s on the 2-core build machine under load, so a Pi, several
    /// times slower, still lands ten years of history); it is stopped and
    /// rolled back past this bound, so no other writer waits longer.
    public static let longestWrite: Double = 60

    /// How long a write waits for another's lock by default: longer than two
    /// writes at their longest, so a person adding a drink while an import
    /// lands waits a moment and never sees "database is locked".
    public static let defaultBusyTimeout: Double = 3 * longestWrite

    /// An import, all of it or nothing, without holding the database while
    /// the file is read: `body` checks and stages everything (the events in a
    /// temporary table on disk, in short transactions of their own that lock
    /// nothing another process uses); when it returns, one `BEGIN IMMEDIATE`
    /// transaction writes it all, bounded by `longestWrite`. When `body`
    /// throws, nothing was written; a kill -9 leaves the database as it was
    /// (the temporary table goes with the process). `wrap` turns the store's
    /// own failures into `body`'s error type.
    public func importing<Failure: Error>(
        wrap: (StoreError) -> Failure, _ body: (ImportSession) throws(Failure) -> Void
    ) throws(Failure) -> ImportOutcome {
        if isReadOnly {
            throw wrap(StoreError(.readOnly, path: path, "importing failed: the database \(path) \(StoreError.readOnlyReason(path))"))
        }
        if let refusal = newerSchemaRefusal(doing: "importing") { throw wrap(refusal) }
        var bodyFailure: Failure?
        do {
            return try withConnection { db in
                // On disk, not in memory: an export of any size is staged in bounded memory.
                try db.execute("PRAGMA temp_store = FILE; DROP TABLE IF EXISTS temp.import_event; " + ImportSession.stagingTable)
                defer { try? db.execute("DROP TABLE IF EXISTS temp.import_event; PRAGMA temp_store = MEMORY") }
                let session = ImportSession(db: db, store: self)
                do throws(Failure) { try body(session) } catch {
                    bodyFailure = error
                    throw ImportSession.RolledBack()
                }
                return try db.transaction(immediate: true) { try session.commit(db) }
            }
        } catch {
            if let bodyFailure { throw bodyFailure }
            throw wrap(StoreError.wrap(error, path: path, doing: "importing"))
        }
    }
}

/// What an import adds, gathered inside `IntakeStore.importing` and written
/// when it ends; every value is checked as it comes, the way `settings`,
/// `goal`, `pair`, `person add` and `add` check it. Valid only inside that call.
public final class ImportSession {
    let db: SQLiteConnection
    let store: IntakeStore
    private var settings: Settings?
    /// People to add when missing, in the order named; lower-cased name → index.
    private var people: [(name: String, own: PersonSettings, at: Timestamp)] = []
    private var personIndex: [String: Int] = [:]
    private var goals: [(person: String, goals: [Goal])] = []
    private var devices: [(device: Device, calibration: String?)] = []
    private(set) var staged: Int64 = 0

    struct RolledBack: Error {}

    init(db: SQLiteConnection, store: IntakeStore) {
        self.db = db
        self.store = store
    }

    static let stagingTable = """
        CREATE TEMP TABLE import_event (
            seq INTEGER PRIMARY KEY, id INTEGER, identity TEXT NOT NULL, kind TEXT NOT NULL, ml REAL NOT NULL,
            time REAL NOT NULL, remaining_ml REAL, source TEXT NOT NULL, device TEXT, trace_time REAL, note TEXT,
            deleted INTEGER NOT NULL, recorded_at REAL NOT NULL, person TEXT, legacy TEXT)
        """

    public func replaceSettings(_ settings: Settings) throws(StoreError) {
        try store.checkSettings(settings)
        self.settings = settings
    }

    /// What a person's export carries of theirs besides the name and goals: applied to someone the import adds.
    public struct PersonSettings: Sendable {
        public var units: VolumeUnit?
        public var dayStartHour: Int?
        public var alertAfterMinutes: Int?
        /// Their reminders and waking window (a carer's threshold counts in it), when not the defaults.
        public var reminders: ReminderSettings?
        public init(units: VolumeUnit? = nil, dayStartHour: Int? = nil, alertAfterMinutes: Int? = nil, reminders: ReminderSettings? = nil) {
            self.units = units
            self.dayStartHour = dayStartHour
            self.alertAfterMinutes = alertAfterMinutes
            self.reminders = reminders
        }
    }

    /// Someone the file names: added (with `own`, created `at`) when the household has nobody of that name.
    public func addPerson(named name: String, own: PersonSettings = PersonSettings(), at time: Timestamp = .wallClockNow) throws(StoreError) {
        try store.checkName(name)
        if let hour = own.dayStartHour, !Settings.dayStartHours.contains(hour) {
            throw StoreError(.invalidValue, path: store.path, "\(name.shownSafely(limit: 40))'s day start \(hour) is not an hour from 0 to 23")
        }
        if let minutes = own.alertAfterMinutes, !Person.alertAfterRange.contains(minutes) {
            throw StoreError(.invalidValue, path: store.path, "\(name.shownSafely(limit: 40))'s carer's threshold of \(minutes) minutes is not "
                             + "\(Person.alertAfterRange.lowerBound) to \(Person.alertAfterRange.upperBound)")
        }
        if let problem = own.reminders?.problem {
            throw StoreError(.invalidValue, path: store.path, "\(name.shownSafely(limit: 40))'s reminders: \(problem)")
        }
        guard personIndex[Person.nameKey(name)] == nil else { return }
        personIndex[Person.nameKey(name)] = people.count
        people.append((name, own, time))
    }

    /// Someone's goals; they must be named by `addPerson` or be in the household.
    public func addGoals(_ goals: [Goal], person: String) throws(StoreError) {
        for goal in goals where !(goal.ml.isFinite && goal.ml > 0 && goal.ml <= 20_000) {
            throw StoreError(.invalidValue, path: store.path, "a daily goal of \(goal.ml) mL is not between 1 mL and 20 L")
        }
        self.goals.append((person, goals))
    }

    public func addDevices(_ devices: [Device]) throws(StoreError) {
        for device in devices { self.devices.append((device, try store.calibrationJSON(device))) }
    }

    /// Events, staged (ids kept when free once written; those already stored are counted, not doubled).
    /// `legacyIdentity[i]`: event `i`'s identity was made from its row (a file from elsewhere names none), and this is
    /// the identity an earlier version made of it (`personalIdentity`); nil, or a missing entry: its identity is its own.
    public func insert(_ events: [IntakeEvent], legacyIdentity: [String?] = []) throws(StoreError) {
        let what = "importing \(events.count) event\(events.count == 1 ? "" : "s")"
        try store.checkIntake(events, what)
        for event in events {
            if let problem = event.textProblem {
                throw StoreError(.invalidValue, path: store.path, "\(what) failed: event \(event.identity.shownSafely(limit: 80)): \(problem)")
            }
        }
        do {
            // Only the temporary database is written: the file's own lock is not taken.
            try db.transaction(immediate: false) {
                for (i, e) in events.enumerated() {
                    try db.run("""
                        INSERT INTO temp.import_event (id, identity, kind, ml, time, remaining_ml, source, device, trace_time,
                                                      note, deleted, recorded_at, person, legacy)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """, [e.id, e.identity, e.kind.rawValue, e.ml, e.time.secondsSince1970, e.remainingML, e.source.rawValue,
                              e.device, e.traceTime, e.note, e.deleted, e.recordedAt.secondsSince1970, e.person,
                              i < legacyIdentity.count ? legacyIdentity[i] : nil])
                }
            }
        } catch {
            throw StoreError.wrap(error, path: store.path, doing: what)
        }
        staged += Int64(events.count)
    }

    /// Everything, inside the one immediate transaction: stopped past `longestWrite`.
    func commit(_ db: SQLiteConnection) throws -> ImportOutcome {
        let deadline = Deadline(seconds: store.importBound)
        var outcome = ImportOutcome()
        if let settings { try IntakeStore.upsertSettings(settings, db) }
        for person in people {
            // Someone renamed since the file was written is theirs under the name before (an export from before
            // a rename, imported again, added an empty person of the old name, whom `--person` then found).
            if let existing = try IntakeStore.personNamedOrAliased(person.name, db) {
                // Already here (a database made for the import has its `me`): what they set of their own is
                // kept, what is at its default takes the file's. Their reminders were dropped: a move to a new
                // Pi came back with 08:00-22:00 and hourly reminders in place of the ones set.
                let own = person.own
                var taken = (existing.units == nil && own.units != nil) || (existing.dayStartHour == nil && own.dayStartHour != nil)
                    || (existing.alertAfterMinutes == nil && own.alertAfterMinutes != nil)
                try db.run("""
                    UPDATE person SET units = coalesce(units, ?), day_start_hour = coalesce(day_start_hour, ?),
                        alert_after_minutes = coalesce(alert_after_minutes, ?) WHERE id = ?
                    """, [own.units?.rawValue, own.dayStartHour, own.alertAfterMinutes, existing.id])
                let theirs = try IntakeStore.reminderSettings(person: existing.id, db) ?? .defaults
                if let reminders = own.reminders, theirs == .defaults, reminders != theirs {
                    try IntakeStore.upsertReminderSettings(reminders, person: existing.id, db)
                    taken = true
                }
                // Said by the import: a person deliberately left unwatched here is watched after it.
                if taken { outcome.peopleGivenSettings.append(existing.name) }
                continue
            }
            let added = try IntakeStore.addPerson(name: person.name, units: person.own.units, at: person.at, db)
            try db.run("UPDATE person SET day_start_hour = ?, alert_after_minutes = ? WHERE id = ?",
                       [person.own.dayStartHour, person.own.alertAfterMinutes, added.id])
            if let reminders = person.own.reminders { try IntakeStore.upsertReminderSettings(reminders, person: added.id, db) }
            outcome.peopleAdded += 1
        }
        for (person, goals) in goals {
            try IntakeStore.upsertGoals(goals, person: try IntakeStore.personID(named: person, db), db)
        }
        for (device, calibration) in devices { try IntakeStore.upsertDevice(device, calibration: calibration, db) }
        var last: Int64 = 0
        while true {
            var batch: [IntakeEvent] = []
            var read = 0
            try db.run("SELECT \(Self.stagedColumns) FROM temp.import_event WHERE seq > ? ORDER BY seq LIMIT 1000", [last]) { row in
                read += 1
                last = row[13]
                var event = try IntakeStore.event(row)
                let legacy: String? = row[14]
                if let legacy {
                    guard let identity = try Self.personalIdentity(of: event, legacy: legacy, db) else {
                        outcome.duplicates += 1
                        return
                    }
                    event.identity = identity
                }
                batch.append(event)
            }
            if read == 0 { return outcome }
            let result = try IntakeStore.insertRows(batch, keepingIDs: true, db)
            outcome.inserted += result.inserted
            outcome.duplicates += result.duplicates
            if deadline.hasPassed {
                throw StoreError(.tooLong, path: store.path,
                                 "importing failed: writing \(staged) events would hold the database longer than "
                                 + "\(Int(store.importBound)) s, keeping everyone else waiting; nothing was imported")
            }
        }
    }

    /// The staged row as `IntakeStore.event` decodes it, then its place and, when its identity was made from it, the
    /// identity an earlier version made.
    private static let stagedColumns = "id, identity, kind, ml, time, remaining_ml, source, device, trace_time, note, deleted, recorded_at, person, seq, legacy"

    /// A row from elsewhere is the same drink as one stored when its kind, time, device and mL match *for the same
    /// person*: made from those alone, Björn's 250 mL at 08:58 was taken for Anna's, imported from her file before,
    /// and dropped. So the identity made from a row ends in its person's name (`|@anna`; alike rows numbered among
    /// that person's): the same in every database (an export moved to a new Pi, two gateways at a hub), kept by a
    /// drink moved to someone else with `edit --to` (importing the file again still finds it), and found under any
    /// name the person had before a rename. nil: the row is stored already, under that or under the identity an
    /// earlier version made without the person (`legacy`; whose it was is not known then, so it is not doubled).
    static func personalIdentity(of event: IntakeEvent, legacy: String, _ db: SQLiteConnection) throws -> String? {
        func stored(_ identity: String) throws -> Bool {
            try db.first("SELECT 1 FROM intake_event WHERE identity = ?", [identity], { row -> Int in row[0] }) != nil
        }
        if try stored(legacy) { return nil }
        guard let name = event.person else { return event.identity }
        let formerNames = try db.all("SELECT a.name FROM person_alias a JOIN person p ON p.id = a.person WHERE p.name = ?", [name]) { row -> String in row[0] }
        for former in formerNames where try stored(personal(event.identity, person: former)) { return nil }
        return personal(event.identity, person: name)
    }

    /// `identity`, made from a row, as `name`'s own: `…|@anna` (`personalIdentity`; the import's alike rows are
    /// numbered by it too).
    public static func personal(_ identity: String, person name: String) -> String { identity + "|@" + Person.nameKey(name) }
}

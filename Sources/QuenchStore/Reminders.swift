import QuenchCore

/// How and when to remind someone to drink (table `reminder`, a row per person).
/// What it means is `QuenchHistory.ReminderPolicy`'s to say; this is what is kept.
public struct ReminderSettings: Sendable, Hashable, Codable {
    public enum Mode: String, Sendable, Hashable, Codable, CaseIterable {
        /// When behind the pace of the goal spread over the waking window.
        case pace
        /// Every `everyMinutes` in the waking window, whatever the intake (the simplest apps' way).
        case hourly
        case off
    }

    public var mode: Mode
    /// The waking window, minutes after local midnight: the goal is spread over it, and no reminder comes outside it.
    /// An end before the start is the next morning's (a night shift's 22:00-06:00).
    public var wakeFromMinute: Int
    public var wakeUntilMinute: Int
    /// Behind means below the pace by more than this.
    public var slackML: Double
    /// Only when the last drink is at least this long ago.
    public var afterMinutes: Double
    /// At most this often.
    public var everyMinutes: Double

    public static let defaults = ReminderSettings(mode: .pace, wakeFromMinute: 8 * 60, wakeUntilMinute: 22 * 60,
                                                  slackML: 150, afterMinutes: 60, everyMinutes: 60)

    public init(mode: Mode, wakeFromMinute: Int, wakeUntilMinute: Int, slackML: Double, afterMinutes: Double, everyMinutes: Double) {
        self.mode = mode
        self.wakeFromMinute = wakeFromMinute
        self.wakeUntilMinute = wakeUntilMinute
        self.slackML = slackML
        self.afterMinutes = afterMinutes
        self.everyMinutes = everyMinutes
    }

    /// A setting out of its bounds: which, and the bounds (a front end names its own option for it).
    public enum Problem: Sendable, Hashable, CustomStringConvertible {
        case window
        case slack(maxML: Int)
        /// How long after falling behind a reminder waits, in minutes.
        case after(ClosedRange<Int>)
        /// How often a reminder repeats, in minutes.
        case every(ClosedRange<Int>)

        public var description: String {
            switch self {
            case .window: "the waking window must be two times of day (00:00 to 24:00) that differ (e.g. 08:00-22:00, or 22:00-06:00 for a night)"
            case .slack(let most): "the slack must be 0 to \(most) mL"
            case .after(let r): "the wait before a reminder must be \(r.lowerBound) to \(r.upperBound) minutes"
            case .every(let r): "the time between reminders must be \(r.lowerBound) to \(r.upperBound) minutes"
            }
        }
    }

    /// How far behind the pace a reminder waits (mL): more than a big bottle's worth
    /// (`--slack 99999ml`) and no reminder would ever come.
    public static let slackML = 0.0...2000
    /// How long after the last drink a reminder waits, and how often one repeats (minutes): a day at most.
    public static let afterMinutes = 0.0...1440
    public static let everyMinutes = 1.0...1440

    /// What is wrong with these settings, nil when they hold.
    public var problem: Problem? {
        // An end before the start is the next morning's (a night shift); the window is never empty.
        guard (0..<1440).contains(wakeFromMinute), (1...1440).contains(wakeUntilMinute), wakeFromMinute != wakeUntilMinute % 1440 || wakeFromMinute == 0 else {
            return .window
        }
        // As `remind set --slack` takes it: an import took 50,000 mL, and no reminder came again (a black-box trial).
        guard slackML.isFinite, Self.slackML.contains(slackML) else { return .slack(maxML: Int(Self.slackML.upperBound)) }
        guard afterMinutes.isFinite, Self.afterMinutes.contains(afterMinutes) else { return .after(0...1440) }
        guard everyMinutes.isFinite, Self.everyMinutes.contains(everyMinutes) else { return .every(1...1440) }
        return nil
    }
}

/// The reminder settings and what has happened: the last reminder, a snooze.
public struct ReminderRecord: Sendable, Hashable {
    public var settings: ReminderSettings
    public var lastRemindedAt: Timestamp?
    public var snoozedUntil: Timestamp?
}

// `person` nil below: the household's first person (the only one, until there are more).
extension IntakeStore {
    public func reminder(person: Int64? = nil) throws(StoreError) -> ReminderRecord {
        try read("reading the reminder settings") { db in
            try db.first("""
                SELECT mode, wake_from_minute, wake_until_minute, slack_ml, after_minutes, every_minutes, last_reminded_at, snoozed_until
                FROM reminder WHERE person = ?
                """, [try Self.personOrFirst(person, db)]) { row -> ReminderRecord in
                ReminderRecord(
                    settings: Self.reminderSettings(row),
                    lastRemindedAt: (row[6] as Double?).map(Timestamp.init(secondsSince1970:)),
                    snoozedUntil: (row[7] as Double?).map(Timestamp.init(secondsSince1970:)))
            } ?? ReminderRecord(settings: .defaults)
        }
    }

    /// A person's reminder settings as stored, inside a read or a write (nil: none stored, the defaults).
    static func reminderSettings(person: Int64, _ db: SQLiteConnection) throws -> ReminderSettings? {
        try db.first("""
            SELECT mode, wake_from_minute, wake_until_minute, slack_ml, after_minutes, every_minutes FROM reminder WHERE person = ?
            """, [person], reminderSettings)
    }

    /// The settings of a row whose first six columns are `mode` to `every_minutes`.
    private static func reminderSettings(_ row: SQLiteRow) -> ReminderSettings {
        let modeText: String = row[0]
        return ReminderSettings(mode: ReminderSettings.Mode(rawValue: modeText) ?? .pace, wakeFromMinute: row[1],
                                wakeUntilMinute: row[2], slackML: row[3], afterMinutes: row[4], everyMinutes: row[5])
    }

    public func saveReminderSettings(_ settings: ReminderSettings, person: Int64? = nil) throws(StoreError) {
        if let problem = settings.problem { throw StoreError(.invalidValue, path: path, "reminders: \(problem)") }
        try write("saving the reminder settings") { db in try Self.upsertReminderSettings(settings, person: try Self.personOrFirst(person, db), db) }
    }

    /// A person's reminder settings, inside a write (saving them, or an import adding the person).
    static func upsertReminderSettings(_ settings: ReminderSettings, person: Int64, _ db: SQLiteConnection) throws {
        try db.run("""
            INSERT INTO reminder (person, mode, wake_from_minute, wake_until_minute, slack_ml, after_minutes, every_minutes)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (person) DO UPDATE SET mode = excluded.mode, wake_from_minute = excluded.wake_from_minute,
                wake_until_minute = excluded.wake_until_minute, slack_ml = excluded.slack_ml,
                after_minutes = excluded.after_minutes, every_minutes = excluded.every_minutes
            """, [person, settings.mode.rawValue, settings.wakeFromMinute, settings.wakeUntilMinute, settings.slackML,
                  settings.afterMinutes, settings.everyMinutes])
    }

    /// A reminder went out at `time`.
    /// - Parameter message: the reminder as published (MQTT), kept with its outbox row
    ///   so that it says what was true when it was given, however late it is sent.
    public func markReminded(at time: Timestamp, person: Int64? = nil, message: String? = nil) throws(StoreError) {
        try updateReminder("recording a reminder", "last_reminded_at", time.secondsSince1970, person: person) { db, person in
            guard let message, db.changes > 0 else { return }
            try Self.keepReminderMessage(message, person: person, db)
        }
    }

    /// The reminder as published, on its outbox row: the trigger's, if the outbox is on (the newest
    /// reminder row of this person, in this transaction).
    private static func keepReminderMessage(_ message: String, person: Int64, _ db: SQLiteConnection) throws {
        try db.run("""
            UPDATE mqtt_outbox SET payload = ? WHERE seq = (SELECT max(seq) FROM mqtt_outbox WHERE change = 'reminder' AND person = ?)
                AND payload IS NULL
            """, [message, person])
    }

    /// The reminder read as last given at `previous` goes out at `time`, unless another process gave it since
    /// (two `remind --notify` at once, a timer's and a person's, each judged it due and both sent it; a
    /// black-box trial): false then, and nothing is written. Claimed before it is sent, in one transaction.
    public func claimReminder(at time: Timestamp, person: Int64? = nil, message: String? = nil, lastWas previous: Timestamp?) throws(StoreError) -> Bool {
        var claimed = false
        try updateReminder("recording a reminder", "last_reminded_at", time.secondsSince1970, person: person,
                           onlyIf: ("last_reminded_at IS ?", previous?.secondsSince1970)) { db, person in
            claimed = db.changes > 0
            guard let message, claimed else { return }
            try Self.keepReminderMessage(message, person: person, db)
        }
        return claimed
    }

    /// No reminder before `time` (nil: the snooze ends now).
    public func snoozeReminders(until time: Timestamp?, person: Int64? = nil) throws(StoreError) {
        try updateReminder("snoozing reminders", "snoozed_until", time?.secondsSince1970, person: person)
    }

    private func updateReminder(_ what: String, _ column: String, _ value: Double?, person: Int64?,
                                onlyIf condition: (sql: String, value: Double?)? = nil,
                                then: (SQLiteConnection, Int64) throws -> Void = { _, _ in }) throws(StoreError) {
        let defaults = ReminderSettings.defaults
        try write(what) { db in
            let person = try Self.personOrFirst(person, db)
            // The row exists once anything was set; until then it is made with the defaults.
            try db.run("""
                INSERT INTO reminder (person, mode, wake_from_minute, wake_until_minute, slack_ml, after_minutes, every_minutes)
                VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (person) DO NOTHING
                """, [person, defaults.mode.rawValue, defaults.wakeFromMinute, defaults.wakeUntilMinute, defaults.slackML,
                      defaults.afterMinutes, defaults.everyMinutes])
            if let condition {
                try db.run("UPDATE reminder SET \(column) = ? WHERE person = ? AND \(condition.sql)", [value, person, condition.value])
            } else {
                try db.run("UPDATE reminder SET \(column) = ? WHERE person = ?", [value, person])
            }
            try then(db, person)
        }
    }
}

extension ReminderRecord {
    public init(settings: ReminderSettings) {
        self.init(settings: settings, lastRemindedAt: nil, snoozedUntil: nil)
    }
}

/// A reminder given to someone (`last_reminded_at`, which `quench remind
/// --notify` sets), with the devices that are theirs at this moment: what the
/// gateway watches, so a bottle of theirs can show it.
public struct ReminderGiven: Sendable, Hashable {
    public var person: Int64
    public var name: String
    public var at: Timestamp
    /// Addresses of the person's devices now, in order.
    public var devices: [String]

    public init(person: Int64, name: String, at: Timestamp, devices: [String]) {
        self.person = person
        self.name = name
        self.at = at
        self.devices = devices
    }
}

extension IntakeStore {
    /// Everyone's last reminder, with their devices: one small read, meant to be
    /// asked every few seconds (a row per person, none for who was never reminded).
    public func remindersGiven() throws(StoreError) -> [ReminderGiven] {
        let rows = try read("reading the reminders given") { db in
            try db.all("""
                SELECT r.person, p.name, r.last_reminded_at, d.address
                FROM reminder r JOIN person p ON p.id = r.person LEFT JOIN device d ON d.person = r.person
                WHERE r.last_reminded_at IS NOT NULL
                ORDER BY r.person, d.address
                """, []) { row -> (Int64, String, Double, String?) in (row[0], row[1], row[2], row[3]) }
        }
        var out: [ReminderGiven] = []
        for (person, name, at, device) in rows {
            if out.last?.person != person {
                out.append(ReminderGiven(person: person, name: name, at: Timestamp(secondsSince1970: at), devices: []))
            }
            if let device { out[out.count - 1].devices.append(device) }
        }
        return out
    }
}

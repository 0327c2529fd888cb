import QuenchCore

/// Someone in the household (table `person`): their name, their units, and by
/// the id the rows that are theirs (events, goals, reminders, devices).
public struct Person: Sendable, Hashable, Codable {
    /// The row id; names change (`quench person rename`), ids never do.
    public var id: Int64
    public var name: String
    /// nil: the household's setting (`quench settings --units`).
    public var units: VolumeUnit?
    public var createdAt: Timestamp
    /// How long they may go without a drink in their waking hours before the carer's
    /// view flags them, in minutes; nil: not watched.
    public var alertAfterMinutes: Int?
    /// The hour their days begin; nil: the household's (`quench settings --day-start`). A night
    /// shift's days begin while they sleep, not in the middle of their waking hours.
    public var dayStartHour: Int?

    public init(id: Int64, name: String, units: VolumeUnit? = nil, createdAt: Timestamp, alertAfterMinutes: Int? = nil, dayStartHour: Int? = nil) {
        self.id = id
        self.name = name
        self.units = units
        self.createdAt = createdAt
        self.alertAfterMinutes = alertAfterMinutes
        self.dayStartHour = dayStartHour
    }

    /// The schema's CHECK on `person.alert_after_minutes`: a quarter of an hour to a day.
    public static let alertAfterRange = 15...1440

    /// The one person a database has before anyone adds another (the migration's).
    public static let defaultName = "me"

    /// The schema's CHECK on `person.name`, in characters.
    public static let maximumNameLength = 40

    /// Whether two names are one person's: whatever the case (Unicode's, not
    /// only ASCII's) and however an accent is encoded (Swift compares strings by
    /// canonical equivalence). The one definition: the store and every command use it.
    public static func sameName(_ a: String, _ b: String) -> Bool { nameKey(a) == nameKey(b) }

    /// A name as `sameName` compares it, for a dictionary's key: upper then lower
    /// case, so ß and SS, or a final ς and Σ, fold alike (`lowercased()` alone kept them apart);
    /// in Unicode's composed form (NFC), as the standard library hashes strings, so an import's
    /// identity that ends in it (`personal`) is one text however the file encoded an accent ("Zoë"
    /// written e + U+0308 was another identity, and the drink was counted twice; a black-box trial).
    public static func nameKey(_ name: String) -> String {
        String(decoding: name.uppercased().lowercased()._nfcCodeUnits, as: UTF8.self)
    }

    /// The one of `people` called `name`: spelt exactly first (a history from before may hold
    /// two names the same but for case), else by `sameName`; nil when nobody is.
    public static func named(_ name: String, in people: [Person]) -> Person? {
        people.first { $0.name == name } ?? people.first { sameName($0.name, name) }
    }

    /// Why `name` cannot be a person's name, said whole (the name shown safely); nil when it can.
    public static func refusal(ofName name: String) -> String? {
        problem(withName: name).map { "'\(name.shownSafely(limit: 40))' cannot be a person's name: \($0)" }
    }

    /// What is wrong with `name` as a person's name, nil when it will do: it is
    /// typed after `--person`, shown in tables and becomes an MQTT topic level.
    public static func problem(withName name: String) -> String? {
        // Counted as the schema's CHECK counts (code points), so a name that passes here is stored.
        guard !name.isEmpty, name.unicodeScalars.count <= maximumNameLength else { return "a name of 1 to \(maximumNameLength) characters, please" }
        guard name == name.trimmingSpaces, !name.hasPrefix("-") else { return "a name neither starting with '-' nor with spaces around it" }
        guard !name.unicodeScalars.contains(where: { $0.isControlOrBidiOverride || "/+#,".unicodeScalars.contains($0) }) else {
            return "a name without control characters, '/', '+', '#' or ','"
        }
        // What bytes that were not UTF-8 became on the way in: the name typed is not this one.
        guard !name.unicodeScalars.contains("\u{FFFD}") else { return "a name in UTF-8 (it holds bytes that are not)" }
        return nil
    }
}

/// How many rows are someone's, for `quench people` and before removing them.
public struct PersonHoldings: Sendable, Hashable {
    /// Events, deleted ones included (they are history too, and can be restored).
    public var events: Int
    /// Of `events`, those deleted.
    public var deleted: Int
    public var devices: [String]
}

extension String {
    fileprivate var trimmingSpaces: String {
        var s = Substring(self)
        while s.first?.isWhitespace == true { s.removeFirst() }
        while s.last?.isWhitespace == true { s.removeLast() }
        return String(s)
    }
}

extension IntakeStore {
    static let personColumns = "id, name, units, created_at, alert_after_minutes, day_start_hour"

    static func person(_ row: SQLiteRow) throws -> Person {
        let unitText: String? = row[2]
        let alertAfter: Int? = row[4]
        let dayStart: Int? = row[5]
        return Person(id: row[0], name: row[1], units: unitText.flatMap(VolumeUnit.init(rawValue:)),
                      createdAt: Timestamp(secondsSince1970: row[3]), alertAfterMinutes: alertAfter, dayStartHour: dayStart)
    }

    /// Everyone, in the order they were added.
    public func people() throws(StoreError) -> [Person] {
        try read("reading the people") { db in try db.all("SELECT \(Self.personColumns) FROM person ORDER BY id", [], Self.person) }
    }

    /// The person of that name (names compare without regard to case); nil when there is none.
    public func person(named name: String) throws(StoreError) -> Person? {
        try read("reading person \(name.shownSafely(limit: 40))") { db in try Self.person(named: name, db) }
    }

    /// The person who was called `name` before a rename (compared as `sameName`), and nobody has been called since.
    public func person(formerlyNamed name: String) throws(StoreError) -> Person? {
        try read("reading who was called \(name.shownSafely(limit: 40))") { db in try Self.aliased(name, db) }
    }

    /// The person called `name`, else the one who was called so before a rename (a hub's events from a
    /// gateway that still knows the old name).
    static func personNamedOrAliased(_ name: String, _ db: SQLiteConnection) throws -> Person? {
        try person(named: name, db) ?? aliased(name, db)
    }

    /// Whose earlier name `name` is: spelt exactly first, else by `sameName` (SQLite's NOCASE folds only
    /// ASCII, so "ZOË" did not find "Zoë"'s). The table holds a name per rename: read whole.
    static func aliased(_ name: String, _ db: SQLiteConnection) throws -> Person? {
        let aliases = try db.all("SELECT name, person FROM person_alias ORDER BY name") { row -> (name: String, person: Int64) in (row[0], row[1]) }
        guard let alias = aliases.first(where: { $0.name == name }) ?? aliases.first(where: { Person.sameName($0.name, name) }) else { return nil }
        return try db.first("SELECT \(personColumns) FROM person WHERE id = ?", [alias.person], person)
    }

    /// Renames are noted as aliases: each name before stays its person's, and a name someone has now
    /// (in any case) is nobody's alias any more. Every rename goes through here (the command's, the hub roster's).
    static func noteRenames(_ renames: [(id: Int64, from: String, to: String)], _ db: SQLiteConnection) throws {
        for r in renames where r.from != r.to {
            try db.run("INSERT OR REPLACE INTO person_alias (name, person) VALUES (?, ?)", [r.from, r.id])
        }
        try dropAliases(renames.map(\.to), db)
    }

    /// Someone has these names now: they are nobody's earlier ones.
    static func dropAliases(_ names: [String], _ db: SQLiteConnection) throws {
        let aliases = try db.all("SELECT name FROM person_alias") { row -> String in row[0] }
        for alias in aliases where names.contains(where: { Person.sameName($0, alias) }) {
            try db.run("DELETE FROM person_alias WHERE name = ?", [alias])
        }
    }

    /// Compared as `Person.sameName` does: SQLite's NOCASE folds only ASCII, so
    /// "ZOË" was a second person beside "Zoë", whom no name could then reach. The
    /// index answers first (a NOCASE match is always the same name; the hub asks
    /// this for each event it holds); on a miss, everyone is compared in Swift, the
    /// name spelt exactly before one the same but for case (two such may exist in a
    /// history from before).
    static func person(named name: String, _ db: SQLiteConnection) throws -> Person? {
        if let indexed = try db.first("SELECT \(personColumns) FROM person WHERE name = ? COLLATE NOCASE", [name], person) {
            return indexed
        }
        return Person.named(name, in: try db.all("SELECT \(personColumns) FROM person ORDER BY id", [], person))
    }

    /// The person with that id; nil when there is none.
    public func person(id: Int64) throws(StoreError) -> Person? {
        try read("reading person \(id)") { db in try db.first("SELECT \(Self.personColumns) FROM person WHERE id = ?", [id], Self.person) }
    }

    /// Adds someone; a name already taken (in any case) is refused.
    @discardableResult
    public func addPerson(name: String, units: VolumeUnit? = nil, at time: Timestamp = .wallClockNow) throws(StoreError) -> Person {
        try checkName(name)
        return try write("adding person \(name.shownSafely(limit: 40))") { db in try Self.addPerson(name: name, units: units, at: time, db) }
    }

    static func addPerson(name: String, units: VolumeUnit?, at time: Timestamp, _ db: SQLiteConnection) throws -> Person {
        if let existing = try person(named: name, db) {
            throw StoreError(.invalidValue, path: nil, "there is already someone called \(existing.name.shownSafely(limit: 40))")
        }
        // Someone new with a renamed person's earlier name is themselves: the alias goes.
        try dropAliases([name], db)
        // Past everyone there is and ever was (v23): a removed person's id stays theirs.
        try db.run("""
            INSERT INTO person (id, name, units, created_at)
            VALUES (max(coalesce((SELECT max(id) FROM person), 0), coalesce((SELECT max(id) FROM person_retired), 0)) + 1, ?, ?, ?)
            """, [name, units?.rawValue, time.secondsSince1970])
        return Person(id: db.lastInsertedRowID, name: name, units: units, createdAt: time)
    }

    func checkName(_ name: String) throws(StoreError) {
        if let refusal = Person.refusal(ofName: name) { throw StoreError(.invalidValue, path: path, refusal) }
    }

    /// Renames someone; their history, goals, reminders and devices follow (they hold the id).
    public func renamePerson(id: Int64, to name: String) throws(StoreError) {
        try checkName(name)
        try write("renaming person \(id)") { db in
            if let other = try Self.person(named: name, db), other.id != id {
                throw StoreError(.invalidValue, path: path, "there is already someone called \(other.name.shownSafely(limit: 40))")
            }
            // The name before stays theirs as an alias (`personNamedOrAliased`); the new one is nobody's alias now.
            if let before = try db.first("SELECT name FROM person WHERE id = ?", [id], { row -> String in row[0] }) {
                try Self.noteRenames([(id, before, name)], db)
            }
            try db.run("UPDATE person SET name = ? WHERE id = ?", [name, id])
        }
    }

    /// Sets someone's units (nil: the household's setting).
    public func setPersonUnits(id: Int64, _ units: VolumeUnit?) throws(StoreError) {
        try write("setting the units of person \(id)") { db in
            try db.run("UPDATE person SET units = ? WHERE id = ?", [units?.rawValue, id])
        }
    }

    /// Sets the hour someone's days begin (nil: the household's).
    public func setPersonDayStart(id: Int64, hour: Int?) throws(StoreError) {
        if let hour, !Settings.dayStartHours.contains(hour) { throw StoreError(.invalidValue, path: path, "a day starts at an hour from 0 to 23, not \(hour)") }
        try write("setting when the days of person \(id) begin") { db in
            try db.run("UPDATE person SET day_start_hour = ? WHERE id = ?", [hour, id])
        }
    }

    /// Sets how long someone may go without a drink before the carer's view flags them (nil: not watched).
    /// - Parameter acknowledging: an alert still open about them, acknowledged in the same write (a
    ///   threshold turned off answers it); whether that took is returned.
    @discardableResult
    public func setPersonAlert(id: Int64, afterMinutes minutes: Int?,
                               acknowledging open: (lastDrink: String, at: Timestamp, lapsed: Timestamp?)? = nil) throws(StoreError) -> Bool {
        if let minutes, !Person.alertAfterRange.contains(minutes) {
            throw StoreError(.invalidValue, path: path, "a carer's threshold of \(Person.alertAfterRange.lowerBound) minutes to \(Person.alertAfterRange.upperBound / 60) hours, please (not \(minutes) minute\(minutes == 1 ? "" : "s"))")
        }
        return try write("setting the carer's threshold of person \(id)") { db in
            try db.run("UPDATE person SET alert_after_minutes = ? WHERE id = ?", [minutes, id])
            guard let open else { return false }
            return try Self.acknowledgeCarerAlert(db, person: id, lastDrink: open.lastDrink, at: open.at, lapsed: open.lapsed)
        }
    }

    /// What is someone's: their events (deleted ones too) and devices.
    public func holdings(of person: Int64) throws(StoreError) -> PersonHoldings {
        try read("reading what is someone's") { db in
            // Both counts in one pass over their events.
            let (events, deleted) = try db.first("SELECT COUNT(*), COALESCE(SUM(deleted), 0) FROM intake_event WHERE person = ?", [person]) {
                row -> (Int, Int) in (row[0], row[1])
            } ?? (0, 0)
            return PersonHoldings(events: events, deleted: deleted,
                                  devices: try db.all("SELECT address FROM device WHERE person = ? ORDER BY address", [person]) { row -> String in row[0] })
        }
    }

    /// Removes someone. Their events and devices go to `heir` when given; without
    /// an heir, someone who still has events or devices is refused, so nothing is
    /// ever lost. Their goals and reminder settings go with them. The last
    /// person stays: a history always has someone to belong to.
    public func removePerson(id: Int64, movingTo heir: Int64?) throws(StoreError) {
        try write("removing person \(id)") { db in
            let count = try db.first("SELECT COUNT(*) FROM person") { row -> Int in row[0] } ?? 0
            guard count > 1 else {
                throw StoreError(.invalidValue, path: path, "cannot remove the only person: the history must belong to someone (rename them instead)")
            }
            if let heir {
                guard heir != id else { throw StoreError(.invalidValue, path: path, "cannot move someone's history to themselves") }
                try db.run("UPDATE intake_event SET person = ? WHERE person = ?", [heir, id])
                try db.run("UPDATE device SET person = ? WHERE person = ?", [heir, id])
            } else {
                let events = try db.first("SELECT COUNT(*) FROM intake_event WHERE person = ?", [id]) { row -> Int in row[0] } ?? 0
                let devices = try db.first("SELECT COUNT(*) FROM device WHERE person = ?", [id]) { row -> Int in row[0] } ?? 0
                guard events == 0, devices == 0 else {
                    throw StoreError(.invalidValue, path: path, "they still have \(events) event\(events == 1 ? "" : "s") and \(devices) device\(devices == 1 ? "" : "s")")
                }
            }
            try db.run("DELETE FROM person WHERE id = ?", [id])
        }
    }

    /// Gives a paired device to someone: its future events are theirs; past events stay with whoever drank them.
    /// Returns false when no such device is paired.
    @discardableResult
    public func assignDevice(address: String, to person: Int64) throws(StoreError) -> Bool {
        try assignDevice(address: address, to: person, eventsSince: nil).paired
    }

    /// The same, and with `since` its events from then on (deleted ones too, so a restore stays
    /// theirs) become `person`'s too: a bottle someone else used today. In one transaction, and one
    /// statement for the events, so the outbox and the met-goal spans follow each row as they follow
    /// an edit. Events are found under any spelling of the address (`deviceLabel`'s). `moved`: how
    /// many changed hands (nil without `since`); `had`: how many it has from then on, whoever's.
    public func assignDevice(address: String, to person: Int64, eventsSince since: Timestamp?)
        throws(StoreError) -> (paired: Bool, moved: Int?, had: Int?) {
        try write("assigning device \(address.shownSafely(limit: 40))") { db in
            try db.run("UPDATE device SET person = ? WHERE address = ?", [person, address])
            let paired = db.changes > 0
            guard let since else { return (paired, nil, nil) }
            let had = try db.first("SELECT count(*) FROM intake_event WHERE upper(replace(device, '-', ':')) = ?1 AND time >= ?2",
                                   [address, since.secondsSince1970]) { row -> Int in row[0] } ?? 0
            try db.run("UPDATE intake_event SET person = ?1 WHERE upper(replace(device, '-', ':')) = ?2 AND time >= ?3 AND person IS NOT ?1",
                       [person, address, since.secondsSince1970])
            return (paired, db.changes, had)
        }
    }

    /// Each paired device's owner (absent: nobody yet).
    public func deviceOwners() throws(StoreError) -> [String: Int64] {
        try read("reading who has which device") { db in
            var owners: [String: Int64] = [:]
            try db.run("SELECT address, person FROM device WHERE person IS NOT NULL") { row in owners[row[0]] = row[1] }
            return owners
        }
    }
}

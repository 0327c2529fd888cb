import QuenchCore

/// How a remote command's id is kept: a drink it adds has the identity `mqtt|ID`.
public enum RemoteCommandID {
    public static let drinkPrefix = "mqtt|"
}

/// A command from outside (Home Assistant over MQTT) already carried out: its id,
/// what it did, and the event it changed.
public struct RemoteCommandRecord: Sendable, Hashable {
    public var id: String
    public var action: String
    public var event: Int64?
    public var doneAt: Timestamp
}

extension IntakeStore {
    /// Remote commands are remembered this long: a repeat (QoS 1) comes within seconds.
    public static let remoteCommandMemory = 7.0 * 86_400

    /// The command with this id, if it was carried out (an undo or a goal: a drink is known by its identity).
    public func remoteCommand(id: String) throws(StoreError) -> RemoteCommandRecord? {
        try read("reading remote commands") { db in try Self.remoteCommand(id: id, db) }
    }

    /// `deleteNewest` for a remote command: the delete and the record of the command in one
    /// transaction, so a repeat of the command finds it done (and returns nil with `alreadyDone`).
    /// An id used for something else (a drink, a goal, another person's undo) is refused: a Home Assistant
    /// trial's undo under a drink's id deleted another person's drink, and one under another's undo said
    /// "already deleted" of a drink not theirs. Records older than `remoteCommandMemory` are forgotten on the way.
    public func deleteNewest(person: Int64?, command: String, at now: Timestamp) throws(StoreError)
        -> (event: IntakeEvent?, alreadyDone: RemoteCommandRecord?) {
        try write("undoing the last event") { db in
            // Whose undo it was, kept with it: an undo that found nothing has no drink to say whose it was.
            let action = Self.undoAction + (person.map { ":\($0)" } ?? "")
            if let done = try Self.remoteCommand(id: command, db) {
                let event = try done.event.flatMap { try Self.event(id: $0, db) }
                // Recorded before persons were kept with an undo: whose drink it deleted says whose it was.
                let whose = done.action == Self.undoAction
                    ? try done.event.flatMap { id in try db.first("SELECT person FROM intake_event WHERE id = ?", [id]) { row -> Int64? in row[0] } ?? nil }.map { Self.undoAction + ":\($0)" }
                    : done.action
                guard done.action.hasPrefix(Self.undoAction), whose == nil || whose == action else {
                    throw Self.usedBefore(command, for: done.action.hasPrefix(Self.undoAction) ? "another person's undo" : "a goal")
                }
                return (event, done)
            }
            try Self.refuseIfADrinksID(command, db)
            let event = try Self.deleteNewest(person: person, db)
            try Self.record(command, action: action, event: event?.id, at: now, db)
            return (event, nil)
        }
    }

    /// `setGoal` for a remote command, with its record in one transaction: the same command again changes
    /// nothing (returns what it did), so a goal sent again late does not undo a later one (a trial's did).
    /// Its id used for anything else, another amount or another person's goal too, is refused, as a drink's is.
    public func setGoal(ml: Double, from day: CivilDay, setAt: Timestamp, person: Int64?, command: String) throws(StoreError) -> RemoteCommandRecord? {
        try write("setting the goal") { db in
            let action = "goal:\(try Self.personOrFirst(person, db)):\(day.description):\((ml * 10).rounded() / 10)"
            if let done = try Self.remoteCommand(id: command, db) {
                guard done.action == action else {
                    throw Self.usedBefore(command, for: done.action.hasPrefix(Self.undoAction) ? "an undo" : "another goal")
                }
                return done
            }
            try Self.refuseIfADrinksID(command, db)
            try Self.setGoal(ml: ml, from: day, setAt: setAt, person: person, db)
            try Self.record(command, action: action, event: nil, at: setAt, db)
            return nil
        }
    }

    static let undoAction = "undo"

    /// Keeps a command carried out, forgetting those older than `remoteCommandMemory` on the way.
    static func record(_ command: String, action: String, event: Int64?, at now: Timestamp, _ db: SQLiteConnection) throws {
        try db.run("DELETE FROM remote_command WHERE done_at < ?", [now.secondsSince1970 - Self.remoteCommandMemory])
        try db.run("INSERT INTO remote_command (id, action, event, done_at) VALUES (?, ?, ?, ?)", [command, action, event, now.secondsSince1970])
    }

    /// Refuses a drink's id (`mqtt|ID`) that an undo or a goal was carried out under: the id names that command.
    public func refuseIfACommandsID(drinkIdentity identity: String) throws(StoreError) {
        guard identity.hasPrefix(RemoteCommandID.drinkPrefix) else { return }
        let command = String(identity.dropFirst(RemoteCommandID.drinkPrefix.count))
        try read("reading remote commands") { db in
            if let done = try Self.remoteCommand(id: command, db) {
                throw Self.usedBefore(command, for: done.action.hasPrefix(Self.undoAction) ? "an undo" : "a goal")
            }
        }
    }

    static func remoteCommand(id: String, _ db: SQLiteConnection) throws -> RemoteCommandRecord? {
        try db.first("SELECT id, action, event, done_at FROM remote_command WHERE id = ?", [id]) { row in
            RemoteCommandRecord(id: row[0], action: row[1], event: row[2], doneAt: Timestamp(secondsSince1970: row[3]))
        }
    }

    /// A drink added by a remote command carries its id (`mqtt|ID`): the id names that drink.
    static func refuseIfADrinksID(_ command: String, _ db: SQLiteConnection) throws {
        if let drink = try db.first("SELECT id FROM intake_event WHERE identity = ?", [RemoteCommandID.drinkPrefix + command], { row -> Int64 in row[0] }) {
            throw usedBefore(command, for: "drink #\(drink)")
        }
    }

    static func usedBefore(_ command: String, for what: String) -> StoreError {
        StoreError(.invalidValue, path: nil, "the id '\(command.shownSafely(limit: 80))' was already used for \(what): each command needs an id of its own")
    }

    /// The event with this identity (live or deleted), if there is one.
    public func event(identity: String) throws(StoreError) -> IntakeEvent? {
        try read("reading an event") { db in
            guard let id = try db.first("SELECT id FROM intake_event WHERE identity = ?", [identity], { row -> Int64 in row[0] }) else {
                return nil
            }
            return try Self.event(id: id, db)
        }
    }

    /// Everything a person ever drank (live sips, every day), in mL: Home Assistant's lifetime counter.
    public func lifetimeIntake(person: Int64?) throws(StoreError) -> Double {
        try read("adding up the lifetime intake") { db in
            let sql = person == nil
                ? "SELECT total(ml) FROM intake_event WHERE kind = 'sip' AND deleted = 0"
                : "SELECT total(ml) FROM intake_event INDEXED BY intake_event_person_live_sip WHERE kind = 'sip' AND deleted = 0 AND person = ?"
            return try db.first(sql, person.map { [$0] } ?? []) { row -> Double in row[0] } ?? 0
        }
    }
}

extension IntakeStore {
    /// The `last_reset` last published for each person (`mqtt_last_reset`): the day start it
    /// stands for and its text. The publisher never sends an earlier one.
    public func heldLastResets() throws(StoreError) -> [Int64: (dayStart: Timestamp, text: String)] {
        try read("reading the published last_reset") { db in
            var held: [Int64: (dayStart: Timestamp, text: String)] = [:]
            for (person, start, text) in try db.all("SELECT person, day_start, text FROM mqtt_last_reset", [], { row -> (Int64, Double, String) in
                (row[0], row[1], row[2])
            }) {
                held[person] = (Timestamp(secondsSince1970: start), text)
            }
            return held
        }
    }

    /// Remembers the `last_reset` published for `person`, once a day per person.
    public func holdLastReset(person: Int64, dayStart: Timestamp, text: String) throws(StoreError) {
        try write("remembering the published last_reset") { db in
            try db.run("INSERT INTO mqtt_last_reset (person, day_start, text) VALUES (?, ?, ?) "
                       + "ON CONFLICT (person) DO UPDATE SET day_start = excluded.day_start, text = excluded.text",
                       [person, dayStart.secondsSince1970, text])
        }
    }
}

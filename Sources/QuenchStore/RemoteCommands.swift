import QuenchCore

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

    /// The command with this id, if it was carried out.
    public func remoteCommand(id: String) throws(StoreError) -> RemoteCommandRecord? {
        try read("reading remote commands") { db in
            try db.first("SELECT id, action, event, done_at FROM remote_command WHERE id = ?", [id]) { row in
                RemoteCommandRecord(id: row[0], action: row[1], event: row[2], doneAt: Timestamp(secondsSince1970: row[3]))
            }
        }
    }

    /// `deleteNewest` for a remote command: the delete and the record of the command in one
    /// transaction, so a repeat of the command finds it done (and returns nil with `alreadyDone`).
    /// Records older than `remoteCommandMemory` are forgotten on the way.
    public func deleteNewest(person: Int64?, command: String, at now: Timestamp) throws(StoreError)
        -> (event: IntakeEvent?, alreadyDone: RemoteCommandRecord?) {
        try write("undoing the last event") { db in
            if let done = try db.first("SELECT id, action, event, done_at FROM remote_command WHERE id = ?", [command], { row in
                RemoteCommandRecord(id: row[0], action: row[1], event: row[2], doneAt: Timestamp(secondsSince1970: row[3]))
            }) {
                return (try done.event.flatMap { try Self.event(id: $0, db) }, done)
            }
            try db.run("DELETE FROM remote_command WHERE done_at < ?", [now.secondsSince1970 - Self.remoteCommandMemory])
            let event = try Self.deleteNewest(person: person, db)
            try db.run("INSERT INTO remote_command (id, action, event, done_at) VALUES (?, 'undo', ?, ?)",
                       [command, event?.id, now.secondsSince1970])
            return (event, nil)
        }
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

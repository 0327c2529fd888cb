import QuenchCore

/// One change to the history waiting to be published (table `mqtt_outbox`).
public struct OutboxEntry: Sendable, Hashable {
    /// The change's place in the outbox: publication order.
    public var seq: Int64
    public var identity: String
    /// `new`, `deleted`, `restored` or `changed` (time or volume) for an event;
    /// `reminder` for a reminder given (identity `reminder`).
    public var change: String
    /// When the change was made.
    public var at: Timestamp
    /// The event as it is now; nil when it is no longer in the history.
    public var event: IntakeEvent?
    /// A reminder's: whose (the person's id) and its message as it was when given
    /// (nil for a row from before they were kept).
    public var person: Int64? = nil
    public var payload: String? = nil
}

/// This database's MQTT ids (table `mqtt_identity`).
public struct MQTTIdentity: Sendable, Hashable {
    /// Random, made with the database: a consumer keys repeats on it and `seq`.
    public var databaseID: String
    /// Random, for a machine with no /etc/machine-id.
    public var nodeID: String
    /// The node id this database's `quench mqtt run` last said `online` under (nil: none yet, or restored since).
    public var publishedNode: String? = nil
}

/// A process holding a role on this database (table `process_role`): `mqtt`, the
/// one publisher; `gateway`, the one whose device links are recorded.
public struct ProcessHolder: Sendable, Hashable {
    public var pid: Int32
    /// The process's start time (clock ticks since boot, /proc/PID/stat): a reused pid is not the holder.
    public var started: Int64
    /// What it is: `quench mqtt run`, `quench mqtt sync`, `quench run --mqtt`.
    public var command: String
    public var since: Timestamp

    public init(pid: Int32, started: Int64, command: String, since: Timestamp) {
        self.pid = pid
        self.started = started
        self.command = command
        self.since = since
    }
}

public struct OutboxStatus: Sendable, Hashable {
    public var enabled: Bool
    public var pending: Int
    /// Rows dropped because the outbox was full (its oldest go first).
    public var dropped: Int
    public var bound: Int
    public var oldest: Timestamp?
}

extension IntakeStore {
    /// Starts (or stops) entering changes in the outbox; `bound` rows at most.
    public func setOutbox(enabled: Bool, bound: Int? = nil) throws(StoreError) {
        if let bound, bound < 1 { throw StoreError(.invalidValue, path: path, "the outbox bound must be at least 1, not \(bound)") }
        try write("setting up the MQTT outbox") { db in
            try db.run("UPDATE mqtt_outbox_state SET enabled = ?, bound = coalesce(?, bound) WHERE id = 1",
                       [enabled ? 1 : 0, bound.map(Int64.init)])
        }
    }

    /// Up to `limit` entries after `seq`, oldest first, each with its event as it is now.
    public func outbox(after seq: Int64, limit: Int) throws(StoreError) -> [OutboxEntry] {
        try read("reading the MQTT outbox") { db in
            var entries: [OutboxEntry] = []
            try db.run("SELECT seq, identity, change, at, person, payload FROM mqtt_outbox WHERE seq > ? ORDER BY seq LIMIT ?",
                       [seq, Int64(limit)]) { row in
                entries.append(OutboxEntry(seq: row[0], identity: row[1], change: row[2], at: Timestamp(secondsSince1970: row[3]), event: nil,
                                           person: row[4], payload: row[5]))
            }
            for i in entries.indices where entries[i].change != "reminder" {
                entries[i].event = try db.first("SELECT \(Self.eventColumns) FROM intake_event WHERE identity = ?", [entries[i].identity], Self.event)
            }
            return entries
        }
    }

    /// Acknowledged changes kept to answer a hub (`mqtt_published`), at most.
    public static let publishedKept: Int64 = 100_000

    /// The broker acknowledged everything up to `seq`: those rows go, and which
    /// event each changed is kept (the last `publishedKept`). Returns how many went.
    @discardableResult
    public func acknowledgeOutbox(through seq: Int64) throws(StoreError) -> Int {
        try write("acknowledging MQTT outbox entries") { db in
            try db.run("INSERT OR IGNORE INTO mqtt_published (seq, identity) SELECT seq, identity FROM mqtt_outbox WHERE seq <= ?", [seq])
            try db.run("DELETE FROM mqtt_outbox WHERE seq <= ?", [seq])
            let gone = db.changes
            try db.run("DELETE FROM mqtt_published WHERE seq <= (SELECT max(seq) FROM mqtt_published) - ?", [Self.publishedKept])
            return gone
        }
    }

    /// The number of the last change that entered the outbox (nil: none yet): SQLite's
    /// AUTOINCREMENT counter, which outlives the rows acknowledged and deleted.
    static func lastOutboxChange(_ db: SQLiteConnection) throws -> Int64? {
        try db.first("SELECT seq FROM sqlite_sequence WHERE name = 'mqtt_outbox'") { row -> Int64 in row[0] }
    }

    /// This database's MQTT ids.
    public func mqttIdentity() throws(StoreError) -> MQTTIdentity {
        try read("reading the MQTT ids") { db in
            guard let id = try db.first("SELECT database_id, node_id, published_node FROM mqtt_identity WHERE id = 1", [], { row in
                MQTTIdentity(databaseID: row[0], nodeID: row[1], publishedNode: row[2])
            }) else { throw StoreError(.invalidValue, path: path, "the table mqtt_identity has no row") }
            return id
        }
    }

    /// Who holds `role` now (it may have died since: see `claimRole`).
    public func roleHolder(_ role: String) throws(StoreError) -> ProcessHolder? {
        try read("reading who holds \(role)") { db in try Self.roleHolder(role, db) }
    }

    static func roleHolder(_ role: String, _ db: SQLiteConnection) throws -> ProcessHolder? {
        try db.first("SELECT pid, started, command, since FROM process_role WHERE role = ?", [role]) { row in
            ProcessHolder(pid: Int32(truncatingIfNeeded: row[0] as Int64), started: row[1], command: row[2],
                          since: Timestamp(secondsSince1970: row[3]))
        }
    }

    /// Takes `role` unless another holder is still running (`isRunning` says, from
    /// its pid and start time): returns that holder then, nil once `me` holds it.
    /// A holder that was killed is replaced.
    public func claimRole(_ role: String, _ me: ProcessHolder, isRunning: (ProcessHolder) -> Bool) throws(StoreError) -> ProcessHolder? {
        try write("claiming \(role)") { db in
            let holder = try Self.roleHolder(role, db)
            if let other = holder, other.pid != me.pid || other.started != me.started, isRunning(other) { return other }
            // Held already by `me` (a gateway waiting for a pairing claims it each turn): nothing to write,
            // and nothing to wake the pages with.
            if let holder, holder.pid == me.pid, holder.started == me.started, holder.command == me.command { return nil }
            try db.run("INSERT OR REPLACE INTO process_role (role, pid, started, command, since) VALUES (?, ?, ?, ?, ?)",
                       [role, Int64(me.pid), me.started, me.command, me.since.secondsSince1970])
            return nil
        }
    }

    /// `me` lets `role` go (nothing when another holds it).
    public func releaseRole(_ role: String, _ me: ProcessHolder) throws(StoreError) {
        try write("releasing \(role)") { db in
            try db.run("DELETE FROM process_role WHERE role = ? AND pid = ? AND started = ?", [role, Int64(me.pid), me.started])
        }
    }

    /// The gateway's link to a device came up or went down.
    public func recordLink(address: String, up: Bool, at time: Timestamp) throws(StoreError) {
        try write("recording the link to \(address)") { db in
            try db.run("UPDATE device SET link_up = ?, link_changed_at = ?, last_seen_at = CASE WHEN ? = 1 THEN ? ELSE last_seen_at END WHERE address = ?",
                       [up ? 1 : 0, time.secondsSince1970, up ? 1 : 0, time.secondsSince1970, address])
        }
    }

    /// The gateway starts: no link is up yet (a gateway that crashed left them as they were).
    public func clearLinks(at time: Timestamp) throws(StoreError) {
        try write("clearing the device links") { db in
            try db.run("UPDATE device SET link_up = 0, link_changed_at = ? WHERE link_up = 1", [time.secondsSince1970])
        }
    }

    /// Each device's link as the gateway last recorded it (absent: never recorded).
    public func deviceLinks() throws(StoreError) -> [String: Bool] {
        try read("reading device links") { db in
            var links: [String: Bool] = [:]
            try db.run("SELECT address, link_up FROM device WHERE link_up IS NOT NULL") { row in
                links[row[0]] = (row[1] as Int) == 1
            }
            return links
        }
    }

    /// Discovery topics published so far, with what each describes (a device address, or "gateway").
    public func announcedTopics() throws(StoreError) -> [String: String] {
        try read("reading announced topics") { db in
            var topics: [String: String] = [:]
            try db.run("SELECT topic, owner FROM mqtt_announced") { row in topics[row[0]] = row[1] }
            return topics
        }
    }

    public func setAnnounced(_ topics: [String: String]) throws(StoreError) {
        try write("recording announced topics") { db in
            try db.run("DELETE FROM mqtt_announced")
            for (topic, owner) in topics { try db.run("INSERT INTO mqtt_announced (topic, owner) VALUES (?, ?)", [topic, owner]) }
        }
    }

    public func outboxStatus() throws(StoreError) -> OutboxStatus {
        try read("reading the MQTT outbox") { db in
            let (enabled, bound, dropped) = try db.first("SELECT enabled, bound, dropped FROM mqtt_outbox_state WHERE id = 1") { row -> (Bool, Int, Int) in
                (row[0] as Int == 1, row[1], row[2])
            } ?? (false, 0, 0)
            let pending = try db.first("SELECT COUNT(*) FROM mqtt_outbox") { row -> Int in row[0] } ?? 0
            let oldest = try db.first("SELECT at FROM mqtt_outbox ORDER BY seq LIMIT 1") { row -> Double in row[0] }
            return OutboxStatus(enabled: enabled, pending: pending, dropped: dropped, bound: bound,
                                oldest: oldest.map { Timestamp(secondsSince1970: $0) })
        }
    }
}

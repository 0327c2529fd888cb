import QuenchCore

/// One change to a gateway's history as the hub receives it (docs/hub.md): the
/// event as it is now at the gateway (nil when it is no longer in its history),
/// named by the gateway's database id and the change's place in its outbox.
public struct GatewayChange: Sendable, Hashable {
    public var databaseID: String
    /// The gateway's node id (its topic level), for the status.
    public var node: String
    public var seq: Int64
    public var identity: String
    public var event: IntakeEvent?

    /// A change number that is no event's: a reminder the gateway gave (`quench/NODE/person/ID/reminder`).
    /// Noted, so that it is not a gap asked for; nothing is applied.
    public static func numberOnly(databaseID: String, node: String, seq: Int64) -> GatewayChange {
        GatewayChange(databaseID: databaseID, node: node, seq: seq, identity: "", event: nil)
    }
    public var isNumberOnly: Bool { identity.isEmpty }

    public init(databaseID: String, node: String, seq: Int64, identity: String, event: IntakeEvent?) {
        self.databaseID = databaseID
        self.node = node
        self.seq = seq
        self.identity = identity
        self.event = event
    }
}

/// What the hub did with one change.
public enum HubOutcome: String, Sendable, Hashable {
    /// The history now holds the event as the change says.
    case applied
    /// This change, or a later one to the same event, was applied before (a QoS 1 repeat).
    case repeated
}

/// A gateway as the hub knows it (table `hub_gateway`).
public struct HubGateway: Sendable, Hashable, Encodable {
    public var databaseID: String
    public var node: String
    /// Every change up to this one is applied.
    public var throughSeq: Int64
    /// The highest change seen; above `throughSeq`, some are missing.
    public var highestSeq: Int64
    public var applied: Int64
    public var seenAt: Timestamp
    /// Whether the hub has had every event the gateway held, from an answer with all of them: its changes
    /// tell only what changed once its publisher ran, so what it held before comes in no change.
    public var wholeHistory: Bool

    /// Changes between `throughSeq` and `highestSeq` the hub has not had, or the history from before them.
    public var missing: Bool { highestSeq > throughSeq || !wholeHistory }

    /// The database last heard at each node, by node: one it replaced (restored from a backup, a new
    /// card) answers no more, and is not asked.
    public static func current(_ gateways: [HubGateway]) -> [HubGateway] {
        Dictionary(gateways.map { ($0.node, $0) }, uniquingKeysWith: { $0.seenAt >= $1.seenAt ? $0 : $1 }).values.sorted { $0.node < $1.node }
    }

    /// The nodes to ask for what the hub lacks: the database last heard at each, when it lacks something and its
    /// publisher is `online` (a publisher's session is clean: a request to one offline, or retired, is lost,
    /// and one coming online is asked then); and every node online the hub has had nothing from (one asked
    /// once as it came online, whose answer never came, was not asked again).
    public static func lacking(_ gateways: [HubGateway], online: Set<String>) -> [String] {
        let heard = Set(gateways.map(\.node))
        return (current(gateways).filter { $0.missing && online.contains($0.node) }.map(\.node) + online.subtracting(heard)).sorted()
    }

    private enum CodingKeys: String, CodingKey {
        case databaseID = "databaseId", node, throughSeq, highestSeq, applied, seenAt, missing, wholeHistory
    }

    /// As every JSON the commands print: a time in ISO 8601 (it was `{"seconds_since1970": …}`).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(databaseID, forKey: .databaseID)
        try c.encode(node, forKey: .node)
        try c.encode(throughSeq, forKey: .throughSeq)
        try c.encode(highestSeq, forKey: .highestSeq)
        try c.encode(applied, forKey: .applied)
        try c.encode(seenAt.iso8601, forKey: .seenAt)
        try c.encode(missing, forKey: .missing)
        try c.encode(wholeHistory, forKey: .wholeHistory)
    }
}

extension IntakeStore {
    /// Applies gateways' changes in one transaction, each at most once: a change
    /// is applied when the hub holds no change to that event, or an older one
    /// from the same gateway. Events are matched by identity, people by name
    /// (someone the hub does not know is added).
    public func applyGatewayChanges(_ changes: [GatewayChange], at now: Timestamp = .wallClockNow) throws(StoreError) -> [HubOutcome] {
        try checkIntake(changes.compactMap(\.event), "applying \(changes.count) gateway change\(changes.count == 1 ? "" : "s")")
        return try write("applying \(changes.count) gateway change\(changes.count == 1 ? "" : "s")") { db in
            try changes.map { change in
                try Self.noteGateway(change.databaseID, node: change.node, seq: change.seq, at: now, db)
                guard !change.isNumberOnly else { return .repeated }
                try Self.noteSensorDrink(change.event, from: change.databaseID, db)
                let applied = try Self.apply(change.identity, change.event, from: change.databaseID, as: change.seq,
                                             unlessHeld: { $0 >= change.seq }, db)
                guard applied else { return .repeated }
                try db.run("UPDATE hub_gateway SET applied = applied + 1 WHERE database_id = ?", [change.databaseID])
                return .applied
            }
        }
    }

    /// Part of a gateway's recent history as of its change `through` (its answer to
    /// the hub's request): each event is applied unless the hub holds a later
    /// change to it. With the answer's last part (`complete`), every change up to
    /// `through` counts as had, when the answer starts at or before the first the hub
    /// lacks (`fromSeq`, what the hub asked from; nil from a gateway that did not say);
    /// `whole`: every event it holds (nil, from a gateway that did not say: taken as so,
    /// or it is asked forever). `knownBefore`: the hub had heard this database before
    /// the answer's first part.
    public func applyGatewaySnapshot(databaseID: String, node: String, through: Int64, events: [IntakeEvent], complete: Bool,
                                     fromSeq: Int64? = nil, whole: Bool? = nil, knownBefore: Bool = true,
                                     at now: Timestamp = .wallClockNow) throws(StoreError) -> Int {
        try checkIntake(events, "applying a gateway's \(events.count) events")
        return try write("applying a gateway's \(events.count) events") { db in
            let (had, wasWhole) = try db.first("SELECT through_seq, whole_history FROM hub_gateway WHERE database_id = ?", [databaseID]) {
                row -> (Int64, Bool) in (row[0], row[1])
            } ?? (0, false)
            try Self.noteGateway(databaseID, node: node, seq: nil, at: now, db)
            // What the hub holds of a gateway whose every change it has had is as those changes left it, an edit
            // made at the hub included: only what it lacks is added. So too when it asked a gateway it knew for
            // everything (its history from before its first change, or once after the upgrade to v28): the
            // changes between are then asked for as a gap (the v28 upgrade reverted amounts mended at the hub).
            // (Once: a gateway asked about another database answers from 0 too, and a whole answer each time kept the gap open.)
            let askedEverything = whole == true && fromSeq == 0 && knownBefore && !wasWhole
            let onlyLacking = had >= through || askedEverything
            var applied = 0
            for event in events {
                try Self.noteSensorDrink(event, from: databaseID, db)
                if try Self.apply(event.identity, event, from: databaseID, as: through, unlessHeld: { onlyLacking || $0 > through }, db) {
                    applied += 1
                }
            }
            try db.run("UPDATE hub_gateway SET applied = applied + ? WHERE database_id = ?", [Int64(applied), databaseID])
            if complete, askedEverything, had < through {
                try db.run("UPDATE hub_gateway SET highest_seq = max(highest_seq, ?1), whole_history = 1 WHERE database_id = ?2",
                           [through, databaseID])
            } else if complete {
                let whole = whole ?? true
                if whole || (fromSeq ?? 0) <= had + 1 {
                    // The gateway's own word on its latest change: a number above it came from before its database
                    // was restored from a backup, or was never its (one kept would be asked for forever). Its answer
                    // comes after every change it sent before it, on one connection: none it sent is above it.
                    try db.run("""
                        UPDATE hub_gateway SET through_seq = max(through_seq, ?1), highest_seq = max(through_seq, ?1),
                            whole_history = max(whole_history, ?3)
                        WHERE database_id = ?2
                        """, [through, databaseID, whole])
                }
            }
            return applied
        }
    }

    /// A gateway's answer to a hub that has every change before `fromSeq`: the
    /// events changed from it on, as they are now, when this database still knows
    /// which they were (every change number from `fromSeq` kept, published or not);
    /// else every event (`whole`). Read in one transaction with the latest change
    /// number, `through`, so the two agree. In the order of time, then id: only those
    /// after `after`, and at most `limit` (`more`: some are left for the next window).
    public func gatewayAnswer(fromSeq: Int64, after: EventQuery.LogPosition? = nil, limit: Int? = nil) throws(StoreError)
        -> (through: Int64, whole: Bool, events: [IntakeEvent], more: Bool) {
        try read("reading the history for a hub") { db in
            let through = try Self.lastOutboxChange(db) ?? 0
            guard fromSeq <= through else { return (through, false, [], false) }
            let kept = try db.first("""
                SELECT (SELECT COUNT(*) FROM mqtt_published WHERE seq BETWEEN ?1 AND ?2) + (SELECT COUNT(*) FROM mqtt_outbox WHERE seq BETWEEN ?1 AND ?2)
                """, [fromSeq, through]) { row -> Int64 in row[0] } ?? 0
            let whole = fromSeq < 1 || kept != through - fromSeq + 1
            let changed = whole ? "" : """
                identity IN (SELECT identity FROM mqtt_published WHERE seq >= ?4 UNION SELECT identity FROM mqtt_outbox WHERE seq >= ?4) AND
                """
            // One more than the window, to know whether it ends the answer.
            let read = limit.map { $0 < Int.max ? $0 + 1 : -1 } ?? -1
            var events = try db.all("""
                SELECT \(Self.eventColumns) FROM intake_event
                WHERE \(changed) (?1 IS NULL OR time > ?1 OR (time = ?1 AND id > ?2))
                ORDER BY time, id LIMIT ?3
                """, [after?.time.secondsSince1970, after?.id, read] + (whole ? [] : [fromSeq]), Self.event)
            let more = limit.map { events.count > $0 } ?? false
            if more { events.removeLast() }
            return (through, whole, events, more)
        }
    }

    /// Records what a gateway's availability topic says (`online` or not), and since when: kept from the
    /// first time it says so, not moved by the same word again (the broker repeats the retained one).
    /// `online` nil: the topic was cleared (the gateway retired), and it is forgotten. False, and
    /// nothing kept, when `node` is this database's own publisher (`publishedNode`), which is no gateway.
    @discardableResult
    public func noteAvailability(node: String, online: Bool?, at time: Timestamp) throws(StoreError) -> Bool {
        try write("noting whether gateway \(node.shownSafely(limit: 40)) is online") { db in
            try Self.noteNodeWord(table: "hub_node_availability", column: "online", node: node, online, at: time, db) || online == nil
        }
    }

    /// A gateway's yes or no on a retained topic (its publisher online, its Bluetooth service running), kept with
    /// when it was first said; nil (the topic cleared) or this database's own publisher: forgotten. Whether kept.
    private static func noteNodeWord(table: String, column: String, node: String, _ word: Bool?, at time: Timestamp,
                                     _ db: SQLiteConnection) throws -> Bool {
        guard let word, try !isOwnPublisher(node, db) else {
            try db.run("DELETE FROM \(table) WHERE node = ?", [node])
            return false
        }
        try db.run("""
            INSERT INTO \(table) (node, \(column), since) VALUES (?1, ?2, ?3)
            ON CONFLICT (node) DO UPDATE SET \(column) = excluded.\(column), since = excluded.since WHERE \(column) <> excluded.\(column)
            """, [node, word, time.secondsSince1970])
        return true
    }

    /// Records what a gateway's publisher says of its Bluetooth service (`quench/NODE/gateway`: running or not), and
    /// since when, kept from the first time it says so; nil: the topic was cleared (retired), forgotten. Nothing of
    /// this database's own publisher.
    public func noteGatewayBluetooth(node: String, running: Bool?, at time: Timestamp) throws(StoreError) {
        try write("noting whether gateway \(node.shownSafely(limit: 40))'s Bluetooth service runs") { db in
            _ = try Self.noteNodeWord(table: "hub_gateway_bluetooth", column: "running", node: node, running, at: time, db)
        }
    }

    /// The gateways whose publisher is online but whose Bluetooth service is not running, and since when; only those
    /// that sent a sensor's drink since `sensorsSince` (a gateway with no bottle, typing drinks only, has no service to miss).
    public func gatewaysWithoutBluetooth(sensorsSince: Timestamp) throws(StoreError) -> [(node: String, since: Timestamp)] {
        try read("reading which gateways' Bluetooth services are down") { db in
            try db.all("""
                SELECT b.node, b.since FROM hub_gateway_bluetooth b
                WHERE b.running = 0 AND b.node IS NOT (SELECT published_node FROM mqtt_identity WHERE id = 1)
                  AND NOT EXISTS (SELECT 1 FROM hub_node_availability a WHERE a.node = b.node AND a.online = 0)
                  AND EXISTS (SELECT 1 FROM hub_gateway g WHERE g.node = b.node AND g.last_sensor_at >= ?)
                ORDER BY b.node
                """, [sensorsSince.secondsSince1970]) { row in (node: row[0] as String, since: Timestamp(secondsSince1970: row[1])) }
        }
    }

    /// Records whether the hub holds the broker now (connected, lost, or stopped), from when; the same
    /// word again keeps its time.
    public func noteHubLink(connected: Bool, at time: Timestamp) throws(StoreError) {
        try write("noting the hub's link to the broker") { db in
            try db.run("""
                INSERT INTO hub_link (id, connected, since) VALUES (1, ?1, ?2)
                ON CONFLICT (id) DO UPDATE SET connected = excluded.connected, since = excluded.since WHERE connected <> excluded.connected
                """, [connected, time.secondsSince1970])
        }
    }

    /// The hub's link as it last noted it; nil on a database no hub ran on (since v27).
    public func hubLink() throws(StoreError) -> (connected: Bool, since: Timestamp)? {
        try read("reading the hub's link to the broker") { db in
            try db.first("SELECT connected, since FROM hub_link WHERE id = 1") { row in
                (connected: row[0] as Bool, since: Timestamp(secondsSince1970: row[1]))
            }
        }
    }

    /// The nodes whose publisher says it is `online`.
    public func onlineGatewayNodes() throws(StoreError) -> Set<String> {
        try read("reading which gateways are online") { db in
            Set(try db.all("SELECT node FROM hub_node_availability WHERE online = 1") { row -> String in row[0] })
        }
    }

    /// The gateways whose publisher is gone (their availability says `offline`), and since when, by node;
    /// not this database's own publisher (noted as a gateway before it said which node it is).
    public func offlineGateways() throws(StoreError) -> [(node: String, since: Timestamp)] {
        try read("reading which gateways are offline") { db in
            try db.all("""
                SELECT node, since FROM hub_node_availability
                WHERE online = 0 AND node IS NOT (SELECT published_node FROM mqtt_identity WHERE id = 1) ORDER BY node
                """) { row in
                (node: row[0] as String, since: Timestamp(secondsSince1970: row[1]))
            }
        }
    }

    /// Who drank what gateway `node` sent since `since` (by its database, events by time), by name; `sensorsOnly`:
    /// from its bottles (a typed drink still arrives when its Bluetooth service is down).
    public func peopleHeard(through node: String, since: Timestamp, sensorsOnly: Bool = false) throws(StoreError) -> [String] {
        try read("reading whose drinks gateway \(node.shownSafely(limit: 40)) sent") { db in
            try db.all("""
                SELECT DISTINCT p.name FROM intake_event e
                JOIN hub_change c ON c.identity = e.identity JOIN hub_gateway g ON g.database_id = c.database_id
                JOIN person p ON p.id = e.person
                WHERE g.node = ? AND e.time >= ? AND e.deleted = 0 AND (? = 0 OR e.source = 'sensor') ORDER BY lower(p.name)
                """, [node, since.secondsSince1970, sensorsOnly]) { row -> String in row[0] }
        }
    }

    /// Says which node this database's own publisher (`quench mqtt run` on it) publishes as.
    public func notePublishedNode(_ node: String) throws(StoreError) {
        try write("noting the node this database publishes as") { db in
            try db.run("UPDATE mqtt_identity SET published_node = ? WHERE id = 1 AND published_node IS NOT ?", [node, node])
        }
    }

    static func isOwnPublisher(_ node: String, _ db: SQLiteConnection) throws -> Bool {
        try db.first("SELECT 1 FROM mqtt_identity WHERE id = 1 AND published_node = ?", [node]) { _ in true } ?? false
    }

    /// The gateways the hub has heard, by node.
    public func hubGateways() throws(StoreError) -> [HubGateway] {
        try read("reading the hub's gateways") { db in
            try db.all("""
                SELECT database_id, node, through_seq, highest_seq, applied, seen_at, whole_history FROM hub_gateway ORDER BY node, database_id
                """) { row in
                HubGateway(databaseID: row[0], node: row[1], throughSeq: row[2], highestSeq: row[3], applied: row[4],
                           seenAt: Timestamp(secondsSince1970: row[5]), wholeHistory: row[6])
            }
        }
    }

    /// Applies gateway `databaseID`'s event `identity` as its change `seq` says it is
    /// now, and records that change as the event's latest; not when the hub holds a
    /// change of that gateway to it that `held` says is as new (false then).
    static func apply(_ identity: String, _ event: IntakeEvent?, from databaseID: String, as seq: Int64,
                      unlessHeld held: (Int64) -> Bool, _ db: SQLiteConnection) throws -> Bool {
        let last = try db.first("SELECT database_id, seq FROM hub_change WHERE identity = ?", [identity]) { row -> (String, Int64) in
            (row[0], row[1])
        }
        if let (database, heldSeq) = last, database == databaseID, held(heldSeq) { return false }
        try holdAsChanged(identity, event, from: databaseID, db)
        try db.run("""
            INSERT INTO hub_change (identity, database_id, seq) VALUES (?, ?, ?)
            ON CONFLICT (identity) DO UPDATE SET database_id = excluded.database_id, seq = excluded.seq
            """, [identity, databaseID, seq])
        return true
    }

    /// The latest sensor's drink a gateway sent (`last_sensor_at`): whether its Bluetooth service is missed, read at once.
    static func noteSensorDrink(_ event: IntakeEvent?, from databaseID: String, _ db: SQLiteConnection) throws {
        guard let event, event.source == .sensor, !event.deleted else { return }
        try db.run("UPDATE hub_gateway SET last_sensor_at = max(coalesce(last_sensor_at, 0), ?) WHERE database_id = ?",
                   [event.time.secondsSince1970, databaseID])
    }

    /// Records that the gateway was heard, and `seq` seen from it: `through_seq` moves on
    /// only when nothing is missing before it. A gateway first heard here has not given
    /// its whole history (`whole_history` 0).
    static func noteGateway(_ databaseID: String, node: String, seq: Int64?, at now: Timestamp, _ db: SQLiteConnection) throws {
        try db.run("""
            INSERT INTO hub_gateway (database_id, node, through_seq, highest_seq, applied, seen_at, whole_history) VALUES (?1, ?2, 0, ?3, 0, ?4, 0)
            ON CONFLICT (database_id) DO UPDATE SET node = excluded.node, highest_seq = max(highest_seq, ?3), seen_at = excluded.seen_at
            """, [databaseID, node, seq ?? 0, now.secondsSince1970])
        guard let seq else { return }
        try db.run("UPDATE hub_gateway SET through_seq = ? WHERE database_id = ? AND through_seq = ? - 1", [seq, databaseID, seq])
    }

    /// Two gateways' events from one device, of one kind, starting this close
    /// together, are one drink heard twice (docs/hub.md#one-bottle-several-gateways).
    public static let sameDrinkSeconds = 10.0

    /// Makes the history hold `event` under `identity` as gateway `databaseID` has
    /// it now; nil: the gateway no longer has it, so it is deleted here too
    /// (undoable). A sensor's event that another gateway already reported is
    /// not stored again: it is one more estimate of that drink.
    static func holdAsChanged(_ identity: String, _ event: IntakeEvent?, from databaseID: String, _ db: SQLiteConnection) throws {
        var known = try db.first("SELECT drink FROM hub_estimate WHERE identity = ?", [identity]) { row -> String in row[0] }
        if known == nil, let event { known = try sameDrink(as: event, from: databaseID, db) }
        let drink = known ?? identity
        if let event, event.source == .sensor, event.device != nil {
            try db.run("""
                INSERT INTO hub_estimate (identity, drink, database_id, ml, live) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (identity) DO UPDATE SET ml = excluded.ml, live = excluded.live
                """, [identity, drink, databaseID, event.ml, !event.deleted])
        } else if event == nil {
            try db.run("UPDATE hub_estimate SET live = 0 WHERE identity = ?", [identity])
        }
        // The drink's amount: the mean of the gateways' live estimates; none left, deleted.
        let estimates = try db.first("SELECT COUNT(*), sum(live), avg(CASE WHEN live = 1 THEN ml END) FROM hub_estimate WHERE drink = ?", [drink]) { row -> (Int64, Int64?, Double?) in
            (row[0], row[1], row[2])
        }
        if drink == identity {
            // Heard by several gateways, whether it is deleted is all of theirs to say, below: one of them deleting its
            // copy forgot a carer's delete here, and the others' live estimates brought the drink back (a review).
            try hold(identity, event, deletionOfAll: (estimates?.0 ?? 0) > 1, db)
        }
        if let (count, live, mean) = estimates, count > 1 {
            let liveMean = (live ?? 0) > 0 ? mean : nil
            let deleted = try deletedKeepingLocal(drink, gateways: liveMean == nil, db)
            try db.run("UPDATE intake_event SET ml = coalesce(round(?1, 2), ml), deleted = ?2 WHERE identity = ?3", [liveMean, deleted, drink])
        }
    }

    /// At a hub, a drink the gateways sent that is deleted or restored here: remembered with what the gateways
    /// had (`hub_local_deletion`), so that their later changes to it keep the hub's choice (`deletedKeepingLocal`).
    /// Nothing on a gateway's own events, and nothing when it is back as the gateways have it.
    static func noteHubLocalDeletion(id: Int64, deleted: Bool, _ db: SQLiteConnection) throws {
        guard let (identity, was) = try db.first("""
            SELECT identity, deleted FROM intake_event e WHERE id = ?
              AND (EXISTS (SELECT 1 FROM hub_change c WHERE c.identity = e.identity) OR EXISTS (SELECT 1 FROM hub_estimate h WHERE h.drink = e.identity))
            """, [id], { row -> (String, Bool) in (row[0], row[1]) }), was != deleted else { return }
        try db.run("""
            INSERT INTO hub_local_deletion (identity, deleted, gateways_deleted) VALUES (?1, ?2, ?3)
            ON CONFLICT (identity) DO UPDATE SET deleted = excluded.deleted
            """, [identity, deleted, was])
        try db.run("DELETE FROM hub_local_deletion WHERE identity = ? AND deleted = gateways_deleted", [identity])
    }

    /// Whether drink `identity` is to be deleted when the gateways have it `gateways` (deleted or not): as the hub chose
    /// while they have not changed theirs since (a carer's delete stood until the gateway's next edit of the amount, and was
    /// undone without a word); as theirs once they deleted or restored it themselves, and the hub's choice is forgotten.
    static func deletedKeepingLocal(_ identity: String, gateways: Bool, _ db: SQLiteConnection) throws -> Bool {
        guard let (local, then) = try db.first("SELECT deleted, gateways_deleted FROM hub_local_deletion WHERE identity = ?", [identity],
                                               { row -> (Bool, Bool) in (row[0], row[1]) }) else { return gateways }
        if gateways == then { return local }
        try db.run("DELETE FROM hub_local_deletion WHERE identity = ?", [identity])
        return gateways
    }

    /// The drink another gateway reported from the same device, of the same kind,
    /// starting within `sameDrinkSeconds`, that has no estimate from this gateway yet.
    static func sameDrink(as event: IntakeEvent, from databaseID: String, _ db: SQLiteConnection) throws -> String? {
        guard event.source == .sensor, let device = event.device else { return nil }
        let t = event.time.secondsSince1970
        return try db.first("""
            SELECT e.identity FROM intake_event e JOIN hub_change c ON c.identity = e.identity
            WHERE e.device = ? AND e.kind = ? AND e.deleted = 0 AND e.time BETWEEN ? AND ? AND c.database_id <> ?
              AND NOT EXISTS (SELECT 1 FROM hub_estimate h WHERE h.drink = e.identity AND h.database_id = ?)
            ORDER BY abs(e.time - ?) LIMIT 1
            """, [device, event.kind.rawValue, t - sameDrinkSeconds, t + sameDrinkSeconds, databaseID, databaseID, t]) { row -> String in row[0] }
    }

    /// The event's row as the gateway has it (inserted, or its fields replaced).
    static func hold(_ identity: String, _ event: IntakeEvent?, deletionOfAll: Bool = false, _ db: SQLiteConnection) throws {
        guard var event else {
            if !deletionOfAll, try deletedKeepingLocal(identity, gateways: true, db) {
                try db.run("UPDATE intake_event SET deleted = 1 WHERE identity = ? AND deleted = 0", [identity])
            }
            return
        }
        // Whether it is held, and deleted so.
        let held = try db.first("SELECT deleted FROM intake_event WHERE identity = ?", [identity]) { row -> Bool in row[0] }
        let exists = held != nil
        // Their person by name, or by a name they had before a rename here (the gateway has not been told);
        // someone the hub does not know is added with a new event (a change to one held leaves its person).
        let person = try event.person.flatMap { (name) throws -> Person? in
            try personNamedOrAliased(name, db) ?? (exists ? nil : addPerson(name: name, units: nil, at: event.recordedAt, db))
        }
        if let person { event.person = person.name }
        guard exists else {
            _ = try insertRows([event], keepingIDs: false, db)
            return
        }
        event.deleted = deletionOfAll ? held ?? event.deleted : try deletedKeepingLocal(identity, gateways: event.deleted, db)
        try db.run("""
            UPDATE intake_event SET kind = ?, ml = ?, time = ?, remaining_ml = ?, note = ?, deleted = ?, person = coalesce(?, person)
            WHERE identity = ?
            """, [event.kind.rawValue, event.ml, event.time.secondsSince1970, event.remainingML, TextField.note.stored(event.note),
                  event.deleted, person?.id, identity])
    }
}

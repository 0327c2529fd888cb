import QuenchCore

/// A carer's alert (table `carer_alert`): someone went without a drink past their threshold
/// (`Person.alertAfterMinutes`) in their waking hours. There is one per dry spell, and the spell
/// is named by the drink before it (its identity), so a new drink ends it: raised once,
/// acknowledged once for the waking hours it is acknowledged in, however many timers, pages and
/// hubs look at the same database. Until it is acknowledged it is sent again each time the
/// threshold passes once more (`sends`); still going on in the next waking hours, it is open
/// again (`reopenCarerAlert`); each sending is claimed in the database too, and a sending whose
/// push failed is put back (`releaseCarerAlert`), so the next run sends it.
public struct CarerAlert: Sendable, Hashable {
    public var person: Int64
    /// The identity of the last drink before the spell; `CarerAlert.noDrink` when they had none.
    public var lastDrink: String
    public var raisedAt: Timestamp
    /// When a carer said they had seen it (the page, `quench carer ack`, Home Assistant); nil: not yet.
    public var acknowledgedAt: Timestamp?
    /// How many thresholds it was sent for: 1 when raised; 3 when last sent for three times the
    /// threshold without a drink (missed ones, a timer that did not run, are not sent twice).
    public var sends: Int
    /// When it was last sent: `raisedAt` until it is sent again.
    public var lastSentAt: Timestamp

    /// `lastDrink` of someone who never drank (an identity is never empty).
    public static let noDrink = ""

    /// The `lastDrink` that names the spell after `last` (nil: they never drank).
    public static func spell(after last: IntakeEvent?) -> String { last?.identity ?? noDrink }
}

extension IntakeStore {
    static func carerAlert(_ row: SQLiteRow) throws -> CarerAlert {
        let acknowledged: Double? = row[3], lastSent: Double? = row[5]
        let raised = Timestamp(secondsSince1970: row[2])
        return CarerAlert(person: row[0], lastDrink: row[1], raisedAt: raised,
                          acknowledgedAt: acknowledged.map(Timestamp.init(secondsSince1970:)), sends: row[4],
                          lastSentAt: lastSent.map(Timestamp.init(secondsSince1970:)) ?? raised)
    }

    /// The row of `person`'s spell since `lastDrink`, if one was raised.
    private static func carerAlert(_ db: SQLiteConnection, person: Int64, lastDrink: String) throws -> CarerAlert? {
        try db.first("SELECT person, last_drink, raised_at, acknowledged_at, sends, last_sent_at FROM carer_alert WHERE person = ? AND last_drink = ?",
                     [person, lastDrink], carerAlert)
    }

    /// Raises the alert of `person`'s spell since `lastDrink`, sent for `sends` thresholds (more than
    /// one when it is raised late): whether this call raised it (false: it was raised before, here or
    /// by another process; the table's key decides).
    public func raiseCarerAlert(person: Int64, lastDrink: String, at time: Timestamp, sends: Int = 1) throws(StoreError) -> Bool {
        try write("raising a carer's alert") { db in
            try db.run("INSERT INTO carer_alert (person, last_drink, raised_at, sends) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                       [person, lastDrink, time.secondsSince1970, max(sends, 1)])
            return db.changes == 1
        }
    }

    /// Claims the sending of `person`'s alert since `lastDrink` again at `time` for the thresholds it was sent for
    /// (`sends`): told again at new waking hours, as last sent at `lastSent`, not counted as a threshold. Whether this
    /// call claimed it (false: acknowledged, sent again, or claimed meanwhile, here or by another process).
    public func resendCarerAlert(person: Int64, lastDrink: String, sends: Int, lastSent: Timestamp, at time: Timestamp) throws(StoreError) -> Bool {
        try write("sending a carer's alert again in new waking hours") { db in
            try db.run("""
                UPDATE carer_alert SET last_sent_at = ?
                WHERE person = ? AND last_drink = ? AND acknowledged_at IS NULL AND sends = ? AND coalesce(last_sent_at, raised_at) = ?
                """, [time.secondsSince1970, person, lastDrink, sends, lastSent.secondsSince1970])
            return db.changes == 1
        }
    }

    /// Claims the sending of `person`'s alert since `lastDrink` again at `time`, for `next` thresholds
    /// after `sends`: whether this call claimed it (false: acknowledged meanwhile, or claimed already,
    /// here or by another process; the count decides).
    public func sendCarerAlertAgain(person: Int64, lastDrink: String, after sends: Int, for next: Int, at time: Timestamp) throws(StoreError) -> Bool {
        guard next > sends else { return false }
        return try write("sending a carer's alert again") { db in
            try db.run("""
                UPDATE carer_alert SET sends = ?, last_sent_at = ?
                WHERE person = ? AND last_drink = ? AND acknowledged_at IS NULL AND sends = ?
                """, [next, time.secondsSince1970, person, lastDrink, sends])
            return db.changes == 1
        }
    }

    /// Claims the sending again of `person`'s alert since `lastDrink` that a carer acknowledged at
    /// `acknowledged`, the spell still going on: it is open again, sent for `sends` thresholds.
    /// Whether this call claimed it (false: claimed already, here or by another process).
    public func reopenCarerAlert(person: Int64, lastDrink: String, acknowledged: Timestamp, sends: Int, at time: Timestamp) throws(StoreError) -> Bool {
        try write("sending an acknowledged carer's alert again") { db in
            try db.run("""
                UPDATE carer_alert SET acknowledged_at = NULL, sends = ?, last_sent_at = ?
                WHERE person = ? AND last_drink = ? AND acknowledged_at = ?
                """, [max(sends, 1), time.secondsSince1970, person, lastDrink, acknowledged.secondsSince1970])
            return db.changes == 1
        }
    }

    /// A sending claimed at `time` for `sends` thresholds that never reached the carer (the push
    /// failed): the alert is put back as it was before the claim (`before`; nil: it was raised by
    /// the claim, and goes), so the next run sends it again. Only while the row is still that
    /// claim's: one claimed or acknowledged since is left alone. Whether it was put back.
    public func releaseCarerAlert(person: Int64, lastDrink: String, sends: Int, at time: Timestamp, before: CarerAlert?) throws(StoreError) -> Bool {
        try write("putting back a carer's alert that was not delivered") { db in
            if let before {
                try db.run("""
                    UPDATE carer_alert SET sends = ?, last_sent_at = ?, acknowledged_at = ?
                    WHERE person = ? AND last_drink = ? AND acknowledged_at IS NULL AND sends = ? AND last_sent_at = ?
                    """, [before.sends, before.lastSentAt == before.raisedAt ? nil : before.lastSentAt.secondsSince1970,
                          before.acknowledgedAt?.secondsSince1970, person, lastDrink, sends, time.secondsSince1970])
            } else {
                try db.run("""
                    DELETE FROM carer_alert
                    WHERE person = ? AND last_drink = ? AND acknowledged_at IS NULL AND sends = ? AND raised_at = ? AND last_sent_at IS NULL
                    """, [person, lastDrink, max(sends, 1), time.secondsSince1970])
            }
            return db.changes == 1
        }
    }

    /// The alert of `person`'s spell since `lastDrink`, if one was raised.
    public func carerAlert(person: Int64, lastDrink: String) throws(StoreError) -> CarerAlert? {
        try read("reading a carer's alert") { db in try Self.carerAlert(db, person: person, lastDrink: lastDrink) }
    }

    /// Acknowledges the alert of `person`'s spell since `lastDrink`, once: an alert acknowledged
    /// before keeps its first time (`acknowledged` false), unless that acknowledgement is `lapsed`
    /// (given in waking hours now over: this one takes its place). Nil when no alert was raised for that spell.
    public func acknowledgeCarerAlert(person: Int64, lastDrink: String, at time: Timestamp, lapsed: Timestamp? = nil) throws(StoreError)
        -> (alert: CarerAlert, acknowledged: Bool)? {
        try write("acknowledging a carer's alert") { db in
            let acknowledged = try Self.acknowledgeCarerAlert(db, person: person, lastDrink: lastDrink, at: time, lapsed: lapsed)
            return try Self.carerAlert(db, person: person, lastDrink: lastDrink).map { ($0, acknowledged) }
        }
    }

    /// The acknowledgement, inside a write: whether it took.
    static func acknowledgeCarerAlert(_ db: SQLiteConnection, person: Int64, lastDrink: String, at time: Timestamp, lapsed: Timestamp?) throws -> Bool {
        try db.run("""
            UPDATE carer_alert SET acknowledged_at = ?
            WHERE person = ? AND last_drink = ? AND (acknowledged_at IS NULL OR acknowledged_at = ?)
            """, [time.secondsSince1970, person, lastDrink, lapsed?.secondsSince1970])
        return db.changes == 1
    }
}

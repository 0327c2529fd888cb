import QuenchCore

/// Days a person met the goal, remembered once added up (table `met_span`, see
/// the v8 migration): `first...last` are `CivilDay` numbers of one calendar.
public struct MetSpan: Sendable, Hashable {
    public var first: Int
    public var last: Int
    public init(first: Int, last: Int) {
        self.first = first
        self.last = last
    }
}

extension IntakeStore {
    /// The spans whose days a history can hold: a cache, so a row past them (another program's: day
    /// Int64.min trapped the streak's walk back) is left unread, and the days are summed again.
    static let storableSpan = "first_day BETWEEN \(CivilDay.storable.lowerBound.number) AND last_day AND last_day <= \(CivilDay.storable.upperBound.number)"

    /// The spans remembered for `person` on `calendar` (`zone|day start hour`), oldest first.
    public func metSpans(person: Int64, calendar: String) throws(StoreError) -> [MetSpan] {
        try read("reading the days the goal was met") { db in
            try db.all("SELECT first_day, last_day FROM met_span WHERE person = ? AND calendar = ? AND \(Self.storableSpan) ORDER BY first_day",
                       [person, calendar]) { row in MetSpan(first: row[0], last: row[1]) }
        }
    }

    /// Remembers that `span`'s days all met the goal, merged with the spans it
    /// overlaps or touches. `validBefore` is when the span's last day ends: a
    /// change to a sip before it drops the span. Nothing is written when what is
    /// shown changed since `shownChanges` was read (the span may be stale) or the
    /// file is read-only; returns whether it was written. (SQLite's data version
    /// moved with a gateway's every checkpoint, and the span was seldom kept.)
    @discardableResult
    public func rememberMetSpan(_ span: MetSpan, validBefore: Timestamp, person: Int64, calendar: String,
                                shownChanges: Int64) throws(StoreError) -> Bool {
        guard !isReadOnly else { return false }
        return try write("remembering the days the goal was met") { db in
            let current = try db.first("SELECT count FROM shown_change WHERE id = 1", []) { row -> Int64 in row[0] }
            guard current == shownChanges else { return false }
            var merged = span
            var validUntil = validBefore.secondsSince1970
            try db.run("""
                SELECT first_day, last_day, valid_before FROM met_span
                WHERE person = ?1 AND calendar = ?2 AND first_day <= ?4 + 1 AND last_day >= ?3 - 1 AND \(Self.storableSpan)
                """, [person, calendar, span.first, span.last]) { row in
                let (first, last): (Int, Int) = (row[0], row[1])
                if last > merged.last { validUntil = row[2] }
                merged = MetSpan(first: min(merged.first, first), last: max(merged.last, last))
            }
            try db.run("DELETE FROM met_span WHERE person = ?1 AND calendar = ?2 AND first_day <= ?4 + 1 AND last_day >= ?3 - 1",
                       [person, calendar, span.first, span.last])
            try db.run("INSERT INTO met_span (person, calendar, first_day, last_day, valid_before) VALUES (?, ?, ?, ?, ?)",
                       [person, calendar, merged.first, merged.last, validUntil])
            return true
        }
    }
}

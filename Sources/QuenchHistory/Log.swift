import QuenchCore
import QuenchStore

extension History {
    /// `quench log`: events newest first, with ids.
    public static func log(
        _ environment: HistoryEnvironment, since: String?, until: String?, device: String?, limit: Int?,
        includeDeleted: Bool, csv: Bool, json: Bool
    ) throws(HistoryError) -> String {
        let c = try environment.context(creating: false)
        if let limit, limit < 1 { throw .invalidArgument("--limit must be at least 1") }
        let query = EventQuery(
            since: try since.map { (s) throws(HistoryError) in try HistoryInput.instant(s, calendar: c.calendar, now: c.now) },
            until: try until.map { (s) throws(HistoryError) in try HistoryInput.instant(s, calendar: c.calendar, now: c.now) },
            device: device, includeDeleted: includeDeleted, limit: limit ?? (csv || json ? nil : 50))
        let events = try c.run { (store) throws(StoreError) in try store.events(query) }
        if json { return events.map { JSONOutput.encode(EventRecord($0)) }.joined(separator: "\n") }
        if csv {
            return ([CSV.line(EventRecord.csvColumns)] + events.map { CSV.line(EventRecord($0).csvFields) }).joined(separator: "\n")
        }
        return renderLog(events, c)
    }

    static func renderLog(_ events: [IntakeEvent], _ c: HistoryContext) -> String {
        guard !events.isEmpty else { return "No events." }
        let unit = Format.unitName(c.units)
        let rows = events.map { e -> [String] in
            [String(e.id ?? 0), Format.dateTime(e.time, c.calendar), e.kind.rawValue + (e.deleted ? " (deleted)" : ""),
             Format.amount(e.ml, c.units), e.remainingML.map { Format.amount($0, c.units) } ?? "",
             // Notes and device names come from people and imports: shown, never obeyed by the terminal.
             e.source.rawValue, (e.device ?? "").shownSafely(limit: 40), (e.note ?? "").shownSafely(limit: 200)]
        }
        return Format.table(
            ["ID", "Time", "Kind", "Amount (\(unit))", "Left (\(unit))", "Source", "Device", "Note"], rows,
            align: [.right, .left, .left, .right, .right, .left, .left, .left])
    }
}

import BluetoothWire
import QuenchCore
import QuenchStore

extension History {
    /// What `--device` names, as the events store it: a paired device by its address in any case, or
    /// by its name as `devices` and `today` show it ("Dad's bottle" and aa:bb:… found nothing);
    /// any other text as typed (a replayed trace's `--device` label).
    static func deviceLabel(_ text: String, _ c: HistoryContext) throws(HistoryError) -> String {
        let devices = try c.run { (store) throws(StoreError) in try store.listDevices() }
        let wanted = text.trimmingSpaces().lowercased()
        let found = devices.first { $0.address.lowercased() == wanted } ?? devices.first { $0.name?.lowercased() == wanted }
        if let found { return found.address }
        // An address not paired (a replayed trace's): as replay stores it (`PipelineStore.ingest`), in print
        // or in the spelling its events were stored under before.
        guard let address = BluetoothAddress(text.trimmingSpaces()) else { return text }
        return try c.run { (store) throws(StoreError) in try store.deviceLabel(of: address) }
    }

    /// `quench log`: the person's events newest first, with ids. Written as read, from one
    /// snapshot: `--json` and `--csv` hold one row at a time; the table reads
    /// twice (widths, then rows) rather than keeping the rows. One device's (`--device`) in a household
    /// with nobody named: everyone's from it, with a Person column (a carer checking a bottle moved between
    /// residents was asked whose history to read). `before`: only the events after that one in this
    /// order (the next page). Returns, when `limit` left older events out, the last event shown: the
    /// `before` of the next page (a time cannot say where a page ended: events share an instant).
    @discardableResult
    public static func log(
        _ environment: HistoryEnvironment, since: String?, until: String?, device: String?, limit: Int?,
        before: Int64? = nil, includeDeleted: Bool, csv: Bool, json: Bool, to output: inout some TextOutputStream
    ) throws(HistoryError) -> Int64? {
        let c: HistoryContext
        do { c = try environment.context(creating: false) } catch .personNeeded where device != nil {
            c = try environment.context(creating: false, everyone: true)
        }
        if let limit, limit < 1 { throw .invalidArgument("--limit must be at least 1") }
        let range = try HistoryInput.range(since: since, until: until, calendar: c.calendar, now: c.now)
        // The table shows the newest 50 unless told; one more is read to know whether a page stops short.
        let shown = limit ?? (csv || json ? nil : 50)
        var query = EventQuery(
            since: range.since, until: range.until,
            device: try device.map { (text) throws(HistoryError) in try deviceLabel(text, c) },
            includeDeleted: includeDeleted, limit: shown.map { $0 == Int.max ? $0 : $0 + 1 }, person: c.personID)
        return try c.run { (store) throws(StoreError) -> Int64? in
            try store.reading { (reader) throws(StoreError) -> Int64? in
                if let before {
                    guard let event = try reader.event(id: before) else { throw StoreError.noSuchEvent(before, path: store.path) }
                    query.olderThan = EventQuery.LogPosition(time: event.time, id: before)
                }
                var read = 0
                var last: Int64?
                /// Each event of the page, and what the page's last one was when more came after it.
                func page(_ body: (IntakeEvent) -> Void) throws(StoreError) -> Int64? {
                    try reader.forEach(query) { event in
                        read += 1
                        guard read <= shown ?? .max else { return }
                        last = event.id
                        body(event)
                    }
                    return read > shown ?? .max ? last : nil
                }
                if json {
                    return try page { output.write(JSONOutput.encode(EventRecord($0)) + "\n") }
                } else if csv {
                    output.write(CSV.line(EventRecord.csvColumns) + "\n")
                    return try page { output.write(CSV.line(EventRecord($0).csvFields) + "\n") }
                }
                var table = Format.TableLayout(logHeader(c), align: logAlignment(c))
                let next = try page { table.measure(logRow($0, c)) }
                guard table.rows > 0 else { output.write("No events.\n"); return nil }
                output.write(table.line(logHeader(c)) + "\n")
                query.limit = shown
                try reader.forEach(query) { output.write(table.line(logRow($0, c)) + "\n") }
                if let next, let shown {
                    output.write("\(Format.grouped(shown)) shown; older ones with --before \(next) (or --limit N, --since DATE).\n")
                }
                return next
            }
        }
    }

    /// The log as one string (tests).
    public static func log(
        _ environment: HistoryEnvironment, since: String?, until: String?, device: String?, limit: Int?,
        before: Int64? = nil, includeDeleted: Bool, csv: Bool, json: Bool
    ) throws(HistoryError) -> String {
        var text = ""
        try log(environment, since: since, until: until, device: device, limit: limit, before: before,
                includeDeleted: includeDeleted, csv: csv, json: json, to: &text)
        if text.hasSuffix("\n") { text.removeLast() }
        return text
    }

    /// Everyone's rows (`--device` with nobody named): each says whose.
    static func showsPerson(_ c: HistoryContext) -> Bool { c.personID == nil && c.shared }

    static func logAlignment(_ c: HistoryContext) -> [Format.Alignment] {
        [.right, .left, .left, .right, .right, .left, .left, .left] + (showsPerson(c) ? [.left] : [])
    }

    static func logHeader(_ c: HistoryContext) -> [String] {
        let unit = Format.unitName(c.units)
        return ["ID", "Time", "Kind", "Amount (\(unit))", "Left (\(unit))", "Source", "Device", "Note"] + (showsPerson(c) ? ["Person"] : [])
    }

    static func logRow(_ e: IntakeEvent, _ c: HistoryContext) -> [String] {
        [String(e.id ?? 0), Format.dateTime(e.time, c.calendar), e.kind.rawValue + (e.deleted ? " (deleted)" : ""),
         Format.amount(e.ml, c.units), e.remainingML.map { Format.amount($0, c.units) } ?? "",
         // Notes and device names come from people and imports: shown, never obeyed by the terminal.
         e.source.rawValue, (e.device ?? "").shownSafely(limit: 40), (e.note ?? "").shownSafely(limit: 200)]
            + (showsPerson(c) ? [(e.person ?? "-").shownSafely(limit: 40)] : [])
    }

}

import FoundationEssentials
import QuenchCore
import QuenchStore

/// An intake event as exported (JSON object, CSV row) and printed by `log --json`:
/// every stored column, so an import restores it exactly. `time` and
/// `recorded_at` are epoch seconds (exact); `at` is the same instant in ISO 8601
/// UTC for people and for files from elsewhere.
public struct EventRecord: Codable, Sendable {
    var id: Int64?
    var identity: String?
    var kind: String
    var ml: Double
    var time: Double?
    var at: String?
    var remainingMl: Double?
    var source: String?
    var device: String?
    var traceTime: Double?
    var note: String?
    var deleted: Bool?
    var recordedAt: Double?
    /// Who drank it; absent in older exports (the importing person's, then).
    var person: String?

    static let csvColumns = ["id", "identity", "time", "at", "kind", "ml", "remaining_ml", "source", "device",
                             "trace_time", "note", "deleted", "recorded_at", "person"]

    public init(_ e: IntakeEvent) {
        id = e.id
        identity = e.identity
        kind = e.kind.rawValue
        ml = e.ml
        time = e.time.secondsSince1970
        at = e.time.iso8601
        remainingMl = e.remainingML
        source = e.source.rawValue
        device = e.device
        traceTime = e.traceTime
        note = e.note
        deleted = e.deleted
        recordedAt = e.recordedAt.secondsSince1970
        person = e.person
    }

    var csvFields: [String] {
        [id.map(String.init) ?? "", identity ?? "", time.map { "\($0)" } ?? "", at ?? "", kind, "\(ml)",
         remainingMl.map { "\($0)" } ?? "", source ?? "", device ?? "", traceTime.map { "\($0)" } ?? "",
         note ?? "", deleted == true ? "1" : "0", recordedAt.map { "\($0)" } ?? "", person ?? ""]
    }

    /// Back to a store row. Fields missing in files from elsewhere get defaults:
    /// source `import`, an identity from the content, recorded now.
    /// - Parameter localClock: where an `at` without a zone is read, for a file from elsewhere
    ///   (a spreadsheet's local times); nil refuses one.
    func event(now: Timestamp, localClock: DayCalendar? = nil) throws(HistoryError) -> IntakeEvent {
        // `Sip`, ` refill`: as a spreadsheet writes them.
        guard let kind = EventKind(rawValue: kind.trimmingSpaces().lowercased()), !kind.isDiagnostic else {
            throw .invalidArgument("kind '\(self.kind.shownSafely())' is not sip, refill or pour")
        }
        // Every number is checked here, the one way in for imported events:
        // what the store holds can always be shown, exported and read back.
        guard IntakeEvent.holds(ml: ml) else {
            throw .invalidArgument("ml \(ml) is not a positive number of mL up to \(Int(IntakeEvent.largestML))")
        }
        // As `add` and the page refuse it: no one drinks that much at once.
        if kind == .sip, ml > HistoryInput.maximumDrinkML {
            throw .invalidArgument("ml \(ml): a sip of more than \(Int(HistoryInput.maximumDrinkML)) mL in one drink")
        }
        let instant: Timestamp
        if let time {
            guard IntakeEvent.plausibleTime.contains(time) else { throw .invalidArgument("time \(time) is not epoch seconds between 1970 and 9999") }
            instant = Timestamp(secondsSince1970: time)
            // Both given (an export, its `at` mended in a spreadsheet): they must agree, or which is meant is not known
            // (`time` was taken, and the mended `at` lost without a word; a black-box trial). A local `at` is not compared.
            if let at, let parsed = Timestamp(iso8601: at), abs(parsed.secondsSince1970 - time) >= 1 {
                throw .invalidArgument("time \(time) (\(instant.iso8601)) and at '\(at.shownSafely(limit: 40))' disagree: mend both, or leave one empty")
            }
        } else if let at, let parsed = Timestamp(iso8601: at) {
            guard IntakeEvent.plausibleTime.contains(parsed.secondsSince1970) else { throw .invalidArgument("at '\(at.shownSafely())' is not between 1970 and 9999") }
            instant = parsed
        } else if let at, recordedAt == nil, let localClock, let local = try HistoryInput.localDateTime(at, calendar: localClock) {
            instant = try Self.onlyInstant(of: local, at, localClock)
        } else if let at {
            throw .invalidArgument("at '\(at.shownSafely(limit: 40))' is not a time: expected ISO 8601 such as 2026-03-02T07:30:00Z"
                + (localClock == nil ? "" : ", or a local YYYY-MM-DD HH:MM"))
        } else {
            throw .invalidArgument("no time: the row needs 'time' in epoch seconds or 'at' in ISO 8601")
        }
        if let remainingMl, !(remainingMl.isFinite && remainingMl >= 0 && remainingMl <= IntakeEvent.largestML) {
            throw .invalidArgument("remaining_ml \(remainingMl) is not a number of mL from 0 to \(Int(IntakeEvent.largestML))")
        }
        if let traceTime, !traceTime.isFinite { throw .invalidArgument("trace_time \(traceTime) is not a finite number of seconds") }
        if let person, let problem = Person.problem(withName: person) {
            throw .invalidArgument("person '\(person.shownSafely(limit: 40))': \(problem)")
        }
        if let recordedAt, !IntakeEvent.plausibleTime.contains(recordedAt) {
            throw .invalidArgument("recorded_at \(recordedAt) is not epoch seconds between 1970 and 9999")
        }
        var sourceValue = EventSource.imported
        if let source, !source.isEmpty {
            guard let parsed = EventSource(rawValue: source) else { throw .invalidArgument("source '\(source.shownSafely())' is not sensor, manual or import") }
            sourceValue = parsed
        }
        let device = TextField.eventDevice.stored(device)
        let identity = TextField.identity.stored(self.identity)
            ?? "import|\(IntakeEvent.sensorIdentity(device: device, kind: kind, time: instant))|\(ml)"
        let event = IntakeEvent(
            id: id, identity: identity, kind: kind, ml: ml, time: instant, remainingML: remainingMl,
            source: sourceValue, device: device, traceTime: traceTime,
            note: TextField.note.stored(note), deleted: deleted ?? false,
            recordedAt: recordedAt.map(Timestamp.init(secondsSince1970:)) ?? now, person: person.flatMap { $0.isEmpty ? nil : $0 })
        // The store's own rules, checked here to name the line.
        if let problem = event.textProblem { throw .invalidArgument(problem) }
        return event
    }

    /// A local time's instant; one the clocks skipped or said twice is refused, with the zones that tell it.
    private static func onlyInstant(of local: (instant: Timestamp, fit: DayCalendar.LocalTimeFit), _ at: String,
                                    _ clock: DayCalendar) throws(HistoryError) -> Timestamp {
        let zone = clock.timeZone.identifier
        switch local.fit {
        case .exact: return local.instant
        case .skipped:
            throw .invalidArgument("at '\(at.shownSafely(limit: 40))' never came on the clocks of \(zone) (they went forward): give its zone, as in ISO 8601")
        case .repeated(let later):
            throw .invalidArgument("at '\(at.shownSafely(limit: 40))' came twice on the clocks of \(zone) (they went back): "
                + "write \(Format.localISO(local.instant, clock)) or \(Format.localISO(later, clock))")
        }
    }

    /// Whether the event's identity is made here, from the row: a file from elsewhere names none.
    var derivesIdentity: Bool { TextField.identity.stored(identity) == nil }

    /// An event of a file `import` reads: as `event(now:)`; one from elsewhere (no `recorded_at`)
    /// not after the clock, as `add` and `replay --store` refuse one: a time written in the wrong
    /// zone would wait unseen until its day came. A history's own export is taken whole, as it was
    /// stored (a machine whose clock ran fast stored some ahead, and every export re-imports); and
    /// the hub takes a gateway's events whatever its clock says: refusing them would lose them.
    /// - Parameter days: the history's days, when its zone is known: a drink must count for a day from 1970 on,
    ///   as `add` refuses one that would not (a drink at 1970-01-01 02:00 with days starting at 04:00 counted for
    ///   31 December 1969: in `stats`' total, on no day any view shows).
    func importedEvent(now: Timestamp, localClock: DayCalendar? = nil, days: DayCalendar? = nil) throws(HistoryError) -> IntakeEvent {
        let event = try event(now: now, localClock: localClock)
        guard recordedAt != nil || event.time <= now.adding(IntakeEvent.clockSlack) else {
            throw .invalidArgument("\(event.time.iso8601) is in the future (now \(now.iso8601)): check the zone of its times, or the clock that wrote them")
        }
        // As `add` refuses it: a sip below a millilitre is a typo (`1e-300`, `.5`), and counted as one in "Sips".
        if event.kind == .sip, event.ml < HistoryInput.minimumDrinkML {
            throw .invalidArgument("ml \(event.ml): less than \(Int(HistoryInput.minimumDrinkML)) mL, too little to be a drink")
        }
        if let problem = days?.countsBeforeHistory(event.time) { throw .invalidArgument("\(event.time.iso8601) " + problem) }
        return event
    }

    /// Reads a CSV row by header names (RFC 4180 fields already split); `decimalComma`: numbers
    /// written `0,5` (a file separated by semicolons, where a comma cannot be between thousands).
    init(csv fields: [String: String], decimalComma: Bool = false) throws(HistoryError) {
        func double(_ key: String) throws(HistoryError) -> Double? {
            guard let text = fields[key], !text.isEmpty else { return nil }
            // Where a comma is the decimal mark, a point is the thousands' (1.500 is 1,500 mL there): read as a
            // decimal point, it was 1.5 mL, without a word (a black-box trial).
            if decimalComma, text.contains(".") {
                throw .invalidArgument("\(key) '\(text.shownSafely())': in a file separated by ';' decimals take a comma (250,5), "
                    + "so a '.' may be a thousands separator (1.500 is 1,500 or 1.5?): write the number without it")
            }
            guard let value = Double(decimalComma ? text.replacing(",", with: ".") : text) else { throw .invalidArgument("\(key) '\(text.shownSafely())' is not a number") }
            return value
        }
        func text(_ key: String) -> String? { fields[key].flatMap { $0.isEmpty ? nil : $0 } }
        guard let kind = text("kind") else { throw .invalidArgument("the kind is missing") }
        guard let ml = try double("ml") else { throw .invalidArgument("the amount (ml) is missing") }
        if let idText = text("id") {
            guard let id = Int64(idText) else { throw .invalidArgument("id '\(idText.shownSafely())' is not an integer") }
            self.id = id
        }
        self.kind = kind
        self.ml = ml
        identity = text("identity")
        // A `time` column of dates and times (a spreadsheet's) is read as `at`: it said "is not a number".
        if let written = text("time"), Double(written) == nil, text("at") == nil,
           Timestamp(iso8601: written) != nil || CivilDay(parsing: written.trimmingSpaces().prefix(10)) != nil {
            (time, at) = (nil, written)
        } else {
            time = try double("time")
            at = text("at")
        }
        remainingMl = try double("remaining_ml")
        source = text("source")
        device = text("device")
        traceTime = try double("trace_time")
        // A spreadsheet on Windows ends a note's lines with CR LF: lines, as the docs say a note may hold (CR alone was refused).
        note = fields["note"].flatMap { $0.isEmpty ? nil : $0.replacing("\r\n", with: "\n") }
        switch text("deleted")?.lowercased() {
        case nil, "0", "false", "no": deleted = false
        case "1", "true", "yes": deleted = true
        case let other?: throw .invalidArgument("deleted '\(other.shownSafely())' is not 0 or 1")
        }
        recordedAt = try double("recorded_at")
        person = text("person")
    }
}

/// RFC 4180 CSV: comma-separated, fields with commas, quotes or line breaks quoted,
/// quotes doubled.
enum CSV {
    static func line(_ fields: [String]) -> String {
        fields.map { field in
            field.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" })
                ? "\"" + field.replacing("\"", with: "\"\"") + "\"" : field
        }.joined(separator: ",")
    }

    /// The header and each event `query` selects, a row at a time (export, `log --csv`).
    static func write(_ reader: EventReader, _ query: EventQuery, to output: inout some TextOutputStream) throws(StoreError) {
        output.write(line(EventRecord.csvColumns) + "\n")
        try reader.forEach(query) { output.write(line(EventRecord($0).csvFields) + "\n") }
    }

    /// Rows with the line number each starts on.
    static func parse(_ text: String) throws(HistoryError) -> [(line: Int, fields: [String])] {
        var rows: [(Int, [String])] = []
        var fields: [String] = []
        var field = ""
        var quoted = false, wasQuoted = false
        var line = 1, rowLine = 1
        var chars = Array(text.unicodeScalars)[...]
        while let c = chars.popFirst() {
            if quoted {
                if c == "\"" {
                    if chars.first == "\"" { chars.removeFirst(); field.unicodeScalars.append("\"") } else { quoted = false }
                } else {
                    if c == "\n" { line += 1 }
                    field.unicodeScalars.append(c)
                }
                continue
            }
            switch c {
            case "\"" where field.isEmpty && !wasQuoted:
                quoted = true
                wasQuoted = true
            case ",":
                fields.append(field); field = ""; wasQuoted = false
            case "\r":
                break
            case "\n":
                fields.append(field); field = ""; wasQuoted = false
                if !(fields.count == 1 && fields[0].isEmpty) { rows.append((rowLine, fields)) }
                fields = []
                line += 1
                rowLine = line
            default:
                if wasQuoted { throw .invalidArgument("line \(line): text after a closing quote") }
                field.unicodeScalars.append(c)
            }
        }
        if quoted { throw .invalidArgument("line \(rowLine): a quoted field is never closed") }
        if !field.isEmpty || !fields.isEmpty || wasQuoted {
            fields.append(field)
            rows.append((rowLine, fields))
        }
        return rows
    }
}

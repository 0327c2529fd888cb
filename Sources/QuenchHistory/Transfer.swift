import Foundation
import QuenchCore
import QuenchStore

/// The JSON export: everything a fresh database needs to answer the same way.
struct ExportDocument: Codable {
    static let formatName = "quench-export"
    var format: String
    var version: Int
    var settings: Settings?
    var goals: [Goal]?
    var devices: [Device]?
    var events: [EventRecord]
}

extension History {
    public enum ExportFormat: String, Sendable, CaseIterable { case csv, json }

    /// `quench export --format csv|json [--since --until]`. CSV carries the events
    /// (every column); JSON also the settings, goals and devices. Deleted events
    /// are included (with their flag) so nothing is lost.
    public static func export(_ environment: HistoryEnvironment, format: ExportFormat, since: String?, until: String?) throws(HistoryError) -> String {
        let c = try environment.context(creating: false)
        let query = EventQuery(
            since: try since.map { (s) throws(HistoryError) in try HistoryInput.instant(s, calendar: c.calendar, now: c.now) },
            until: try until.map { (s) throws(HistoryError) in try HistoryInput.instant(s, calendar: c.calendar, now: c.now) },
            includeDeleted: true, order: .byID)
        let events = try c.run { (store) throws(StoreError) in try store.events(query) }
        switch format {
        case .csv:
            return ([CSV.line(EventRecord.csvColumns)] + events.map { CSV.line(EventRecord($0).csvFields) }).joined(separator: "\n")
        case .json:
            let document = ExportDocument(
                format: ExportDocument.formatName, version: 1, settings: c.settings,
                goals: try c.run { (store) throws(StoreError) in try store.goals() },
                devices: try c.run { (store) throws(StoreError) in try store.listDevices() },
                events: events.map(EventRecord.init))
            return JSONOutput.encode(document, pretty: true)
        }
    }

    /// What `import` did.
    public struct ImportReport: Sendable, Encodable {
        public var file: String
        public var format: String
        public var events: Int
        public var inserted: Int
        public var duplicates: Int
        public var goals: Int
        public var devices: Int
    }

    /// `quench import FILE` (`-` for stdin): a CSV or JSON export, or a CSV from
    /// elsewhere with at least `kind`, `ml` and `time` or `at` columns. Idempotent
    /// (events are matched by identity); one transaction for all of it, and the
    /// file is checked completely before anything is written.
    public static func importFile(_ environment: HistoryEnvironment, path: String, json: Bool) throws(HistoryError) -> String {
        let data: Data
        do {
            data = path == "-" ? FileHandle.standardInput.readDataToEndOfFile() : try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .fileError(path: path, cause: error)
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw .invalidImport(file: path, line: nil, reason: "not UTF-8 text")
        }
        let parsed = try parseImport(text, file: path, now: environment.now)
        let c = try environment.context(creating: true)
        // One transaction: a refused row, a full disk or a kill -9 leaves the database as it was.
        let result = try c.run { (store) throws(StoreError) in
            try store.importHistory(settings: parsed.replaceSettings ? parsed.settings : nil, goals: parsed.goals,
                                    devices: parsed.devices, events: parsed.events)
        }
        let report = ImportReport(
            file: path, format: parsed.format, events: parsed.events.count, inserted: result.inserted,
            duplicates: result.duplicates, goals: parsed.goals.count, devices: parsed.devices.count)
        if json { return JSONOutput.encode(report) }
        var summary = "Imported \(Format.grouped(result.inserted)) of \(Format.grouped(parsed.events.count)) events from \(path)"
        if result.duplicates > 0 { summary += " (\(Format.grouped(result.duplicates)) already stored)" }
        summary += "."
        if !parsed.goals.isEmpty || !parsed.devices.isEmpty {
            summary += " Goals: \(parsed.goals.count), devices: \(parsed.devices.count)."
        }
        return summary
    }

    struct ParsedImport {
        var format: String
        var events: [IntakeEvent] = []
        var goals: [Goal] = []
        var devices: [Device] = []
        var settings: Settings?
        var replaceSettings = false
    }

    static func parseImport(_ text: String, file: String, now: Timestamp) throws(HistoryError) -> ParsedImport {
        if text.drop(while: { $0.isWhitespace }).first == "{" {
            let document: ExportDocument
            do {
                let decoder = JSONDecoder()
                decoder.keyDecodingStrategy = .convertFromSnakeCase
                document = try decoder.decode(ExportDocument.self, from: Data(text.utf8))
            } catch {
                throw .invalidImport(file: file, line: nil, reason: "not a Quench JSON export (\(error))")
            }
            guard document.format == ExportDocument.formatName, document.version == 1 else {
                throw .invalidImport(file: file, line: nil, reason: "format '\(document.format)' version \(document.version) is not quench-export version 1")
            }
            // What `settings` and `goal` refuse, an import refuses too (calibrations check themselves as they decode).
            if let settings = document.settings {
                if let zone = settings.timeZone, TimeZone(identifier: zone) == nil {
                    throw .invalidImport(file: file, line: nil, reason: "settings: unknown time zone '\(zone)' (an IANA name such as Europe/London)")
                }
                guard (0...23).contains(settings.dayStartHour) else {
                    throw .invalidImport(file: file, line: nil, reason: "settings: day start hour \(settings.dayStartHour) is not between 0 and 23")
                }
            }
            for (index, goal) in (document.goals ?? []).enumerated() where !IntakeEvent.holds(ml: goal.ml) {
                throw .invalidImport(file: file, line: nil, reason: "goal \(index + 1): \(goal.ml) mL is not a positive daily goal")
            }
            var parsed = ParsedImport(format: "json", goals: document.goals ?? [], devices: document.devices ?? [],
                                      settings: document.settings, replaceSettings: document.settings != nil)
            for (index, record) in document.events.enumerated() {
                do { parsed.events.append(try record.event(now: now)) } catch {
                    throw .invalidImport(file: file, line: nil, reason: "event \(index + 1): \(error)")
                }
            }
            return parsed
        }
        let rows: [(line: Int, fields: [String])]
        do { rows = try CSV.parse(text) } catch { throw .invalidImport(file: file, line: nil, reason: "\(error)") }
        guard let header = rows.first else { throw .invalidImport(file: file, line: nil, reason: "the file is empty") }
        let names = header.fields.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard names.contains("kind"), names.contains("ml"), names.contains("time") || names.contains("at") else {
            throw .invalidImport(file: file, line: header.line, reason: "the header needs kind, ml and time or at columns")
        }
        var parsed = ParsedImport(format: "csv")
        for row in rows.dropFirst() {
            guard row.fields.count == names.count else {
                throw .invalidImport(file: file, line: row.line, reason: "\(row.fields.count) fields, the header has \(names.count)")
            }
            do {
                let record = try EventRecord(csv: Dictionary(zip(names, row.fields), uniquingKeysWith: { a, _ in a }))
                parsed.events.append(try record.event(now: now))
            } catch {
                throw .invalidImport(file: file, line: row.line, reason: "\(error)")
            }
        }
        return parsed
    }
}

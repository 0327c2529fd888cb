import FoundationEssentials
import QuenchCore
import QuenchStore
#if canImport(Glibc)
import Glibc
#endif

/// The JSON export's name and version, its first two members.
enum ExportDocument {
    static let formatName = "quench-export"
    /// 2: `people` (each with their goals) in place of `goals`, and each event
    /// and device names its person. Version 1 files still import: their goals,
    /// events and devices go to the selected person.
    static let version = 2
    static let readable = 1...2
}

/// Someone in a JSON export: their name, units and goals.
struct ExportedPerson: Codable {
    var name: String
    var units: VolumeUnit?
    var goals: [Goal]
    /// Their own day start and carer's threshold (absent in older exports, and when not set).
    var dayStartHour: Int?
    var alertAfterMinutes: Int?
    /// Their reminders and waking window, when not the defaults: a carer's threshold counts in the
    /// window, which a move to a new machine silently reset to 08:00-22:00.
    var reminders: Reminders?

    /// `ReminderSettings` as the file writes it: snake-case keys that read back (`slackML` does not).
    struct Reminders: Codable {
        var mode: ReminderSettings.Mode
        var wakeFromMinute, wakeUntilMinute: Int
        var slackMl, afterMinutes, everyMinutes: Double

        init(_ s: ReminderSettings) {
            (mode, wakeFromMinute, wakeUntilMinute) = (s.mode, s.wakeFromMinute, s.wakeUntilMinute)
            (slackMl, afterMinutes, everyMinutes) = (s.slackML, s.afterMinutes, s.everyMinutes)
        }

        var settings: ReminderSettings {
            ReminderSettings(mode: mode, wakeFromMinute: wakeFromMinute, wakeUntilMinute: wakeUntilMinute,
                             slackML: slackMl, afterMinutes: afterMinutes, everyMinutes: everyMinutes)
        }
    }
}

extension History {
    public enum ExportFormat: String, Sendable, CaseIterable { case csv, json }

    /// `quench export --format csv|json [--since --until]`. CSV carries the events
    /// (every column, the person's name among them); JSON also the settings, the
    /// people with their goals, and the devices. Everyone's, unless a person is
    /// named: then theirs alone. Deleted events are included (with their flag) so
    /// nothing is lost. Rows are written as they are read, from one snapshot:
    /// memory stays flat on any history size.
    public static func export(
        _ environment: HistoryEnvironment, format: ExportFormat, since: String?, until: String?,
        to output: inout some TextOutputStream
    ) throws(HistoryError) {
        let c = try environment.context(creating: false, everyone: true)
        let range = try HistoryInput.range(since: since, until: until, calendar: c.calendar, now: c.now)
        let query = EventQuery(
            since: range.since, until: range.until,
            includeDeleted: true, order: .byID, person: c.personID)
        switch format {
        case .csv:
            try c.run { (store) throws(StoreError) in
                try store.reading { (reader) throws(StoreError) in try CSV.write(reader, query, to: &output) }
            }
        case .json:
            // Settings, people and devices first, the events last and one per line,
            // so that a reader (ours included) can take them one at a time.
            let people: [Person]
            if let one = c.person { people = [one] } else { people = try c.run { (store) throws(StoreError) in try store.people() } }
            var exported: [ExportedPerson] = []
            for person in people {
                let goals = try c.run { (store) throws(StoreError) in try store.goals(person: person.id) }
                let reminders = try c.run { (store) throws(StoreError) in try store.reminder(person: person.id) }.settings
                exported.append(ExportedPerson(name: person.name, units: person.units, goals: goals,
                                               dayStartHour: person.dayStartHour, alertAfterMinutes: person.alertAfterMinutes,
                                               reminders: reminders == .defaults ? nil : ExportedPerson.Reminders(reminders)))
            }
            let devices = try c.run { (store) throws(StoreError) in try store.listDevices() }
                .filter { device in c.person.map { person in device.person.map { Person.sameName($0, person.name) } ?? false } ?? true }
            func member(_ key: String, _ json: String) -> String {
                // The encoder spells an empty list over three lines (a line break is never inside a JSON string).
                let value = json.filter { !$0.isWhitespace } == "[]" ? "[]" : json.replacing("\n", with: "\n  ")
                    .replacing(/\[\n\s*\n\s*\]/, with: "[]")
                return "  \"\(key)\" : " + value + ",\n"
            }
            output.write("{\n")
            output.write(member("format", JSONOutput.encode(ExportDocument.formatName)))
            output.write(member("version", JSONOutput.encode(ExportDocument.version)))
            output.write(member("settings", JSONOutput.encode(c.settings, pretty: true)))
            output.write(member("people", JSONOutput.encode(exported, pretty: true)))
            output.write(member("devices", JSONOutput.encode(devices, pretty: true)))
            output.write("  \"events\" : [")
            var first = true
            try c.run { (store) throws(StoreError) in
                try store.reading { (reader) throws(StoreError) in
                    try reader.forEach(query) { event in
                        output.write((first ? "\n    " : ",\n    ") + JSONOutput.encode(EventRecord(event)))
                        first = false
                    }
                }
            }
            output.write(first ? "]\n}\n" : "\n  ]\n}\n")
        }
    }

    /// The export as one string (tests, small histories).
    public static func export(_ environment: HistoryEnvironment, format: ExportFormat, since: String?, until: String?) throws(HistoryError) -> String {
        var text = ""
        try export(environment, format: format, since: since, until: until, to: &text)
        if text.hasSuffix("\n") { text.removeLast() }
        return text
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
        /// People the import added (named in the file, missing here).
        public var peopleAdded: Int
        /// The default person of a database made for the import, removed when nothing became theirs.
        public var defaultPersonRemoved: String? = nil
        /// People here who took the file's settings where theirs were the defaults (units, day start,
        /// carer's threshold, reminders).
        public var peopleGivenSettings: [String] = []
    }

    /// `quench import FILE` (`-` for stdin): a CSV or JSON export, or a CSV from
    /// elsewhere with at least `kind`, `ml` and `time` or `at` columns. Idempotent
    /// (events are matched by identity). Read as a stream into a temporary
    /// table on disk, which locks nothing (bounded memory on any size), then
    /// written in one transaction of at most `IntakeStore.longestWrite`: a
    /// refused row, a full disk or a kill -9 leaves the database as it was, and
    /// other writers wait their turn. With a person selected, the file is theirs.
    public static func importFile(_ environment: HistoryEnvironment, path: String, json: Bool) throws(HistoryError) -> String {
        let descriptor = try openInput(path)
        defer { if path != "-" { close(descriptor) } }
        let existed = access(environment.databasePath, F_OK) == 0
        let store = try environment.openStore(creating: true)
        // A database made for this import holds the default first person; a household's export
        // names its own people, and the default one, left with nothing, is removed after it.
        let made = existed ? nil : try HistoryContext.run { () throws(StoreError) in try store.people() }.first
        var report: ImportReport
        do {
            // With a person selected (`--person`, QUENCH_PERSON, the config file), the file is
            // theirs; else rows that name nobody (older exports, files from elsewhere) are the
            // household's only person's, and whether there is one is said only if such a row comes.
            let selected = try environment.person.map { (_) throws(HistoryError) in try environment.selectedPerson(in: store).name }
            let fallback = Result { () throws(HistoryError) in try environment.selectedPerson(in: store).name }
            report = try importStream(ByteSource(descriptor: descriptor, name: path), file: path, into: store, now: environment.now,
                                      selected: selected, fallback: fallback,
                                      // Only a CSV's times without a zone need it: a wrong `TZ` refuses those, not the import.
                                      localClock: try? environment.localClock(of: store))
        } catch {
            // A refused first import leaves no empty database behind (this process created it exclusively).
            if !existed { for suffix in ["", "-wal", "-shm"] { unlink(environment.databasePath + suffix) } }
            throw error
        }
        if let made, environment.person == nil, report.peopleAdded > 0,
           try HistoryContext.run({ () throws(StoreError) in try store.goals(person: made.id).isEmpty }) {
            // Refused (and kept) when anything became theirs: the export named them, or a row named nobody.
            if (try? store.removePerson(id: made.id, movingTo: nil)) != nil { report.defaultPersonRemoved = made.name }
        }
        if json { return JSONOutput.encode(report) }
        var summary = "Imported \(Format.grouped(report.inserted)) of \(Format.grouped(report.events)) events from \(path)"
        if report.duplicates > 0 { summary += " (\(Format.grouped(report.duplicates)) already stored)" }
        summary += "."
        if report.goals > 0 || report.devices > 0 {
            summary += " Goals: \(report.goals), devices: \(report.devices)."
        }
        if report.peopleAdded > 0 { summary += " People added: \(report.peopleAdded)." }
        if !report.peopleGivenSettings.isEmpty {
            summary += " Given the file's settings where theirs were the defaults: "
                + report.peopleGivenSettings.map { $0.shownSafely(limit: 40) }.joined(separator: ", ") + "."
        }
        if let removed = report.defaultPersonRemoved {
            summary += " The new database's first person, \(removed.shownSafely(limit: 40)), had nothing of the file's and was removed."
        }
        return summary
    }

    /// Opens what `import` reads: a regular file, a pipe, or stdin for `-`.
    static func openInput(_ path: String) throws(HistoryError) -> Int32 {
        if path == "-" { return STDIN_FILENO }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            throw .invalidImport(file: path, line: nil, reason: "cannot open it: \(String(cString: strerror(code)))")
        }
        var info = stat()
        if fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
            close(fd)
            throw .invalidImport(file: path, line: nil, reason: "it is a directory, not an export")
        }
        return fd
    }

    /// Events are staged this many at a time.
    static let importBatchSize = 1000

    /// Reads an export from `source` into `store`: JSON when its first byte
    /// (after blanks) is `{`, else CSV. `selected`: the person the whole file
    /// goes to (a file naming several people is then refused); `fallback`: whose
    /// the rows that name nobody are otherwise (both resolved before the import); `localClock`: where
    /// a CSV's times without a zone are read (refused without one).
    static func importStream(_ source: ByteSource, file: String, into store: IntakeStore, now: Timestamp, selected: String? = nil,
                             fallback: Result<String, HistoryError> = .success(Person.defaultName),
                             localClock: DayCalendar? = nil) throws(HistoryError) -> ImportReport {
        var source = source
        try source.skipByteOrderMark()
        let isJSON = try source.skipBlanks() == UInt8(ascii: "{")
        var report = ImportReport(file: file, format: isJSON ? "json" : "csv", events: 0, inserted: 0, duplicates: 0, goals: 0, devices: 0,
                                  peopleAdded: 0)
        let outcome = try store.importing(wrap: HistoryError.store) { (session) throws(HistoryError) in
            let people = ImportedPeople(session: session, selected: selected, fallback: fallback, now: now)
            var batch: [IntakeEvent] = []
            var legacy: [String?] = []
            batch.reserveCapacity(importBatchSize)
            func flush() throws(HistoryError) {
                guard !batch.isEmpty else { return }
                try HistoryContext.run { () throws(StoreError) in try session.insert(batch, legacyIdentity: legacy) }
                batch.removeAll(keepingCapacity: true)
                legacy.removeAll(keepingCapacity: true)
            }
            func add(_ event: IntakeEvent, _ legacyIdentity: String?) throws(HistoryError) {
                batch.append(event)
                legacy.append(legacyIdentity)
                report.events += 1
                if batch.count == importBatchSize { try flush() }
            }
            if isJSON {
                (report.goals, report.devices) = try readJSONExport(source, file: file, session: session, people: people, now: now,
                                                                    days: localClock, add: add)
            } else {
                try readCSV(source, file: file, people: people, now: now, localClock: localClock, add: add)
            }
            try flush()
            try people.checkOnePerson(file: file)
        }
        report.inserted = outcome.inserted
        report.duplicates = outcome.duplicates
        report.peopleAdded = outcome.peopleAdded
        report.peopleGivenSettings = outcome.peopleGivenSettings
        return report
    }

    private static func readCSV(_ source: ByteSource, file: String, people: ImportedPeople, now: Timestamp, localClock: DayCalendar?,
                                add: (IntakeEvent, String?) throws(HistoryError) -> Void) throws(HistoryError) {
        var rows = CSVRowReader(source, file: file)
        guard var header = try rows.next() else { throw .invalidImport(file: file, line: nil, reason: "the file is empty") }
        // A spreadsheet set to a decimal comma writes `kind;ml;at` and `0,5`; one saving tabs, `kind<TAB>ml`.
        if header.fields.count == 1, let separator = [UInt8(ascii: ";"), UInt8(ascii: "\t")].first(where: { header.fields[0].utf8.contains($0) }) {
            header.fields = header.fields[0].utf8.split(separator: separator, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
            rows.separator = separator
        }
        let names = header.fields.map { $0.trimmingSpaces().lowercased() }
        guard names.contains("kind"), names.contains("ml"), names.contains("time") || names.contains("at") else {
            throw .invalidImport(file: file, line: header.line, reason: "the header needs kind, ml and time or at columns, separated by commas"
                                 + " (it has \(names.prefix(8).map { "'\($0.shownSafely(limit: 20))'" }.joined(separator: ", ")))")
        }
        // A column named twice: which one holds the value is not known (the first was taken, without a word).
        if let twice = names.enumerated().first(where: { i, name in !name.isEmpty && names[..<i].contains(name) })?.element {
            throw .invalidImport(file: file, line: header.line, reason: "the column '\(twice.shownSafely(limit: 20))' is named twice")
        }
        var alike = AlikeRows()
        while let row = try rows.next() {
            guard row.fields.count == names.count else {
                throw .invalidImport(file: file, line: row.line, reason: "\(row.fields.count) fields, the header has \(names.count)")
            }
            var event: IntakeEvent
            var legacy: String?
            do {
                let record = try EventRecord(csv: Dictionary(zip(names, row.fields), uniquingKeysWith: { a, _ in a }),
                                             decimalComma: rows.separator == UInt8(ascii: ";"))
                event = try record.importedEvent(now: now, localClock: localClock, days: localClock)
                event.person = try people.name(event.person)
                if record.derivesIdentity { legacy = alike.number(&event) }
            } catch {
                throw .invalidImport(file: file, line: row.line, reason: "\(error)")
            }
            try add(event, legacy)  // the store's own failure (a full disk) is not the row's
        }
    }

    private static func readJSONExport(
        _ source: ByteSource, file: String, session: ImportSession, people: ImportedPeople, now: Timestamp, days: DayCalendar?,
        add: (IntakeEvent, String?) throws(HistoryError) -> Void
    ) throws(HistoryError) -> (goals: Int, devices: Int) {
        var goalCount = 0, deviceCount = 0
        var alike = AlikeRows()
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        func failure(_ what: String, _ offset: Int, _ reason: String) -> HistoryError {
            .invalidImport(file: file, line: nil, reason: "\(what) (byte offset \(offset)): \(reason)")
        }
        func decode<T: Decodable>(_ type: T.Type, _ bytes: [UInt8], _ what: String, _ offset: Int, strict: Bool = true) throws(HistoryError) -> T {
            if let bad = String.firstInvalidUTF8Offset(bytes) {
                throw failure(what, offset, "the byte at offset \(offset + bad) is not valid UTF-8 text")
            }
            // The header's members strictly (a trailing comma, a key given twice: Foundation's decoder takes both,
            // the last of the two); the events, millions of them, as the decoder reads them.
            if strict, let problem = JSONSyntax.firstProblem(in: bytes) {
                throw failure(what, offset + problem.byteOffset, "not valid JSON: \(problem.reason)")
            }
            do { return try decoder.decode(T.self, from: Data(bytes)) } catch {
                throw failure(what, offset, (error as? DecodingError)?.summary(snakeCase: true) ?? "\(error)")
            }
        }
        func checkGoals(_ goals: [Goal], _ what: String, _ offset: Int) throws(HistoryError) {
            for (index, goal) in goals.enumerated() where !IntakeEvent.holds(ml: goal.ml) {
                throw failure("\(what) \(index + 1)", offset, "\(goal.ml) mL is not a positive daily goal")
            }
        }
        var format: String?, version: Int?
        // Checked as soon as both are known, and again at the end: a JSON file
        // that is not an export is refused before its events are read, where it says so first.
        func checkFormat(atEnd: Bool) throws(HistoryError) {
            guard let format, let version else {
                if atEnd { throw .invalidImport(file: file, line: nil, reason: "not a Quench JSON export (no \"format\": \"quench-export\" and \"version\")") }
                return
            }
            guard format == ExportDocument.formatName, ExportDocument.readable.contains(version) else {
                throw .invalidImport(file: file, line: nil, reason: "format '\(format.shownSafely(limit: 40))' version \(version) is not quench-export version 1 or 2")
            }
        }
        var reader = JSONExportReader(source, file: file)
        try reader.read(member: { (key, bytes, offset) throws(HistoryError) in
            switch key {
            case "format":
                format = try decode(String.self, bytes, "format", offset)
                try checkFormat(atEnd: false)
            case "version":
                version = try decode(Int.self, bytes, "version", offset)
                try checkFormat(atEnd: false)
            case "settings":
                // What `settings` refuses, an import refuses too.
                guard let settings = try decode(Settings?.self, bytes, "settings", offset) else { return }
                if let zone = settings.timeZone, LocalZone(identifier: zone) == nil {
                    throw failure("settings", offset, "unknown time zone '\(zone.shownSafely(limit: 60))' (an IANA name such as Europe/London)")
                }
                guard Settings.dayStartHours.contains(settings.dayStartHour) else {
                    throw failure("settings", offset, "day start hour \(settings.dayStartHour) is not between 0 and 23")
                }
                try HistoryContext.run { () throws(StoreError) in try session.replaceSettings(settings) }
            case "goals":
                // Version 1: the one person's goals, now the selected person's.
                let goals = try decode([Goal]?.self, bytes, "goals", offset) ?? []
                try checkGoals(goals, "goal", offset)
                guard !goals.isEmpty else { return }
                let person: String
                do { person = try people.name(nil) } catch { throw failure("goals", offset, "\(error)") }
                try HistoryContext.run { () throws(StoreError) in try session.addGoals(goals, person: person) }
                goalCount += goals.count
            case "people":
                let list = try decode([ExportedPerson]?.self, bytes, "people", offset) ?? []
                for (index, person) in list.enumerated() {
                    if let problem = Person.problem(withName: person.name) {
                        throw failure("person \(index + 1)", offset, "name '\(person.name.shownSafely(limit: 40))': \(problem)")
                    }
                    try checkGoals(person.goals, "person \(index + 1) (\(person.name.shownSafely(limit: 40))): goal", offset)
                    let name = try people.name(person.name, own: ImportSession.PersonSettings(
                        units: person.units, dayStartHour: person.dayStartHour, alertAfterMinutes: person.alertAfterMinutes,
                        reminders: person.reminders?.settings))
                    try HistoryContext.run { () throws(StoreError) in try session.addGoals(person.goals, person: name) }
                    goalCount += person.goals.count
                }
            case "devices":
                // Calibrations check themselves as they decode. A device naming nobody
                // goes to the selected person when there is one, else keeps its owner.
                var devices = try decode([Device]?.self, bytes, "devices", offset) ?? []
                for (index, device) in devices.enumerated() {
                    if let name = device.person, let problem = Person.problem(withName: name) {
                        throw failure("device \(index + 1)", offset, "person '\(name.shownSafely(limit: 40))': \(problem)")
                    }
                    // The address as Quench writes it (`aa-bb-…` too), or refused with the rest of its text.
                    switch DeviceAddress.canonical(device.address) {
                    case .success(let address): devices[index].address = address
                    case .failure(let error): throw failure("device \(index + 1)", offset, "address: \(error)")
                    }
                    if let problem = devices[index].textProblem { throw failure("device \(index + 1)", offset, problem) }
                    devices[index].person = try device.person.map { (name) throws(HistoryError) in try people.name(name) }
                        ?? (try? people.name(nil))
                }
                try HistoryContext.run { () throws(StoreError) in try session.addDevices(devices) }
                deviceCount += devices.count
            default:
                break  // a member a later version may add; this one has nothing to do with it
            }
        }, event: { (index, bytes, offset) throws(HistoryError) in
            if index == 0 { try checkFormat(atEnd: false) }
            let record = try decode(EventRecord.self, bytes, "event \(index + 1)", offset, strict: false)
            var event: IntakeEvent
            do { event = try record.importedEvent(now: now, days: days) } catch {
                throw failure("event \(index + 1)", offset, "\(error)")
            }
            // Nobody named and nobody selected: said with the event's place.
            do { event.person = try people.name(event.person) } catch {
                throw failure("event \(index + 1)", offset, "\(error)")
            }
            try add(event, record.derivesIdentity ? alike.number(&event) : nil)
        })
        try checkFormat(atEnd: true)
        return (goalCount, deviceCount)
    }
}

/// Rows from elsewhere (no identity) that are alike, the same kind, time, device and mL, are each
/// a drink: two glasses logged in the same minute, or two people's at dinner. Their identities, made
/// from those fields, were one, so all but the first were taken for repeats. The second alike is
/// `…#2`, the third `…#3`, in the file's order, so that importing the file again finds each stored.
/// Alike rows are looked for among the last 4,096 distinct ones (a file keeps a moment's rows
/// together, and an import's memory stays bounded); further apart, a repeat is the same drink.
/// Counted among the same person's rows (the store appends the person: `ImportSession.personalIdentity`),
/// and among the whole file's as an earlier version did (the identity it stored, to find).
struct AlikeRows {
    private var inFile = Counts()
    private var ofPerson = Counts()

    /// Numbers `event`'s identity, made from its row, among its person's alike rows; returns the identity an
    /// earlier version gave it, numbered among the file's.
    mutating func number(_ event: inout IntakeEvent) -> String {
        let base = event.identity
        let legacy = inFile.numbered(base, key: base)
        event.identity = ofPerson.numbered(base, key: ImportSession.personal(base, person: event.person ?? ""))
        return legacy
    }

    private struct Counts {
        static let remembered = 4096
        private var seen: [String: Int] = [:]
        private var ring: [String] = []
        private var next = 0

        /// `identity`, or `identity#n` for the nth row with `key`.
        mutating func numbered(_ identity: String, key: String) -> String {
            if let count = seen[key] {
                seen[key] = count + 1
                return identity + "#\(count + 1)"
            }
            if ring.count < Self.remembered {
                ring.append(key)
            } else {
                seen[ring[next]] = nil
                ring[next] = key
                next = (next + 1) % Self.remembered
            }
            seen[key] = 1
            return identity
        }
    }
}

/// The people an import's rows name: each checked once and given to the
/// import to add when the household does not have them. With a person
/// selected, the whole file is theirs: every name maps to them, and a file
/// naming several people is refused (`checkOnePerson`) rather than merged.
/// Otherwise a row that names nobody is the household's only person's
/// (`fallback`); when there is none (several people), that row is refused with the reason.
final class ImportedPeople {
    private let session: ImportSession
    private let selected: String?
    private let fallback: Result<String, HistoryError>
    private let now: Timestamp
    /// Lower-cased names given to the import.
    private var known: Set<String> = []
    /// The names the file itself gives, in order, once each (any case).
    private var named: [String] = []

    init(session: ImportSession, selected: String?, fallback: Result<String, HistoryError>, now: Timestamp) {
        self.now = now
        self.session = session
        self.selected = selected
        self.fallback = fallback
    }

    /// The name `name` is stored under (nil: the file names nobody), noting the person to add when missing.
    func name(_ name: String?, own: ImportSession.PersonSettings = ImportSession.PersonSettings()) throws(HistoryError) -> String {
        if let name {
            if let problem = Person.problem(withName: name) {
                throw .invalidArgument("person '\(name.shownSafely(limit: 40))': \(problem)")
            }
            if !named.contains(where: { Person.sameName($0, name) }) { named.append(name) }
        }
        let wanted: String
        if let selected { wanted = selected } else if let name { wanted = name } else { wanted = try fallback.get() }
        if known.insert(wanted.lowercased()).inserted {
            try HistoryContext.run { () throws(StoreError) in try session.addPerson(named: wanted, own: selected == nil ? own : ImportSession.PersonSettings(), at: now) }
        }
        return wanted
    }

    /// With a person selected, a file holding several people's history is not merged into theirs.
    func checkOnePerson(file: String) throws(HistoryError) {
        guard let selected, named.count > 1 else { return }
        let list = named.prefix(10).map { $0.shownSafely(limit: 40) }.joined(separator: ", ") + (named.count > 10 ? ", ..." : "")
        throw .invalidImport(file: file, line: nil, reason: "it holds the history of \(named.count) people (\(list)), and --person "
            + "\(selected.shownSafely(limit: 40)) would make all of it theirs: import it without a person "
            + "(no --person, QUENCH_PERSON or `person` in the config file) to give each their own, or import one person's export "
            + "(`quench export --person NAME`) with --person")
    }
}

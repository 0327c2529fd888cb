import QuenchCore
import QuenchStore

/// `quench carer`: everyone, the one who has gone longest without a drink first. Time
/// without a drink is counted in the person's waking hours (their reminder window):
/// a night's sleep is not a worry, an afternoon with nothing is.
public struct CarerReport: Sendable, Encodable {
    public struct Entry: Sendable, Encodable, Equatable {
        public var person: String
        public var units: String
        public var intakeMl: Double
        public var goalMl: Double
        /// Their last drink on any day (ISO 8601 with offset); nil when they have none.
        public var lastDrinkAt: String?
        /// Minutes of their waking hours since the last drink, up to `CarerReport.reach`;
        /// nil when they have no drink at all.
        public var quietMinutes: Int?
        /// `08:00-22:00`: when time without a drink counts.
        public var wakingHours: String
        /// Whether now is inside those hours.
        public var awake: Bool
        /// The carer's threshold (`quench person alert`); nil: not watched.
        public var alertAfterMinutes: Int?
        /// Watched, awake, and without a drink for at least the threshold (or with none at all).
        public var overdue: Bool
    }

    /// When the report was made (ISO 8601 with offset): the page counts on from it.
    public var at: String
    /// How many are overdue.
    public var overdue: Int
    /// Overdue first, then by time without a drink, longest first.
    public var people: [Entry]

    /// How far back time without a drink is counted, in days: beyond it the figure stops growing.
    public static let reach = 30
}

extension History {
    /// `quench carer [--json]`.
    public static func carer(_ environment: HistoryEnvironment, json: Bool) throws(HistoryError) -> String {
        let report = try carerReport(environment)
        if json { return JSONOutput.encode(report) }
        let rows = report.people.map { e -> [String] in
            let unit = VolumeUnit(rawValue: e.units) ?? .ml
            let quiet = e.quietMinutes.map { Format.span(minutes: $0) } ?? "no drink yet"
            return [e.person.shownSafely(limit: 40), e.overdue ? quiet + " (over)" : quiet,
                    // Its date and wall-clock time, as written (the household's zone).
                    e.lastDrinkAt.map { $0.prefix(10) + " " + $0.dropFirst(11).prefix(5) } ?? "-",
                    Format.volume(e.intakeMl, unit) + " of " + Format.volume(e.goalMl, unit),
                    e.wakingHours + (e.awake ? "" : " (asleep)"), e.alertAfterMinutes.map { Format.span(minutes: $0) } ?? "-"]
        }
        let table = Format.table(["Person", "Without a drink", "Last drink", "Today", "Waking hours", "Alert after"], rows,
                                 align: [.left, .right, .left, .right, .left, .right])
        let flagged = report.overdue == 0 ? "Nobody is over their threshold."
            : report.overdue == 1 ? "1 person is over their threshold." : "\(report.overdue) people are over their threshold."
        return table + "\n" + flagged
    }

    public static func carerReport(_ environment: HistoryEnvironment) throws(HistoryError) -> CarerReport {
        let store = try environment.openStore(creating: false)
        let people = try HistoryContext.run { () throws(StoreError) in try store.people() }
        var entries: [CarerReport.Entry] = []
        var at = ""
        for person in people {
            var one = environment
            one.person = person.name
            let c = try one.context(creating: false)
            at = Format.localISO(c.now, c.calendar)
            let day = c.today
            let intake = try c.dailyTotals(from: day, through: day)[day.number]?.ml ?? 0
            let goal = try c.goalBook().goal(on: day)
            let settings = try c.run { (store) throws(StoreError) in try store.reminder(person: c.personID) }.settings
            let last = try c.run { (store) throws(StoreError) in try store.lastSip(before: c.now.adding(1), person: c.personID) }
            let quiet = last.map { wakingSeconds(from: $0.time, until: c.now, settings, c.calendar) / 60 }.map { Int(saturating: $0.rounded(.down)) }
            let (start, end) = settings.wakingWindow(on: c.calendar.wallClock(c.now).date, c.calendar)
            let alert = person.alertAfterMinutes
            let awake = c.now >= start && c.now < end
            entries.append(.init(
                person: person.name, units: c.units.rawValue, intakeMl: (intake * 10).rounded() / 10, goalMl: goal,
                lastDrinkAt: last.map { Format.localISO($0.time, c.calendar) }, quietMinutes: quiet,
                wakingHours: settings.wakingHours,
                awake: awake, alertAfterMinutes: alert,
                // Only while they are awake: a carer reading "over" at night would go and wake them.
                overdue: awake && (alert.map { limit in quiet.map { $0 >= limit } ?? true } ?? false)))
        }
        // Overdue first; then the longest without a drink (none at all is longest); then by name.
        entries.sort { a, b in
            if a.overdue != b.overdue { return a.overdue }
            let (qa, qb) = (a.quietMinutes ?? .max, b.quietMinutes ?? .max)
            if qa != qb { return qa > qb }
            return a.person.lowercased() < b.person.lowercased()
        }
        return CarerReport(at: at, overdue: entries.count { $0.overdue }, people: entries)
    }

    /// Seconds of waking hours between two instants, counted over at most `CarerReport.reach` days.
    static func wakingSeconds(from: Timestamp, until: Timestamp, _ settings: ReminderSettings, _ calendar: DayCalendar) -> Double {
        let start = max(from, until.adding(-Double(CarerReport.reach) * 86_400))
        guard start < until else { return 0 }
        var total = 0.0
        let last = calendar.wallClock(until).date.number
        for number in calendar.wallClock(start).date.number...last {
            let (open, close) = settings.wakingWindow(on: CivilDay(number: number), calendar)
            let overlap = min(close, until).secondsSince1970 - max(open, start).secondsSince1970
            if overlap > 0 { total += overlap }
        }
        return total
    }

    /// `quench person alert NAME 3h|off`: how long they may go without a drink in their
    /// waking hours before the carer's view flags them.
    public static func setPersonAlert(_ environment: HistoryEnvironment, name: String, after: String, json: Bool) throws(HistoryError) -> String {
        let minutes: Int? = after.lowercased() == "off" ? nil
            : Int(saturating: try HistoryInput.option("after") { () throws(HistoryError) in try HistoryInput.minutes(after) }.rounded())
        let store = try environment.openStore(creating: false)
        var named = environment
        named.person = name
        let person = try named.selectedPerson(in: store)
        try HistoryContext.run { () throws(StoreError) in try store.setPersonAlert(id: person.id, afterMinutes: minutes) }
        let text = minutes.map { "The carer's view flags \(person.name.shownSafely(limit: 40)) after \(Format.span(minutes: $0)) without a drink in their waking hours." }
            ?? "The carer's view no longer flags \(person.name.shownSafely(limit: 40))."
        return try personChanged(named, PersonChange(action: "alert", person: person.name, detail: minutes.map { String($0) }), json: json, text: text)
    }
}

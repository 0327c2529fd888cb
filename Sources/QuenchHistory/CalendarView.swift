import QuenchCore
import QuenchStore

/// `quench calendar`: a month grid of each day's intake against its goal.
public struct CalendarReport: Sendable, Encodable {
    public struct Day: Sendable, Encodable {
        public var date: String
        public var ml: Double
        public var sips: Int
        public var goalMl: Double
        public var met: Bool
        /// `met` (≥ 100 %), `half` (≥ 50 %), `some`, `none`, `future`, or `before`
        /// (a day before the person's first sip: not a day without a drink, and not counted).
        public var mark: String
    }

    /// Whose days.
    public var person: String
    public var month: String
    public var units: String
    public var totalMl: Double
    public var goalMetDays: Int
    public var days: [Day]
}

extension History {
    public static func calendar(_ environment: HistoryEnvironment, month: String?, json: Bool) throws(HistoryError) -> String {
        let c = try environment.context(creating: false)
        let first = try month.map { (m) throws(HistoryError) in
            try HistoryInput.option("--month") { () throws(HistoryError) in try HistoryInput.month(m) }
        } ?? c.today.adding(days: 1 - c.today.components.day)
        let report = try calendarReport(c, first: first)
        return json ? JSONOutput.encode(report) : renderCalendar(report, c)
    }

    static func calendarReport(_ c: HistoryContext, first: CivilDay) throws(HistoryError) -> CalendarReport {
        let comps = first.components
        let count = Timestamp.daysIn(month: comps.month, year: comps.year)
        // The history begins at the first sip (today when there is none), as `stats` counts days.
        let historyStart = try c.firstSipDay() ?? c.today
        let last = first.adding(days: count - 1)
        let days = zip(first.number...last.number, try dayEntries(c, from: first, through: last)).map { number, day in
            guard day.mark == "none", number < historyStart.number else { return day }
            var before = day
            before.mark = "before"
            return before
        }
        return CalendarReport(
            person: c.personName, month: String(first.description.prefix(7)), units: c.units.rawValue, totalMl: Format.sum(days.map(\.ml)),
            goalMetDays: days.filter(\.met).count, days: days)
    }

    /// Each day of `first...last` with its intake, sips, the goal in force that
    /// day and how it did: the calendar's days, and the charts' bars.
    static func dayEntries(_ c: HistoryContext, from first: CivilDay, through last: CivilDay) throws(HistoryError) -> [CalendarReport.Day] {
        let totals = try c.dailyTotals(from: first, through: last)
        let book = try c.goalBook()
        let today = c.today
        return (first.number...last.number).map { number in
            let day = CivilDay(number: number)
            let t = totals[number] ?? DayTotal(ml: 0, sips: 0)
            let goal = book.goal(on: day)
            let fraction = t.ml / goal
            let mark = day > today ? "future" : fraction >= 1 ? "met" : fraction >= 0.5 ? "half" : t.ml > 0 ? "some" : "none"
            return CalendarReport.Day(date: day.description, ml: t.ml, sips: t.sips, goalMl: goal, met: fraction >= 1, mark: mark)
        }
    }

    /// How the month did, over its days from the person's first sip until today.
    static func counted(_ r: CalendarReport) -> String {
        let days = r.days.filter { $0.mark != "future" && $0.mark != "before" }.count
        guard days > 0 else { return r.days.contains { $0.mark == "before" } ? "before the history begins" : "all to come" }
        return "goal met on \(r.goalMetDays) of \(days) day\(days == 1 ? "" : "s")"
    }

    /// Marks without colour: `#` goal met, `+` half or more, `-` less, `.` nothing.
    static func renderCalendar(_ r: CalendarReport, _ c: HistoryContext) -> String {
        guard let firstDay = r.days.first.flatMap({ CivilDay(parsing: $0.date) }) else { return "" }
        let comps = firstDay.components
        let title = "\(Format.months[comps.month - 1]) \(comps.year)"
        var lines = [title + String(repeating: " ", count: max(0, 20 - title.count))
                     + "  \(Format.volume(r.totalMl, c.units)), " + counted(r)]
        lines.append("  Mon  Tue  Wed  Thu  Fri  Sat  Sun")
        // Monday-first columns (ISO 8601 weeks).
        let lead = (firstDay.weekday + 6) % 7
        var cells = Array(repeating: "     ", count: lead)
        for day in r.days {
            let number = day.date.suffix(2).hasPrefix("0") ? " " + day.date.suffix(1) : String(day.date.suffix(2))
            let mark: String
            switch day.mark {
            case "met": mark = "#"
            case "half": mark = "+"
            case "some": mark = "-"
            case "none": mark = "."
            default: mark = " "
            }
            if c.color {
                let tint: String
                switch day.mark {
                case "met": tint = ANSI.green
                case "half": tint = ANSI.yellow
                case "some": tint = ANSI.red
                default: tint = ANSI.dim
                }
                cells.append("  \(tint)\(number)\(mark)\(ANSI.reset)")
            } else {
                cells.append("  \(number)\(mark)")
            }
        }
        for start in stride(from: 0, to: cells.count, by: 7) {
            var row = cells[start..<min(start + 7, cells.count)].joined()
            while row.hasSuffix(" ") { row.removeLast() }
            lines.append(row)
        }
        lines.append("# goal met   + half or more   - under half   . nothing")
        return lines.joined(separator: "\n")
    }
}

import QuenchCore
import QuenchStore

/// `quench stats`: a period of days ending today.
public struct StatsReport: Sendable, Encodable {
    /// Whose days.
    public var person: String
    public var from: String
    public var through: String
    public var days: Int
    /// Days from the first recorded sip (or the period's start, if later) through today.
    public var daysCounted: Int
    public var units: String
    public var totalMl: Double
    public var dailyAverageMl: Double
    public var goalMetDays: Int
    public var currentStreak: Int
    public var longestStreak: Int
    public var sips: Int
    public var sipsPerDay: Double
    public var averageSipMl: Double?
}

extension History {
    /// Which period: `--days N` (last N days including today), `--week` 7, `--month` 30, `--year` 365.
    public static func stats(_ environment: HistoryEnvironment, days: Int, json: Bool) throws(HistoryError) -> String {
        guard (1...36_600).contains(days) else { throw .invalidArgument("--days must be between 1 and 36600") }
        let c = try environment.context(creating: false)
        let report = try statsReport(c, days: days)
        return json ? JSONOutput.encode(report) : renderStats(report, c)
    }

    static func statsReport(_ c: HistoryContext, days: Int) throws(HistoryError) -> StatsReport {
        let today = c.today
        let first = today.adding(days: -(days - 1))
        let totals = try c.dailyTotals(from: first, through: today)
        let book = try c.goalBook()
        let firstSip = try c.run { (store) throws(StoreError) in try store.firstSipTime(person: c.personID) }.map { c.calendar.day(of: $0) }
        let counted = max(1, today.number - max(first.number, firstSip?.number ?? today.number) + 1)

        var total = 0.0, sips = 0, met = 0, longest = 0, run = 0
        for number in first.number...today.number {
            let day = CivilDay(number: number)
            let t = totals[number] ?? DayTotal(ml: 0, sips: 0)
            total += t.ml
            sips += t.sips
            if t.ml >= book.goal(on: day) {
                met += 1
                run += 1
                longest = max(longest, run)
            } else {
                run = 0
            }
        }
        let current = try currentStreak(c, book: book, firstSip: firstSip, known: totals, knownFrom: first)
        return StatsReport(
            person: c.personName, from: first.description, through: today.description, days: days, daysCounted: counted,
            units: c.units.rawValue, totalMl: total, dailyAverageMl: total / Double(counted), goalMetDays: met,
            currentStreak: current, longestStreak: longest, sips: sips,
            sipsPerDay: Double(sips) / Double(counted), averageSipMl: sips > 0 ? total / Double(sips) : nil)
    }

    /// Days in a row the goal was met, counting back from today; today counts
    /// once met, and an unfinished today does not break the streak. Reaches past
    /// the period when the streak is older: a month first, then twice as far
    /// back each time, a year at most. (A year at once made `stats --days 1` and
    /// the day's share card add up a year of sips to look at yesterday: 12 ms
    /// instead of 0.7 on ten years of detector-level history, docs/benchmarks-web.md.)
    static func currentStreak(
        _ c: HistoryContext, book: GoalBook, firstSip: CivilDay?, known: [Int: DayTotal], knownFrom: CivilDay
    ) throws(HistoryError) -> Int {
        guard let firstSip else { return 0 }
        let today = c.today
        var totals = known
        var loadedFrom = knownFrom
        func met(_ day: CivilDay) throws(HistoryError) -> Bool {
            if day < loadedFrom {
                let span = min(365, max(31, 2 * (today.number - loadedFrom.number + 1)))
                let from = day.adding(days: -span)
                totals.merge(try c.dailyTotals(from: from, through: loadedFrom.adding(days: -1))) { a, _ in a }
                loadedFrom = from
            }
            return (totals[day.number]?.ml ?? 0) >= book.goal(on: day)
        }
        var day = try met(today) ? today : today.adding(days: -1)
        var streak = 0
        while day >= firstSip, try met(day) {
            streak += 1
            day = day.adding(days: -1)
        }
        return streak
    }

    static func renderStats(_ r: StatsReport, _ c: HistoryContext) -> String {
        let u = c.units
        let percent = r.daysCounted > 0 ? " (\(Int(saturating: (Double(r.goalMetDays) / Double(r.daysCounted) * 100).rounded())) %)" : ""
        func days(_ n: Int) -> String { VolumeText.count(n, "day") }
        let rows: [(String, String)] = [
            ("Total", Format.volume(r.totalMl, u)),
            ("Daily average", Format.volume(r.dailyAverageMl, u) + (r.daysCounted < r.days ? " (over \(days(r.daysCounted)) with history)" : "")),
            ("Goal met", "\(Format.grouped(r.goalMetDays)) of \(days(r.daysCounted))\(percent)"),
            ("Current streak", days(r.currentStreak)),
            ("Longest streak", days(r.longestStreak)),
            ("Sips a day", Format.decimal(r.sipsPerDay, places: 1)),
            ("Average sip", r.averageSipMl.map { Format.volume($0, u) } ?? "-"),
        ]
        let title = (r.days == 1 ? "Today (\(r.through))" : "Last \(r.days) days (\(r.from) to \(r.through))") + c.whose
        return title + "\n" + Format.fields(rows)
    }
}

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
    /// The current streak's first and last days (its last is today once met, else yesterday); nil with no streak.
    public var currentStreakFrom: String?
    public var currentStreakThrough: String?
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
        // Days before a history can begin: shown as a period "from 1944-10-08" (a black-box trial).
        guard first >= CivilDay.storable.lowerBound else {
            let most = today.number - CivilDay.storable.lowerBound.number + 1
            throw .invalidArgument("--days \(days) reaches back before 1970-01-01, where a history begins: at most \(Format.grouped(most)) from today")
        }
        let book = try c.goalBook()
        let firstSip = try c.firstSipDay()
        let counted = max(1, today.number - max(first.number, firstSip?.number ?? today.number) + 1)

        var metDays = try MetDays(c, book: book, firstSip: firstSip, from: first)
        var totals: [Double] = [], sips = 0, met = 0, longest = 0
        // The run of met days in progress, by its first day: the first run reaches back
        // past the period in full, so a streak is never shortened by where the period starts.
        var runStart: CivilDay?
        for number in first.number...today.number {
            let day = CivilDay(number: number)
            let t = metDays.total(day)
            totals.append(t.ml)
            sips += t.sips
            if try metDays.met(day) {
                met += 1
                if runStart == nil { runStart = number == first.number ? try metDays.runStart(endingOn: day) : day }
                longest = max(longest, number - runStart!.number + 1)
            } else {
                runStart = nil
            }
        }
        let total = Format.sum(totals)
        let streak = try currentStreak(c, &metDays)
        let current = streak.map { $0.through.number - $0.from.number + 1 } ?? 0
        return StatsReport(
            person: c.personName, from: first.description, through: today.description, days: days, daysCounted: counted,
            units: c.units.rawValue, totalMl: total, dailyAverageMl: Format.hundredths(total / Double(counted)), goalMetDays: met,
            // The current streak may have ended yesterday, before a one-day period.
            currentStreak: current, currentStreakFrom: streak?.from.description, currentStreakThrough: streak?.through.description,
            longestStreak: max(longest, current), sips: sips,
            sipsPerDay: Format.hundredths(Double(sips) / Double(counted)), averageSipMl: sips > 0 ? Format.hundredths(total / Double(sips)) : nil)
    }

    /// Days in a row the goal was met, counting back from today; today counts
    /// once met, and an unfinished today does not break the streak.
    static func currentStreak(_ c: HistoryContext, _ days: inout MetDays) throws(HistoryError) -> (from: CivilDay, through: CivilDay)? {
        let today = c.today
        let end = try days.met(today) ? today : today.adding(days: -1)
        guard try days.met(end) else { return nil }
        return (try days.runStart(endingOn: end), end)
    }

    static func renderStats(_ r: StatsReport, _ c: HistoryContext) -> String {
        let u = c.units
        let percent = r.daysCounted > 0 ? " (\(Int(saturating: (Double(r.goalMetDays) / Double(r.daysCounted) * 100).rounded())) %)" : ""
        func days(_ n: Int) -> String { VolumeText.count(n, "day") }
        let rows: [(String, String)] = [
            ("Total", Format.volume(r.totalMl, u)),
            ("Daily average", Format.volume(r.dailyAverageMl, u) + (r.daysCounted < r.days ? " (over \(days(r.daysCounted)) with history)" : "")),
            ("Goal met", "\(Format.grouped(r.goalMetDays)) of \(days(r.daysCounted))\(percent)"),
            ("Current streak", days(r.currentStreak) + (r.currentStreakFrom.map { $0 == r.currentStreakThrough ? " (\($0))" : " (\($0) to \(r.currentStreakThrough ?? r.through))" } ?? "")),
            ("Longest streak", days(r.longestStreak)),
            ("Sips a day", Format.decimal(r.sipsPerDay, places: 1)),
            ("Average sip", r.averageSipMl.map { Format.volume($0, u) } ?? "-"),
        ]
        let title = (r.days == 1 ? "Today (\(r.through))" : "Last \(r.days) days (\(r.from) to \(r.through))") + c.whose
        return title + "\n" + Format.fields(rows)
    }
}

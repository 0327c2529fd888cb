import QuenchCore
import QuenchStore

extension HistoryInput {
    /// `--since` and `--until` of `log` and `export` as `[since, until)`. A day
    /// (`YYYY-MM-DD`, `today`, `yesterday`) given to `--until` includes that whole
    /// day, as the calendar counts it (to the next day's start, so 01:30 after a
    /// 04:00 day start still belongs to it): `--since D --until D` is day D. Any
    /// other form is an instant, and `--until` excludes it.
    public static func range(since: String?, until: String?, calendar: DayCalendar, now: Timestamp)
        throws(HistoryError) -> (since: Timestamp?, until: Timestamp?) {
        let from = try since.map { (s) throws(HistoryError) in
            try option("--since") { () throws(HistoryError) in try instant(s, calendar: calendar, now: now) }
        }
        let to = try until.map { (u) throws(HistoryError) -> Timestamp in
            try option("--until") { () throws(HistoryError) -> Timestamp in
                let text = u.trimmingSpaces()
                guard ["today", "yesterday"].contains(text.lowercased()) || CivilDay(parsing: text) != nil else {
                    return try instant(u, calendar: calendar, now: now)
                }
                return calendar.start(of: try day(text, calendar: calendar, now: now).adding(days: 1))
            }
        }
        if let from, let to, let since, let until, from >= to {
            throw .invalidArgument("--since \(since.shownSafely()) (\(Format.dateTime(from, calendar))) is not before "
                                   + "--until \(until.shownSafely()) (\(Format.dateTime(to, calendar))): nothing lies between them")
        }
        return (from, to)
    }
}

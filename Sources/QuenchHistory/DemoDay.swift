import QuenchCore
import QuenchStore

/// When `quench demo`'s simulated day happens: always 08:00 local for its hours
/// (08:00 to midnight for the default 16), on the latest date on which those
/// hours are over by now, so the sample it prints is the same each run but for
/// the date, and the whole day is in the history at once. With days starting at
/// 04:00 that date is today's history day when the demo runs between midnight
/// and 04:00, else yesterday (`quench today --date DAY`, `quench stats --days 2`
/// and `log` show the day; the demo's hints name it).
public enum DemoDay {
    public static let startHour = 8

    /// The instant the simulated day starts.
    public static func start(hours: Double, calendar: DayCalendar, now: Timestamp) -> Timestamp {
        var date = calendar.wallClock(now).date
        func start(_ d: CivilDay) -> Timestamp { calendar.instant(atLocalSeconds: d.number * 86_400 + startHour * 3600) }
        // Bounded: `hours` is at most a few days (the command checks it).
        while start(date).adding(hours * 3600) > now { date = date.adding(days: -1) }
        return start(date)
    }

    /// The calendar the demo's own database reads with: the zone of this process, days from 04:00 (the settings' default).
    public static func calendar(environment: [String: String]) throws(HistoryError) -> DayCalendar {
        DayCalendar(timeZone: try DayCalendar.resolveTimeZone(setting: nil, environment: environment), dayStartHour: Settings.defaults.dayStartHour)
    }

    /// `2026-11-25 08:15:12.103`: the local wall clock, to the millisecond.
    public static func wallClock(_ time: Timestamp, _ calendar: DayCalendar) -> String {
        let local = Timestamp(secondsSince1970: time.secondsSince1970 + Double(calendar.utcOffset(at: time))).iso8601
        return String(local.replacing("T", with: " ").dropLast())  // no "Z": it is local time
    }

    /// `Wednesday 25 November 2026`.
    public static func longDate(_ time: Timestamp, _ calendar: DayCalendar) -> String {
        Format.longDate(calendar.wallClock(time).date)
    }
}

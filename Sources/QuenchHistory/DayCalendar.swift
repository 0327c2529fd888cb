import QuenchCore
import QuenchStore

/// Maps instants to the user's days: local time in `timeZone`, with days that
/// begin at `dayStartHour` (so with 4, a sip at 01:00 counts for the evening
/// before). Daylight-saving changes come from the zone's rules (the system's
/// tzdata, `LocalZone`): a day can last 23 or 25 hours.
///
/// Day *d* of an instant *t* is ⌊(t + offset(t) − dayStartHour·3600) / 86 400⌋,
/// counted as a `CivilDay`; days are contiguous and never overlap.
public struct DayCalendar: Sendable {
    public let timeZone: LocalZone
    public let dayStartHour: Int

    public init(timeZone: LocalZone, dayStartHour: Int) {
        self.timeZone = timeZone
        self.dayStartHour = dayStartHour
    }

    /// The zone's offset from UTC at `time`, in seconds.
    public func utcOffset(at time: Timestamp) -> Int {
        timeZone.secondsFromGMT(at: time.secondsSince1970)
    }

    /// Local wall-clock seconds since 1970-01-01T00:00 (as if the zone were UTC).
    public func localSeconds(_ time: Timestamp) -> Double {
        time.secondsSince1970 + Double(utcOffset(at: time))
    }

    /// The day `time` counts for: within `reckonableDays`, however far off the time (a row of 1e300 in a file
    /// another program wrote gave `Int.max`, and the day after it, or its first second, trapped).
    public func day(of time: Timestamp) -> CivilDay {
        let shifted = localSeconds(time) - Double(dayStartHour * 3600)
        let number = Int(saturating: (shifted / 86_400).rounded(.down))
        return CivilDay(number: min(max(number, Self.reckonableDays.lowerBound), Self.reckonableDays.upperBound))
    }

    /// Far wider than the days a history holds (`CivilDay.storable`), yet a day's number from it can be
    /// moved by years and multiplied by a day's seconds without overflowing.
    public static let reckonableDays = -1_000_000_000...1_000_000_000

    /// The calendar date and time of day on the local wall clock.
    public func wallClock(_ time: Timestamp) -> (date: CivilDay, hour: Int, minute: Int, second: Int) {
        let local = Int(saturating: localSeconds(time).rounded(.down))
        let days = local >= 0 ? local / 86_400 : (local - 86_399) / 86_400
        let s = local - days * 86_400
        return (CivilDay(number: days), s / 3600, s % 3600 / 60, s % 60)
    }

    /// The first instant whose local wall-clock time is at or after `local`
    /// (seconds as in `localSeconds`). In a spring-forward gap that is the
    /// transition itself. For a time inside an autumn overlap (never a day start,
    /// which falls on a whole hour at the overlap's edge) either of the two.
    public func instant(atLocalSeconds local: Int) -> Timestamp {
        // Offsets lie within −12 h … +14 h and local time never runs backwards by
        // more than the overlap, so the answer is inside this window.
        var lo = local - 15 * 3600, hi = local + 13 * 3600
        func localOf(_ s: Int) -> Int { s + utcOffset(at: Timestamp(secondsSince1970: Double(s))) }
        // Invariant: localOf(lo) < local <= localOf(hi) (searching the first such second).
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2
            if localOf(mid) >= local { hi = mid } else { lo = mid }
        }
        return Timestamp(secondsSince1970: Double(hi))
    }

    /// How a local wall-clock time maps to instants on a day the clocks change.
    public enum LocalTimeFit: Sendable, Equatable {
        case exact
        /// The time does not exist (spring forward): `instant` is the change itself.
        case skipped
        /// The time happens twice (autumn back): `instant` is the first; `later` the second.
        case repeated(later: Timestamp)
    }

    /// `instant(atLocalSeconds:)` and whether that time was skipped or repeated,
    /// so a command can say what it did with "01:30" on such a day.
    public func fit(localSeconds local: Int) -> (instant: Timestamp, fit: LocalTimeFit) {
        let found = instant(atLocalSeconds: local)
        let s = Int(found.secondsSince1970)
        guard s + utcOffset(at: found) == local else { return (found, .skipped) }
        // In an overlap the search may land on either instant, so both are looked for: each offset the zone has
        // within a day of it names one instant, which is the time's when that instant shows it. (The search's
        // instant alone, with the one an offset's drop later, missed the first of the two whenever it landed on
        // the second: 01:45 on New York's day back was stored an hour late, without a word.)
        let offsets = Set([-86_400, 0, 86_400].map { utcOffset(at: Timestamp(secondsSince1970: Double(s + $0))) })
        let instants = offsets.map { local - $0 }.filter { $0 + utcOffset(at: Timestamp(secondsSince1970: Double($0))) == local }.sorted()
        guard let first = instants.first, let last = instants.last, first != last else { return (found, .exact) }
        return (Timestamp(secondsSince1970: Double(first)), .repeated(later: Timestamp(secondsSince1970: Double(last))))
    }

    /// Why a drink at `time` cannot be in a history though its instant can: it would count for a day before
    /// 1970-01-01 (03:59 on that date when days start at 04:00), which no view shows; nil when it can.
    func countsBeforeHistory(_ time: Timestamp) -> String? {
        let day = day(of: time)
        guard day < CivilDay.storable.lowerBound else { return nil }
        return "would count for \(day), before 1970 (days start at \(dayStartHour < 10 ? "0" : "")\(dayStartHour):00): "
            + "a history starts on 1970-01-01 at the earliest"
    }

    /// When `day` begins.
    public func start(of day: CivilDay) -> Timestamp {
        instant(atLocalSeconds: day.number * 86_400 + dayStartHour * 3600)
    }

    /// `[start, end)` of `day`.
    public func interval(of day: CivilDay) -> (start: Timestamp, end: Timestamp) {
        (start(of: day), start(of: day.adding(days: 1)))
    }

    /// `[from, until)` cut at the zone's transitions, each piece with the shift that
    /// makes `IntakeStore.sipTotalsByDay` key sips by this calendar's day numbers.
    public func segments(from: Timestamp, until: Timestamp) -> [DaySegment] {
        var segments: [DaySegment] = []
        var cursor = from
        while cursor < until {
            let next = timeZone.nextTransition(after: cursor.secondsSince1970).map { Timestamp(secondsSince1970: $0) }
            let end = next.map { min($0, until) } ?? until
            segments.append(DaySegment(from: cursor, until: end, shift: utcOffset(at: cursor) - dayStartHour * 3600))
            guard end > cursor else { break }
            cursor = end
        }
        return segments
    }

    /// Resolves the zone: the setting, else `TZ` (a zone's name, `:` before it or not), else the system's.
    public static func resolveTimeZone(setting: String?, environment: [String: String]) throws(HistoryError) -> LocalZone {
        if let setting {
            guard let zone = LocalZone(identifier: setting) else { throw .invalidArgument("unknown time zone '\(setting.shownSafely())' in the settings") }
            return zone
        }
        if var tz = environment["TZ"], !tz.isEmpty {
            if tz.hasPrefix(":") { tz.removeFirst() }
            if let zone = LocalZone(identifier: tz) { return zone }
            // What else TZ may hold, as the C library reads it: a zone file's path, or a POSIX rule (`EST+5`).
            // Each was left to the system's zone, so `date` said New York's time and quench UTC's (a trial).
            if tz.hasPrefix("/") {
                guard let zone = LocalZone(file: tz) else {
                    throw .invalidArgument("TZ='\(tz.shownSafely())' is not a time zone file this machine can read: correct it, or unset TZ to use the system's")
                }
                return zone
            }
            if let zone = LocalZone(posixRule: tz) { return zone }
            // A zone's name this machine does not have (`Europe/Londn`) was read as UTC, without a word, and
            // every day began an hour out.
            throw .invalidArgument("TZ='\(tz.shownSafely())' is not a time zone this machine knows (its names are in "
                + "/usr/share/zoneinfo, e.g. Europe/London; a POSIX rule needs its daylight dates, as in "
                + "EST5EDT,M3.2.0,M11.1.0): correct it, or unset TZ to use the system's")
        }
        return LocalZone.system()
    }
}

import FoundationEssentials
import QuenchCore
import QuenchStore
#if canImport(Glibc)
import Glibc
#endif

/// What people type: amounts, weights, durations and dates.
public enum HistoryInput {
    /// Largest single drink `quench add` accepts: more than 5 L at once is a typo.
    public static let maximumDrinkML = 5000.0
    /// Smallest: below a millilitre is a typo (`0.0001ml`, `1e-300ml`), not a drink.
    public static let minimumDrinkML = 1.0

    /// The units a bare number could have meant, as a drink (1 mL to 5 L): `1.5l, 1.5oz (US fl oz) or
    /// 1.5ml`, `250ml`; not `250oz` (7.4 L) or `0.0015l`.
    static func unitsThatFit(_ number: Double, within range: ClosedRange<Double> = minimumDrinkML...maximumDrinkML) -> String? {
        let n = number.compactDescription
        let fits = [(number * 1000, "\(n)l"), (number, "\(n)ml"), (VolumeUnit.usFluidOunce.millilitres(number), "\(n)oz (US fl oz)")]
            .filter { range.contains($0.0) }.map(\.1)
        guard let last = fits.last else { return nil }
        return fits.count == 1 ? last : fits.dropLast().joined(separator: ", ") + " or " + last
    }

    /// How far behind the pace a reminder waits (mL): the store's bound, which an import keeps too.
    public static let slackML = ReminderSettings.slackML

    public static func slack(_ text: String) throws(HistoryError) -> Double {
        let ml = try volume(text, defaultUnit: nil)
        guard slackML.contains(ml) else { throw .invalidAmount(text, reason: "up to 2,000 mL behind the pace, please (more, and no reminder would come)") }
        return ml
    }

    /// A daily goal Quench takes (mL): under 100 mL or over 20 L is a typo.
    public static let goalML = 100.0...20_000

    /// A daily goal: a volume (a bare number in `defaultUnit`) within `goalML`. A
    /// bare number out of range was most likely meant in another unit: `2` → `2l`.
    public static func goal(_ text: String, defaultUnit: VolumeUnit?) throws(HistoryError) -> Double {
        let (number, unit) = try split(text, example: defaultUnit == nil ? goalExample : nil)
        let meant = unit.isEmpty ? unitsThatFit(number, within: goalML) : nil
        if unit.isEmpty, defaultUnit == nil { throw .invalidAmount(text, reason: "give a unit: " + (meant ?? goalExample)) }
        let ml = try volume(text, defaultUnit: defaultUnit)
        guard goalML.contains(ml) else {
            let units = defaultUnit == .usFluidOunce ? "US fl oz" : "mL"
            throw .invalidAmount(text, reason: "a daily goal between 100 mL and 20 L, please"
                + (meant.map { " (a bare number is in \(units): did you mean \($0)?)" } ?? ""))
        }
        return ml
    }

    /// `250ml`, `250 mL`, `0.5l`, `8oz`, `68 oz`, `8 fl oz`; a bare number is
    /// in `defaultUnit`, and refused without one (a drink of "250" could be mL or oz).
    public static func volume(_ text: String, defaultUnit: VolumeUnit?) throws(HistoryError) -> Double {
        // Without units of their own, "a bare number is in your units" was said, and "250" then refused (a Home Assistant trial).
        let (number, unit) = try split(text, example: defaultUnit == nil ? volumeExample : nil)
        let ml: Double
        switch unit {
        case "":
            guard let defaultUnit else { throw .invalidAmount(text, reason: "give a unit: " + (unitsThatFit(number) ?? volumeExample)) }
            ml = defaultUnit.millilitres(number)
        case "ml", "mls", "millilitre", "millilitres", "milliliter", "milliliters": ml = number
        case "cl": ml = number * 10
        case "l", "litre", "litres", "liter", "liters": ml = number * 1000
        case "oz", "floz", "fl oz", "fl.oz", "fl. oz": ml = VolumeUnit.usFluidOunce.millilitres(number)
        default: throw .unknownUnit(unit, expected: .volume)
        }
        guard ml > 0 else { throw .invalidAmount(text, reason: "must be more than zero") }
        // `1.500ml`: a point between thousands, as many write them, read as a drop and a half (a trial's drink
        // was stored as 2 mL). Three digits after the point of a few millilitres is asked about, not taken;
        // `0.005l` is a few millilitres written on purpose in another unit.
        let typed = text.trimmingSpaces().prefix { $0.isNumber || $0 == "." }
        if ml < 10, ml == number, typed.wholeMatch(of: /\d{1,3}\.\d{3}/) != nil {
            let whole = String(typed.filter(\.isNumber).drop { $0 == "0" })
            throw .invalidAmount(text, reason: "a point between thousands is not read: write \(whole)\(unit.isEmpty ? "" : unit), "
                + "or \(Format.decimal(number, places: 1).replacing(",", with: ""))\(unit.isEmpty ? "" : unit) if you mean a few drops")
        }
        // 1e308 l is a finite number of litres and an infinite number of mL.
        guard ml.isFinite else { throw .invalidAmount(text, reason: "too large to be an amount") }
        return ml
    }

    /// A body weight in kg: `70kg`, `154 lb`, `70` (kg).
    public static func weightKG(_ text: String) throws(HistoryError) -> Double {
        let (number, unit) = try split(text, example: "such as 70kg or 154lb")
        let kg: Double
        switch unit {
        case "", "kg": kg = number
        case "lb", "lbs": kg = number * MeasurementUnit.lb.gramsPerUnit! / 1000  // a weight unit: never nil
        default: throw .unknownUnit(unit, expected: .weight)
        }
        guard (20...350).contains(kg) else { throw .invalidAmount(text, reason: "a body weight between 20 and 350 kg, please") }
        return kg
    }

    /// A daily window as minutes after midnight: `08:00-22:00`, or whole hours
    /// as people say them, `7-23`; `24:00` (or `24`) ends at midnight.
    public static func window(_ text: String) throws(HistoryError) -> (from: Int, until: Int) {
        let expected = "expected HH:MM-HH:MM or whole hours H-H, e.g. 08:00-22:00 or 7-23"
        let parts = text.split(separator: "-", omittingEmptySubsequences: false).map { $0.trimmingSpaces() }
        guard parts.count == 2 else { throw .invalidArgument("--window '\(text.shownSafely())': \(expected)") }
        func minute(_ p: String) throws(HistoryError) -> Int {
            let fields = p.split(separator: ":", omittingEmptySubsequences: false)
            guard (1...2).contains(fields.count), (1...2).contains(fields[0].count), fields.count == 1 || fields[1].count == 2,
                  fields.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
                  let h = Int(fields[0]), let m = fields.count == 2 ? Int(fields[1]) : 0, m < 60, h * 60 + m <= 1440
            else { throw .invalidArgument("--window '\(text.shownSafely())': '\(p.shownSafely())' is not a time of day; \(expected)") }
            return h * 60 + m
        }
        let (from, until) = (try minute(parts[0]), try minute(parts[1]))
        // Past midnight is the next morning (a night shift's 22-6); 24:00 is midnight's other name.
        guard from % 1440 != until % 1440 || (from, until) == (0, 1440) else {
            throw .invalidArgument("--window '\(text.shownSafely())' ends when it starts; all day is 00:00-24:00")
        }
        return (from % 1440, until == 0 ? 1440 : until)
    }

    /// Minutes after midnight as `HH:MM`.
    static func clock(_ minute: Int) -> String { "\(Format.two(minute / 60)):\(Format.two(minute % 60))" }

    /// A duration in minutes: `30min`, `45 m`, `1.5h`. A bare number is refused:
    /// `snooze 3` could mean minutes or hours.
    public static func minutes(_ text: String, within range: ClosedRange<Double> = 0...1440) throws(HistoryError) -> Double {
        let (low, high) = (Int(range.lowerBound), Int(range.upperBound))
        let bounds = "between \(low == 0 ? "0" : Format.span(minutes: low)) and \(Format.span(minutes: high))"
        // Hours and minutes, as a person says a span (`1h30m`, `1h 30min`, `2 h 15`): a carer's `1h30m` was an unknown unit.
        if let m = text.trimmingSpaces().lowercased().wholeMatch(of: /(\d{1,3})\s*(?:h|hr|hrs|hour|hours)\s*(\d{1,4})\s*(?:m|min|mins|minute|minutes)?/),
           let hours = Double(m.1), let rest = Double(m.2) {
            guard rest < 60 else { throw .invalidAmount(text, reason: "the minutes after the hours are 0 to 59") }
            guard range.contains(hours * 60 + rest) else { throw .invalidAmount(text, reason: "\(bounds), please") }
            return hours * 60 + rest
        }
        let (number, unit) = try split(text, example: "a time such as 30min or 2h")
        let minutes: Double
        switch unit {
        case "":
            // Only the readings that could be taken: `0` offered "0min or 0h" to a threshold of 15 min at least.
            let fits = [("min", number), ("h", number * 60)].filter { range.contains($0.1) }.map { "\(number.compactDescription)\($0.0)" }
            throw .invalidAmount(text, reason: fits.isEmpty ? "give a unit, and a time \(bounds)" : "give a unit: " + fits.joined(separator: " or "))
        case "m", "min", "mins", "minute", "minutes": minutes = number
        case "h", "hr", "hrs", "hour", "hours": minutes = number * 60
        default: throw .unknownUnit(unit, expected: .duration)
        }
        guard range.contains(minutes) else { throw .invalidAmount(text, reason: "\(bounds), please") }
        return minutes
    }

    /// What a volume that must carry its unit looks like, and a daily goal.
    static let volumeExample = "such as 250ml, 0.5l or 8oz"
    static let goalExample = "such as 2l or 68oz"

    /// A number and its unit; `example` is what the caller takes, said when there is no number
    /// (a duration was told "such as 250ml").
    private static func split(_ text: String, example: String? = nil) throws(HistoryError) -> (Double, String) {
        let trimmed = text.trimmingSpaces()
        let numberEnd = trimmed.firstIndex { !($0.isNumber || $0 == "." || $0 == "-" || $0 == "+" || $0 == "e") } ?? trimmed.endIndex
        let numberText = String(trimmed[..<numberEnd])
        let unit = trimmed[numberEnd...].trimmingSpaces().lowercased()
        // `0,3l` (a decimal comma) or `1,500ml` (a thousands separator): which is meant cannot be told,
        // so neither is guessed (it said "unknown unit ',3l'").
        if unit.first == ",", unit.dropFirst().first?.isNumber == true, !numberText.isEmpty {
            throw .invalidAmount(text, reason: "write the number without a comma: a point before decimals (0.3l), nothing between thousands (1500ml)")
        }
        guard let number = Double(numberText), number.isFinite else {
            // An amount's bare number is in the person's units: "followed by a unit" misled (a family's trial typed 2200 next).
            throw .invalidAmount(text, reason: example.map { "expected a number followed by a unit, \($0)" } ?? "expected a number, such as 250ml (a bare number is in your units)")
        }
        guard number >= 0 else { throw .invalidAmount(text, reason: "cannot be negative") }
        return (number, unit)
    }

    /// An instant: ISO 8601 with a zone (`2026-03-02T07:30:00Z`), local
    /// `2026-03-02 07:30[:00]` or `2026-03-02T07:30`, a local day `2026-03-02`
    /// (the start of that day), `HH:MM` (the latest such time not after `now`),
    /// `now`, `today`, `yesterday`.
    public static func instant(_ text: String, calendar: DayCalendar, now: Timestamp) throws(HistoryError) -> Timestamp {
        try instantFitted(text, calendar: calendar, now: now).instant
    }

    /// A bare time of day at most this far ahead of now is refused, not taken as yesterday's.
    static let aheadIsTodaySeconds = 2.0 * 3600

    /// The same, with how a local time fitted a day the clocks changed on
    /// (`.exact` for every other form).
    /// - Parameter forms: what the refusal of an unreadable text lists (a drink's time offers no day alone).
    static func instantFitted(_ text: String, calendar: DayCalendar, now: Timestamp, onDayOf: Timestamp? = nil,
                              forms: String = instantForms) throws(HistoryError)
        -> (instant: Timestamp, fit: DayCalendar.LocalTimeFit) {
        let t = text.trimmingSpaces()
        switch t.lowercased() {
        case "now": return (now, .exact)
        case "today": return (calendar.start(of: calendar.day(of: now)), .exact)
        case "yesterday": return (calendar.start(of: calendar.day(of: now).adding(days: -1)), .exact)
        default: break
        }
        if let stamp = Timestamp(iso8601: t) {
            // The UTC day: an instant of a day a history holds is one it can store.
            _ = try storable(CivilDay(number: Int(saturating: (stamp.secondsSince1970 / 86_400).rounded(.down))), text)
            return (stamp, .exact)
        }
        if let day = CivilDay(parsing: t) { return (calendar.start(of: try storable(day, text)), .exact) }
        if let local = try localDateTime(t, calendar: calendar, whole: text) { return local }
        let parts = t.split(whereSeparator: { $0 == "T" || $0 == " " })
        if parts.count == 1, t.contains(":") {
            let seconds = try timeOfDay(t, whole: text)
            if let onDayOf {
                // That instant's day as a history counts it: before the day's start hour is after midnight.
                let day = calendar.day(of: onDayOf)
                let date = seconds >= calendar.dayStartHour * 3600 ? day : day.adding(days: 1)
                return calendar.fit(localSeconds: date.number * 86_400 + seconds)
            }
            var date = calendar.wallClock(now).date
            var candidate = calendar.fit(localSeconds: date.number * 86_400 + seconds)
            if candidate.instant > now.adding(IntakeEvent.clockSlack) {
                // A time a little ahead of the clock is today's, typed early (a glass logged before it
                // is drunk, a clock that is behind): it went to yesterday, and the day read 0.
                if candidate.instant <= now.adding(Self.aheadIsTodaySeconds) {
                    let yesterday = date.adding(days: -1)
                    throw .invalidTime(text, reason: "\(t) is later than now (\(Format.clock(now, calendar))); for yesterday's, give its date: "
                                       + "'\(yesterday) \(t)'")
                }
                date = date.adding(days: -1)
                candidate = calendar.fit(localSeconds: date.number * 86_400 + seconds)
            }
            return candidate
        }
        if let first = parts.first, let reason = whyNotADay(String(first)) { throw .invalidDate(text, reason: reason) }
        throw .invalidDate(text, reason: forms)
    }

    /// A local date and time, `2026-03-02 07:30[:00]` or `2026-03-02T07:30`, on `calendar`'s clock,
    /// with how it fitted a day the clocks changed on; nil when `text` is not written so.
    static func localDateTime(_ text: String, calendar: DayCalendar, whole: String? = nil) throws(HistoryError)
        -> (instant: Timestamp, fit: DayCalendar.LocalTimeFit)? {
        let parts = text.trimmingSpaces().split(whereSeparator: { $0 == "T" || $0 == " " })
        guard parts.count == 2, let parsed = CivilDay(parsing: parts[0]) else { return nil }
        let day = try storable(parsed, whole ?? text)
        let seconds = try timeOfDay(String(parts[1]), whole: whole ?? text)
        return calendar.fit(localSeconds: day.number * 86_400 + seconds)
    }

    /// The hour a day starts at, written `14` or `14:00` (days start on the hour); nil when it is not one.
    static func dayStartHour(_ text: String) -> Int? {
        let t = text.trimmingSpaces()
        let digits = t.hasSuffix(":00") ? String(t.dropLast(3)) : t
        guard digits.count <= 2, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let h = Int(digits), Settings.dayStartHours.contains(h) else { return nil }
        return h
    }

    /// The forms `instant` reads, as its error says them.
    static let instantForms = "expected YYYY-MM-DD, YYYY-MM-DD HH:MM, HH:MM or an ISO 8601 time such as 2026-03-02T07:30:00Z"
    /// The forms of a drink's time: a day alone is refused there (`Edits.drinkTime`), so not offered.
    static let drinkTimeForms = "expected HH:MM, YYYY-MM-DD HH:MM or an ISO 8601 time such as 2026-03-02T07:30:00Z"

    /// A local day: `YYYY-MM-DD`, `today`, `yesterday`; one a history holds.
    public static func day(_ text: String, calendar: DayCalendar, now: Timestamp) throws(HistoryError) -> CivilDay {
        switch text.lowercased() {
        case "today": return try storable(calendar.day(of: now), text)
        case "yesterday": return try storable(calendar.day(of: now).adding(days: -1), text)
        default:
            guard let day = CivilDay(parsing: text) else { throw .invalidDate(text, reason: whyNotADay(text) ?? "expected YYYY-MM-DD, today or yesterday") }
            return try storable(day, text)
        }
    }

    /// Why `text`, written as a day (digits-MM-DD), is none: February 30, or a
    /// year past 9999; nil when it is not written as a day at all.
    static func whyNotADay(_ text: String) -> String? {
        let fields = text.split(separator: "-", omittingEmptySubsequences: false)
        guard fields.count == 3, fields[0].count >= 4, fields[1].count == 2, fields[2].count == 2,
              fields.allSatisfy({ $0.allSatisfy { ("0"..."9").contains($0) } }) else { return nil }
        if fields[0].count > 4 { return "after 9999: a history ends on 9999-12-31 at the latest" }
        return "\(text) is not a day of the calendar"
    }

    /// `YYYY-MM` → its first day; a month a history holds.
    public static func month(_ text: String) throws(HistoryError) -> CivilDay {
        guard text.count == 7, let day = CivilDay(parsing: text + "-01") else {
            throw .invalidDate(text, reason: "expected a month as YYYY-MM")
        }
        return try storable(day, text)
    }

    /// `day` when a history can hold it (`CivilDay.storable`, 1970 to 9999), else
    /// why not, naming `text`: no event can lie on a further day, and before
    /// year 1000 a day once could not even be written back as YYYY-MM-DD.
    static func storable(_ day: CivilDay, _ text: String) throws(HistoryError) -> CivilDay {
        if day < CivilDay.storable.lowerBound { throw .invalidDate(text, reason: "before 1970: a history starts on 1970-01-01 at the earliest") }
        if day > CivilDay.storable.upperBound { throw .invalidDate(text, reason: "after 9999: a history ends on 9999-12-31 at the latest") }
        return day
    }

    /// Runs `body`, its error naming `option` (`--date`, `--from`): the same
    /// parser serves several options, and a message should say which was wrong.
    static func option<T>(_ option: String, _ body: () throws(HistoryError) -> T) throws(HistoryError) -> T {
        do { return try body() } catch { throw .inOption(option, error) }
    }

    private static func timeOfDay(_ text: String, whole: String) throws(HistoryError) -> Int {
        let fields = text.split(separator: ":", omittingEmptySubsequences: false)
        // The hour as people write it too (9:30); minutes and seconds in two digits.
        guard (2...3).contains(fields.count), (1...2).contains(fields[0].count), fields.dropFirst().allSatisfy({ $0.count == 2 }),
              fields.allSatisfy({ $0.allSatisfy { ("0"..."9").contains($0) } }),
              let h = Int(fields[0]), let m = Int(fields[1]), let s = fields.count == 3 ? Int(fields[2]) : 0
        else { throw .invalidTime(whole, reason: "the time of day should be HH:MM or HH:MM:SS") }
        guard (0..<24).contains(h), (0..<60).contains(m), (0..<60).contains(s) else {
            throw .invalidTime(whole, reason: "no such time of day (00:00 to 23:59:59)")
        }
        return h * 3600 + m * 60 + s
    }
}

import FoundationEssentials
import QuenchCore
import QuenchStore
import Threading
#if canImport(Glibc)
import Glibc
#endif

/// `quench remind`: where the person stands against the pace, and when the
/// next reminder would come and why.
public struct ReminderReport: Sendable, Encodable {
    /// Whose reminders.
    public var person: String
    public var mode: String
    public var window: String
    public var slackMl: Double
    public var afterMinutes: Double
    public var everyMinutes: Double
    public var intakeMl: Double
    public var goalMl: Double
    public var paceMl: Double
    public var behindByMl: Double
    public var behind: Bool
    public var due: Bool
    public var nextAt: String?
    public var reason: String
    public var lastDrinkAt: String?
    public var lastReminderAt: String?
    public var snoozedUntil: String?
    /// Why the pace restarts mid-window (a window past the hour the person's days begin), and what to do.
    public var note: String?
    /// The hour their days could begin instead, while they sleep (`person day-start`), when there is a note.
    public var suggestedDayStart: Int?
}

/// A reminder given, as MQTT publishes it (Home Assistant's event entity needs
/// `event_type`): made when it is given and kept with its outbox row, so a late
/// message still says what was true then.
public struct ReminderGiven: Sendable, Encodable, Equatable {
    public var eventType = "reminder"
    public var person: String
    public var personId: Int64
    public var at: String?
    public var intakeMl: Double
    public var goalMl: Double
    public var paceMl: Double
    public var behindByMl: Double
    public var reason: String

    public init(person: String, personId: Int64, at: String?, intakeMl: Double, goalMl: Double, paceMl: Double, behindByMl: Double, reason: String) {
        self.person = person
        self.personId = personId
        self.at = at
        self.intakeMl = intakeMl
        self.goalMl = goalMl
        self.paceMl = paceMl
        self.behindByMl = behindByMl
        self.reason = reason
    }
}

extension History {
    public static func remind(_ environment: HistoryEnvironment, json: Bool) throws(HistoryError) -> String {
        let c = try environment.context(creating: false)
        let (report, _) = try reminderReport(c)
        return json ? JSONOutput.encode(report) : renderReminder(report, c)
    }

    /// `quench remind set`: change what is given, keep the rest.
    public static func setReminders(
        _ environment: HistoryEnvironment, mode: String?, window: String?, after: String?, every: String?, slack: String?, json: Bool
    ) throws(HistoryError) -> String {
        let c = try environment.context(creating: true)
        var settings = try c.run { (store) throws(StoreError) in try store.reminder(person: c.personID).settings }
        if let mode {
            guard let m = ReminderSettings.Mode(rawValue: mode.lowercased()) else {
                throw .invalidArgument("--mode '\(mode.shownSafely())' is not pace, hourly or off")
            }
            settings.mode = m
        }
        if let window { (settings.wakeFromMinute, settings.wakeUntilMinute) = try HistoryInput.window(window) }
        if let after { settings.afterMinutes = try HistoryInput.option("--after") { () throws(HistoryError) in try HistoryInput.minutes(after, within: ReminderSettings.afterMinutes) } }
        if let every { settings.everyMinutes = try HistoryInput.option("--every") { () throws(HistoryError) in try HistoryInput.minutes(every, within: ReminderSettings.everyMinutes) } }
        if let slack { settings.slackML = try HistoryInput.option("--slack") { () throws(HistoryError) in try HistoryInput.slack(slack) } }
        if let problem = settings.problem {
            // Said by the option that set it, as `--mode` above is.
            let said = switch problem {
            case .after(let r): "--after must be \(r.lowerBound) to \(r.upperBound) minutes"
            case .every(let r): "--every must be \(r.lowerBound) to \(r.upperBound) minutes"
            default: problem.description
            }
            throw .invalidArgument("reminders: \(said)")
        }
        try c.run { (store) throws(StoreError) in try store.saveReminderSettings(settings, person: c.personID) }
        return try remind(environment, json: json)
    }

    /// `quench remind snooze DURATION` (`off` ends a snooze).
    public static func snoozeReminders(_ environment: HistoryEnvironment, duration: String, json: Bool) throws(HistoryError) -> String {
        let c = try environment.context(creating: true)
        let until = duration.lowercased() == "off" ? nil
            : c.now.adding(try HistoryInput.option("duration") { () throws(HistoryError) in try HistoryInput.minutes(duration) } * 60)
        try c.run { (store) throws(StoreError) in try store.snoozeReminders(until: until, person: c.personID) }
        return try remind(environment, json: json)
    }

    /// What a delivery did: nothing due, or a reminder (and the hook's outcome).
    public struct Delivery: Sendable {
        public var text: String
        public var delivered: Bool
        /// The hook's failure, when there was a hook and it failed.
        public var hookProblem: String?
        /// Whose reminder, and what it says to them ("drink something: ..."), for a push to a phone.
        public var person: String = ""
        public var message: String = ""
        /// The facts behind it: `person`, `intake_ml`, `goal_ml`, `pace_ml`, `behind_ml`, `reason`
        /// (the hook's QUENCH_* variables, by the same names in lower case).
        public var fields: [String: String] = [:]
    }

    /// `quench remind --notify [--command PATH]`: delivers a reminder when one is
    /// due (a line on stdout, for the journal; the command, if given) and notes it,
    /// so the next comes no sooner than the policy allows. Run it often (the
    /// `quench-remind.timer` does, every five minutes); it does nothing when nothing is due.
    public static func deliverReminder(_ environment: HistoryEnvironment, command: String?, timeout: Double = 10) throws(HistoryError) -> Delivery {
        let c = try environment.context(creating: false)
        let record = try c.run { (store) throws(StoreError) in try store.reminder(person: c.personID) }
        let (report, verdict) = try reminderReport(c, record: record)
        guard verdict.due else { return Delivery(text: "", delivered: false, hookProblem: nil) }
        let message = "drink something: \(Format.volume(report.intakeMl, c.units)) of \(Format.volume(report.goalMl, c.units)) so far, "
            + "pace \(Format.volume(report.paceMl, c.units)) (\(report.reason))"
        let fields = [
            "person": c.personName, "intake_ml": fixed(report.intakeMl), "goal_ml": fixed(report.goalMl),
            "pace_ml": fixed(report.paceMl), "behind_ml": fixed(report.behindByMl), "reason": report.reason,
        ]
        let given = ReminderGiven(person: c.personName, personId: c.personID ?? 0, at: Format.localISO(c.now, c.calendar),
                                  intakeMl: report.intakeMl, goalMl: report.goalMl, paceMl: (report.paceMl * 10).rounded() / 10,
                                  behindByMl: (report.behindByMl * 10).rounded() / 10, reason: report.reason)
        // Claimed before it is sent: a run that judged it due at the same moment sends nothing.
        let claimed = try c.run { (store) throws(StoreError) in
            try store.claimReminder(at: c.now, person: c.personID, message: json(given), lastWas: record.lastRemindedAt)
        }
        guard claimed else { return Delivery(text: "", delivered: false, hookProblem: nil) }
        var problem: String?
        if let command {
            let variables = Dictionary(uniqueKeysWithValues: fields.map { ("QUENCH_" + $0.key.uppercased(), $0.value) })
            problem = ReminderHook.run(command, variables: variables, timeout: timeout)
        }
        return Delivery(text: "reminder\(c.whose): " + message, delivered: true, hookProblem: problem,
                        person: c.personName, message: message, fields: fields)
    }

    /// `quench remind --notify` as the timer runs it: the named person's reminder,
    /// or, when nobody is named, each person's that is due (the timer serves the
    /// whole household, and must not fail once a second person is added).
    public static func deliverReminders(_ environment: HistoryEnvironment, command: String?, timeout: Double = 10) throws(HistoryError) -> [Delivery] {
        // Refused before anything is due: the timer's run says so every time, not only when a reminder falls due.
        if let command, let problem = FileTrust.check(command) { throw .untrustedFile(problem) }
        // A command that cannot run is a mistake to say now, not when a reminder is next due.
        if let command, let problem = ReminderHook.problem(running: command) { throw .invalidArgument("reminder command: \(problem)") }
        guard environment.person == nil else { return [try deliverReminder(environment, command: command, timeout: timeout)] }
        let store = try environment.openStore(creating: false)
        var deliveries: [Delivery] = []
        for person in try HistoryContext.run({ () throws(StoreError) in try store.people() }) {
            var theirs = environment
            theirs.person = person.name
            deliveries.append(try deliverReminder(theirs, command: command, timeout: timeout))
        }
        return deliveries
    }

    static func fixed(_ ml: Double) -> String { String(Int(saturating: ml.rounded())) }

    static func reminderReport(_ c: HistoryContext, record given: ReminderRecord? = nil) throws(HistoryError) -> (ReminderReport, ReminderPolicy.Verdict) {
        let record: ReminderRecord
        if let given { record = given } else { record = try c.run { (store) throws(StoreError) in try store.reminder(person: c.personID) } }
        let settings = record.settings
        let day = c.today
        let (windowStart, windowEnd, asleep) = settings.wakingDay(day, c.calendar)
        let today = c.calendar.wallClock(c.now).date
        let intake = try c.dailyTotals(from: day, through: day)[day.number]?.ml ?? 0
        let goal = try c.goalBook().goal(on: day)
        let last = try c.run { (store) throws(StoreError) in try store.lastSip(before: c.now.adding(1), person: c.personID) }
        let situation = ReminderPolicy.Situation(
            now: c.now, windowStart: windowStart, windowEnd: windowEnd, asleep: asleep, intakeML: intake, goalML: goal,
            lastDrink: last?.time, lastReminder: record.lastRemindedAt, snoozedUntil: record.snoozedUntil)
        let verdict = ReminderPolicy.judge(situation, settings, volume: { Format.volume($0, c.units) }) { time in
            c.calendar.wallClock(time).date == today ? Format.time(time, c.calendar) : Format.dateTime(time, c.calendar)
        }
        let report = ReminderReport(
            person: c.personName, mode: settings.mode.rawValue,
            window: settings.wakingHours,
            slackMl: settings.slackML, afterMinutes: settings.afterMinutes, everyMinutes: settings.everyMinutes,
            intakeMl: intake, goalMl: goal, paceMl: verdict.paceML, behindByMl: verdict.behindByML, behind: verdict.behind,
            due: verdict.due, nextAt: verdict.nextAt.map { Format.localISO($0, c.calendar) }, reason: verdict.reason,
            lastDrinkAt: last.map { Format.localISO($0.time, c.calendar) },
            lastReminderAt: record.lastRemindedAt.map { Format.localISO($0, c.calendar) },
            snoozedUntil: record.snoozedUntil.flatMap { $0 > c.now ? Format.localISO($0, c.calendar) : nil },
            note: settings.dayStartNote(c.calendar, person: c.personName), suggestedDayStart: settings.suggestedDayStart(c.calendar))
        return (report, verdict)
    }

    static func renderReminder(_ r: ReminderReport, _ c: HistoryContext) -> String {
        let u = c.units
        var rows: [(String, String)] = [
            ("Reminders", r.mode == "off" ? "off" : "\(r.mode), \(r.window), after \(ReminderPolicy.minutes(r.afterMinutes)) without a drink, "
                + "at most every \(ReminderPolicy.minutes(r.everyMinutes))" + (r.mode == "pace" ? ", slack \(Format.volume(r.slackMl, u))" : "")),
            ("Intake", "\(Format.volume(r.intakeMl, u)) of \(Format.volume(r.goalMl, u))"),
            ("Pace now", Format.volume(r.paceMl, u) + (r.behind ? ": behind by \(Format.volume(r.behindByMl, u))" : ": on pace")),
        ]
        if let until = r.snoozedUntil.flatMap({ Timestamp(iso8601: $0) }) { rows.append(("Snoozed", "until \(Format.dateTime(until, c.calendar))")) }
        if r.due {
            rows.append(("Reminder", "due now: \(r.reason)"))
        } else if let next = r.nextAt.flatMap({ Timestamp(iso8601: $0) }) {
            rows.append(("Next", "\(Format.dateTime(next, c.calendar)): \(r.reason)"))
        } else {
            rows.append(("Next", "none today: \(r.reason)"))
        }
        if let note = r.note { rows.append(("Note", note)) }
        return Format.fields(rows)
    }
}

/// Runs a reminder's command: the program itself with the reminder in its
/// environment, never a shell string built from data; killed past `timeout`.
enum ReminderHook {
    /// Why `path` cannot be run (run as given, never looked up in `PATH`); nil when it can.
    static func problem(running path: String) -> String? {
        let shown = path.shownSafely()
        var info = stat()
        guard stat(path, &info) == 0 else { return "cannot run \(shown): \(String(cString: strerror(errno)))" }
        guard info.st_mode & S_IFMT == S_IFREG else { return "cannot run \(shown): it is not a regular file" }
        guard access(path, X_OK) == 0 else { return "cannot run \(shown): \(String(cString: strerror(errno))) (not executable)" }
        return nil
    }

    /// nil when it ran and exited 0; else what went wrong.
    /// A program another user could have replaced is not run: the timer runs this as the
    /// service's user, and `sudo quench remind --notify` as root.
    static func run(_ path: String, variables: [String: String], timeout: Double) -> String? {
        if let problem = FileTrust.check(path) { return "not run: \(problem)" }
        var environment = ProcessInfo.processInfo.environment
        for (k, v) in variables { environment[k] = v }
        let shown = path.shownSafely()
        switch ChildProcess.run(path, environment: environment.map { "\($0.key)=\($0.value)" }, timeout: timeout) {
        case .exited(0, _): return nil
        case .exited(let status, _): return "\(shown) exited with status \(status)"
        case .killed(let signal): return "\(shown) was killed by signal \(signal)"
        case .timedOut: return "\(shown) did not finish within \(Int(saturating: timeout)) s; stopped"
        case .cannotStart(let code): return "cannot run \(shown): \(String(cString: strerror(code)))"
        }
    }
}

extension ReminderSettings {
    /// The waking window that opens on the date of `day`, on the local calendar (all day: the
    /// whole of `day`). One that ends before it starts ends the next morning: a night shift's 20:00-08:00.
    func wakingWindow(on day: CivilDay, _ calendar: DayCalendar) -> (start: Timestamp, end: Timestamp) {
        let from = wakingMinutes == 1440 ? calendar.dayStartHour * 60 : wakeFromMinute
        return (calendar.instant(atLocalSeconds: day.number * 86_400 + from * 60),
                calendar.instant(atLocalSeconds: day.number * 86_400 + (from + wakingMinutes) * 60))
    }

    /// The waking windows that open on the dates of `days`, and of a day either side: a night's
    /// runs into the next day, and one that opens before its day begins belongs partly to the one before.
    func wakingWindows(around days: ClosedRange<Int>, _ calendar: DayCalendar) -> [(start: Timestamp, end: Timestamp)] {
        (days.lowerBound - 1...days.upperBound + 1).map { wakingWindow(on: CivilDay(number: $0), calendar) }
    }

    /// When the waking hours of `t` end: the end of the window it is in, or, asleep, of the next.
    func wakingEnd(after t: Timestamp, _ calendar: DayCalendar) -> Timestamp {
        let day = calendar.day(of: t).number
        return wakingWindows(around: day...day + 1, calendar).map(\.end).filter { $0 > t }.min() ?? t
    }

    /// The waking window `now` is in; nil when asleep.
    func wakingWindow(containing now: Timestamp, _ calendar: DayCalendar) -> (start: Timestamp, end: Timestamp)? {
        let today = calendar.day(of: now).number
        return wakingWindows(around: today...today, calendar).first { now >= $0.start && now < $0.end }
    }

    /// The waking hours inside household day `day`, for its pace: from `start` to `end`, but for the
    /// hours `asleep` between. A window inside the day is itself. One across the hour the day begins
    /// (a night's, when the day begins at 04:00) is two pieces of it, the morning's end and the
    /// evening's start, so the whole day, the sleep between them left out.
    func wakingDay(_ day: CivilDay, _ calendar: DayCalendar) -> (start: Timestamp, end: Timestamp, asleep: (start: Timestamp, end: Timestamp)?) {
        let dayStart = calendar.dayStartHour * 60
        let length = wakingMinutes
        func at(_ minutes: Int) -> Timestamp { calendar.instant(atLocalSeconds: day.number * 86_400 + minutes * 60) }
        guard length < 1440 else { return (at(dayStart), at(dayStart + 1440), nil) }
        let from = wakeFromMinute < dayStart ? wakeFromMinute + 1440 : wakeFromMinute
        guard crossesDayStart(calendar) else { return (at(from), at(from + length), nil) }
        let sleep = (from + length) % 1440 < dayStart ? (from + length) % 1440 + 1440 : (from + length) % 1440
        return (at(dayStart), at(dayStart + 1440), (at(sleep), at(sleep + 1440 - length)))
    }

    /// How long the window is: an end before the start is the next morning's; 00:00-24:00 is all day.
    var wakingMinutes: Int {
        let length = (wakeUntilMinute - wakeFromMinute + 1440) % 1440
        return length == 0 ? 1440 : length
    }

    /// Why the pace will not follow this window whole, when it runs past the hour days begin:
    /// each day keeps the parts of it inside the day (`wakingDay`), so the pace starts again
    /// mid-window. The way out is a day that begins while asleep (the middle of the hours
    /// asleep); nil when it fits.
    func dayStartNote(_ calendar: DayCalendar, person: String) -> String? {
        guard let suggested = suggestedDayStart(calendar) else { return nil }
        let dayStart = calendar.dayStartHour * 60
        let shown = person.shownSafely(limit: 40)
        let word = Format.shellWord(person)
        return "the waking window \(wakingHours) spans \(HistoryInput.clock(dayStart)), when \(shown)'s days begin, "
            + "so the pace starts again at \(HistoryInput.clock(dayStart)): `quench person day-start \(word) \(suggested)` begins them while asleep"
    }

    /// An hour for days to begin while asleep (the middle of the hours asleep), when the window
    /// runs past the hour they begin now; nil when it fits in a day.
    func suggestedDayStart(_ calendar: DayCalendar) -> Int? {
        guard crossesDayStart(calendar) else { return nil }
        return ((wakeUntilMinute + (1440 - wakingMinutes) / 2) / 60) % 24
    }

    /// Whether the window runs past the hour days begin, so that a day holds two pieces of it
    /// (all day never does: it is the whole day).
    func crossesDayStart(_ calendar: DayCalendar) -> Bool {
        wakingMinutes < 1440 && (wakeFromMinute - calendar.dayStartHour * 60 + 1440) % 1440 + wakingMinutes > 1440
    }

    /// `08:00-22:00`, as `remind set --window` takes it.
    var wakingHours: String { HistoryInput.clock(wakeFromMinute) + "-" + HistoryInput.clock(wakeUntilMinute) }
}

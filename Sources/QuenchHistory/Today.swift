import FoundationEssentials
import QuenchCore
import QuenchStore

/// `quench today`: intake so far against the goal.
public struct TodayReport: Sendable, Encodable {
    public struct Bottle: Sendable, Encodable {
        public var device: String
        public var name: String?
        public var remainingMl: Double
        public var at: String
    }

    /// Whose day it is.
    public var person: String
    public var date: String
    public var dayStart: String
    public var timeZone: String
    public var units: String
    public var intakeMl: Double
    public var goalMl: Double
    public var goalIsDefault: Bool
    public var progress: Double
    public var sips: Int
    public var averageSipMl: Double?
    public var lastSipAt: String?
    /// Whole seconds: the time of a sip is kept to the microsecond, and "3600.482113" is no one's figure.
    public var lastSipAgoSeconds: Double?
    public var bottles: [Bottle]
}

extension History {
    /// `date` (`--date`, `?date=`: YYYY-MM-DD, today, yesterday) shows that day
    /// instead, its last sip the last before that day ended.
    public static func today(_ environment: HistoryEnvironment, date: String? = nil, json: Bool) throws(HistoryError) -> String {
        let context = try environment.context(creating: false)
        let day = try chartDay(context, date)
        let report = try todayReport(context, day: day)
        return json ? JSONOutput.encode(report) : renderToday(report, context)
    }

    static func todayReport(_ c: HistoryContext, day chosen: CivilDay? = nil) throws(HistoryError) -> TodayReport {
        let day = chosen ?? c.today
        let total = try c.dailyTotals(from: day, through: day)[day.number] ?? DayTotal(ml: 0, sips: 0)
        let book = try c.goalBook()
        let goal = book.goal(on: day)
        let until = day < c.today ? c.calendar.interval(of: day).end : c.now.adding(1)
        let last = try c.run { (store) throws(StoreError) in try store.lastSip(before: until, person: c.personID) }
        // The person's bottles heard from in the week before; older readings say little. An earlier day's as
        // its end saw them (it showed what was left the day after).
        let asOf = day < c.today ? until : nil
        let recent = try c.run { (store) throws(StoreError) in
            try store.latestRemaining(since: (asOf ?? c.now).adding(-7 * 86_400), before: asOf, owner: c.personID)
        }
        let devices = try c.run { (store) throws(StoreError) in try store.listDevices() }
        let names = Dictionary(devices.map { ($0.address, $0.name) }, uniquingKeysWith: { a, _ in a })
        return TodayReport(
            person: c.personName, date: day.description, dayStart: "\(Format.two(c.calendar.dayStartHour)):00",
            timeZone: c.calendar.timeZone.identifier, units: c.units.rawValue,
            intakeMl: total.ml, goalMl: goal, goalIsDefault: book.isDefault, progress: (total.ml / goal * 10_000).rounded() / 10_000,
            sips: total.sips, averageSipMl: total.sips > 0 ? Format.hundredths(total.ml / Double(total.sips)) : nil,
            lastSipAt: last.map { Format.localISO($0.time, c.calendar) },
            // Not below 0: a sip within the clocks' slack of now is "0 s ago", not -1.
            lastSipAgoSeconds: last.map { max(0, (c.now.secondsSince1970 - $0.time.secondsSince1970).rounded(.down)) },
            bottles: recent.map { event in
                TodayReport.Bottle(
                    device: event.device ?? "-", name: names[event.device ?? ""] ?? nil,
                    remainingMl: event.remainingML ?? 0, at: Format.localISO(event.time, c.calendar))
            })
    }

    static func renderToday(_ r: TodayReport, _ c: HistoryContext) -> String {
        let u = c.units
        var rows: [(String, String)] = []
        let goalText = Format.volume(r.goalMl, u) + (r.goalIsDefault ? " (default goal)" : "")
        rows.append(("Intake", "\(Format.volume(r.intakeMl, u)) of \(goalText)"))
        rows.append(("", "\(Format.bar(r.progress, width: 30, color: c.color)) \(Format.percent(r.progress))"))
        rows.append(("To go", r.intakeMl >= r.goalMl ? "goal met" : Format.volume(r.goalMl - r.intakeMl, u)))
        rows.append(("Sips", r.sips == 0 ? "none yet" : "\(Format.grouped(r.sips)), \(Format.volume(r.averageSipMl ?? 0, u)) on average"))
        if let at = r.lastSipAt.flatMap({ Timestamp(iso8601: $0) }), let ago = r.lastSipAgoSeconds {
            rows.append(("Last sip", "\(Format.dateTime(at, c.calendar)), \(Format.ago(ago))"))
        } else {
            rows.append(("Last sip", "never"))
        }
        if r.bottles.isEmpty {
            rows.append(("Bottles", "no bottle reported what is left in the last 7 days"))
        }
        for (i, bottle) in r.bottles.enumerated() {
            let label = bottle.name.map { "\($0) (\(bottle.device))" } ?? bottle.device
            let at = Timestamp(iso8601: bottle.at).map { Format.dateTime($0, c.calendar) } ?? bottle.at
            rows.append((i == 0 ? "Left" : "", "\(Format.volume(bottle.remainingMl, u)) in \(label), as of \(at)"))
        }
        let day = CivilDay(parsing: r.date) ?? c.today
        // Another day's brackets hold the person too: "(me) (day starts …)" read as two afterthoughts.
        let zone = "day starts \(r.dayStart), \(r.timeZone)"
        let title = day == c.today ? "Today\(c.whose), \(Format.longDate(day)) (\(zone))"
            : "\(Format.longDate(day)) (\(c.whoseName.map { "\($0); " } ?? "")\(zone))"
        return title + "\n" + Format.fields(rows)
    }
}

/// The history commands' entry points: each takes the environment and its
/// arguments and returns the text to print.
public enum History {}

import FoundationEssentials
import QuenchCore
import QuenchStore

/// Which days met the goal, for the streaks: the days a report adds up, more
/// when a run of met days reaches past them (loaded a month at a time, then
/// twice as far each time, a year at most), and runs remembered in the store
/// (`met_span`) so that a streak of years is added up once, not on every `stats`.
struct MetDays {
    private let c: HistoryContext
    private let book: GoalBook
    private let firstSip: CivilDay?
    private var totals: [Int: DayTotal]
    /// Day numbers whose totals are in `totals`.
    private var loaded: [ClosedRange<Int>]
    private var remembered: [MetSpan]
    /// The store's count of changes shown before the first read: a span is remembered only if nothing changed since.
    private let shownChanges: Int64
    /// Which calendar a remembered span counts days in: a day is another day in another zone or with another start.
    static func calendarKey(_ calendar: DayCalendar) -> String { "\(calendar.timeZone.identifier)|\(calendar.dayStartHour)" }
    /// Runs shorter than this are found within the first month's reach anyway: not worth a write.
    static let rememberedLength = 32

    /// Reads the totals of `from` through today.
    init(_ c: HistoryContext, book: GoalBook, firstSip: CivilDay?, from: CivilDay) throws(HistoryError) {
        self.c = c
        self.book = book
        self.firstSip = firstSip
        let key = Self.calendarKey(c.calendar)
        shownChanges = try c.run { (store) throws(StoreError) in try store.shownChanges() }
        // (An Optional.map with a typed-throws closure here crashes the 6.3.1 compiler in release builds.)
        if let person = c.personID {
            remembered = try c.run { (store) throws(StoreError) in try store.metSpans(person: person, calendar: key) }
        } else {
            remembered = []
        }
        totals = try c.dailyTotals(from: from, through: c.today)
        loaded = [from.number...c.today.number]
    }

    func total(_ day: CivilDay) -> DayTotal { totals[day.number] ?? DayTotal(ml: 0, sips: 0) }

    /// Whether `day` met its goal (days before the first sip never did).
    mutating func met(_ day: CivilDay) throws(HistoryError) -> Bool {
        if let firstSip, day < firstSip { return false }
        guard firstSip != nil else { return false }
        try load(day)
        return total(day).ml >= book.goal(on: day)
    }

    /// The first day of the run of met days that ends on `day` (itself met).
    mutating func runStart(endingOn day: CivilDay) throws(HistoryError) -> CivilDay {
        var start = day
        var reach = 31
        while true {
            if let span = remembered.first(where: { ($0.first...$0.last).contains(start.number) }), span.first < start.number {
                start = CivilDay(number: span.first)
                reach = 31  // past a remembered run the next break is usually near
            }
            let before = start.adding(days: -1)
            if !loaded.contains(where: { $0.contains(before.number) }) {
                try load(before, reach: reach)
                reach = min(365, reach * 2)
            }
            guard try met(before) else { break }
            start = before
        }
        try remember(MetSpan(first: start.number, last: min(day.number, c.today.number - 1)))
        return start
    }

    /// Loads `reach` days ending on `day` (the walks go back in time), unless `day` is loaded.
    private mutating func load(_ day: CivilDay, reach: Int = 31) throws(HistoryError) {
        guard !loaded.contains(where: { $0.contains(day.number) }) else { return }
        let below = loaded.map(\.upperBound).filter { $0 < day.number }.max() ?? Int.min
        let from = CivilDay(number: max(day.number - (reach - 1), below + 1))
        totals.merge(try c.dailyTotals(from: from, through: day)) { a, _ in a }
        loaded.append(from.number...day.number)
    }

    /// Remembers a run of complete days (today is not over) once it is long enough to be worth it.
    private mutating func remember(_ span: MetSpan) throws(HistoryError) {
        guard span.last - span.first + 1 >= Self.rememberedLength, let person = c.personID else { return }
        if remembered.contains(where: { $0.first <= span.first && span.last <= $0.last }) { return }
        let validBefore = c.calendar.start(of: CivilDay(number: span.last + 1))
        let key = Self.calendarKey(c.calendar)
        // A cache: a file another process is writing, or cannot be written, costs the next `stats` the sums again, no more.
        let stored = (try? c.run { (store) throws(StoreError) in
            try store.rememberMetSpan(span, validBefore: validBefore, person: person, calendar: key, shownChanges: shownChanges)
        }) ?? false
        if stored { remembered.append(span) }
    }
}

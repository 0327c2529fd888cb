import QuenchCore
import QuenchStore

/// Which daily goal applies to which day.
///
/// A goal applies from its start day until the next goal starts. Days before the
/// first goal use the first goal (history recorded before anyone set a goal is
/// judged by the first goal set); with no goal at all, `defaultML`.
struct GoalBook {
    /// 2 L: EFSA's adequate intake of water from drinks for adult women is about
    /// 1.6 L (2.0 L total water, 20 % of it from food), for men about 2.0 L
    /// (EFSA NDA Panel, "Scientific Opinion on Dietary Reference Values for
    /// water", EFSA Journal 2010;8(3):1459); 2 L is the usual app default.
    static let defaultML = 2000.0

    let goals: [Goal]

    var isDefault: Bool { goals.isEmpty }

    func goal(on day: CivilDay) -> Double {
        guard let first = goals.first else { return Self.defaultML }
        var ml = first.ml
        for goal in goals {
            if goal.startDay <= day { ml = goal.ml } else { break }
        }
        return ml
    }

    func current(on day: CivilDay) -> Goal? {
        goals.last { $0.startDay <= day } ?? goals.first
    }
}

extension HistoryContext {
    func goalBook() throws(HistoryError) -> GoalBook {
        GoalBook(goals: try run { (store) throws(StoreError) in try store.goals(person: personID) })
    }

    /// The person's intake per day for `days` (inclusive range), from the store's SQL totals.
    func dailyTotals(from first: CivilDay, through last: CivilDay) throws(HistoryError) -> [Int: DayTotal] {
        let segments = calendar.segments(from: calendar.start(of: first), until: calendar.start(of: last.adding(days: 1)))
        return try run { (store) throws(StoreError) in try store.sipTotalsByDay(segments, person: personID) }
            .mapValues { DayTotal(ml: Format.sum([$0.ml]), sips: $0.sips) }
    }
}

import FoundationEssentials
import QuenchCore
import QuenchStore

/// A recommended daily goal and how it was worked out.
public struct GoalRecommendation: Sendable, Encodable {
    public var weightKg: Double
    public var exerciseMinutes: Double
    public var baseMl: Double
    public var exerciseMl: Double
    public var recommendedMl: Double
    public var rule: String
    public var saved: Bool
    /// Whose goal it was saved as; nil when not saved.
    public var person: String?
}

public struct GoalReport: Sendable, Encodable {
    public struct Entry: Sendable, Encodable {
        public var from: String
        public var ml: Double
    }
    /// Whose goal.
    public var person: String
    public var currentMl: Double
    public var isDefault: Bool
    public var from: String?
    public var units: String
    public var history: [Entry]
}

extension History {
    /// The rule behind `goal recommend`:
    /// - 35 mL per kg of body weight a day: the 30–35 mL/kg/day adult maintenance
    ///   figure used in clinical fluid guidance (e.g. NICE CG174, 25–30 mL/kg for
    ///   IV maintenance, and the 35 mL/kg rule of dietetic practice) and by most
    ///   hydration apps; for a 70 kg adult it gives 2.45 L, close to EFSA's
    ///   adequate intake of 2.0–2.5 L total water (EFSA Journal 2010;8(3):1459).
    /// - plus 350 mL per 30 minutes of exercise: the American College of Sports
    ///   Medicine's position stand (2007) advises replacing sweat losses of about
    ///   0.4–0.8 L per hour when training; 0.7 L/h is the commonly quoted figure.
    /// Rounded to the nearest 50 mL.
    public static let recommendationRule = "35 mL per kg of body weight + 350 mL per 30 min of exercise, rounded to 50 mL"

    public static func recommendGoal(weightKg: Double, exerciseMinutes: Double) -> (base: Double, exercise: Double, total: Double) {
        let base = 35 * weightKg
        let exercise = 350 * exerciseMinutes / 30
        return (base, exercise, ((base + exercise) / 50).rounded() * 50)
    }

    /// `quench goal set AMOUNT [--from DAY]`.
    /// - Parameter command: a remote command's id (Home Assistant): recorded with the goal, so the same command
    ///   again changes nothing (sent late, it undid a later goal) and its id is refused for anything else.
    public static func setGoal(_ environment: HistoryEnvironment, amount: String, from: String?, json: Bool,
                               command: String? = nil) throws(HistoryError) -> String {
        let c = try environment.context(creating: true)
        let ml = try HistoryInput.goal(amount, defaultUnit: c.units)
        let day = try from.map { (f) throws(HistoryError) in
            try HistoryInput.option("--from") { () throws(HistoryError) in try HistoryInput.day(f, calendar: c.calendar, now: c.now) }
        } ?? c.today
        if let command {
            let done = try c.run { (store) throws(StoreError) in try store.setGoal(ml: ml, from: day, setAt: c.now, person: c.personID, command: command) }
            if let done { return try goalText(c, json: json, lead: "Already done at \(Format.dateTime(done.doneAt, c.calendar)): nothing changed.") }
        } else {
            try c.run { (store) throws(StoreError) in try store.setGoal(ml: ml, from: day, setAt: c.now, person: c.personID) }
        }
        return try goalText(c, json: json, lead: "Daily goal set to \(Format.volume(ml, c.units)) from \(day).")
    }

    /// `quench goal show`.
    public static func showGoal(_ environment: HistoryEnvironment, json: Bool) throws(HistoryError) -> String {
        try goalText(try environment.context(creating: false), json: json, lead: nil)
    }

    static func goalText(_ c: HistoryContext, json: Bool, lead: String?) throws(HistoryError) -> String {
        let book = try c.goalBook()
        let current = book.current(on: c.today)
        let report = GoalReport(
            person: c.personName, currentMl: book.goal(on: c.today), isDefault: book.isDefault, from: current?.startDay.description,
            units: c.units.rawValue, history: book.goals.map { .init(from: $0.startDay.description, ml: $0.ml) })
        if json { return JSONOutput.encode(report) }
        var lines: [String] = []
        if let lead { lines.append(lead) }
        if book.isDefault {
            lines.append("Daily goal\(c.whose): \(Format.volume(report.currentMl, c.units)) (the default; set yours with `quench goal set 2000ml`)")
        } else {
            if let current, current.startDay > c.today {
                // Only goals from a later day: the first one set stands for the days before it too.
                lines.append("Daily goal\(c.whose): \(Format.volume(report.currentMl, c.units)), the first goal set (from \(current.startDay), and for the days before it)")
            } else {
                lines.append("Daily goal\(c.whose): \(Format.volume(report.currentMl, c.units)) since \(report.from ?? "-")")
            }
            if book.goals.count > 1 {
                lines.append(Format.table(["From", "Goal"], book.goals.reversed().map { [$0.startDay.description, Format.volume($0.ml, c.units)] },
                                          align: [.left, .right]).split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))
            }
        }
        return lines.joined(separator: "\n")
    }

    /// `quench goal recommend --weight W [--exercise T] [--save]`.
    public static func recommendGoal(
        _ environment: HistoryEnvironment, weight: String, exercise: String?, save: Bool, json: Bool
    ) throws(HistoryError) -> String {
        let kg = try HistoryInput.weightKG(weight)
        let minutes = try exercise.map { (e) throws(HistoryError) in try HistoryInput.option("--exercise") { () throws(HistoryError) in try HistoryInput.minutes(e) } } ?? 0
        let (base, extra, total) = recommendGoal(weightKg: kg, exerciseMinutes: minutes)
        // Only a save needs the database; a recommendation alone works anywhere. For someone named here
        // (`--person`, the page's `?person=`; not QUENCH_PERSON or the config's, which every command carries),
        // in a history, it is read: their units, and a name nobody has is refused, not answered for (a family trial).
        let named = environment.person != nil && environment.personNamedIn == nil
            && FileManager.default.fileExists(atPath: environment.databasePath)
        let c: HistoryContext? = save || named ? try environment.context(creating: save) : nil
        let units = environment.units ?? c?.units ?? .ml
        if save, let c {
            try c.run { (store) throws(StoreError) in try store.setGoal(ml: total, from: c.today, setAt: c.now, person: c.personID) }
        }
        let report = GoalRecommendation(
            weightKg: kg, exerciseMinutes: minutes, baseMl: base, exerciseMl: extra, recommendedMl: total,
            rule: recommendationRule, saved: save, person: c?.person?.name)
        if json { return JSONOutput.encode(report) }
        var rows: [(String, String)] = [("Body weight", "\(Format.decimal(kg, places: 1)) kg x 35 mL = \(Format.volume(base, units))")]
        if minutes > 0 {
            rows.append(("Exercise", "\(Format.decimal(minutes, places: 0)) min x 350 mL / 30 min = \(Format.volume(extra, units))"))
        }
        rows.append(("Recommended", "\(Format.volume(total, units)) a day"))
        var text = "Recommended daily goal (\(recommendationRule))\n" + Format.fields(rows)
        if save, let c {
            text += "\nSaved as your daily goal from \(c.today)."
        } else {
            text += "\nSave it with --save, or `quench goal set \(Format.amount(total, .ml).replacing(",", with: ""))ml`."
        }
        return text
    }
}

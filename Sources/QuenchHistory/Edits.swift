import FoundationEssentials
import QuenchCore
import QuenchStore

/// What `add`, `delete`, `undo` and `restore` did.
public struct EditReport: Sendable, Encodable {
    /// Whose event, and whose day the totals are.
    public var person: String
    public var action: String
    public var event: EventRecordOutput
    public var todayMl: Double
    public var goalMl: Double
    /// Whose it was, when the edit gave it to someone else (`--to`).
    public var from: String?
}

/// An event as `--json` shows it after an edit.
public struct EventRecordOutput: Sendable, Encodable {
    public var id: Int64
    public var kind: String
    public var ml: Double
    public var at: String
    /// The day it counts for (YYYY-MM-DD): a drink at 02:00 counts for the day before when days start at 04:00.
    public var day: String
    public var source: String
    public var note: String?
    public var deleted: Bool
}

extension History {
    /// `quench add AMOUNT [--at TIME] [--note TEXT]`: a drink not seen by a sensor.
    /// - Parameter identity: the event's identity when the caller has one (a Home Assistant
    ///   command's `mqtt|ID`): a second add with it stores nothing and says `already added`.
    ///   Nil: a new random one (`manual|UUID`).
    public static func add(_ environment: HistoryEnvironment, amount: String, at: String?, note: String?, json: Bool,
                           identity: String? = nil) throws(HistoryError) -> String {
        // Parsed before the store is opened: a typo creates nothing.
        let ml = try HistoryInput.volume(amount, defaultUnit: nil)
        let note = TextField.note.stored(note)
        if let note, let problem = TextField.note.problem(note) { throw .invalidArgument(problem) }
        let c = try environment.context(creating: true)
        try checkDrinkSize(ml, said: amount, c)
        let (time, fit) = try drinkTime(at, c)
        // A wall time the clocks skipped or repeated that day is said, not silently moved.
        let zone = c.calendar.timeZone.identifier
        var adjustment: String?
        switch fit {
        case .exact: break
        case .skipped:
            adjustment = "\(at ?? "") does not exist in \(zone) (the clocks went forward); recorded at \(Format.dateTime(time, c.calendar))"
        case .repeated(let later):
            adjustment = "\(at ?? "") happens twice in \(zone) (the clocks went back); recorded at the first, "
                + "\(time.iso8601); for the second use --at \(later.iso8601)"
        }
        if let identity, let done = try c.run({ (store) throws(StoreError) in try store.event(identity: identity) }) {
            return try alreadyAdded(done, ml: ml, identity: identity, c, json: json)
        }
        // A remote command's id that an undo or a goal used names that command, not a drink.
        if let identity { try c.run { (store) throws(StoreError) in try store.refuseIfACommandsID(drinkIdentity: identity) } }
        let event: IntakeEvent
        do {
            event = try c.run { (store) throws(StoreError) in
                try store.addManual(ml: ml, at: time, note: note, identity: identity ?? "manual|\(UUID().uuidString.lowercased())", recordedAt: c.now,
                                    person: c.personID)
            }
        } catch {
            // Two adds with one identity at once (a double tap, a retry): the other stored it between
            // the look above and this insert, and the identity's uniqueness refused this one. It was
            // answered 400 "a value breaks the database's rules".
            if let identity, let done = try c.run({ (store) throws(StoreError) in try store.event(identity: identity) }) {
                return try alreadyAdded(done, ml: ml, identity: identity, c, json: json)
            }
            throw error
        }
        let text = try editText(c, action: "added", event, json: json)
        guard let adjustment, !json else { return text }
        return "Note: " + adjustment.shownSafely(limit: 300) + ".\n" + text
    }

    /// A second add with a drink's identity: the same drink sent again (a retry, a double tap) is
    /// answered as added; the id sent with another amount or for someone else is refused, naming the
    /// drink it was used for. (It answered "already added" and stored nothing: a Home Assistant
    /// automation that sent one fixed id for everyone's morning glass logged only the first.)
    static func alreadyAdded(_ done: IntakeEvent, ml: Double, identity: String, _ c: HistoryContext, json: Bool) throws(HistoryError) -> String {
        let samePerson = done.person.map { $0.lowercased() == c.personName.lowercased() } ?? true
        guard samePerson, abs(done.ml - ml) < 0.005 else {
            let id = identity.split(separator: "|", maxSplits: 1).last.map(String.init) ?? identity
            throw .invalidArgument("the id '\(id.shownSafely(limit: 80))' was already used for #\(done.id ?? 0), "
                + "\(Format.volume(done.ml, c.units)) for \((done.person ?? c.personName).shownSafely(limit: 40)) at \(Format.dateTime(done.time, c.calendar)); "
                + "a new drink needs an id of its own")
        }
        return try editText(c, action: "already added", done, json: json)
    }

    /// One drink is from `HistoryInput.minimumDrinkML` to `maximumDrinkML`, said in the person's units.
    static func checkDrinkSize(_ ml: Double, said amount: String, _ c: HistoryContext) throws(HistoryError) {
        guard ml >= HistoryInput.minimumDrinkML else {
            throw .invalidAmount(amount, reason: "less than \(Format.volume(HistoryInput.minimumDrinkML, .ml)), too little to be a drink")
        }
        guard ml <= HistoryInput.maximumDrinkML else {
            throw .invalidAmount(amount, reason: "more than \(Format.volume(HistoryInput.maximumDrinkML, c.units)) in one drink")
        }
    }

    /// `--at` of a drink: now when absent; never in the future (a minute of slack for clocks) nor before 1970.
    /// A bare time of day is on `onDayOf`'s day when given (an edit keeps its drink's day), else the latest one past.
    static func drinkTime(_ at: String?, _ c: HistoryContext, onDayOf: Timestamp? = nil) throws(HistoryError) -> (Timestamp, DayCalendar.LocalTimeFit) {
        try HistoryInput.option("--at") { () throws(HistoryError) in
            // A day alone is a moment to `--since`, its start; a drink at 04:00 is not what was meant.
            if let a = at?.trimmingSpaces(), CivilDay(parsing: a) != nil || ["today", "yesterday"].contains(a.lowercased()) {
                throw .invalidTime(a, reason: "a drink needs its time of day too: '\(a) 12:30', or 12:30 alone for today's")
            }
            let (time, fit) = try at.map { (a) throws(HistoryError) in
                do throws(HistoryError) {
                    // A day alone is no drink's time, so not among the forms a refusal lists.
                    return try HistoryInput.instantFitted(a, calendar: c.calendar, now: c.now, onDayOf: onDayOf, forms: HistoryInput.drinkTimeForms)
                } catch .invalidDate(let text, let reason) {
                    throw .invalidTime(text, reason: reason)  // --at names a moment, written as a day or not
                }
            }
                ?? (c.now, .exact)
            // Drinks from the future are typos.
            guard time <= c.now.adding(IntakeEvent.clockSlack) else {
                // A bare time before the day start on an edited drink's day: 03:00 of a day that runs to 04:00
                // is the next date's, which a person who meant that morning did not expect; the date they meant
                // is said (the day's own date). Any other time past now is a typo, and has no such hint.
                let earlier = at.flatMap { a -> String? in
                    guard let onDayOf, !a.contains(where: { $0 == "-" || $0 == "T" }) else { return nil }
                    let day = c.calendar.day(of: onDayOf)
                    guard c.calendar.wallClock(time).date != day else { return nil }
                    return "; for \(a.trimmingSpaces()) on the drink's date, give it: '\(day) \(a.trimmingSpaces())'"
                } ?? ""
                throw .invalidTime(at ?? "", reason: "\(Format.dateTime(time, c.calendar)) is in the future\(earlier)")
            }
            guard IntakeEvent.plausibleTime.contains(time.secondsSince1970) else {
                throw .invalidTime(at ?? "", reason: "before 1970: a history starts on 1970-01-01 at the earliest")
            }
            // Its day too: 03:59 on 1 January 1970 counts for 31 December 1969 when days start at 04:00, a day no
            // view shows (`?date=` refuses it), so the drink was in no day's total (a LAN trial).
            if let problem = c.calendar.countsBeforeHistory(time) { throw .invalidTime(at ?? "", reason: "it " + problem) }
            return (time, fit)
        }
    }

    /// `quench edit ID [--amount A] [--at TIME] [--note TEXT] [--to NAME] [--kind sip|pour]`: mends a drink (a typo,
    /// an amount a sensor misjudged, when it was really drunk; `--note ''` removes the note; `--to`
    /// gives it to who really drank it, as when a household shares a bottle; `--kind pour` says it was poured
    /// away, not drunk, and `--kind sip` that a pour was drunk: on a scale a fast drink and a slow pour look alike).
    /// An id names one event whoever drank it; a person named must be its drinker, as for `delete`.
    // Not optimised: the 6.3 compiler's CopyPropagation crashes on this function in release builds
    // ("Found ownership error": HistoryContext's person read after its borrow ends), whatever its
    // shape; an edit is one command, never a hot path.
    @_optimize(none)
    public static func edit(_ environment: HistoryEnvironment, id: Int64, amount: String?, at: String?, note: String?,
                            to: String? = nil, kind: String? = nil, json: Bool) throws(HistoryError) -> String {
        guard amount != nil || at != nil || note != nil || to != nil || kind != nil else {
            throw .invalidArgument("nothing to change: give --amount, --at, --note, --to or --kind")
        }
        let newKind = try kind.map { (text) throws(HistoryError) -> EventKind in
            guard let k = EventKind(rawValue: text.trimmingSpaces().lowercased()), k == .sip || k == .pour else {
                throw .inOption("--kind", .invalidArgument("'\(text.shownSafely(limit: 40))' is not sip (drunk) or pour (poured away)"))
            }
            return k
        }
        let before = try ownEvent(environment, id: id)
        guard before.kind == .sip || before.kind == .pour else {
            throw .invalidArgument("event \(id) is a \(before.kind.rawValue), not a drink or a pour: only those are edited")
        }
        if newKind == .sip, before.kind == .pour, amount == nil, before.ml > HistoryInput.maximumDrinkML {
            throw .inOption("--kind", .invalidArgument("\(Format.volume(before.ml, .ml)) is more than one drink holds (\(Format.volume(HistoryInput.maximumDrinkML, .ml)))"))
        }
        // Its restore would bring it back, not undo the edit: the order is restore, then edit.
        guard !before.deleted else {
            throw .invalidArgument("event \(id) is deleted: `quench restore \(id)` brings it back, then it can be edited")
        }
        var owner = environment
        owner.person = before.person
        let c = try owner.context(creating: false)
        let change = try editChange(environment, c, of: before, amount: amount, at: at, to: to)
        let (ml, time, drinkerID, newNote) = (change.ml, change.time, change.drinker?.id, note.map { Optional($0) })
        let event = try c.run { (store) throws(StoreError) in
            try store.editEvent(id: id, ml: ml, time: time, note: newNote, person: drinkerID, kind: newKind)
        }
        let drinker = change.drinker
        // Said with the day of whoever has it now.
        guard let drinker, drinker.id != c.personID else { return try editText(c, action: "edited", event, json: json) }
        var theirs = environment
        theirs.person = drinker.name
        let giver = before.person
        return try editText(try theirs.context(creating: false), action: "edited", event, json: json, from: giver)
    }

    /// What `edit` is asked to change, each checked and said by its option.
    static func editChange(_ environment: HistoryEnvironment, _ c: HistoryContext, of before: IntakeEvent,
                           amount: String?, at: String?, to: String?) throws(HistoryError) -> (ml: Double?, time: Timestamp?, drinker: Person?) {
        var change: (ml: Double?, time: Timestamp?, drinker: Person?) = (nil, nil, nil)
        // Whoever it goes to must be in the household: named as any person is, the error listing everyone.
        var units = c.units
        if let to {
            var named = environment
            named.person = to
            change.drinker = try HistoryInput.option("--to") { () throws(HistoryError) in try named.selectedPerson(in: c.store, formerNames: false) }
            // A bare number given with it is in their units, as what is said back is.
            units = try named.context(creating: false).units
        }
        if let amount {
            change.ml = try HistoryInput.option("--amount") { () throws(HistoryError) in
                let ml = try HistoryInput.volume(amount, defaultUnit: units)
                try checkDrinkSize(ml, said: amount, c)
                return ml
            }
        }
        // `--at 09:05` mends the time of that drink's day, not today's; of a drink at a time no history holds
        // (another program's row at 1e300), the latest 09:05 past, which mends it.
        let day = IntakeEvent.plausibleTime.contains(before.time.secondsSince1970) ? before.time : nil
        if let at { change.time = try drinkTime(at, c, onDayOf: day).0 }
        return change
    }

    /// The event `id`, checked to be the named person's when one is named.
    static func ownEvent(_ environment: HistoryEnvironment, id: Int64) throws(HistoryError) -> IntakeEvent {
        let store = try environment.openStore(creating: false)
        guard let event = try HistoryContext.run({ () throws(StoreError) in try store.event(id: id) }) else {
            throw .store(StoreError.noSuchEvent(id, path: store.path))
        }
        // An id names one event: the person a shell or a file names (QUENCH_PERSON) does not stand in its way.
        if let named = environment.person, environment.personNamedIn == nil {
            let person = try environment.selectedPerson(in: store)
            guard event.person.map({ Person.sameName($0, person.name) }) ?? false else {
                throw .invalidArgument("event \(id) is \((event.person ?? "nobody").shownSafely(limit: 40))'s, not \(named.shownSafely(limit: 40))'s")
            }
        }
        return event
    }

    /// `quench delete ID`: soft delete. An id names one event whoever drank it,
    /// so no person is needed; one that is named must be the event's.
    public static func delete(_ environment: HistoryEnvironment, id: Int64, json: Bool) throws(HistoryError) -> String {
        try setDeleted(environment, id: id, true, json: json)
    }

    /// `delete` and `restore`: checks the event is the named person's (if one is
    /// named), changes it, and reports with that event's person's day.
    static func setDeleted(_ environment: HistoryEnvironment, id: Int64, _ deleted: Bool, json: Bool) throws(HistoryError) -> String {
        let before = try ownEvent(environment, id: id)
        var owner = environment
        // As `undo` with nothing to undo: a change that would change nothing is refused, and said.
        guard before.deleted != deleted else { throw .unchanged(id: id, deleted: deleted) }
        owner.person = before.person
        let c = try owner.context(creating: false)
        let event = try c.run { (store) throws(StoreError) in try store.setDeleted(id: id, deleted) }
        return try editText(c, action: deleted ? "deleted" : "restored", event, json: json)
    }

    /// `quench undo`: soft-deletes the person's event stored last (a drink just added with an earlier `--at` too).
    /// - Parameter command: a remote command's id (Home Assistant): recorded with the delete, so
    ///   the same command again deletes nothing more and says `already deleted`.
    public static func undo(_ environment: HistoryEnvironment, json: Bool, command: String? = nil) throws(HistoryError) -> String {
        let c = try environment.context(creating: false)
        if let command {
            let (event, done) = try c.run { (store) throws(StoreError) in try store.deleteNewest(person: c.personID, command: command, at: c.now) }
            guard let event else {
                throw .invalidArgument("nothing to undo: \(c.personName.shownSafely(limit: 40)) has no events")
            }
            return try editText(c, action: done == nil ? "deleted" : "already deleted", event, json: json)
        }
        guard let event = try c.run({ (store) throws(StoreError) in try store.deleteNewest(person: c.personID) }) else {
            throw .invalidArgument("nothing to undo: \(c.personName.shownSafely(limit: 40)) has no events")
        }
        return try editText(c, action: "deleted", event, json: json)
    }

    /// `quench restore ID`: undoes a delete (a named person must be the event's, as for `delete`).
    public static func restore(_ environment: HistoryEnvironment, id: Int64, json: Bool) throws(HistoryError) -> String {
        try setDeleted(environment, id: id, false, json: json)
    }

    static func editText(_ c: HistoryContext, action: String, _ e: IntakeEvent, json: Bool, from: String? = nil) throws(HistoryError) -> String {
        let day = c.today
        let today = try c.dailyTotals(from: day, through: day)[day.number]?.ml ?? 0
        let goal = try c.goalBook().goal(on: day)
        let id = e.id ?? 0
        let eventDay = c.calendar.day(of: e.time)
        if json {
            return JSONOutput.encode(EditReport(
                person: c.personName, action: action,
                event: EventRecordOutput(id: id, kind: e.kind.rawValue, ml: e.ml, at: Format.localISO(e.time, c.calendar),
                                         day: eventDay.description, source: e.source.rawValue, note: e.note, deleted: e.deleted),
                todayMl: today, goalMl: goal, from: from))
        }
        var line = "\(action.prefix(1).uppercased() + action.dropFirst()) #\(id): \(e.kind.rawValue) \(Format.volume(e.ml, c.units)) at \(Format.dateTime(e.time, c.calendar))"
        if let note = e.note { line += " (\(note.shownSafely(limit: 200)))" }
        if let from { line += ", now \(c.personName.shownSafely(limit: 40))'s (was \(from.shownSafely(limit: 40))'s)" }
        // A time before the day start is the day before's: said, or 02:00 "added" and missing from today's total.
        if eventDay.number == day.number - 1, c.calendar.wallClock(e.time).date == day {
            line += "\nIt counts for \(eventDay), whose day runs until \(c.calendar.dayStartHour < 10 ? "0" : "")\(c.calendar.dayStartHour):00 today."
        }
        if e.deleted { line += "\nUndo with `quench restore \(id)`." }
        line += "\nToday\(c.whose): \(Format.volume(today, c.units)) of \(Format.volume(goal, c.units))."
        return line
    }
}

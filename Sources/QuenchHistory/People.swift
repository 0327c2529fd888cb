import FoundationEssentials
import QuenchCore
import QuenchStore
#if canImport(Glibc)
import Glibc
#endif

/// `quench people`: who shares the history, each with their goal today, units and devices.
public struct PeopleReport: Sendable, Encodable {
    public struct Entry: Sendable, Encodable {
        /// Their row id: MQTT's `person/ID` topics and Home Assistant's unique ids hang on it.
        public var id: Int64
        public var name: String
        public var goalMl: Double
        public var goalIsDefault: Bool
        /// Their own units, else the household's (`units_are_own` says which).
        public var units: String
        public var unitsAreOwn: Bool
        public var devices: [String]
        /// Events, as `log` lists them (deleted ones apart, in `deleted_events`).
        public var events: Int
        /// Deleted events, which `restore` brings back (and which `person remove` moves too).
        public var deletedEvents: Int
        /// When their days begin, `HH:MM`: their own (`person day-start`), else the household's.
        public var dayStart: String
        public var dayStartIsOwn: Bool
    }

    public var people: [Entry]
}

/// What `person add|rename|remove` and `devices assign` did.
public struct PersonChange: Sendable, Encodable {
    public var action: String
    public var person: String
    /// `rename`: the name before; `remove --move-to`: who received the history; `assign`: the device.
    public var detail: String?
    /// `alert … off`: when the alert still open about them was acknowledged with it (ISO 8601 with offset).
    public var acknowledgedAlert: String?
    /// `assign --since`: how many of the device's events became theirs.
    public var moved: Int? = nil
    /// `assign`: whether the device is paired here (else only its events were given).
    public var paired: Bool? = nil
}

extension History {
    /// `quench people [--json]`.
    public static func people(_ environment: HistoryEnvironment, json: Bool) throws(HistoryError) -> String {
        let store = try environment.openStore(creating: false)
        let people = try HistoryContext.run { () throws(StoreError) in try store.people() }
        var entries: [PeopleReport.Entry] = []
        for person in people {
            var one = environment
            one.person = person.name
            let c = try one.context(creating: false)
            let book = try c.goalBook()
            let holdings = try c.run { (store) throws(StoreError) in try store.holdings(of: person.id) }
            entries.append(.init(id: person.id, name: person.name, goalMl: book.goal(on: c.today), goalIsDefault: book.isDefault,
                                 units: c.units.rawValue, unitsAreOwn: person.units != nil && environment.units == nil,
                                 devices: holdings.devices, events: holdings.events - holdings.deleted, deletedEvents: holdings.deleted,
                                 dayStart: HistoryInput.clock(c.calendar.dayStartHour * 60), dayStartIsOwn: person.dayStartHour != nil))
        }
        if json { return JSONOutput.encode(PeopleReport(people: entries)) }
        // When their days begin only once someone's differ from the household's: most households never set it.
        let ownDays = entries.contains { $0.dayStartIsOwn }
        let rows = entries.map { e -> [String] in
            let unit = VolumeUnit(rawValue: e.units) ?? .ml
            return [e.name.shownSafely(limit: 40), Format.volume(e.goalMl, unit) + (e.goalIsDefault ? " (default)" : ""),
                    Format.unitName(unit) + (e.unitsAreOwn ? "" : " (household)"),
                    e.devices.isEmpty ? "-" : e.devices.map { $0.shownSafely(limit: 40) }.joined(separator: ", "), Format.grouped(e.events) + (e.deletedEvents > 0 ? " (+\(Format.grouped(e.deletedEvents)) deleted)" : "")]
                + (ownDays ? [e.dayStart + (e.dayStartIsOwn ? "" : " (household)")] : [])
        }
        return Format.table(["Name", "Goal today", "Units", "Devices", "Events"] + (ownDays ? ["Day starts"] : []), rows,
                            align: [.left, .right, .left, .left, .right, .left])
    }

    /// `quench person add NAME [--goal AMOUNT] [--units ml|oz]`.
    public static func addPerson(
        _ environment: HistoryEnvironment, name: String, goal: String?, units: String?, json: Bool
    ) throws(HistoryError) -> String {
        // Checked before the store is opened: a typo creates nothing.
        let unit = try HistoryEnvironment.unitOption(units)
        let ml = try goal.map { (g) throws(HistoryError) in try HistoryInput.goal(g, defaultUnit: unit) }
        // Checked before the store is opened too: a name that cannot be creates no database.
        if let refusal = Person.refusal(ofName: name) { throw .invalidArgument(refusal) }
        let store = try environment.openStore(creating: true)
        let person = try HistoryContext.run { () throws(StoreError) in try store.addPerson(name: name, units: unit, at: environment.now) }
        var theirs = environment
        theirs.person = person.name
        if let ml {
            let c = try theirs.context(creating: false)
            try c.run { (store) throws(StoreError) in try store.setGoal(ml: ml, from: c.today, setAt: c.now, person: person.id) }
        }
        // A household set up by adding everyone still has the history's first person, "me", with
        // nothing of theirs: said while that lasts, with what to do (a new user did not know who "me" was).
        var text = "Added \(person.name.shownSafely(limit: 40))."
        if let first = try HistoryContext.run({ () throws(StoreError) in try store.person(named: Person.defaultName) }),
           first.name == Person.defaultName, first.id != person.id,
           case let holdings = try HistoryContext.run({ () throws(StoreError) in try store.holdings(of: first.id) }),
           holdings.events == 0, holdings.devices.isEmpty {
            text += " The history's first person is still called \(Person.defaultName), with nothing of theirs: "
                + "`quench person rename \(Person.defaultName) NAME` names them, `quench person remove \(Person.defaultName)` removes them."
        }
        return try personChanged(theirs, PersonChange(action: "added", person: person.name), json: json, text: text)
    }

    /// `quench person rename OLD NEW`: their history, goals, reminders and devices follow.
    public static func renamePerson(_ environment: HistoryEnvironment, from old: String, to new: String, json: Bool) throws(HistoryError) -> String {
        let store = try environment.openStore(creating: false)
        var named = environment
        named.person = old
        let person = try named.selectedPerson(in: store, formerNames: false)
        // The hub matches a gateway's events by name: renamed here alone, they would be someone new there.
        if try HistoryContext.run({ () throws(StoreError) in try store.isLinkedToHub(person: person.id) }) {
            throw .invalidArgument("\(person.name.shownSafely(limit: 40)) is the hub's (its roster gives them a device here): rename them at the hub, "
                                   + "which renames them at every gateway (`quench person rename \(Format.shellWord(person.name)) \(Format.shellWord(new)) --db HUB.sqlite`); "
                                   + "renamed here alone, the hub would count their next drinks as someone new's")
        }
        try HistoryContext.run { () throws(StoreError) in try store.renamePerson(id: person.id, to: new) }
        named.person = new
        return try personChanged(named, PersonChange(action: "renamed", person: new, detail: person.name), json: json,
                                 text: "Renamed \(person.name.shownSafely(limit: 40)) to \(new.shownSafely(limit: 40)).")
    }

    /// `quench person units NAME ml|oz|household`: their own units, or the household's again.
    public static func setPersonUnits(_ environment: HistoryEnvironment, name: String, units: String, json: Bool) throws(HistoryError) -> String {
        let unit = units.lowercased() == "household" ? nil : try HistoryEnvironment.unitOption(units, expected: .personUnits)
        let store = try environment.openStore(creating: false)
        var named = environment
        named.person = name
        let person = try named.selectedPerson(in: store, formerNames: false)
        try HistoryContext.run { () throws(StoreError) in try store.setPersonUnits(id: person.id, unit) }
        return try personChanged(named, PersonChange(action: "units", person: person.name, detail: unit?.rawValue), json: json,
                                 text: "\(person.name.shownSafely(limit: 40)) now sees \(unit.map { Format.unitName($0) } ?? "the household's units").")
    }

    /// `quench person day-start NAME HOUR|household`: the hour their days begin (a night shift's,
    /// while they sleep), or the household's again. Their today, totals, streaks and reminders
    /// follow; said with what their waking window then does.
    public static func setPersonDayStart(_ environment: HistoryEnvironment, name: String, hour text: String, json: Bool) throws(HistoryError) -> String {
        let hour: Int?
        if text.lowercased() == "household" { hour = nil } else {
            guard let h = HistoryInput.dayStartHour(text) else {
                throw .invalidArgument("day start '\(text.shownSafely())' is not an hour from 0 to 23 (e.g. 14 or 14:00), or household")
            }
            hour = h
        }
        let store = try environment.openStore(creating: false)
        var named = environment
        named.person = name
        let person = try named.selectedPerson(in: store, formerNames: false)
        try HistoryContext.run { () throws(StoreError) in try store.setPersonDayStart(id: person.id, hour: hour) }
        named.person = person.name
        let c = try named.context(creating: false)
        let settings = try c.run { (store) throws(StoreError) in try store.reminder(person: c.personID).settings }
        let shown = person.name.shownSafely(limit: 40)
        var text = "\(shown)'s days now begin at \(HistoryInput.clock(c.calendar.dayStartHour * 60))" + (hour == nil ? ", as the household's do." : ".")
        if let note = settings.dayStartNote(c.calendar, person: person.name) { text += " Note: " + note + "." }
        return try personChanged(named, PersonChange(action: "day-start", person: person.name, detail: hour.map { HistoryInput.clock($0 * 60) }),
                                 json: json, text: text)
    }

    /// `quench person remove NAME [--move-to OTHER]`: refused while they have
    /// events or devices, unless another person is to have them; nothing is lost.
    public static func removePerson(_ environment: HistoryEnvironment, name: String, moveTo heir: String?, json: Bool) throws(HistoryError) -> String {
        let store = try environment.openStore(creating: false)
        var named = environment
        named.person = name
        let person = try named.selectedPerson(in: store, formerNames: false)
        guard try HistoryContext.run({ () throws(StoreError) in try store.people() }).count > 1 else {
            throw .invalidArgument("cannot remove the only person: the history must belong to someone (`quench person rename` renames them)")
        }
        var receiver: Person?
        if let heir {
            named.person = heir
            receiver = try named.selectedPerson(in: store, formerNames: false)
            guard receiver?.id != person.id else { throw .invalidArgument("--move-to names \(name.shownSafely(limit: 40)) themselves") }
        }
        let holdings = try HistoryContext.run { () throws(StoreError) in try store.holdings(of: person.id) }
        if receiver == nil, holdings.events > 0 || !holdings.devices.isEmpty {
            var what: [String] = []
            if holdings.events > 0 {
                what.append("\(Format.grouped(holdings.events)) event\(holdings.events == 1 ? "" : "s")"
                            + (holdings.deleted > 0 ? " (\(Format.grouped(holdings.deleted)) of them deleted, which restore brings back)" : ""))
            }
            if !holdings.devices.isEmpty { what.append("device\(holdings.devices.count == 1 ? "" : "s") \(holdings.devices.joined(separator: ", "))") }
            throw .invalidArgument("\(person.name.shownSafely(limit: 40)) still has \(what.joined(separator: " and ")); "
                                   + "nothing was removed (give them to someone with --move-to NAME)")
        }
        // Their own settings go with them, said before they are gone: a carer who removed Gran to add her
        // again found her threshold, waking hours and goal back at the defaults, with no word of it.
        let settings = json ? [] : try ownSettings(of: person, named)
        try HistoryContext.run { () throws(StoreError) in try store.removePerson(id: person.id, movingTo: receiver?.id) }
        let change = PersonChange(action: "removed", person: person.name, detail: receiver?.name)
        if json { return JSONOutput.encode(change) }
        var text = "Removed \(person.name.shownSafely(limit: 40))"
        if let receiver {
            text += "; \(Format.grouped(holdings.events)) event\(holdings.events == 1 ? "" : "s")"
                + (holdings.devices.isEmpty ? "" : " and \(holdings.devices.joined(separator: ", "))")
                + " now \(receiver.name.shownSafely(limit: 40))'s"
        }
        return text + "." + (settings.isEmpty ? "" : " Their own settings were removed with them (not given to anyone): " + settings.joined(separator: ", ") + ".")
    }

    /// Someone's settings that are their own, not the defaults: what removing them loses.
    private static func ownSettings(of person: Person, _ environment: HistoryEnvironment) throws(HistoryError) -> [String] {
        var named = environment
        named.person = person.name
        let c = try named.context(creating: false)
        var settings: [String] = []
        let book = try c.goalBook()
        if !book.isDefault { settings.append("a daily goal of \(Format.volume(book.goal(on: c.today), c.units))") }
        let reminder = try c.run { (store) throws(StoreError) in try store.reminder(person: person.id) }.settings
        if reminder.wakingHours != ReminderSettings.defaults.wakingHours { settings.append("waking hours \(reminder.wakingHours)") }
        if let alert = person.alertAfterMinutes { settings.append("a carer's alert after \(Format.span(minutes: alert))") }
        return settings
    }

    /// `quench devices assign ADDRESS --person NAME [--since TIME]`: the device's next
    /// events are that person's; its past events stay with whoever drank them, or
    /// from `since` on are theirs too (the bottle someone else used this morning:
    /// one drink at a time was 54 edits, and a refill could not be given at all).
    public static func assignDevice(_ environment: HistoryEnvironment, address typed: String, since: String? = nil,
                                    json: Bool) throws(HistoryError) -> String {
        // Named here: giving a device away is not done for whoever QUENCH_PERSON or the config names.
        guard environment.person != nil else { throw .invalidArgument("say whose it is now with --person NAME") }
        if let source = environment.personNamedIn {
            throw .invalidArgument("say whose it is now with --person NAME (\(source) names whose history a command reads; it gives no device away)")
        }
        let address: String
        switch DeviceAddress.canonical(typed) {
        case .success(let canonical): address = canonical
        case .failure(let error): throw .invalidArgument(error.description)
        }
        let c = try environment.context(creating: false)
        // The person is its object: a name they had before is not taken for them.
        let person = try environment.selectedPerson(in: c.store, formerNames: false)
        let from = try since.map { (s) throws(HistoryError) in
            try HistoryInput.option("--since") { () throws(HistoryError) in
                let t = try HistoryInput.instant(s, calendar: c.calendar, now: c.now)
                guard t <= c.now else { throw .invalidTime(s, reason: "that has not come yet") }
                return t
            }
        }
        let shown = address.shownSafely(limit: 40), name = person.name.shownSafely(limit: 40)
        // Where the hub decides who has a bottle, a change here would not last (the review): said, with where to make it.
        let (atHub, owner) = try c.run { (store) throws(StoreError) in (try !store.hubGateways().isEmpty, try store.deviceOwners()[address]) }
        if atHub {
            throw .invalidArgument("this is a hub's history: `quench hub assign \(shown) --person NAME` gives the bottle on every gateway, "
                + "and `devices assign \(shown) --person NAME --since TIME` at the gateway that logged them gives its past drinks")
        }
        if let owner, owner != person.id, try c.run({ (store) throws(StoreError) in try store.isLinkedToHub(person: owner) }) {
            throw .invalidArgument("\(shown) is given by the hub's roster here: `quench hub assign \(shown) --person NAME` on the hub's "
                + "database gives it (this gateway follows within a minute), then `--since TIME` here gives its past drinks")
        }
        let (paired, moved, had) = try c.run { (store) throws(StoreError) in try store.assignDevice(address: address, to: person.id, eventsSince: from) }
        // A device replayed into the history and never paired has events to give, and no owner to change.
        guard paired || (had ?? 0) > 0 else { throw .invalidArgument("no device \(shown) is paired (see `quench devices`)") }
        var text = paired ? "\(shown) is now \(name)'s" : "\(shown) is not paired"
        if let from, let moved, let had {
            let when = Format.dateTime(from, c.calendar)
            text += had == 0 ? "; it has no events since \(when)."
                : moved == 0 ? "; its events since \(when) were \(name)'s already."
                : "; \(moved == 1 ? "1 of its events" : "\(moved) of its events") since \(when) \(moved == 1 ? "is" : "are") now \(name)'s"
                    + (paired ? ", the earlier ones stay with whoever drank them." : ".")
        } else {
            text += "; its earlier events stay with whoever drank them."
        }
        let change = PersonChange(action: "assigned", person: person.name, detail: address, moved: moved, paired: paired)
        return try personChanged(environment, change, json: json, text: text)
    }

    /// A change's report: JSON, or `text` followed by the people as they now are.
    static func personChanged(_ environment: HistoryEnvironment, _ change: PersonChange, json: Bool, text: String) throws(HistoryError) -> String {
        if json { return JSONOutput.encode(change) }
        var all = environment
        all.person = nil
        return text + "\n" + (try people(all, json: false))
    }
}

extension History {
    /// Who a device being paired goes to: the selected person's name, checked
    /// before any Bluetooth wait, without creating the database (a pairing that
    /// fails leaves none behind). nil when nobody is named and the household is
    /// one person (or no database yet): theirs, with nothing to say.
    public static func pairingOwner(_ environment: HistoryEnvironment) throws(HistoryError) -> String? {
        guard access(environment.databasePath, F_OK) == 0 else {
            // A new database has one person, the migration's.
            guard let named = environment.person, named.lowercased() != Person.defaultName else { return nil }
            throw .unknownPerson(named, people: [Person.defaultName])
        }
        let store = try environment.openStore(creating: false)
        let people = try HistoryContext.run { () throws(StoreError) in try store.people() }
        if environment.person == nil, people.count == 1 { return nil }
        return try environment.selectedPerson(among: people, in: store).name
    }
}

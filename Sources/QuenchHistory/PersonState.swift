import QuenchCore
import QuenchStore

/// Where a person stands, as published (MQTT's retained state): `quench today`
/// and `quench remind` in one, with the day's start for Home Assistant's
/// `last_reset` and each bottle's link.
public struct PersonState: Sendable, Encodable, Equatable {
    public struct Bottle: Sendable, Encodable, Equatable {
        public var device: String
        public var name: String?
        public var remainingMl: Double?
        /// When the bottle last said what is left in it.
        public var remainingAt: String?
        /// Whether the gateway holds a link to it now; nil when never recorded.
        public var linkUp: Bool?
        public var batteryPercent: Int?
        /// Its profile (`hidrate-spark`, `decent-scale`) and what it measures (`weight`: a scale
        /// the bottle stands on; `level`: a bottle), for Home Assistant's device model.
        public var profile: String?
        public var sensor: String?
    }

    public var person: String
    /// The person's id: MQTT's topics and Home Assistant's unique ids hang on it, not on the name.
    public var personId: Int64
    public var date: String
    /// The start of the person's day (ISO 8601 with offset).
    public var dayStart: String
    /// The start of the next: the day's total goes back to 0 then.
    public var dayEnd: String
    /// Home Assistant's `last_reset` for the day's total: the day's start, held by the
    /// publisher so that it never goes back (a day start or zone changed mid-day).
    public var lastReset: String
    public var intakeMl: Double
    /// What Home Assistant's day total counts: the intake since `lastReset`. The day's intake, but
    /// for the rest of a day whose start moved back: the publisher then counts from the held reset,
    /// since the drinks before it were counted in the cycle before (with the day's, moving a day start
    /// to noon and back to 04:00 counted the morning's 900 mL twice in the long-term statistics).
    public var intakeSinceResetMl: Double
    public var goalMl: Double
    public var progressPercent: Double
    public var paceMl: Double
    public var behind: Bool
    public var behindByMl: Double
    public var lastSipAt: String?
    /// The last reminder given (ISO 8601), so a change announces a new one.
    public var lastReminderAt: String?
    public var reminderReason: String
    /// Whether a reminder is due now (`quench remind --notify` would give one).
    public var reminderDue: Bool
    /// What is left to drink today to meet the goal (0 once met).
    public var stillToDrinkMl: Double
    /// Every live sip of the person's, all days: a counter for Home Assistant's long-term
    /// statistics (it goes down when a sip is deleted, whatever its day).
    public var lifetimeMl: Double
    /// The person's volume unit (`ml` or `oz`): what the quick amounts are in.
    public var units: String
    /// What a tap adds for them (`quickAmounts(units:)`): the page's quick-add buttons say these.
    public var quickAmounts: [String]
    public var bottles: [Bottle]
    /// The carer's alert about their time without a drink (`quench carer --notify`): when it was
    /// sent (ISO 8601), nil when none was; open until a carer acknowledges it or they drink.
    public var carerAlertSentAt: String? = nil
    public var carerAlertOpen: Bool = false
    /// The household's zone (IANA): the times above are in it. The page's household and carer views
    /// fetch no day, and read "today" in the phone's own zone without it.
    public var timeZone: String = ""

    /// A volume as the state says it, to a tenth of a mL: 8 oz is 236.5882365 mL, and Home Assistant's
    /// intake read 1336.5882365 beside a lifetime of 454.9 (a trial).
    public static func tenth(_ ml: Double) -> Double { (ml * 10).rounded() / 10 }
}

extension History {
    /// The selected person's state now (`HistoryEnvironment.person`).
    public static func personState(_ environment: HistoryEnvironment) throws(HistoryError) -> PersonState {
        try personState(try environment.context(creating: false))
    }

    /// Everyone's state now, in the order they were added (MQTT publishes each).
    public static func personStates(_ environment: HistoryEnvironment) throws(HistoryError) -> [PersonState] {
        let store = try environment.openStore(creating: false)
        let people = try HistoryContext.run { () throws(StoreError) in try store.people() }
        var states: [PersonState] = []
        for person in people {
            var one = environment
            one.person = person.name
            states.append(try personState(try one.context(creating: false)))
        }
        return states
    }

    static func personState(_ c: HistoryContext) throws(HistoryError) -> PersonState {
        let person = c.personName
        let today = try todayReport(c)
        let (remind, verdict) = try reminderReport(c)
        let lifetime = try c.run { (store) throws(StoreError) in try store.lifetimeIntake(person: c.personID) }
        // The bottles that are theirs now.
        let devices = try c.run { (store) throws(StoreError) in try store.listDevices() }
            .filter { $0.person.map { Person.sameName($0, person) } ?? false }
        let links = try c.run { (store) throws(StoreError) in try store.deviceLinks() }
        let remaining = Dictionary(today.bottles.map { ($0.device, $0) }, uniquingKeysWith: { a, _ in a })
        let bottles = devices.map { d in
            PersonState.Bottle(device: d.address, name: d.name, remainingMl: remaining[d.address]?.remainingMl,
                               remainingAt: remaining[d.address]?.at, linkUp: links[d.address], batteryPercent: d.batteryPercent,
                               profile: d.profile, sensor: d.sensor?.rawValue)
        }
        let lastDrink = try c.run { (store) throws(StoreError) in try store.lastSip(before: c.now.adding(1), person: c.personID) }
        let alert = try c.personID.map { id throws(HistoryError) in
            try c.run { (store) throws(StoreError) in try store.carerAlert(person: id, lastDrink: CarerAlert.spell(after: lastDrink)) }
        } ?? nil
        return PersonState(
            person: person, personId: c.personID ?? 0, date: today.date, dayStart: Format.localISO(c.calendar.start(of: c.today), c.calendar),
            dayEnd: Format.localISO(c.calendar.start(of: CivilDay(number: c.today.number + 1)), c.calendar),
            lastReset: Format.localISO(c.calendar.start(of: c.today), c.calendar),
            intakeMl: PersonState.tenth(today.intakeMl), intakeSinceResetMl: PersonState.tenth(today.intakeMl), goalMl: PersonState.tenth(today.goalMl), progressPercent: (today.intakeMl / today.goalMl * 1000).rounded() / 10,
            // To 10 mL: the pace moves with the clock, and each new value is a row in Home Assistant's recorder
            // (to the tenth of a mL it was one every 30 s, ~1 700 a day per person); 10 mL is a few an hour.
            // The goal itself once the pace reaches it (the window closed): 1,892.7 mL to 10 mL read 63.9 of a 64.0 fl oz goal.
            paceMl: remind.paceMl >= today.goalMl ? PersonState.tenth(today.goalMl) : (remind.paceMl / 10).rounded() * 10,
            behind: remind.behind, behindByMl: (remind.behindByMl / 10).rounded() * 10,
            lastSipAt: today.lastSipAt,
            lastReminderAt: remind.lastReminderAt, reminderReason: remind.reason, reminderDue: verdict.due,
            stillToDrinkMl: PersonState.tenth(max(0, today.goalMl - today.intakeMl)), lifetimeMl: PersonState.tenth(lifetime),
            units: c.units.rawValue, quickAmounts: quickAmounts(units: c.units.rawValue), bottles: bottles,
            carerAlertSentAt: alert.map { Format.localISO($0.raisedAt, c.calendar) }, carerAlertOpen: alert.map { $0.acknowledgedAt == nil } ?? false,
            timeZone: c.calendar.timeZone.identifier)
    }

    /// A person's intake from `from` until `until`, summed as a day's total is.
    public static func intake(person: Int64, from: Timestamp, until: Timestamp, in store: IntakeStore) throws(StoreError) -> Double {
        Format.sum(try store.sipTotalsByDay([DaySegment(from: from, until: until, shift: 0)], person: person).values.map(\.ml))
    }

    /// The amounts a tap adds, in the person's unit: the web page's quick-add buttons and
    /// Home Assistant's buttons.
    public static func quickAmounts(units: String) -> [String] {
        units == VolumeUnit.usFluidOunce.rawValue ? ["4oz", "8oz", "16oz"] : ["100ml", "250ml", "500ml"]
    }

    /// Any report as the CLI's `--json` writes it (snake_case keys, sorted).
    public static func json(_ value: some Encodable) -> String { JSONOutput.encode(value) }
}

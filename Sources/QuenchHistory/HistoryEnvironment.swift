import FoundationEssentials
import QuenchCore
import QuenchStore
#if canImport(Glibc)
import Glibc
#endif

/// Everything a history command depends on besides its own arguments, so tests
/// can fix the clock, the zone and the terminal.
public struct HistoryEnvironment: Sendable {
    /// The database file.
    public var databasePath: String
    public var now: Timestamp
    /// Overrides the settings' zone and `TZ` (tests).
    public var timeZone: LocalZone?
    /// `--units`, overriding the setting.
    public var units: VolumeUnit?
    /// Whether to use ANSI colour.
    public var color: Bool
    /// Used for `TZ` when `timeZone` is nil.
    public var variables: [String: String]
    /// Whose history the per-person functions (today, log, stats, calendar,
    /// goals, reminders, add, undo, the person state) read and write, by name
    /// (any case): `--person`, else `QUENCH_PERSON`, else `person` in the config
    /// file. nil is enough while the household has one person; with several,
    /// those functions refuse, naming them (`HistoryError.personNeeded`).
    public var person: String? {
        didSet { personNamedIn = nil }  // named anew here (a query, an argument)
    }
    /// Where `person` was named when not on the command line (`$QUENCH_PERSON`,
    /// `/etc/quench.toml:3`), said beside "nobody is called …": the person did not type it here.
    public var personNamedIn: String?
    /// For a command over everyone's history unless one is named on its command line (`export`):
    /// a person named in the environment or a file is left out, and the note says so. Else a
    /// `QUENCH_PERSON` set for a shell cut a move to a new Pi down to one person's history.
    public func everyoneUnlessNamedHere() -> (environment: HistoryEnvironment, note: String?) {
        guard let source = personNamedIn, let name = person else { return (self, nil) }
        var everyone = self
        everyone.person = nil
        return (everyone, "everyone's history, not only \(name.shownSafely(limit: 40))'s (named in \(source)): --person \(Format.shellWord(name)) for theirs alone")
    }

    /// For work over the whole household that takes no person (the carer's view): a person named in the
    /// environment or a file is not looked up (`QUENCH_PERSON=ghost quench carer` failed on the ghost).
    var household: HistoryEnvironment {
        var everyone = self
        everyone.person = nil
        return everyone
    }

    /// Whether a write may create the database when it is missing. The web server says no once it
    /// has seen the file: a history deleted under it is an accident to report, not a fresh start.
    public var createsDatabase = true

    /// Told when opening the store upgraded its schema (`IntakeStore.upgradeNotice`): a command line
    /// says so on stderr, as the services log it, so the copy kept of the old file is not a surprise.
    public var upgradeReport: (@Sendable (String) -> Void)? = nil

    public init(databasePath: String, now: Timestamp, timeZone: LocalZone? = nil, units: VolumeUnit? = nil,
                color: Bool = false, variables: [String: String] = [:], person: String? = nil) {
        self.person = person
        self.databasePath = databasePath
        self.now = now
        self.timeZone = timeZone
        self.units = units
        self.color = color
        self.variables = variables
    }

    /// `--units`: nil when not given.
    public static func unitOption(_ text: String?, expected: HistoryError.UnitKind = .displayUnits) throws(HistoryError) -> VolumeUnit? {
        guard let text else { return nil }
        guard let unit = VolumeUnit(parsingUnitName: text) else { throw .unknownUnit(text, expected: expected) }
        return unit
    }

    /// Opens the store; commands that only read need it to exist already.
    public func openStore(creating: Bool) throws(HistoryError) -> IntakeStore {
        do { return try openIntakeStore(creating: creating) } catch { throw .store(error) }
    }

    /// The same, with the store's own error (for callers outside the history commands).
    public func openIntakeStore(creating: Bool) throws(StoreError) -> IntakeStore {
        let store = try IntakeStore(path: databasePath,
                                    mode: creating && createsDatabase ? StoreLocation.creationMode(for: databasePath, environment: variables) : .existing)
        if let upgrade = store.upgradeNotice { upgradeReport?(upgrade) }
        return store
    }

    /// Fails as `openIntakeStore(creating: true)` would, creating nothing (`IntakeStore.checkCanOpen`).
    public func checkIntakeStoreCanBeOpened() throws(StoreError) {
        try IntakeStore.checkCanOpen(path: databasePath, mode: StoreLocation.creationMode(for: databasePath, environment: variables))
    }

    /// Whose history this is: `person` when named (refused, naming everyone,
    /// when nobody has that name), else the household's only person; with several
    /// people and none named, `.personNeeded` with their names.
    /// - Parameter formerNames: whether a name someone had before a rename finds them (whose history a
    ///   command reads or adds to); not for the commands whose object the person is (rename, remove, units,
    ///   a threshold, `edit --to`), where acting on "Annie" when "Ann" was typed would surprise.
    public func selectedPerson(in store: IntakeStore, formerNames: Bool = true) throws(HistoryError) -> Person {
        try selectedPerson(among: try HistoryContext.run { () throws(StoreError) in try store.people() }, in: store, formerNames: formerNames)
    }

    /// A name someone had before a rename still finds them (a bookmarked page, a script, `QUENCH_PERSON`):
    /// "person rename keeps everything theirs" (until someone new takes that name).
    func selectedPerson(among people: [Person], in store: IntakeStore, formerNames: Bool = true) throws(HistoryError) -> Person {
        if let person {
            var found = Person.named(person, in: people)
            if found == nil, formerNames { found = try HistoryContext.run { () throws(StoreError) in try store.person(formerlyNamed: person) } }
            guard let found else {
                let unknown = HistoryError.unknownPerson(person, people: people.map(\.name))
                throw personNamedIn.map { .inOption("person (\($0))", unknown) } ?? unknown
            }
            return found
        }
        guard people.count == 1, let only = people.first else { throw .personNeeded(people: people.map(\.name)) }
        return only
    }

    /// The zone in force: the one given here, else the settings' or `TZ`'s.
    private func zone(_ settings: Settings) throws(HistoryError) -> LocalZone {
        if let timeZone { return timeZone }
        return try DayCalendar.resolveTimeZone(setting: settings.timeZone, environment: variables)
    }

    /// The wall clock that times written without a zone are read on (where a day starts does not matter).
    func localClock(of store: IntakeStore) throws(HistoryError) -> DayCalendar {
        let settings = try HistoryContext.run { () throws(StoreError) in try store.settings() }
        return DayCalendar(timeZone: try zone(settings), dayStartHour: 0)
    }

    /// The store plus everything resolved from its settings, for the selected
    /// person (`selectedPerson`); `everyone`: for the whole household unless a
    /// person is named (export).
    func context(creating: Bool, everyone: Bool = false) throws(HistoryError) -> HistoryContext {
        let store = try openStore(creating: creating)
        let settings = try HistoryContext.run { () throws(StoreError) in try store.settings() }
        let zone = try zone(settings)
        let people = try HistoryContext.run { () throws(StoreError) in try store.people() }
        let selected = everyone && person == nil ? nil : try selectedPerson(among: people, in: store)
        return HistoryContext(
            store: store, now: now, calendar: DayCalendar(timeZone: zone, dayStartHour: selected?.dayStartHour ?? settings.dayStartHour),
            units: units ?? selected?.units ?? settings.units, color: color, settings: settings, person: selected,
            shared: people.count > 1)
    }
}

/// An open store with the day calendar and display units in force, for one person.
struct HistoryContext {
    let store: IntakeStore
    let now: Timestamp
    let calendar: DayCalendar
    let units: VolumeUnit
    let color: Bool
    let settings: Settings
    /// Whose history; nil only for household-wide work (an export of everyone).
    let person: Person?
    /// Whether several people share the history: texts then say whose it is.
    let shared: Bool

    /// The person's id for the store's per-person calls (nil: everyone).
    var personID: Int64? { person?.id }
    /// The person's name as reports show it.
    var personName: String { person?.name ?? "" }
    /// " (NAME)" in texts when several people share the history; "" otherwise.
    var whose: String { whoseName.map { " (\($0))" } ?? "" }
    /// The person a report is of, in a household; nil when the history is one person's.
    var whoseName: String? { shared && person != nil ? personName.shownSafely(limit: 40) : nil }

    var today: CivilDay { calendar.day(of: now) }

    /// Runs a store call, wrapping its error.
    static func run<T>(_ body: () throws(StoreError) -> T) throws(HistoryError) -> T {
        do { return try body() } catch { throw .store(error) }
    }

    func run<T>(_ body: (IntakeStore) throws(StoreError) -> T) throws(HistoryError) -> T {
        do { return try body(store) } catch { throw .store(error) }
    }

    /// The day of the person's first sip, where their history begins (nil with none yet):
    /// the days before it are not counted as days without a drink.
    func firstSipDay() throws(HistoryError) -> CivilDay? {
        try run { (store) throws(StoreError) in try store.firstSipTime(person: personID) }.map { calendar.day(of: $0) }
    }
}

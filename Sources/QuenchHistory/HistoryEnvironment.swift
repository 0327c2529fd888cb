import Foundation
import QuenchCore
import QuenchStore

/// Everything a history command depends on besides its own arguments, so tests
/// can fix the clock, the zone and the terminal.
public struct HistoryEnvironment: Sendable {
    /// The database file.
    public var databasePath: String
    public var now: Timestamp
    /// Overrides the settings' zone and `TZ` (tests).
    public var timeZone: TimeZone?
    /// `--units`, overriding the setting.
    public var units: VolumeUnit?
    /// Whether to use ANSI colour.
    public var color: Bool
    /// Used for `TZ` when `timeZone` is nil.
    public var variables: [String: String]

    public init(databasePath: String, now: Timestamp, timeZone: TimeZone? = nil, units: VolumeUnit? = nil,
                color: Bool = false, variables: [String: String] = [:]) {
        self.databasePath = databasePath
        self.now = now
        self.timeZone = timeZone
        self.units = units
        self.color = color
        self.variables = variables
    }

    /// The environment of this process: `--db`/`QUENCH_DB`/XDG path, the clock,
    /// `--units`, and colour when stdout is a terminal and `NO_COLOR` is unset.
    public static func process(database: String?, units: String?) throws(HistoryError) -> HistoryEnvironment {
        let variables = ProcessInfo.processInfo.environment
        let unit: VolumeUnit?
        if let units {
            guard let parsed = VolumeUnit(parsingUnitName: units) else { throw .unknownUnit(units) }
            unit = parsed
        } else {
            unit = nil
        }
        let noColor = !(variables["NO_COLOR"] ?? "").isEmpty
        let color = isatty(STDOUT_FILENO) == 1 && !noColor && variables["TERM"] != "dumb"
        return HistoryEnvironment(
            databasePath: StoreLocation.resolve(explicit: database, environment: variables),
            now: .wallClockNow, units: unit, color: color, variables: variables)
    }

    /// Opens the store; commands that only read need it to exist already.
    public func openStore(creating: Bool) throws(HistoryError) -> IntakeStore {
        do { return try openIntakeStore(creating: creating) } catch { throw .store(error) }
    }

    /// The same, with the store's own error (for callers outside the history commands).
    public func openIntakeStore(creating: Bool) throws(StoreError) -> IntakeStore {
        try IntakeStore(path: databasePath,
                        mode: creating ? StoreLocation.creationMode(for: databasePath, environment: variables) : .existing)
    }

    /// The store plus everything resolved from its settings.
    func context(creating: Bool) throws(HistoryError) -> HistoryContext {
        let store = try openStore(creating: creating)
        let settings = try HistoryContext.run { () throws(StoreError) in try store.settings() }
        let zone: TimeZone
        if let timeZone { zone = timeZone } else {
            zone = try DayCalendar.resolveTimeZone(setting: settings.timeZone, environment: variables)
        }
        return HistoryContext(
            store: store, now: now, calendar: DayCalendar(timeZone: zone, dayStartHour: settings.dayStartHour),
            units: units ?? settings.units, color: color, settings: settings)
    }
}

/// An open store with the day calendar and display units in force.
struct HistoryContext {
    let store: IntakeStore
    let now: Timestamp
    let calendar: DayCalendar
    let units: VolumeUnit
    let color: Bool
    let settings: Settings

    var today: CivilDay { calendar.day(of: now) }

    /// Runs a store call, wrapping its error.
    static func run<T>(_ body: () throws(StoreError) -> T) throws(HistoryError) -> T {
        do { return try body() } catch { throw .store(error) }
    }

    func run<T>(_ body: (IntakeStore) throws(StoreError) -> T) throws(HistoryError) -> T {
        do { return try body(store) } catch { throw .store(error) }
    }
}

extension VolumeUnit {
    /// `ml`, `mL`, `millilitres`, `oz`, `fl oz`, `floz`.
    public init?(parsingUnitName text: String) {
        switch text.lowercased().trimmingCharacters(in: .whitespaces) {
        case "ml", "millilitre", "millilitres", "milliliter", "milliliters": self = .ml
        case "oz", "floz", "fl oz", "fl.oz", "us fl oz": self = .usFluidOunce
        default: return nil
        }
    }
}

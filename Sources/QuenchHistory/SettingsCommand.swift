import FoundationEssentials
import QuenchCore
import QuenchStore

extension History {
    /// `quench settings [--units ml|oz] [--day-start H|HH:00] [--time-zone TZ|system]`:
    /// shows the settings, changing those given.
    public static func settings(
        _ environment: HistoryEnvironment, units: String?, dayStart: String?, timeZone: String?, json: Bool
    ) throws(HistoryError) -> String {
        let changing = units != nil || dayStart != nil || timeZone != nil
        let store = try environment.openStore(creating: changing)
        var settings = try HistoryContext.run { () throws(StoreError) in try store.settings() }
        if let units {
            settings.units = try HistoryEnvironment.unitOption(units) ?? settings.units
        }
        if let dayStart {
            // As `settings` shows it (04:00) or as an hour (4).
            guard let hour = HistoryInput.dayStartHour(dayStart) else {
                throw .invalidArgument("--day-start '\(dayStart.shownSafely())' is not a whole hour from 0 to 23 (e.g. 4 or 04:00)")
            }
            settings.dayStartHour = hour
        }
        if let timeZone {
            if timeZone.lowercased() == "system" {
                settings.timeZone = nil
            } else {
                guard LocalZone(identifier: timeZone) != nil else {
                    throw .invalidArgument("unknown time zone '\(timeZone.shownSafely())' (use an IANA name such as Europe/London, or 'system')")
                }
                settings.timeZone = timeZone
            }
        }
        if changing {
            let final = settings
            try HistoryContext.run { () throws(StoreError) in try store.saveSettings(final) }
        }
        let zone: LocalZone
        if let override = environment.timeZone { zone = override } else {
            zone = try DayCalendar.resolveTimeZone(setting: settings.timeZone, environment: environment.variables)
        }
        if json { return JSONOutput.encode(settings) }
        return Format.fields([
            ("Database", store.path),
            ("Units", settings.units == .ml ? "mL" : "US fl oz"),
            ("Day starts", "\(Format.two(settings.dayStartHour)):00"),
            ("Time zone", settings.timeZone ?? "system (\(zone.identifier))"),
        ], indent: 0)
    }
}

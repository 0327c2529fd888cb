import ArgumentParser
import QuenchServe
import QuenchHistory
import QuenchComposition

struct SettingsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "settings", abstract: "Show or change units, day start and time zone.")
    @Option(name: .long, help: databaseHelp) var db: String?
    @Flag(name: .long, help: "Print JSON instead of text.") var json = false
    @Option(help: "Default units: ml or oz.") var units: String?
    @Option(name: .customLong("day-start"), help: "Hour (0-23, or 04:00) at which a day begins; default 4.") var dayStart: String?
    @Option(name: .customLong("time-zone"), help: "IANA zone such as Europe/London, or 'system'.") var timeZone: String?

    func run() throws {
        emit(try History.settings(HistoryEnvironment.process(database: db, units: nil), units: units, dayStart: dayStart,
                                  timeZone: timeZone, json: json))
    }
}

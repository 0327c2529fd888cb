import ArgumentParser
import QuenchConfig
import QuenchComposition
import QuenchHistory

struct BackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy the whole database into the backup folder now, and remove the backups the rotation no longer keeps.",
        discussion: """
            The copy is consistent while the gateway writes, checked, and named by when it was taken \
            (quench-20261128T033000Z.sqlite, UTC). Kept: the newest of each of the last 7 days, and before those \
            the newest of each of 4 weeks ([backup] keep_daily, keep_weekly). The quench-backup timer runs this \
            daily; `quench restore FILE` puts one back (docs/backup.md).
            """)
    @OptionGroup var options: StoreOptions
    @Option(name: .long, help: "The backup folder, which must exist; default: [backup] dir in the config file, else `backups` beside the database.")
    var dir: String?
    @Option(name: .customLong("keep-daily"), help: "Keep the newest backup of each of the last N days (1 to 1000; default 7).")
    var keepDaily: Int?
    @Option(name: .customLong("keep-weekly"), help: "Before those days, the newest of each of N weeks (0 to 1000; default 4).")
    var keepWeekly: Int?

    func run() throws {
        var values = ConfigValues()
        values.backupDir = dir
        values.backupKeepDaily = keepDaily
        values.backupKeepWeekly = keepWeekly
        let configuration = try options.configuration(values)
        emit(try History.backup(HistoryEnvironment.process(configuration), folder: configuration.backupDir.value,
                                keepDaily: configuration.backupKeepDaily.value, keepWeekly: configuration.backupKeepWeekly.value,
                                json: options.json))
    }
}

import ArgumentParser

/// The `quench` command line: parsing only. Each subcommand calls one
/// QuenchGateway function and prints what it returns.
@main
struct Quench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "quench",
        abstract: "Logs what you drink from a smart bottle or scale, and answers questions about it.",
        subcommands: pipelineCommands + historyCommands + bluetoothCommands
    )

    /// Readings to events (issue 2).
    static let pipelineCommands: [any ParsableCommand.Type] = [
        DemoCommand.self, ReplayCommand.self, SimulateCommand.self, EvaluateCommand.self,
    ]

    /// Bluetooth: finding, pairing and listening to devices (issue 4).
    #if os(Linux)
    static let bluetoothCommands: [any ParsableCommand.Type] = [
        ScanCommand.self, PairCommand.self, DevicesCommand.self, ForgetCommand.self, CalibrateCommand.self,
        WatchCommand.self, RunCommand.self, RecordCommand.self,
    ]
    #else
    static let bluetoothCommands: [any ParsableCommand.Type] = []
    #endif

    /// The history commands (issue 3).
    static let historyCommands: [any ParsableCommand.Type] = [
        Today.self, Log.self, Stats.self, CalendarCommand.self, GoalCommand.self,
        Add.self, Delete.self, Undo.self, Restore.self, Export.self, Import.self, SettingsCommand.self,
    ]
}

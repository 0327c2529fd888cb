import ArgumentParser

@main
struct Quench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "quench",
        abstract: "A gateway for smart water bottles: sips, refills and history.",
        subcommands: [DemoCommand.self, ReplayCommand.self, SimulateCommand.self, EvaluateCommand.self]
    )
}

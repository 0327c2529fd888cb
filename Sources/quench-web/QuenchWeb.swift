import ArgumentParser
import QuenchServe

/// `quench-web`: `quench serve` alone, what the quench-web service runs. The same
/// command (`QuenchServe.ServeCommand`), in a process that links neither
/// Bluetooth, nor MQTT (libmosquitto and its OpenSSL), nor the rest of the CLI.
@main
struct QuenchWebCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "quench-web", abstract: ServeCommand.configuration.abstract,
        discussion: "The same as `quench serve`, in a smaller process. " + ServeCommand.configuration.discussion,
        subcommands: [ServeCommand.Run.self, ServeCommand.Token.self], defaultSubcommand: ServeCommand.Run.self)
}

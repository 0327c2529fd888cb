import ArgumentParser
import QuenchCore
import QuenchServe
import Threading
#if canImport(Glibc)
import Glibc
#endif

/// `quench-web`: `quench serve` alone, what the quench-web service runs. The same
/// command (`QuenchServe.ServeCommand`), in a process that links neither
/// Bluetooth, nor MQTT (libmosquitto and its OpenSSL), nor the rest of the CLI.
@main
struct QuenchWebCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "quench-web", abstract: ServeCommand.configuration.abstract,
        discussion: "The same as `quench serve`, in a smaller process. " + ServeCommand.configuration.discussion,
        subcommands: [ServeCommand.Run.self, ServeCommand.Token.self], defaultSubcommand: ServeCommand.Run.self)

    /// Parses and runs; a failure is `quench-web: error: …` on standard error, as `quench` says it.
    static func main() async {
        // Before any thread allocates: an arena a thread has is kept (ServeCommand's call is too late here).
        Allocator.limitArenas(1)
        if let problem = ArgumentBytes.firstNotUTF8() {
            writeError(problem)
            Glibc.exit(64)
        }
        // Nothing to reload: a `kill -HUP` ended the server as a clean stop, not restarted (as quenchd).
        signal(SIGHUP, SIG_IGN)
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let error as ExitCode {
            Glibc.exit(error.rawValue)  // already said (configurationFailure)
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                print(fullMessage(for: error))
                Glibc.exit(0)
            }
            writeError(message(for: error))
            Glibc.exit(code.rawValue)
        }
    }
}

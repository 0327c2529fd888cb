import ArgumentParser
import QuenchCore
import QuenchServe
#if canImport(Glibc)
import Glibc
#endif

/// The `quench` command line: parsing only. Each subcommand calls one
/// QuenchGateway function and prints what it returns.
@main
struct Quench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "quench",
        abstract: "Logs what you drink from a smart bottle or scale, and answers questions about it.",
        version: QuenchVersion.string,
        subcommands: pipelineCommands + historyCommands + bluetoothCommands
    )

    /// Parses and runs; every failure is reported one way, `quench: error: …`
    /// on standard error with a non-zero status (help and --version go to
    /// standard output).
    static func main() async {
        if let problem = ArgumentBytes.firstNotUTF8() {
            FileHandleStderr.write("quench: error: \(problem)\n")
            Glibc.exit(64)
        }
        do {
            let arguments = Self.arguments(Array(CommandLine.arguments.dropFirst()))
            try checkCommandName(arguments)
            var command = try parseAllowingNegatives(arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            StandardOutputCheck.exitIfLost()
        } catch let error as ExitCode {
            // Already reported (runReporting).
            if error.rawValue == 0 { StandardOutputCheck.exitIfLost() }
            Glibc.exit(error.rawValue)
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                print(fullMessage(for: error))
                StandardOutputCheck.exitIfLost()
                Glibc.exit(0)
            }
            StandardOutput().flush()
            var text = commandLineMessage(for: error)
            if code == .validationFailure { text += " (see `quench --help`, or `quench help COMMAND`)" }
            FileHandleStderr.write("quench: error: \(text)\n")
            Glibc.exit(code.rawValue)
        }
    }

    /// ArgumentParser reads every word that starts with `-` as an option, so
    /// `quench add -50ml` said "Missing expected argument" and `--hours -1`
    /// "Missing value". A negative number after an option that ArgumentParser
    /// says wants a value is given to it (`--hours=-1`, then judged by the
    /// option's own check); one anywhere else is refused by name.
    static func parseAllowingNegatives(_ arguments: [String]) throws -> any ParsableCommand {
        var arguments = arguments
        while true {
            let end = arguments.firstIndex(of: "--") ?? arguments.endIndex
            // Set when the parse failed over a word; nil when a negative number was read as
            // short options that include -h: `-2h` is `-2 -h` to ArgumentParser, which answers
            // with its help and exit 0 (`person alert Dad -2h` printed the help, set nothing).
            var failure: (any Error)?
            do {
                let command = try parseAsRoot(arguments)
                let askedForHelp = arguments[..<end].contains { ["-h", "--help", "help"].contains($0) }
                guard String(describing: type(of: command)) == "HelpCommand", !askedForHelp,
                      arguments[..<end].contains(where: isNegativeNumber) else { return command }
            } catch {
                // --help and --version are answers, not errors about a word.
                guard exitCode(for: error) != .success else { throw error }
                failure = error
            }
            guard let index = arguments[..<end].firstIndex(where: isNegativeNumber) else { throw failure ?? ExitCode.failure }
            let option = index > arguments.startIndex ? arguments[index - 1] : ""
            if option.hasPrefix("--"), !option.contains("="),
               failure.map({ message(for: $0).hasPrefix("Missing value for '\(option) ") }) ?? true {
                arguments[index - 1] = option + "=" + arguments.remove(at: index)
                continue
            }
            let undo = arguments.first == "add" ? "; to take a drink back: `quench undo`, or `quench delete ID`" : ""
            throw ValidationError("'\(arguments[index])' is a negative number, and nothing here takes one\(undo)")
        }
    }

    /// `-50ml`, `-1`, `-.5l`: a word ArgumentParser would take for short options.
    static func isNegativeNumber(_ word: String) -> Bool {
        let rest = word.utf8.dropFirst(word.hasPrefix("-.") ? 2 : 1)
        return word.hasPrefix("-") && rest.first.map { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } == true
    }

    /// `quench --db PATH today` as `quench today --db PATH`: the database is
    /// every command's option, so it is taken before the command's name too.
    static func arguments(_ arguments: [String]) -> [String] {
        var args = arguments
        var moved: [String] = []
        while let first = args.first, first == "--db" || first.hasPrefix("--db=") {
            if first == "--db", args.count >= 2 {
                moved += [first, args[1]]
                args.removeFirst(2)
            } else if first != "--db" {
                moved.append(args.removeFirst())
            } else {
                break
            }
        }
        guard !moved.isEmpty, !args.isEmpty else { return arguments }
        return [args[0]] + moved + args.dropFirst()
    }

    /// A first argument that names no command (`quench todya`), or `quench help
    /// NAME` of none, is refused with the nearest name, rather than taken as an
    /// unexpected argument or answered with the overall help and status 0.
    static func checkCommandName(_ arguments: [String]) throws {
        let names = configuration.subcommands.map { $0._commandName } + ["help"]
        var words = arguments.drop { $0.hasPrefix("-") }
        // `--db PATH` moved first by `arguments(_:)` is skipped with its value.
        if arguments.first == "--db" { words = arguments.dropFirst(2).drop { $0.hasPrefix("-") } }
        guard var name = words.first else { return }
        if name == "help" {
            guard let asked = words.dropFirst().first, !asked.hasPrefix("-") else { return }
            name = asked
        }
        guard names.contains(name) else { throw ValidationError("unknown command '\(name)'\(nearest(name, in: names))") }
        // A group's own commands the same way (`quench mqtt snyc` said only "Unexpected argument"),
        // unless the word is an argument of the group's default command.
        guard words.first != "help", let group = configuration.subcommands.first(where: { $0._commandName == name }),
              !group.configuration.subcommands.isEmpty, let sub = words.dropFirst().first, !sub.hasPrefix("-") else { return }
        let subnames = group.configuration.subcommands.map { $0._commandName } + ["help"]
        guard !subnames.contains(sub) else { return }
        if let fallback = group.configuration.defaultSubcommand {
            do {
                _ = try fallback.parseAsRoot([sub])
                return
            } catch {
                guard message(for: error).hasPrefix("Unexpected argument") else { return }
            }
        }
        throw ValidationError("unknown command '\(name) \(sub)'\(nearest(sub, in: subnames, prefix: name + " "))")
    }

    /// "; did you mean `today`?" when a name is close enough to be a typo of one.
    static func nearest(_ name: String, in names: [String], prefix: String = "") -> String {
        Spelling.nearest(to: name, among: names).map { "; did you mean `\(prefix)\($0)`?" } ?? ""
    }

    /// Readings to events (issue 2).
    static let pipelineCommands: [any ParsableCommand.Type] = [
        DemoCommand.self, ReplayCommand.self, SimulateCommand.self, EvaluateCommand.self, ProfileCommand.self,
    ]

    /// Bluetooth: finding, pairing and listening to devices (issue 4).
    #if os(Linux)
    static let bluetoothCommands: [any ParsableCommand.Type] = [
        ScanCommand.self, PairCommand.self, DevicesCommand.self, ForgetCommand.self, CalibrateCommand.self,
        WatchCommand.self, RunCommand.self, RecordCommand.self, DoctorCommand.self, MQTTCommand.self, HubCommand.self,
    ]
    #else
    static let bluetoothCommands: [any ParsableCommand.Type] = []
    #endif

    /// The history commands (issue 3).
    static let historyCommands: [any ParsableCommand.Type] = [
        Today.self, Log.self, Stats.self, CalendarCommand.self, GoalCommand.self, RemindCommand.self,
        Add.self, Edit.self, Delete.self, Undo.self, Restore.self, BackupCommand.self, Export.self, Import.self, SettingsCommand.self, ConfigCommand.self,
        ServeCommand.self, ChartCommand.self, ShareCommand.self, PeopleCommand.self, PersonCommand.self, CarerCommand.self,
    ]
}

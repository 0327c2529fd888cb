import ArgumentParser
import QuenchConfig
import QuenchComposition
import QuenchHistory

struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config", abstract: "The configuration in force: each value, and where it came from.",
        discussion: """
            Files: $QUENCH_CONFIG alone when set; else $XDG_CONFIG_HOME/quench/quench.toml (default \
            ~/.config/quench/quench.toml) over /etc/quench/quench.toml (quenchd reads only the latter). \
            The command line wins over the QUENCH_* variables ($QUENCH_DB, $QUENCH_LOG, ...), they over the \
            files, the files over the defaults. The keys: `quench config keys`, and docs/service.md, "Configuration".
            """,
        subcommands: [Show.self, Path.self, Keys.self, Sample.self], defaultSubcommand: Show.self)

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Each effective value and where it came from, and the files read.")
        @OptionGroup var options: StoreOptions

        func run() throws {
            print(try options.configuration().shown(json: options.json))
        }
    }

    struct Path: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The files `quench` looks at, the weightiest first (whether there or not).")

        func run() throws {
            for file in Configuration.candidateFiles(for: .quench, variables: ConfigInputs.process().variables) { print(file.path) }
        }
    }

    struct Keys: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Every key: what it takes, its default, its environment variable and option, what it means.")
        @Flag(help: "As the Markdown table in docs/service.md.") var markdown = false

        func run() {
            print(KeySpec.shown(markdown: markdown), terminator: "")
        }
    }

    struct Sample: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A configuration file with every key commented out and explained (config/quench.toml).")

        func run() {
            print(KeySpec.sampleFile, terminator: "")
        }
    }
}

extension LogLevel: ExpressibleByArgument {
    public init?(argument: String) { self.init(name: argument) }
}

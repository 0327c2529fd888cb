import ArgumentParser
import Logging
import QuenchConfig
import QuenchComposition
import QuenchHistory
import QuenchService
import QuenchWeb
import Threading
#if canImport(Glibc)
import Glibc
#endif

/// `--db`'s help, the same in every command.
public let databaseHelp: ArgumentHelp = "The database file (default: $QUENCH_DB, else `database` in the config file, else $XDG_DATA_HOME/quench/quench.sqlite)."

/// Said on standard error as `quench: error: …` (`quench-web: error: …`); exit 78
/// (EX_CONFIG), which the units do not restart on.
public func configurationFailure(_ error: any Error) -> ExitCode {
    writeError("\(error)")
    return ExitCode(78)
}

/// `PROGRAM: error: TEXT` on standard error, PROGRAM the executable's name.
public func writeError(_ text: String) {
    var line = Array("\(ProcessIdentity.programName): error: \(text)\n".utf8)
    _ = write(2, &line, line.count)
}

extension LogLevel {
    /// `check` as ArgumentParser's usage error (exit 64): the services' units do not restart on it
    /// (RestartPreventExitStatus=64 78); as its own error it was 1, and quench-web started again every 5 s.
    public static func validate(_ name: String?) throws(ValidationError) {
        do { try check(name) } catch { throw ValidationError(error.description) }
    }
}

/// Options of `serve` and `serve token`; each over `[web]` in the config file.
public struct WebOptions: ParsableArguments {
    @Option(name: .long, help: databaseHelp) var db: String?
    @Option(help: ArgumentHelp("Where to listen; anything but loopback requires the access token "
                               + "(default: $QUENCH_WEB_LISTEN, else `web.listen` in the config file, else \(Configuration.defaultWebListen)).",
                               valueName: "HOST:PORT"))
    var listen: String?
    @Option(help: ArgumentHelp("The access token's file (default: `web.token_file` in the config file, else web-token beside the database).",
                               valueName: "FILE"))
    var tokenFile: String?

    public init() {}

    /// The configuration with these options over the rest.
    public func configuration(units: String? = nil) throws -> Configuration {
        var values = ConfigValues(database: db, units: try HistoryEnvironment.unitOption(units))
        (values.webListen, values.webTokenFile) = (listen, tokenFile)
        return try HistoryEnvironment.configuration(values)
    }
}

extension Configuration {
    /// Where `quench serve` listens. A value from the environment or a file was
    /// checked with the same parser; only `--listen` can still be refused here.
    public func listenAddress() throws -> ListenAddress {
        try ListenAddress(parsing: webListen.value)
    }

    /// Where `listen` was set, in the words its advice uses.
    public var listenSource: String {
        switch webListen.source {
        case .commandLine: "--listen"
        case .environment(let name): "$" + name
        case .file: "`listen` under [web] in \(webListen.source)"
        case .builtIn: "the default"
        }
    }

    /// The access token's file: `web.token_file`, else beside the database.
    public var tokenPath: String {
        webTokenFile.value ?? AccessToken.defaultPath(forDatabase: database.value)
    }
}

/// `quench serve` and `quench-web` (the same command, run by the quench-web
/// service): the options, the configuration over them, the greeting, exit 78 on
/// a configuration error.
public struct ServeCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "Serve the day as a web page (and its JSON API) for phones and desktops.",
        discussion: """
            Listens on 127.0.0.1:8080 by default (this machine only). With --listen 0.0.0.0:8080 (or `listen` under \
            [web] in the config file, as the quench-web service reads it) phones on the home network can open it, \
            with the access token: `quench serve token` shows the link.
            """,
        subcommands: [Run.self, Token.self], defaultSubcommand: Run.self)

    public init() {}

    public struct Run: AsyncParsableCommand {
        public static let configuration = CommandConfiguration(abstract: "Serve until stopped (the quench-web service).")
        @OptionGroup var web: WebOptions
        @Option(help: "Show volumes in ml or oz (default: the setting).") var units: String?
        @Option(help: "Log level: trace, debug, info, notice, warning, error (default: $QUENCH_LOG, else `log_level` in the config file, else info).")
        var logLevel: String?
        // For the tests, which cannot wait the real timeouts: hidden, the defaults are the ones to run with.
        @Option(help: ArgumentHelp("Seconds a new connection has to send its request's head (default 15).", visibility: .hidden))
        var headerTimeout: Double?
        @Option(help: ArgumentHelp("Seconds a request has, from its head, to send its whole body (default 15).", visibility: .hidden))
        var bodyTimeout: Double?
        @Option(help: ArgumentHelp("Seconds a connection may idle between requests (default 60).", visibility: .hidden))
        var idleTimeout: Double?
        @Option(help: ArgumentHelp("At most this many connections (default 64, fewer under a low `ulimit -n`).", visibility: .hidden))
        var maxConnections: Int?

        public init() {}

        public func validate() throws {
            for (name, value) in [("--header-timeout", headerTimeout), ("--body-timeout", bodyTimeout), ("--idle-timeout", idleTimeout)] {
                if let value, !(0.05...3600).contains(value) { throw ValidationError("\(name) \(value): between 0.05 and 3600 seconds") }
            }
            if let maxConnections, !(1...65536).contains(maxConnections) {
                throw ValidationError("--max-connections \(maxConnections): between 1 and 65536")
            }
            try LogLevel.validate(logLevel)
            // Here, as a usage error (64), which the unit does not restart on; at the start it was 1, restarted every 5 s.
            do { _ = try HistoryEnvironment.unitOption(units) } catch { throw ValidationError("\(error)") }
        }

        /// The standard limits with the hidden options over them.
        var limits: WebServer.ConnectionLimits {
            var limits = WebServer.ConnectionLimits.standard
            if let headerTimeout { limits.headerTimeout = .milliseconds(Int64(headerTimeout * 1000)) }
            if let bodyTimeout { limits.bodyTimeout = .milliseconds(Int64(bodyTimeout * 1000)) }
            if let idleTimeout { limits.idleTimeout = .milliseconds(Int64(idleTimeout * 1000)) }
            if let maxConnections { limits.maxConnections = maxConnections }
            return limits
        }

        public func run() async throws {
            // One malloc arena for the whole server: it never needs more, and each kept its freed memory
            // (quench-web sets it before its first thread; `quench serve` here, for the arenas still to come).
            Allocator.limitArenas(1)
            let configuration: Configuration
            do {
                configuration = try web.configuration(units: units)
            } catch let error as ConfigError {
                // The quench-web unit does not restart on 78: a wrong file stays wrong.
                throw configurationFailure(error)
            }
            var options = WebServer.Options(listen: try configuration.listenAddress(), environment: HistoryEnvironment.process(configuration),
                                            tokenPath: configuration.tokenPath, limits: limits)
            options.listenSource = configuration.listenSource
            let logger = LiveLogging.bootstrap(level: logLevel ?? configuration.logLevel.value.rawValue)
            // Under the quench-web unit (Type=notify): started once the port is bound, so
            // `systemctl start` fails when the address is taken rather than after.
            let notifier = ServiceNotifier.fromEnvironment()
            do {
                try await WebServer.run(options, logger: logger) { address in
                    print(WebServer.greeting(address))
                    fflush(nil)  // every stream: stdout is a pipe under the tests and the benchmark
                    notifier.ready(status: "serving \(address)")
                }
            } catch {
                // A limit the unit or the shell set: restarting would not raise it.
                if case .tooFewFiles = error { throw configurationFailure(error) }
                // A token file another user could have written is the configuration's to fix: 78, no restart.
                if case .untrustedTokenFile = error { throw configurationFailure(error) }
                // An address this machine does not have, a port it may not use: 78, as for a wrong file.
                guard !error.isConfigurationProblem else { throw configurationFailure(error) }
                throw error
            }
            notifier.stopping()
        }
    }

    public struct Token: ParsableCommand {
        public static let configuration = CommandConfiguration(abstract: "Show the link that lets a phone in (the token is made on first use).")
        @OptionGroup var web: WebOptions
        @Flag(help: "Make a new token: every phone must open the new link (a running server takes it at once).") var rotate = false
        @Flag(help: "Print JSON: where the server listens, whether that is loopback, and the links.") var json = false

        public init() {}

        public func run() throws {
            let configuration = try web.configuration()
            let listen = try configuration.listenAddress()
            let path = configuration.tokenPath
            // Asked before anything else ran here: the default place's folder (the database's) may not exist yet.
            let defaultPlace = configuration.webTokenFile.value == nil
            let token = try rotate ? AccessToken.rotate(at: path, creatingFolder: defaultPlace)
                : AccessToken.loadOrCreate(at: path, creatingFolder: defaultPlace)
            try AccessToken.giveToDatabaseOwner(path, database: configuration.database.value)
            let links = WebServer.tokenLinks(token, listen: listen, addresses: WebServer.localAddresses(), tokenFile: path)
            print(json ? JSONOutput.encode(links) : WebServer.tokenLinksText(links))
        }
    }
}

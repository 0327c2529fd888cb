import ArgumentParser
import Logging
import QuenchConfig
import QuenchGateway
import QuenchHistory
import QuenchWeb
#if canImport(Glibc)
import Glibc
#endif

/// Options of `serve` and `serve token`.
struct WebOptions: ParsableArguments {
    @Option(name: .long, help: databaseHelp) var db: String?
    @Option(help: ArgumentHelp("Where to listen; anything but loopback requires the access token.", valueName: "HOST:PORT"))
    var listen: String = ListenAddress.loopbackDefault.description
    @Option(help: ArgumentHelp("The access token's file (default: web-token beside the database).", valueName: "FILE"))
    var tokenFile: String?

    func environment(units: String? = nil) throws -> HistoryEnvironment {
        try HistoryEnvironment.process(database: db, units: units)
    }
}

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "Serve the day as a web page (and its JSON API) for phones and desktops.",
        discussion: """
            Listens on 127.0.0.1:8080 by default (this machine only). With --listen 0.0.0.0:8080 phones on the \
            home network can open it, with the access token: `quench serve token` shows the link.
            """,
        subcommands: [Run.self, Token.self], defaultSubcommand: Run.self)

    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Serve until stopped (the quench-web service).")
        @OptionGroup var web: WebOptions
        @Option(help: "Show volumes in ml or oz (default: the setting).") var units: String?
        @Option(help: "Log level: trace, debug, info, notice, warning, error (default: $QUENCH_LOG, else info).") var logLevel: String?

        func run() async throws {
            let listen = try ListenAddress(parsing: web.listen)
            let options = WebServer.Options(listen: listen, environment: try web.environment(units: units), tokenPath: web.tokenFile)
            let logger = LiveLogging.bootstrap(level: logLevel)
            try await WebServer.run(options, logger: logger) { address in
                let out = StandardOutput()
                out.write(WebServer.greeting(address) + "\n")
                out.flush()
            }
        }
    }

    struct Token: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show the link that lets a phone in (the token is made on first use).")
        @OptionGroup var web: WebOptions
        @Flag(help: "Make a new token: every phone must open the new link.") var rotate = false

        func run() throws {
            let listen = try ListenAddress(parsing: web.listen)
            let path = try web.tokenFile ?? AccessToken.defaultPath(forDatabase: web.environment().databasePath)
            let token = try rotate ? AccessToken.rotate(at: path) : AccessToken.loadOrCreate(at: path)
            print(WebServer.tokenLinks(token, port: listen.port, addresses: WebServer.localAddresses()))
        }
    }
}

#if os(Linux)
import Foundation
import QuenchTestSupport
import NIOCore
import QuenchWeb
import Testing
import Threading
@testable import QuenchServe

/// `quench serve` = `quench-web`: its options over the configuration, the greeting once it
/// listens, and exit 78 (EX_CONFIG, which the quench-web unit does not restart on) for a bad file.
@Suite struct ServeCommandTests {
    @Test("--db, --listen and --token-file win over the environment and the files")
    func optionsResolve() throws {
        let run = try ServeCommand.Run.parse(["--db", "/srv/q/quench.sqlite", "--listen", "0.0.0.0:18123", "--token-file", "/srv/q/token"])
        let configuration = try run.web.configuration()
        #expect(configuration.database.value == "/srv/q/quench.sqlite")
        #expect(try configuration.listenAddress() == ListenAddress(host: "0.0.0.0", port: 18123))
        #expect(configuration.tokenPath == "/srv/q/token")
    }
}

/// The built `quench-web` as its unit runs it.
@Suite(.enabled(if: builtExecutable("quench-web") != nil, "SKIPPED: quench-web is not built (swift build --build-tests)"))
struct QuenchWebProcessTests {
    static let program = builtExecutable("quench-web") ?? "quench-web"

    @Test("the greeting names the address once it listens; SIGTERM ends it with 0")
    func greetsThenStops() throws {
        let folder = try TemporaryFolder()
        try "".write(toFile: folder.file("quench.toml"), atomically: true, encoding: .utf8)
        let port = try TestPorts.next()
        let log = folder.file("web.log")
        let server = try ChildProcess.start("/usr/bin/env", [
            "QUENCH_CONFIG=" + folder.file("quench.toml"), Self.program, "--db", folder.file("quench.sqlite"), "--listen", "127.0.0.1:\(port)",
        ], logFile: log).get()
        let greeting = WebServer.greeting(try #require(BoundAddress(try SocketAddress(ipAddress: "127.0.0.1", port: port))))
        let said = LiveFixture.waitFor(30) { ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains(greeting) }
        server.signal(SIGTERM)
        let status = server.wait()
        let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(said, "no greeting: \(output)")
        #expect(status == 0, "\(output)")
    }

    @Test("a bad config file or $QUENCH_WEB_LISTEN: exit 78, naming the file and line or the variable",
          arguments: [("x = \n", nil, "quench.toml:1:"), ("[web]\nlisten = \"127.0.0.1:99999\"\n", nil, "quench.toml:2: web.listen"),
                      ("", "nonsense", "$QUENCH_WEB_LISTEN: expected HOST:PORT")] as [(String, String?, String)])
    func badConfiguration(file: String, listen: String?, said: String) throws {
        let folder = try TemporaryFolder()
        try file.write(toFile: folder.file("quench.toml"), atomically: true, encoding: .utf8)
        var environment = ["QUENCH_CONFIG": folder.file("quench.toml")]
        environment["QUENCH_WEB_LISTEN"] = listen
        let result = try runProgram(Self.program, ["--db", folder.file("quench.sqlite")], environment: environment)
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("quench-web: error: ") && result.stderr.contains(said), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.file("quench.sqlite")), "nothing written before the configuration is good")
    }

    /// An address no interface of this machine has: refused before the bind, with where it was set and
    /// what this machine has (78: no restart loop); a name that does not resolve is worth a restart (1).
    @Test("listen on an address that is not this machine's: 78 naming the file and line; a name that does not resolve: 1")
    func listenAddressNotOnThisMachine() throws {
        let folder = try TemporaryFolder()
        try "# the page\n[web]\nlisten = \"192.0.2.1:8080\"\n".write(toFile: folder.file("quench.toml"), atomically: true, encoding: .utf8)
        let environment = ["QUENCH_CONFIG": folder.file("quench.toml")]
        let foreign = try runProgram(Self.program, ["--db", folder.file("quench.sqlite")], environment: environment)
        #expect(foreign.status == 78, "\(foreign.stderr)")
        #expect(foreign.stderr.contains("cannot listen on 192.0.2.1:8080 (set by `listen` under [web] in \(folder.file("quench.toml")):3): "
                                        + "no interface of this machine has the address 192.0.2.1"), "\(foreign.stderr)")
        #expect(foreign.stderr.contains("0.0.0.0:8080 for every interface"), "\(foreign.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.file("quench.sqlite")), "nothing written for an address it cannot have")
        var named = environment
        named["QUENCH_WEB_LISTEN"] = "no-such-host.invalid:8080"
        let unresolved = try runProgram(Self.program, ["--db", folder.file("quench.sqlite")], environment: named)
        #expect(unresolved.status == 1, "\(unresolved.stderr)")
        #expect(unresolved.stderr.contains("cannot listen on no-such-host.invalid:8080 (set by $QUENCH_WEB_LISTEN): the name no-such-host.invalid does not resolve"),
                "\(unresolved.stderr)")
    }

    @Test("a bad --listen names the option and fails")
    func badListenOption() throws {
        let folder = try TemporaryFolder()
        try "".write(toFile: folder.file("quench.toml"), atomically: true, encoding: .utf8)
        let result = try runProgram(Self.program, ["--db", folder.file("quench.sqlite"), "--listen", "127.0.0.1:99999"],
                                    environment: ["QUENCH_CONFIG": folder.file("quench.toml")])
        #expect(result.status != 0)
        #expect(result.stderr.contains("--listen \"127.0.0.1:99999\": the port must be a number from 0 to 65535"), "\(result.stderr)")
    }
}
#endif

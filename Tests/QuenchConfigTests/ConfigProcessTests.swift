import Foundation
import QuenchConfig
import QuenchTestSupport
import Testing

/// The configuration through the built binaries: `quench config`, a history
/// command, quenchd; and the shipped config/quench.toml.
let quenchdBinary = builtExecutable("quenchd")

@Suite(.enabled(if: quenchBinary != nil && quenchdBinary != nil, "SKIPPED: quench and quenchd are not built (swift build)"))
struct ConfigProcessTests {
    static let quenchd = quenchdBinary

    /// A folder with a config file, and the environment that names it (and a
    /// home of its own, so no real user file is read).
    struct Setup {
        let folder: TemporaryFolder
        let config: String
        var environment: [String: String] { ["QUENCH_CONFIG": config, "HOME": folder.path, "QUENCH_LOG": ""] }

        init(_ text: String) throws {
            folder = try TemporaryFolder("quench-config")
            config = folder.file("quench.toml")
            try text.replacingOccurrences(of: "$DIR", with: folder.path).write(toFile: config, atomically: true, encoding: .utf8)
        }
    }

    @Test func configShowSaysEachValueAndWhereItCameFrom() throws {
        let setup = try Setup("# mine\nunits = \"oz\"\n\n[gateway]\nconnect_timeout = 4.5\ndevices = [\"f0:f1:f2:f3:f4:f5\"]\n")
        var environment = setup.environment
        environment["QUENCH_DB"] = "/env/q.sqlite"
        let text = try runQuench(["config", "show"], environment: environment)
        #expect(text.status == 0, "\(text.stderr)")
        let rows = text.stdout.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
        #expect(rows.first == ["key", "value", "source"])
        #expect(rows.contains(["database", "/env/q.sqlite", "$QUENCH_DB"]))
        #expect(rows.contains(["units", "oz", "~/quench.toml:2"]), "the config is in $HOME: shown as ~")
        #expect(rows.contains(["gateway.connect_timeout", "4.5", "~/quench.toml:5"]))
        #expect(rows.contains(["gateway.devices", "F0:F1:F2:F3:F4:F5", "~/quench.toml:6"]))
        #expect(rows.contains(["log_level", "info", "default"]))
        #expect(rows.contains(["~/quench.toml", "$QUENCH_CONFIG", "read"]))
        // Columns line up: every value starts where the header's does.
        let lines = text.stdout.split(separator: "\n")
        let valueColumn = try #require(lines.first?.range(of: "value")).lowerBound.utf16Offset(in: lines[0])
        for line in lines[1...7] { #expect(line.dropFirst(valueColumn - 1).first == " " && line.dropFirst(valueColumn).first != " ", "\(line)") }

        let json = try runQuench(["config", "show", "--json", "--db", "/cli/q.sqlite"], environment: environment)
        #expect(json.status == 0, "\(json.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let settings = try #require(object["settings"] as? [[String: Any]])
        func setting(_ key: String) -> [String: Any]? { settings.first { $0["key"] as? String == key } }
        #expect(setting("database")?["value"] as? String == "/cli/q.sqlite" && setting("database")?["source"] as? String == "command line")
        #expect(setting("units")?["source"] as? String == setup.config + ":2", "JSON has the full path")
        #expect(setting("gateway.connect_timeout")?["value"] as? Double == 4.5)
        #expect(setting("gateway.devices")?["value"] as? [String] == ["F0:F1:F2:F3:F4:F5"])
        #expect(setting("gateway.drain_every")?["value"] is NSNull && setting("reminders.command")?["value"] is NSNull)
        let files = try #require(object["files"] as? [[String: String]])
        #expect(files == [["path": setup.config, "role": "$QUENCH_CONFIG", "status": "read"]])
    }

    @Test func configPathListsTheFilesLookedAt() throws {
        let home = try TemporaryFolder()
        let both = try runQuench(["config", "path"], environment: ["HOME": home.path, "QUENCH_CONFIG": "", "XDG_CONFIG_HOME": ""])
        #expect(both.stdout == home.path + "/.config/quench/quench.toml\n/etc/quench/quench.toml\n")
        let xdg = try runQuench(["config", "path"], environment: ["HOME": home.path, "QUENCH_CONFIG": "", "XDG_CONFIG_HOME": "/x"])
        #expect(xdg.stdout == "/x/quench/quench.toml\n/etc/quench/quench.toml\n")
        let named = try runQuench(["config", "path"], environment: ["QUENCH_CONFIG": "/srv/q.toml"])
        #expect(named.stdout == "/srv/q.toml\n")
    }

    @Test func historyCommandsTakeTheDatabaseAndUnitsFromTheFile() throws {
        let setup = try Setup("database = \"$DIR/history.sqlite\"\nunits = \"oz\"\n")
        let add = try runQuench(["add", "250ml"], environment: setup.environment)
        #expect(add.status == 0 && add.stdout.contains("8.5 oz"), "\(add.stdout)\(add.stderr)")
        #expect(FileManager.default.fileExists(atPath: setup.folder.file("history.sqlite")), "the file's database was used")
        let log = try runQuench(["log"], environment: setup.environment)
        #expect(log.stdout.contains("Amount (oz)") && log.stdout.contains("8.5"), "\(log.stdout)")
        // The command line wins.
        let ml = try runQuench(["log", "--units", "ml"], environment: setup.environment)
        #expect(ml.stdout.contains("Amount (mL)") || ml.stdout.contains("Amount (ml)"), "\(ml.stdout)")
    }

    @Test func aBadFileStopsEveryCommandWithItsPlace() throws {
        let setup = try Setup("units = \"ml\"\n\n[gateway]\nconnect_timeout = \"ten\"\n")
        let expected = "\(setup.config):4: gateway.connect_timeout: expected a number of seconds > 0, a year at most, got \"ten\""
        for arguments in [["today"], ["config", "show"], ["devices"], ["run", "--seconds", "0.1"]] {
            let r = try runQuench(arguments, environment: setup.environment)
            #expect(r.status != 0 && r.stderr == "quench: error: \(expected)\n", "\(arguments): \(r.stderr)")
        }
        let web = try Setup("[web]\nlisten = \"0.0.0.0\"\n")
        // `quench serve`, what the quench-web unit runs, stops with 78 (EX_CONFIG), which the unit does not restart on.
        for (arguments, status) in [(["today"], Int32(1)), (["serve", "token"], 1), (["serve"], 78)] {
            let r = try runQuench(arguments, environment: web.environment)
            #expect(r.status == status && r.stderr == "quench: error: \(web.config):2: web.listen: expected HOST:PORT, e.g. 127.0.0.1:8080 or 0.0.0.0:8080, "
                        + "got \"0.0.0.0\" (no port)\n", "\(arguments): \(r.stderr)")
        }
        // quench-web, which the unit runs, is the same command: the same words and statuses.
        if let quenchWeb = builtExecutable("quench-web") {
            for (arguments, status) in [(["token"], Int32(1)), ([], 78)] {
                let r = try runQuench(arguments, environment: web.environment, executable: quenchWeb)
                #expect(r.status == status && r.stderr == "quench-web: error: \(web.config):2: web.listen: expected HOST:PORT, e.g. 127.0.0.1:8080 or "
                            + "0.0.0.0:8080, got \"0.0.0.0\" (no port)\n", "quench-web \(arguments): \(r.stderr)")
            }
        }
        let mqtt = try Setup("[mqtt]\nhost = \"localhost\"\n")
        let m = try runQuench(["mqtt", "sync"], environment: mqtt.environment)
        #expect(m.status == 1 && m.stderr.contains("\(mqtt.config):2: mqtt.host: unknown key"), "\(m.stderr)")
        // `quench mqtt run`, what the quench-mqtt unit runs: 78 too, for a bad file and for no broker at all.
        let run = try runQuench(["mqtt", "run", "--seconds", "1"], environment: mqtt.environment)
        #expect(run.status == 78 && run.stderr.contains("\(mqtt.config):2: mqtt.host: unknown key"), "\(run.stderr)")
        // A broker URL the file gives wrong is named at its line, as every other value (it said only "broker URL '…'").
        let port = try Setup("[mqtt]\nbroker = \"mqtt://127.0.0.1:99999\"\n")
        for arguments in [["mqtt", "sync"], ["mqtt", "run", "--seconds", "1"]] {
            let r = try runQuench(arguments, environment: port.environment)
            #expect(r.status == (arguments[1] == "run" ? 78 : 1) && r.stderr.contains("\(port.config):2: mqtt.broker: expected mqtt://HOST[:PORT] or mqtts://…, "
                        + "got 'mqtt://127.0.0.1:99999' (the port must be 1 to 65535)"), "\(arguments): \(r.status) \(r.stderr)")
        }
        let none = try Setup("units = \"ml\"\n")
        var noBroker = none.environment
        noBroker["QUENCH_DB"] = none.folder.file("q.sqlite")
        let unset = try runQuench(["mqtt", "run", "--seconds", "1"], environment: noBroker)
        #expect(unset.status == 78 && unset.stderr.contains("no broker"), "\(unset.stderr)")
        let gone = try runQuench(["today"], environment: ["QUENCH_CONFIG": setup.folder.file("none.toml")])
        #expect(gone.status == 1 && gone.stderr.contains("none.toml: no such file (named by $QUENCH_CONFIG)"), "\(gone.stderr)")
    }

    /// `quench serve token` takes the port and the token's file from `[web]`;
    /// `$QUENCH_WEB_LISTEN` wins over the file and `--listen` over both.
    @Test func serveTokenTakesListenAndTokenFileFromTheFile() throws {
        let setup = try Setup("database = \"$DIR/q.sqlite\"\n[web]\nlisten = \"0.0.0.0:8181\"\ntoken_file = \"$DIR/secret\"\n")
        let fromFile = try runQuench(["serve", "token"], environment: setup.environment)
        #expect(fromFile.status == 0 && fromFile.stdout.contains(":8181/?token="), "\(fromFile.stdout)\(fromFile.stderr)")
        let token = try String(contentsOfFile: setup.folder.file("secret"), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(token.count == 64 && fromFile.stdout.contains("token=\(token)"), "the file's token_file holds it")
        #expect(!FileManager.default.fileExists(atPath: setup.folder.file("web-token")), "not beside the database")
        var environment = setup.environment
        environment["QUENCH_WEB_LISTEN"] = "0.0.0.0:8282"
        #expect(try runQuench(["serve", "token"], environment: environment).stdout.contains(":8282/?token=\(token)"))
        #expect(try runQuench(["serve", "token", "--listen", "[::]:8383"], environment: environment).stdout.contains(":8383/?token=\(token)"))

        let shown = try runQuench(["config", "show"], environment: environment)
        let rows = shown.stdout.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
        #expect(rows.contains(["web.listen", "0.0.0.0:8282", "$QUENCH_WEB_LISTEN"]), "\(shown.stdout)")
        #expect(rows.contains(["web.token_file", setup.folder.file("secret"), "~/quench.toml:4"]), "\(shown.stdout)")
        let plain = try Setup("")
        let defaults = try runQuench(["config", "show"], environment: plain.environment).stdout
        #expect(defaults.contains("web.listen") && defaults.contains("127.0.0.1:8080") && defaults.contains("(web-token beside the database)"), "\(defaults)")
    }

    /// quenchd with nothing paired waits (here 0.1 s); where it made its database and
    /// which device it looked for show what it took from the file.
    @Test func quenchdTakesTheDatabaseAndTheGatewayFromTheFile() throws {
        let setup = try Setup("database = \"$DIR/service.sqlite\"\n")
        let plain = try runQuench(["--seconds", "0.1"], environment: setup.environment, executable: Self.quenchd)
        #expect(plain.status == 0 && plain.stderr.contains("waiting for a pairing: no paired devices"), "\(plain.stderr)")
        #expect(FileManager.default.fileExists(atPath: setup.folder.file("service.sqlite")), "the database is the file's")

        let devices = try Setup("database = \"$DIR/service.sqlite\"\n[gateway]\ndevices = [\"a0:a1:a2:a3:a4:a5\"]\nconnect_timeout = 1\n")
        let one = try runQuench(["--seconds", "0.1"], environment: devices.environment, executable: Self.quenchd)
        #expect(one.status == 0 && one.stderr.contains("device A0:A1:A2:A3:A4:A5 is not started"), "the configured device was looked for: \(one.stderr)")
        // --db and --device win over the file.
        let flags = try runQuench(["--seconds", "0.1", "--db", devices.folder.file("flag.sqlite"), "--device", "B0:B1:B2:B3:B4:B5"],
                                  environment: devices.environment, executable: Self.quenchd)
        #expect(flags.stderr.contains("B0:B1:B2:B3:B4:B5") && !flags.stderr.contains("A0:A1"), "\(flags.stderr)")
        #expect(FileManager.default.fileExists(atPath: devices.folder.file("flag.sqlite")))

        // --config wins over $QUENCH_CONFIG; a bad file is EX_CONFIG with its place.
        let bad = try Setup("\n[gateway]\ndrain_every = 0\n")
        let refused = try runQuench(["--config", bad.config, "--seconds", "0.1"], environment: setup.environment, executable: Self.quenchd)
        #expect(refused.status == 78 && refused.stderr == "quenchd: \(bad.config):3: gateway.drain_every: expected a number of minutes > 0, a year at most, got 0\n",
                "\(refused.stderr)")
        let level = try runQuench(["--log-level", "loud"], executable: Self.quenchd)
        #expect(level.status == 64 && level.stderr.contains("one of trace, debug"))
        // A device that is no address is the option's mistake (64, in its words), not the file's (78, "an array").
        let device = try runQuench(["--device", "zz", "--seconds", "0.1"], environment: setup.environment, executable: Self.quenchd)
        #expect(device.status == 64 && device.stderr == "quenchd: --device: 'zz' is not a Bluetooth address like F0:F1:F2:F3:F4:F5\n", "\(device.stderr)")
    }

    /// The services' option mistakes are usage errors, 64, which their units do not restart on
    /// (RestartPreventExitStatus=64 78): quench-web's --units and --log-level were 1, restarted every 5 s.
    @Test func theServicesOptionMistakesAreUsageErrors() throws {
        let web = try #require(builtExecutable("quench-web"), "quench-web is built with quench (swift build)")
        let setup = try Setup("database = \"$DIR/service.sqlite\"\n")
        for (arguments, said) in [(["--units", "gallons"], "unknown unit 'gallons'"), (["--log-level", "verbose"], "--log-level 'verbose': one of trace")] {
            let r = try runQuench(arguments + ["--listen", "127.0.0.1:0"], environment: setup.environment, executable: web)
            #expect(r.status == 64 && r.stderr.contains(said), "\(arguments): \(r.status) \(r.stderr)")
        }
        let mqtt = try runQuench(["mqtt", "sync", "--log-level", "verbose"], environment: setup.environment)
        #expect(mqtt.status == 64 && mqtt.stderr.contains("--log-level 'verbose'"), "\(mqtt.stderr)")
    }

    /// A database the service's user cannot read (made by `sudo quench pair`, its `chown` forgotten) says whose it
    /// is and how to give it over, and is 78, not restarted: it said "unable to open database file", exit 1,
    /// restarted every 5 s for ever. One it can read but not write is refused at the start the same way: it ran
    /// "active" with every sip failing to be stored (the service trial).
    @Test(.enabled(if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
                   "SKIPPED: running quenchd as another user takes root and setpriv (util-linux)"))
    func aDatabaseTheServiceUserCannotUseIsSaidAndNotRetried() throws {
        let setup = try Setup("")
        // Readable on the way for anyone, as /var/lib/quench is to its own user.
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: setup.folder.path)
        let db = setup.folder.file("root.sqlite")
        #expect(try runQuench(["add", "250ml", "--db", db]).status == 0)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: db)
        let quenchd = try #require(Self.quenchd)
        func asNobody(_ path: String) throws -> ProcessResult {
            try runProgram("/usr/bin/setpriv", ["--reuid", "65534", "--regid", "65534", "--clear-groups", quenchd, "--db", path, "--seconds", "1"])
        }
        let closed = try asNobody(db)
        #expect(closed.status == 78, "\(closed.status) \(closed.stderr)")
        #expect(closed.stderr.contains("the database \(db) cannot be read by this user (nobody): it belongs to root with mode 0600")
                && closed.stderr.contains("`sudo chown nobody: \(db)`"), "\(closed.stderr)")
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: db)
        let readOnly = try asNobody(db)
        #expect(readOnly.status == 78 && readOnly.stderr.contains("the database \(db) is read-only"), "\(readOnly.status) \(readOnly.stderr)")
        // Readable and writable, but its folder is not (SQLite's -wal and -shm go there): the same.
        try FileManager.default.setAttributes([.ownerAccountID: 65534], ofItemAtPath: db)
        let folderClosed = try asNobody(db)
        #expect(folderClosed.status == 78 && folderClosed.stderr.contains("the database \(db) is read-only"), "\(folderClosed.status) \(folderClosed.stderr)")
    }

    /// SIGHUP (a `kill -HUP` meant as a reload) leaves quenchd and quench-web running: it ended them as a clean
    /// stop, which Restart=on-failure does not restart (the service trial). SIGTERM still stops them, with 0.
    @Test func aHangUpLeavesTheServicesRunning() throws {
        let setup = try Setup("database = \"$DIR/service.sqlite\"\n")
        let web = try #require(builtExecutable("quench-web"), "quench-web is built with quench (swift build)")
        for (program, arguments) in [(try #require(Self.quenchd), ["--seconds", "30"]), (web, ["--listen", "127.0.0.1:0"])] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = arguments
            process.environment = ProcessInfo.processInfo.environment.merging(setup.environment) { $1 }
            process.standardError = FileHandle(forWritingAtPath: "/dev/null")
            try process.run()
            Thread.sleep(forTimeInterval: 1.5)
            kill(process.processIdentifier, SIGHUP)
            Thread.sleep(forTimeInterval: 1)
            #expect(process.isRunning, "\(program) ended on SIGHUP")
            process.terminate()
            process.waitUntilExit()
            #expect(process.terminationReason == .exit && process.terminationStatus == 0, "\(program): \(process.terminationStatus)")
        }
    }

    static let shipped = TestPackage.root.appendingPathComponent("config/quench.toml").path

    /// `quench config sample` prints the committed sample file, and `quench config keys --markdown`
    /// the table in docs/service.md (both generated from the key table).
    @Test func configSampleAndKeysPrintTheCommittedFiles() throws {
        let sample = try runQuench(["config", "sample"])
        #expect(sample.status == 0)
        #expect(sample.stdout == (try String(contentsOfFile: Self.shipped, encoding: .utf8)),
                "regenerate: quench config sample > config/quench.toml")
        let markdown = try runQuench(["config", "keys", "--markdown"])
        let docs = try String(contentsOf: TestPackage.root.appendingPathComponent("docs/service.md"), encoding: .utf8)
        #expect(markdown.status == 0 && docs.contains("<!-- config-keys -->\n" + markdown.stdout + "<!-- /config-keys -->"),
                "regenerate docs/service.md's table: quench config keys --markdown")
        let text = try runQuench(["config", "keys"])
        #expect(text.status == 0)
        #expect(text.stdout.split(separator: "\n").dropFirst().map { $0.prefix { $0 != " " } }
                == KeySpec.all.map { Substring($0.key.description) }, "\(text.stdout)")
    }

    /// The shipped file sets nothing; with every example uncommented it sets every key, and loads.
    @Test func theShippedFileDocumentsEveryKeyWithValidExamples() throws {
        let text = try String(contentsOfFile: Self.shipped, encoding: .utf8)
        let asIs = Machine(files: ["/c.toml": text], variables: ["QUENCH_CONFIG": "/c.toml"])
        let defaults = try asIs.resolve().report(abbreviatingHome: false).settings
        #expect(defaults.allSatisfy { $0.source == "default" }, "\(defaults)")

        // `# key = value` lines become `key = value`.
        let uncommented = text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> Substring in
            guard line.hasPrefix("# "), let equals = line.range(of: " = "),
                  line[line.index(line.startIndex, offsetBy: 2)..<equals.lowerBound].allSatisfy({ $0.isLowercase || $0 == "_" }) else { return line }
            return line.dropFirst(2)
        }.joined(separator: "\n")
        let examples = Machine(files: ["/c.toml": uncommented], variables: ["QUENCH_CONFIG": "/c.toml"])
        let set = try examples.resolve().report(abbreviatingHome: false).settings
        #expect(set.allSatisfy { $0.source.hasPrefix("/c.toml:") }, "every key has an example: \(set.filter { !$0.source.hasPrefix("/c.toml:") })")
    }
}

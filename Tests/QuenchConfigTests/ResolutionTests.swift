import QuenchConfig
import QuenchCore
import Testing

/// A machine in memory: files by path and an environment, so resolution runs
/// without a real /etc or home.
struct Machine {
    static let user = "/home/p/.config/quench/quench.toml"
    static let system = "/etc/quench/quench.toml"

    var files: [String: String] = [:]
    var variables = ["HOME": "/home/p"]

    var inputs: ConfigInputs {
        let files = files
        return ConfigInputs(variables: variables) { path in files[path].map { .contents(Array($0.utf8)) } ?? .absent }
    }

    func resolve(_ commandLine: ConfigValues = ConfigValues(), configFile: String? = nil,
                 for program: ConfigProgram = .quench) throws(ConfigError) -> Configuration {
        try Configuration.resolve(commandLine: commandLine, configFile: configFile, for: program,
                                  defaultDatabase: "/default.sqlite", inputs: inputs)
    }

    /// The message a file with `text` is refused with (as `$QUENCH_CONFIG`), or nil when it loads.
    static func refusal(_ text: String, path: String = "/q.toml") -> String? {
        let machine = Machine(files: [path: text], variables: ["QUENCH_CONFIG": path])
        do {
            _ = try machine.resolve()
            return nil
        } catch {
            return error.description
        }
    }
}

extension Configuration {
    /// A key's value as `config show` prints it, and its source.
    func row(_ key: ConfigKey) -> (value: String, source: String)? {
        report(abbreviatingHome: false).settings.first { $0.key == key.description }.map { ($0.value.description, $0.source) }
    }
}

@Suite struct ResolutionTests {
    /// One key at every level: what each level says, and the value shown when it wins.
    struct Case: CustomTestStringConvertible, Sendable {
        var key: ConfigKey
        var commandLine: ConfigValues
        /// The environment variable that sets it, if any.
        var variable: (name: String, value: String)?
        /// The file's lines for the user's and the system's value.
        var userText: String
        var systemText: String
        /// Shown when the command line, the variable, the user, the system, the default wins.
        var shown: [String]
        var testDescription: String { key.description }
    }

    static let cases: [Case] = [
        Case(key: .database, commandLine: ConfigValues(database: "/cli.sqlite"), variable: ("QUENCH_DB", "/env.sqlite"),
             userText: "database = \"/user.sqlite\"", systemText: "database = \"/system.sqlite\"",
             shown: ["/cli.sqlite", "/env.sqlite", "/user.sqlite", "/system.sqlite", "/default.sqlite"]),
        Case(key: .logLevel, commandLine: ConfigValues(logLevel: .trace), variable: ("QUENCH_LOG", "DEBUG"),
             userText: "log_level = \"warning\"", systemText: "log_level = \"error\"",
             shown: ["trace", "debug", "warning", "error", "info"]),
        Case(key: .units, commandLine: ConfigValues(units: .ml), variable: nil,
             userText: "units = \"oz\"", systemText: "units = \"ml\"",
             shown: ["ml", "oz", "ml", "(the store's setting)"]),
        Case(key: .devices, commandLine: ConfigValues(devices: ["A0:A1:A2:A3:A4:A5"]), variable: nil,
             userText: "[gateway]\ndevices = [\"b0:b1:b2:b3:b4:b5\"]", systemText: "[gateway]\ndevices = [\"C0-C1-C2-C3-C4-C5\", \"D0:D1:D2:D3:D4:D5\"]",
             shown: ["A0:A1:A2:A3:A4:A5", "B0:B1:B2:B3:B4:B5", "C0:C1:C2:C3:C4:C5, D0:D1:D2:D3:D4:D5", "(every paired device)"]),
        Case(key: .connectTimeout, commandLine: ConfigValues(connectTimeout: 2.5), variable: nil,
             userText: "[gateway]\nconnect_timeout = 4", systemText: "[gateway]\nconnect_timeout = 30.5",
             shown: ["2.5", "4", "30.5", "10"]),
        Case(key: .adapter, commandLine: { var v = ConfigValues(); v.adapter = 2; return v }(), variable: nil,
             userText: "[gateway]\nadapter = \"hci1\"", systemText: "gateway.adapter = \"hci0\"",
             shown: ["hci2", "hci1", "hci0", "(the first adapter)"]),
        Case(key: .drainEvery, commandLine: ConfigValues(drainEvery: 1), variable: nil,
             userText: "gateway.drain_every = 15", systemText: "gateway = { drain_every = 60 }",
             shown: ["1", "15", "60", "(stay connected)"]),
        Case(key: .reminderCommand, commandLine: ConfigValues(reminderCommand: "/cli/notify"), variable: nil,
             userText: "[reminders]\ncommand = \"/user/notify\"", systemText: "[reminders]\ncommand = '/system/notify'",
             shown: ["/cli/notify", "/user/notify", "/system/notify", "(none)"]),
        Case(key: .webListen, commandLine: { var v = ConfigValues(); v.webListen = "[::1]:1"; return v }(), variable: ("QUENCH_WEB_LISTEN", "0.0.0.0:2"),
             userText: "[web]\nlisten = \"127.0.0.1:3\"", systemText: "web.listen = \"0.0.0.0:8080\"",
             shown: ["[::1]:1", "0.0.0.0:2", "127.0.0.1:3", "0.0.0.0:8080", "127.0.0.1:8080"]),
        Case(key: .webTokenFile, commandLine: { var v = ConfigValues(); v.webTokenFile = "/cli/token"; return v }(), variable: nil,
             userText: "[web]\ntoken_file = \"/user/token\"", systemText: "[web]\ntoken_file = \"/system/token\"",
             shown: ["/cli/token", "/user/token", "/system/token", "(web-token beside the database)"]),
    ]

    /// Peels the levels off one at a time: command line > environment > user file > system file > default.
    @Test(arguments: cases)
    func eachLevelWinsOverTheOnesBelow(_ c: Case) throws {
        // Comment lines first, so the line numbers are not 1.
        var machine = Machine(files: [Machine.user: "# mine\n\n" + c.userText, Machine.system: "# the system's\n" + c.systemText])
        if let variable = c.variable { machine.variables[variable.name] = variable.value }
        let userLine = 3 + c.userText.split(separator: "\n").count - 1
        let systemLine = 2 + c.systemText.split(separator: "\n").count - 1
        var expected = [(c.shown[0], "command line")]
        if let variable = c.variable { expected.append((c.shown[1], "$" + variable.name)) }
        let rest = c.shown.suffix(3)
        expected += [(rest[rest.startIndex], "\(Machine.user):\(userLine)"), (rest[rest.startIndex + 1], "\(Machine.system):\(systemLine)"),
                     (rest[rest.startIndex + 2], "default")]

        var commandLine = c.commandLine
        for (value, source) in expected {
            let row = try #require(try machine.resolve(commandLine).row(c.key))
            #expect(row.value == value && row.source == source, "wanted \(value) from \(source)")
            // Take away the level that just won.
            if source == "command line" {
                commandLine = ConfigValues()
            } else if source.hasPrefix("$"), let variable = c.variable {
                machine.variables[variable.name] = nil
            } else if source.hasPrefix(Machine.user) {
                machine.files[Machine.user] = nil
            } else {
                machine.files[Machine.system] = nil
            }
        }
    }

    @Test func typedValuesFollowTheShownOnes() throws {
        let machine = Machine(files: [Machine.system: """
            database = "/var/lib/quench/quench.sqlite"
            units = "OZ"
            [gateway]
            devices = ["f0:f1:f2:f3:f4:f5"]
            drain_every = 0.5
            """])
        let c = try machine.resolve()
        #expect(c.database.value == "/var/lib/quench/quench.sqlite")
        #expect(c.units.value == .usFluidOunce)
        #expect(c.devices.value == ["F0:F1:F2:F3:F4:F5"])
        #expect(c.drainEvery.value == 0.5 && c.connectTimeout.value == Configuration.defaultConnectTimeout)
        #expect(c.logLevel.value == .info && c.logLevel(otherwise: .warning) == .warning)
        #expect(try Machine(variables: ["QUENCH_LOG": "error"]).resolve().logLevel(otherwise: .warning) == .error)
        // Units as `--units` takes them (the file refused "fl oz", a desk trial).
        for units in ["fl oz", "millilitres"] {
            let named = try Machine(files: [Machine.user: "units = \"\(units)\""]).resolve().units.value
            #expect(named == (units == "fl oz" ? .usFluidOunce : .ml), "\(units)")
        }
    }

    @Test func quenchConfigNamesTheOnlyFileAndItMustExist() throws {
        var machine = Machine(files: [Machine.user: "units = \"oz\"", Machine.system: "log_level = \"debug\"", "/srv/q.toml": "units = \"ml\""])
        machine.variables["QUENCH_CONFIG"] = "/srv/q.toml"
        let c = try machine.resolve()
        #expect(c.units.value == .ml && c.units.source == .file(path: "/srv/q.toml", line: 1))
        #expect(c.logLevel.source == .builtIn, "the system file is not read")
        #expect(c.files == [ConfigFileStatus(path: "/srv/q.toml", role: .named(by: "$QUENCH_CONFIG"), present: true)])
        machine.variables["QUENCH_CONFIG"] = "/srv/none.toml"
        #expect(throws: ConfigError.missing(path: "/srv/none.toml", namedBy: "$QUENCH_CONFIG")) { try machine.resolve() }
        // quenchd's --config wins over $QUENCH_CONFIG.
        let d = try machine.resolve(configFile: "/srv/q.toml", for: .quenchd)
        #expect(d.files.map(\.role) == [.named(by: "--config")] && d.units.value == .ml)
    }

    @Test func quenchdReadsTheSystemFileOnly() throws {
        let machine = Machine(files: [Machine.user: "database = \"/user.sqlite\"", Machine.system: "database = \"/system.sqlite\""])
        let d = try machine.resolve(for: .quenchd)
        #expect(d.database.value == "/system.sqlite")
        #expect(d.files == [ConfigFileStatus(path: Machine.system, role: .system, present: true)])
    }

    @Test func missingFilesAreDefaultsAndListedAsNotPresent() throws {
        let c = try Machine().resolve()
        #expect(c.files == [ConfigFileStatus(path: Machine.user, role: .user, present: false),
                            ConfigFileStatus(path: Machine.system, role: .system, present: false)])
        #expect(c.database.value == "/default.sqlite" && c.database.source == .builtIn)
    }

    @Test func theUserFileFollowsXDGConfigHomeWhenItIsAbsolute() {
        func files(_ variables: [String: String]) -> [String] {
            Configuration.candidateFiles(for: .quench, variables: variables).map(\.path)
        }
        #expect(files(["HOME": "/h", "XDG_CONFIG_HOME": "/x"]) == ["/x/quench/quench.toml", Machine.system])
        #expect(files(["HOME": "/h", "XDG_CONFIG_HOME": "relative"]) == ["/h/.config/quench/quench.toml", Machine.system])
        #expect(files([:]) == [Machine.system])
        #expect(files(["HOME": "/h", "QUENCH_CONFIG": ""]) == ["/h/.config/quench/quench.toml", Machine.system], "empty is unset")
        #expect(Configuration.candidateFiles(for: .quenchd, variables: ["HOME": "/h"]).map(\.path) == [Machine.system])
    }

    @Test func emptyVariablesAreUnset() throws {
        let c = try Machine(files: [Machine.system: "database = \"/system.sqlite\""], variables: ["QUENCH_DB": "", "QUENCH_LOG": ""]).resolve()
        #expect(c.database.value == "/system.sqlite" && c.logLevel.source == .builtIn)
    }

    @Test func theHomeIsShownAsATildeInTextOnly() throws {
        let c = try Machine(files: [Machine.user: "\n\nunits = \"oz\""]).resolve()
        let text = c.report(abbreviatingHome: true)
        #expect(text.settings.first { $0.key == "units" }?.source == "~/.config/quench/quench.toml:3")
        #expect(text.files.map(\.path) == ["~/.config/quench/quench.toml", Machine.system])
        #expect(c.report(abbreviatingHome: false).files.map(\.status) == ["read", "not present"])
    }
}

@Suite struct PersonSettingTests {
    /// Whose history: `--person` over `QUENCH_PERSON` over the user's file over /etc; unset by default.
    @Test func personFollowsThePrecedence() throws {
        var machine = Machine(files: [Machine.system: "person = \"sam\"\n", Machine.user: "person = \"ann\"\n"])
        #expect(try machine.resolve().person.value == "ann")
        #expect(try machine.resolve().row(.person)?.source == "\(Machine.user):1")
        machine.variables["QUENCH_PERSON"] = "bob"
        #expect(try machine.resolve().person.value == "bob")
        #expect(try machine.resolve().row(.person)?.source == "$QUENCH_PERSON")
        var commandLine = ConfigValues()
        commandLine.person = "cy"
        #expect(try machine.resolve(commandLine).person.value == "cy")
        #expect(try Machine().resolve().person.value == nil)
        #expect(Machine.refusal("person = \"\"\n") == "/q.toml:1: person: expected a person's name (a non-empty string), got \"\"")
    }
}

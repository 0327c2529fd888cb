import QuenchCore
import Threading

/// Who is asking: `quench` reads the user's file and the system's; `quenchd`,
/// a service with no person behind it, the system's only.
public enum ConfigProgram: Sendable {
    case quench, quenchd
}

/// A configuration file the resolution looked at.
public struct ConfigFileStatus: Sendable, Hashable {
    public enum Role: Sendable, Hashable, CustomStringConvertible {
        /// `$QUENCH_CONFIG` or `--config`: this file instead of the others, and it must exist.
        case named(by: String)
        case user
        case system

        public var description: String {
            switch self {
            case .named(let by): by
            case .user: "user"
            case .system: "system"
            }
        }
    }

    public var path: String
    public var role: Role
    /// nil: not looked at yet.
    public var present: Bool?

    public init(path: String, role: Role, present: Bool? = nil) {
        self.path = path
        self.role = role
        self.present = present
    }
}

/// A file as resolution sees it.
public enum FileRead: Sendable, Equatable {
    case contents([UInt8])
    /// Not there: the defaults apply (unless the file was named).
    case absent
    case problem(ReadProblem)
    /// There, but another user could have written it (`FileTrust`): refused, never read.
    case untrusted(UntrustedFile)
}

/// What resolution reads, passed in so that tests need no real /etc or home.
public struct ConfigInputs: Sendable {
    public var variables: [String: String]
    public var read: @Sendable (String) -> FileRead

    public init(variables: [String: String], read: @escaping @Sendable (String) -> FileRead) {
        self.variables = variables
        self.read = read
    }
}

/// The effective configuration: each value, and where it came from. The
/// command line wins, then the environment (`QUENCH_DB`, `QUENCH_LOG`, …), the
/// user's file (`quench` only), `/etc/quench/quench.toml`, and the built-in
/// default. `$QUENCH_CONFIG` (or quenchd's `--config`) names one file to read
/// instead of both.
public struct Configuration: Sendable {
    public var database: Setting<String>
    public var logLevel: Setting<LogLevel>
    /// nil: the store's own setting (`quench settings --units`).
    public var units: Setting<VolumeUnit?>
    /// Whose history: nil, the household's only person (`HistoryEnvironment.person`).
    public var person: Setting<String?>
    /// Empty: every paired device.
    public var devices: Setting<[String]>
    public var connectTimeout: Setting<Double>
    /// Minutes; nil: stay connected.
    public var drainEvery: Setting<Double?>
    public var reminderCommand: Setting<String?>
    public var mqttBroker: Setting<String?>
    public var mqttPasswordFile: Setting<String?>
    public var mqttClientID: Setting<String?>
    public var mqttCAFile: Setting<String?>
    public var mqttNode: Setting<String?>
    /// `HOST:PORT`, already checked with `HostPort`.
    public var webListen: Setting<String>
    /// nil: `web-token` beside the database.
    public var webTokenFile: Setting<String?>
    /// The files looked at, the weightiest first.
    public var files: [ConfigFileStatus]
    /// `$HOME`, to show the user's file as `~/…`.
    public var home: String?

    public static let systemFile = "/etc/quench/quench.toml"
    /// `quench run` and quenchd's wait for each connection attempt, when nobody says.
    public static let defaultConnectTimeout = 10.0
    /// `quench serve`'s address when nobody says: this machine only, no token needed.
    public static let defaultWebListen = "127.0.0.1:8080"

    /// Resolves every key. `commandLine` holds what the options gave;
    /// `configFile` is quenchd's `--config`; `defaultDatabase` is the last
    /// fallback (the store's XDG location).
    public static func resolve(commandLine: ConfigValues, configFile: String? = nil, for program: ConfigProgram,
                               defaultDatabase: String, inputs: ConfigInputs) throws(ConfigError) -> Configuration {
        var layers = [Layer(values: commandLine) { _ in .commandLine }, try environmentLayer(inputs.variables)]
        var files: [ConfigFileStatus] = []
        for var file in candidateFiles(for: program, configFile: configFile, variables: inputs.variables) {
            switch inputs.read(file.path) {
            case .absent:
                if case .named(let by) = file.role { throw .missing(path: file.path, namedBy: by) }
                file.present = false
            case .problem(let problem):
                throw .cannotRead(path: file.path, problem)
            case .untrusted(let problem):
                throw .untrusted(problem)
            case .contents(let bytes):
                let parsed = try ConfigFile(parsing: bytes, path: file.path)
                layers.append(Layer(values: parsed.values, source: parsed.source))
                file.present = true
            }
            files.append(file)
        }

        func pick<T>(_ field: KeyPath<ConfigValues, T?>, _ key: ConfigKey) -> Setting<T?> {
            for layer in layers {
                if let value = layer.values[keyPath: field] { return Setting(value, from: layer.source(key)) }
            }
            return Setting(nil, from: .builtIn)
        }
        return Configuration(
            database: pick(\.database, .database).defaulting(to: defaultDatabase),
            logLevel: pick(\.logLevel, .logLevel).defaulting(to: .info),
            units: pick(\.units, .units),
            person: pick(\.person, .person),
            devices: pick(\.devices, .devices).defaulting(to: []),
            connectTimeout: pick(\.connectTimeout, .connectTimeout).defaulting(to: defaultConnectTimeout),
            drainEvery: pick(\.drainEvery, .drainEvery),
            reminderCommand: pick(\.reminderCommand, .reminderCommand),
            mqttBroker: pick(\.mqttBroker, .mqttBroker), mqttPasswordFile: pick(\.mqttPasswordFile, .mqttPasswordFile),
            mqttClientID: pick(\.mqttClientID, .mqttClientID), mqttCAFile: pick(\.mqttCAFile, .mqttCAFile),
            mqttNode: pick(\.mqttNode, .mqttNode),
            webListen: pick(\.webListen, .webListen).defaulting(to: defaultWebListen), webTokenFile: pick(\.webTokenFile, .webTokenFile),
            files: files, home: inputs.variables["HOME"])
    }

    /// The log level, with `fallback` in place of the built-in default (for
    /// commands that are quieter unless asked).
    public func logLevel(otherwise fallback: LogLevel) -> LogLevel {
        logLevel.source == .builtIn ? fallback : logLevel.value
    }

    /// The files resolution reads, the weightiest first, not yet looked at:
    /// the named one alone, else the user's (`$XDG_CONFIG_HOME/quench/quench.toml`,
    /// else `~/.config/quench/quench.toml`; a relative `$XDG_CONFIG_HOME` is
    /// ignored, XDG Base Directory 0.8) and the system's.
    public static func candidateFiles(for program: ConfigProgram, configFile: String? = nil,
                                      variables: [String: String]) -> [ConfigFileStatus] {
        if let configFile { return [ConfigFileStatus(path: configFile, role: .named(by: "--config"))] }
        if let named = variables["QUENCH_CONFIG"], !named.isEmpty {
            return [ConfigFileStatus(path: named, role: .named(by: "$QUENCH_CONFIG"))]
        }
        let system = ConfigFileStatus(path: systemFile, role: .system)
        guard program == .quench else { return [system] }
        let user: String? = if let xdg = variables["XDG_CONFIG_HOME"], xdg.hasPrefix("/") {
            xdg + "/quench/quench.toml"
        } else if let home = variables["HOME"], !home.isEmpty {
            home + "/.config/quench/quench.toml"
        } else {
            nil
        }
        return (user.map { [ConfigFileStatus(path: $0, role: .user)] } ?? []) + [system]
    }

    /// `QUENCH_DB`, `QUENCH_LOG`, `QUENCH_MQTT`, `QUENCH_MQTT_PASSWORD_FILE`, `QUENCH_PERSON` and
    /// `QUENCH_WEB_LISTEN`; empty ones are unset. Those with a form (`QUENCH_LOG`, `QUENCH_WEB_LISTEN`)
    /// are checked here, as a file's value would be.
    private static func environmentLayer(_ variables: [String: String]) throws(ConfigError) -> Layer {
        var values = ConfigValues()
        if let path = variables["QUENCH_DB"], !path.isEmpty { values.database = path }
        if let url = variables["QUENCH_MQTT"], !url.isEmpty { values.mqttBroker = url }
        if let path = variables["QUENCH_MQTT_PASSWORD_FILE"], !path.isEmpty { values.mqttPasswordFile = path }
        if let name = variables["QUENCH_PERSON"], !name.isEmpty { values.person = name }
        if let name = variables["QUENCH_LOG"], !name.isEmpty {
            guard let level = LogLevel(name: name) else {
                throw .badValue(.environment("QUENCH_LOG"), key: "QUENCH_LOG", expected: LogLevel.expected, got: "\"\(name.shownSafely())\"")
            }
            values.logLevel = level
        }
        if let listen = variables["QUENCH_WEB_LISTEN"], !listen.isEmpty {
            if let problem = listenProblem(listen) {
                throw .badValue(.environment("QUENCH_WEB_LISTEN"), key: "QUENCH_WEB_LISTEN", expected: HostPort.expected,
                                got: "\"\(listen.shownSafely())\"", reason: problem)
            }
            values.webListen = listen
        }
        let names: [ConfigKey: String] = [.database: "QUENCH_DB", .logLevel: "QUENCH_LOG", .mqttBroker: "QUENCH_MQTT",
                                          .mqttPasswordFile: "QUENCH_MQTT_PASSWORD_FILE", .person: "QUENCH_PERSON",
                                          .webListen: "QUENCH_WEB_LISTEN"]
        return Layer(values: values) { key in .environment(names[key] ?? key.description) }
    }

    /// One source's values, and where each came from.
    private struct Layer {
        var values: ConfigValues
        var source: (ConfigKey) -> ConfigSource
    }
}

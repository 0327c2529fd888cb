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
    /// What a relative path in a `QUENCH_*` variable is relative to; nil: such a path is refused.
    public var workingDirectory: String?

    public init(variables: [String: String], workingDirectory: String? = nil, read: @escaping @Sendable (String) -> FileRead) {
        self.variables = variables
        self.workingDirectory = workingDirectory
        self.read = read
    }
}

/// The effective configuration: each value, and where it came from. The
/// command line wins, then the environment (`QUENCH_DB`, `QUENCH_LOG`, …), the
/// user's file (`quench` only), `/etc/quench/quench.toml`, and the built-in
/// default. `$QUENCH_CONFIG` (or quenchd's `--config`) names one file to read
/// instead of both.
public struct Configuration: Sendable {
    /// Each key's effective value (the built-in default where nobody gave one), from the key table (`KeySpec.all`).
    public var values: ConfigValues
    /// Where each key's value came from.
    public var sources: [ConfigKey: ConfigSource]
    /// The files looked at, the weightiest first.
    public var files: [ConfigFileStatus]
    /// `$HOME`, to show the user's file as `~/…`.
    public var home: String?

    public static let systemFile = "/etc/quench/quench.toml"
    /// `quench run` and quenchd's wait for each connection attempt, when nobody says.
    public static let defaultConnectTimeout = 10.0
    /// The longest wait or run any option or key may ask for, in its unit: a year of seconds.
    /// A clock's deadline further away (`inf`, `1e300`) traps in `Duration`.
    public static let longestDuration = 31_536_000.0

    /// `n` when it is a duration an option may ask for: finite, above zero, a year at most.
    public static func duration(_ n: Double) -> Double? { n.isFinite && n > 0 && n <= longestDuration ? n : nil }
    /// `quench serve`'s address when nobody says: this machine only, no token needed.
    public static let defaultWebListen = "127.0.0.1:8080"

    /// Where `key`'s value came from.
    public func source(_ key: ConfigKey) -> ConfigSource { sources[key] ?? .builtIn }

    private func setting<T>(_ field: KeyPath<ConfigValues, T?>, _ key: ConfigKey) -> Setting<T?> {
        Setting(values[keyPath: field], from: source(key))
    }

    // Typed access for callers; the defaults behind the fallbacks are already in `values`.
    public var database: Setting<String> { setting(\.database, .database).defaulting(to: "") }
    public var logLevel: Setting<LogLevel> { setting(\.logLevel, .logLevel).defaulting(to: .info) }
    /// nil: the store's own setting (`quench settings --units`).
    public var units: Setting<VolumeUnit?> { setting(\.units, .units) }
    /// Whose history: nil, the household's only person (`HistoryEnvironment.person`).
    public var person: Setting<String?> { setting(\.person, .person) }
    /// Empty: every paired device.
    public var devices: Setting<[String]> { setting(\.devices, .devices).defaulting(to: []) }
    public var connectTimeout: Setting<Double> { setting(\.connectTimeout, .connectTimeout).defaulting(to: Self.defaultConnectTimeout) }
    /// nil: the first adapter.
    public var adapter: Setting<UInt16?> { setting(\.adapter, .adapter) }
    /// Minutes; nil: stay connected.
    public var drainEvery: Setting<Double?> { setting(\.drainEvery, .drainEvery) }
    public var handOver: Setting<Bool> { setting(\.handOver, .handOver).defaulting(to: false) }
    public var reminderCommand: Setting<String?> { setting(\.reminderCommand, .reminderCommand) }
    public var mqttBroker: Setting<String?> { setting(\.mqttBroker, .mqttBroker) }
    public var mqttPasswordFile: Setting<String?> { setting(\.mqttPasswordFile, .mqttPasswordFile) }
    public var mqttClientID: Setting<String?> { setting(\.mqttClientID, .mqttClientID) }
    public var mqttCAFile: Setting<String?> { setting(\.mqttCAFile, .mqttCAFile) }
    public var mqttNode: Setting<String?> { setting(\.mqttNode, .mqttNode) }
    public var mqttNodeID: Setting<String?> { setting(\.mqttNodeID, .mqttNodeID) }
    public var mqttCertFile: Setting<String?> { setting(\.mqttCertFile, .mqttCertFile) }
    public var mqttKeyFile: Setting<String?> { setting(\.mqttKeyFile, .mqttKeyFile) }
    public var mqttDiscovery: Setting<String?> { setting(\.mqttDiscovery, .mqttDiscovery) }
    public var mqttDiscoveryPrefix: Setting<String?> { setting(\.mqttDiscoveryPrefix, .mqttDiscoveryPrefix) }
    public var mqttTopicPrefix: Setting<String?> { setting(\.mqttTopicPrefix, .mqttTopicPrefix) }
    /// `HOST:PORT`, already checked with `HostPort`.
    public var webListen: Setting<String> { setting(\.webListen, .webListen).defaulting(to: Self.defaultWebListen) }
    /// nil: `web-token` beside the database.
    public var webTokenFile: Setting<String?> { setting(\.webTokenFile, .webTokenFile) }
    /// nil: `backups` beside the database.
    public var backupDir: Setting<String?> { setting(\.backupDir, .backupDir) }
    public var backupKeepDaily: Setting<Int> { setting(\.backupKeepDaily, .backupKeepDaily).defaulting(to: Self.defaultKeepDaily) }
    public var backupKeepWeekly: Setting<Int> { setting(\.backupKeepWeekly, .backupKeepWeekly).defaulting(to: Self.defaultKeepWeekly) }
    public static let defaultKeepDaily = 7
    public static let defaultKeepWeekly = 4
    /// nil: reminders are not pushed anywhere.
    public var notifyURL: Setting<String?> { setting(\.notifyURL, .notifyURL) }
    /// `ntfy` or `json`, already checked.
    public var notifyFormat: Setting<String> { setting(\.notifyFormat, .notifyFormat).defaulting(to: "ntfy") }
    public var notifyTokenFile: Setting<String?> { setting(\.notifyTokenFile, .notifyTokenFile) }
    public var notifyCAFile: Setting<String?> { setting(\.notifyCAFile, .notifyCAFile) }
    public var notifyTimeout: Setting<Double> { setting(\.notifyTimeout, .notifyTimeout).defaulting(to: Self.defaultNotifyTimeout) }
    /// Seconds for each try of a push, when nobody says.
    public static let defaultNotifyTimeout = 10.0

    /// Resolves every key. `commandLine` holds what the options gave;
    /// `configFile` is quenchd's `--config`; `defaultDatabase` is the last
    /// fallback (the store's XDG location).
    public static func resolve(commandLine: ConfigValues, configFile: String? = nil, for program: ConfigProgram,
                               defaultDatabase: String, inputs: ConfigInputs) throws(ConfigError) -> Configuration {
        let commandLine = try checkedCommandLine(commandLine, workingDirectory: inputs.workingDirectory)
        var layers = [Layer(values: commandLine) { _ in .commandLine }, try environmentLayer(inputs.variables, workingDirectory: inputs.workingDirectory)]
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
        var defaults = KeySpec.defaults
        defaults.database = defaultDatabase  // known only now: the store's XDG location
        layers.append(Layer(values: defaults) { _ in .builtIn })

        var values = ConfigValues()
        var sources: [ConfigKey: ConfigSource] = [:]
        for spec in KeySpec.all {
            if let layer = layers.first(where: { spec.take(&values, $0.values) }) { sources[spec.key] = layer.source(spec.key) }
        }
        return Configuration(values: values, sources: sources, files: files, home: inputs.variables["HOME"])
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

    /// The keys' variables (`QUENCH_DB`, `QUENCH_LOG`, …, `KeySpec.environment`);
    /// empty ones are unset. Each is checked by its key's parser, as a file's value is.
    private static func environmentLayer(_ variables: [String: String], workingDirectory: String?) throws(ConfigError) -> Layer {
        var values = ConfigValues()
        for spec in KeySpec.all {
            guard let name = spec.environment, var text = variables[name], !text.isEmpty else { continue }
            // `QUENCH_DB=day.sqlite` means ./day.sqlite, as `--db day.sqlite` does.
            if spec.takesPath, !text.hasPrefix("/"), let workingDirectory { text = workingDirectory + "/" + text }
            let value = TOMLValue.string(text)
            if case .failure(let refusal) = spec.apply(&values, value) {
                throw .badValue(.environment(name), key: name, expected: spec.expected, got: shown(value), reason: refusal.reason)
            }
        }
        return Layer(values: values) { key in .environment(KeySpec.spec(key)?.environment ?? key.description) }
    }

    /// The options' values, each checked by its key's parser as a file's value is: an option
    /// reaches past a file's checks otherwise (`--node-id ''` published on `quench//status`,
    /// `--topic-prefix '#'` retried a subscription for ever, `--log-level bogus` ran).
    /// A relative path is returned as the absolute one it means, as `QUENCH_DB`'s is: `config show` said
    /// `relative.sqlite`, and a service that changed its directory would have opened another file.
    private static func checkedCommandLine(_ commandLine: ConfigValues, workingDirectory: String?) throws(ConfigError) -> ConfigValues {
        var checked = commandLine
        for spec in KeySpec.all {
            var given = ConfigValues()
            guard spec.take(&given, commandLine), let said = spec.show(given) else { continue }
            let value: TOMLValue
            switch said {
            case .text(let text) where spec.takesPath && !text.hasPrefix("/"):
                // `--db day.sqlite` is ./day.sqlite: checked as the absolute path it means.
                value = .string((workingDirectory ?? "") + "/" + text)
            case .text(let text) where spec.example == "true" || spec.example == "false":
                value = .boolean(text == "true")
            case .text(let text): value = .string(text)
            case .number(let n): value = n.rounded() == n && abs(n) < 1e15 ? .integer(Int64(n)) : .float(n)
            case .list(let items): value = .array(items.map { .string($0) })
            case .unset: continue
            }
            var check = ConfigValues()
            if case .failure(let refusal) = spec.apply(&check, value) {
                throw .badValue(.commandLine, key: spec.flags.first ?? spec.key.description, expected: spec.expected,
                                got: shown(value), reason: refusal.reason)
            }
            if spec.takesPath, workingDirectory != nil { _ = spec.apply(&checked, value) }
        }
        return checked
    }

    /// One source's values, and where each came from.
    private struct Layer {
        var values: ConfigValues
        var source: (ConfigKey) -> ConfigSource
    }
}

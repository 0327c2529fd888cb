import QuenchCore

/// Where an effective value came from, in the order they weigh: the command
/// line, the environment, a file, the built-in default.
public enum ConfigSource: Sendable, Hashable, CustomStringConvertible {
    case commandLine
    /// An environment variable, by name (`QUENCH_DB`).
    case environment(String)
    /// A configuration file and the line the key is on (nil when it cannot be found).
    case file(path: String, line: Int?)
    case builtIn

    public var description: String {
        switch self {
        case .commandLine: "command line"
        case .environment(let name): "$" + name
        case .file(let path, let line): line.map { "\(path):\($0)" } ?? path
        case .builtIn: "default"
        }
    }
}

/// An effective value and where it came from.
public struct Setting<Value: Sendable>: Sendable {
    public var value: Value
    public var source: ConfigSource

    public init(_ value: Value, from source: ConfigSource) {
        self.value = value
        self.source = source
    }
}

extension Setting {
    /// The same, with `fallback` in place of a value nobody gave.
    func defaulting<Wrapped>(to fallback: Wrapped) -> Setting<Wrapped> where Value == Wrapped? {
        Setting<Wrapped>(value ?? fallback, from: source)
    }
}

/// swift-log's levels, by the names `--log-level` takes.
public enum LogLevel: String, Sendable, CaseIterable, Codable {
    case trace, debug, info, notice, warning, error, critical

    /// `debug`, `DEBUG`.
    public init?(name: String) { self.init(rawValue: name.lowercased()) }

    /// What a wrong one is told: "one of trace, debug, info, notice, warning, error, critical".
    public static let expected = "one of " + allCases.map(\.rawValue).joined(separator: ", ")
}

/// A `--log-level` the config file would refuse is refused on the command line too.
public struct LogLevelRefused: Error, CustomStringConvertible {
    public let given: String
    public var description: String {
        "--log-level '\(given.shownSafely(limit: 40))': \(LogLevel.expected)"
    }
}

extension LogLevel {
    /// Throws `LogLevelRefused` for a name that is none of the levels (nil is no option given).
    public static func check(_ name: String?) throws(LogLevelRefused) {
        if let name, LogLevel(name: name) == nil { throw LogLevelRefused(given: name) }
    }
}

/// What one layer says (the command line, the environment, one file); nil
/// where it says nothing.
public struct ConfigValues: Sendable, Equatable {
    public var database: String?
    public var logLevel: LogLevel?
    /// Display units, over the store's setting.
    public var units: VolumeUnit?
    /// Bluetooth addresses; nil (or empty) is every paired device.
    public var devices: [String]?
    /// Seconds allowed for each connection attempt.
    public var connectTimeout: Double?
    /// The Bluetooth adapter's index (`hci1` is 1); nil: the first.
    public var adapter: UInt16?
    /// Minutes between drains of a bottle that keeps its own sips.
    public var drainEvery: Double?
    /// Connected bottles other gateways are configured for too: connect only when the claims on the broker say so.
    public var handOver: Bool?
    /// The program `quench remind --notify` runs.
    public var reminderCommand: String?
    /// `quench mqtt run|sync`: the broker URL, the password file, the client id, the CA file, this gateway's name in topics.
    public var mqttBroker: String?
    public var mqttPasswordFile: String?
    public var mqttClientID: String?
    public var mqttCAFile: String?
    public var mqttNode: String?
    /// This gateway's id in MQTT topics and Home Assistant's unique ids (default: from /etc/machine-id).
    public var mqttNodeID: String?
    /// A client certificate and its key, for a broker that asks for one.
    public var mqttCertFile: String?
    public var mqttKeyFile: String?
    /// Home Assistant discovery: `components` (one config per entity) or `device` (one per device,
    /// Home Assistant 2024.11 and later); its topic prefix; and the prefix of Quench's own topics.
    public var mqttDiscovery: String?
    public var mqttDiscoveryPrefix: String?
    public var mqttTopicPrefix: String?
    /// `quench serve` (the quench-web service): where it listens, `HOST:PORT`
    /// (checked by `HostPort`), and the access token's file.
    public var webListen: String?
    public var webTokenFile: String?
    /// `quench remind --notify`'s push to a phone: the server's URL, its format
    /// (`ntfy` or `json`), the token's file, the CA file, seconds for each try.
    public var notifyURL: String?
    public var notifyFormat: String?
    public var notifyTokenFile: String?
    public var notifyCAFile: String?
    public var notifyTimeout: Double?
    /// Whose history the history commands show when `--person` is not given (a household's usual person).
    public var person: String?
    /// `quench backup` (the quench-backup timer): the folder, and how many daily and weekly backups it keeps.
    public var backupDir: String?
    public var backupKeepDaily: Int?
    public var backupKeepWeekly: Int?

    public init(database: String? = nil, logLevel: LogLevel? = nil, units: VolumeUnit? = nil, devices: [String]? = nil,
                connectTimeout: Double? = nil, drainEvery: Double? = nil, reminderCommand: String? = nil) {
        self.database = database
        self.logLevel = logLevel
        self.units = units
        self.devices = devices
        self.connectTimeout = connectTimeout
        self.drainEvery = drainEvery
        self.reminderCommand = reminderCommand
    }
}

import BluetoothWire
import QuenchCore

/// A key of the configuration file: `log_level`, or `connect_timeout` in `[gateway]`.
public struct ConfigKey: Sendable, Hashable, CustomStringConvertible {
    public var section: String?
    public var name: String

    public init(_ section: String?, _ name: String) {
        self.section = section
        self.name = name
    }

    /// `gateway.connect_timeout`, as TOML spells the key from the top.
    public var description: String { section.map { "\($0).\(name)" } ?? name }
    var path: [String] { (section.map { [$0] } ?? []) + [name] }

    public static let database = ConfigKey(nil, "database")
    public static let logLevel = ConfigKey(nil, "log_level")
    public static let units = ConfigKey(nil, "units")
    public static let person = ConfigKey(nil, "person")
    public static let devices = ConfigKey("gateway", "devices")
    public static let connectTimeout = ConfigKey("gateway", "connect_timeout")
    public static let adapter = ConfigKey("gateway", "adapter")
    public static let drainEvery = ConfigKey("gateway", "drain_every")
    public static let handOver = ConfigKey("gateway", "hand_over")
    public static let reminderCommand = ConfigKey("reminders", "command")
    public static let mqttBroker = ConfigKey("mqtt", "broker")
    public static let mqttPasswordFile = ConfigKey("mqtt", "password_file")
    public static let mqttClientID = ConfigKey("mqtt", "client_id")
    public static let mqttCAFile = ConfigKey("mqtt", "ca_file")
    public static let mqttNode = ConfigKey("mqtt", "node")
    public static let mqttNodeID = ConfigKey("mqtt", "node_id")
    public static let mqttCertFile = ConfigKey("mqtt", "cert_file")
    public static let mqttKeyFile = ConfigKey("mqtt", "key_file")
    public static let mqttDiscovery = ConfigKey("mqtt", "discovery")
    public static let mqttDiscoveryPrefix = ConfigKey("mqtt", "discovery_prefix")
    public static let mqttTopicPrefix = ConfigKey("mqtt", "topic_prefix")
    public static let webListen = ConfigKey("web", "listen")
    public static let webTokenFile = ConfigKey("web", "token_file")
    public static let backupDir = ConfigKey("backup", "dir")
    public static let backupKeepDaily = ConfigKey("backup", "keep_daily")
    public static let backupKeepWeekly = ConfigKey("backup", "keep_weekly")
    public static let notifyURL = ConfigKey("notify", "url")
    public static let notifyFormat = ConfigKey("notify", "format")
    public static let notifyTokenFile = ConfigKey("notify", "token_file")
    public static let notifyCAFile = ConfigKey("notify", "ca_file")
    public static let notifyTimeout = ConfigKey("notify", "timeout")
}

/// One key of the configuration, everything about it in one place: what it
/// takes and how its text is checked (for the file and its environment variable
/// alike), its default, and its words for `config show`, the sample file
/// (`quench config sample`) and the documentation's table (`quench config keys`).
public struct KeySpec: Sendable {
    public let key: ConfigKey
    /// What the error says was expected: "a number of seconds > 0".
    public let expected: String
    /// The default as the documentation says it (Markdown), and what unset means.
    public let defaultText: String
    /// The variable that sets it (`QUENCH_DB`), if any; checked as the file's value is.
    public let environment: String?
    /// The command line's options that set it, for the documentation.
    public let flags: [String]
    /// What it is, in a sentence.
    public let meaning: String
    /// More for the sample file: when to set it, what else reads it.
    public let note: String?
    /// The sample file's value: the default or an example, as TOML.
    public let example: String
    /// `config show`'s words for no value ("every paired device"); nil when it always has one.
    let unset: String?
    /// Sets the field; when the value is not what `expected` says, `.failure`
    /// with the reason its parser gave, if it gave one.
    let apply: @Sendable (inout ConfigValues, TOMLValue) -> Result<Void, Refusal>
    /// Copies the field from a layer that sets it; false when that layer says nothing.
    let take: @Sendable (inout ConfigValues, ConfigValues) -> Bool
    /// The built-in default into a layer's field.
    let setDefault: @Sendable (inout ConfigValues) -> Void
    /// The value as `config show` prints it; nil for unset.
    let show: @Sendable (ConfigValues) -> ShownValue?

    struct Refusal: Error {
        var reason: String?
    }

    init<T: Sendable>(_ key: ConfigKey, _ field: WritableKeyPath<ConfigValues, T?> & Sendable, expects expected: String,
                      default fallback: T? = nil, defaultText: String, unset: String? = nil, environment: String? = nil,
                      flags: [String], meaning: String, note: String? = nil, example: String,
                      check: @escaping @Sendable (TOMLValue) -> T?, show: @escaping @Sendable (T) -> ShownValue?) {
        self.init(key, field, expects: expected, default: fallback, defaultText: defaultText, unset: unset,
                  environment: environment, flags: flags, meaning: meaning, note: note, example: example,
                  check: { toml in check(toml).map { .success($0) } ?? .failure(Refusal()) }, show: show)
    }

    init<T: Sendable>(_ key: ConfigKey, _ field: WritableKeyPath<ConfigValues, T?> & Sendable, expects expected: String,
                      default fallback: T? = nil, defaultText: String, unset: String? = nil, environment: String? = nil,
                      flags: [String], meaning: String, note: String? = nil, example: String,
                      check: @escaping @Sendable (TOMLValue) -> Result<T, Refusal>, show: @escaping @Sendable (T) -> ShownValue?) {
        self.key = key
        self.expected = expected
        self.defaultText = defaultText
        self.unset = unset
        self.environment = environment
        self.flags = flags
        self.meaning = meaning
        self.note = note
        self.example = example
        apply = { values, toml in check(toml).map { values[keyPath: field] = $0 } }
        take = { values, layer in
            guard let value = layer[keyPath: field] else { return false }
            values[keyPath: field] = value
            return true
        }
        setDefault = { values in values[keyPath: field] = fallback }
        self.show = { values in values[keyPath: field].flatMap(show) }
    }

    /// Every key, in the order `quench config show`, the sample file and the
    /// documentation list them; a section's keys together, top-level keys first.
    public static let all: [KeySpec] = [
        KeySpec(.database, \.database, expects: absolute, defaultText: "`$XDG_DATA_HOME/quench/quench.sqlite`, else `~/.local/share/quench/quench.sqlite`",
                environment: "QUENCH_DB", flags: ["--db"], meaning: "The database file.",
                note: "The service sets QUENCH_DB=/var/lib/quench/quench.sqlite in its unit, which wins over this key; "
                    + "set it here so that `sudo quench today` and `sudo quench doctor` read the service's database without --db.",
                example: "\"/var/lib/quench/quench.sqlite\"", check: absolutePath, show: { .text($0) }),
        KeySpec(.logLevel, \.logLevel, expects: LogLevel.expected, default: .info, defaultText: "`info` (`warning` for calibrate, watch and record)",
                environment: "QUENCH_LOG", flags: ["--log-level"], meaning: "How much the gateway logs.",
                example: "\"info\"", check: { $0.string.flatMap(LogLevel.init(name:)) }, show: { .text($0.rawValue) }),
        KeySpec(.units, \.units, expects: "\"ml\" or \"oz\" (or \"fl oz\", \"millilitres\")", defaultText: "the database's setting (`quench settings --units`)",
                unset: "the store's setting", flags: ["--units"],
                meaning: "Volumes in millilitres or US fluid ounces in the history commands (today, log, stats, ...).",
                example: "\"ml\"", check: { $0.string.flatMap(VolumeUnit.init(parsingUnitName:)) }, show: { .text($0.rawValue) }),
        KeySpec(.person, \.person, expects: "a person's name (a non-empty string)",
                defaultText: "the only person (with several, those commands ask)", unset: "none named", environment: "QUENCH_PERSON",
                flags: ["--person"], meaning: "Whose history the history commands show when several people share the database (`quench people`).",
                example: "\"me\"", check: nonEmpty, show: { .text($0) }),
        KeySpec(.devices, \.devices, expects: "an array of Bluetooth addresses like \"F0:F1:F2:F3:F4:F5\"", default: [],
                defaultText: "every paired device", unset: "every paired device", flags: ["--device"],
                meaning: "Only these devices (the Bluetooth addresses of paired devices; the option is given once for each).",
                example: "[\"F0:F1:F2:F3:F4:F5\", \"C4:7C:8D:6A:12:34\"]", check: addresses, show: { $0.isEmpty ? nil : .list($0) }),
        KeySpec(.connectTimeout, \.connectTimeout, expects: "a number of seconds > 0, a year at most", default: Configuration.defaultConnectTimeout,
                defaultText: Configuration.defaultConnectTimeout.compactDescription, flags: ["--connect-timeout"],
                meaning: "Seconds allowed for each connection attempt.",
                example: Configuration.defaultConnectTimeout.compactDescription, check: positive, show: { .number($0) }),
        KeySpec(.adapter, \.adapter, expects: "a Bluetooth adapter, \"hci0\" to \"hci15\"", defaultText: "the first adapter",
                unset: "the first adapter", flags: ["--adapter"],
                meaning: "The Bluetooth adapter the gateway scans and connects with: one each for two gateways on one machine.",
                example: "\"hci1\"", check: { $0.string.flatMap(BluetoothAdapterName.index) }, show: { .text(BluetoothAdapterName.name($0)) }),
        KeySpec(.drainEvery, \.drainEvery, expects: "a number of minutes > 0, a year at most", defaultText: "stay connected", unset: "stay connected",
                flags: ["--drain-every"],
                meaning: "Bottles that keep their own sips (HidrateSpark): connect every this many minutes, drain, disconnect, instead of staying connected.",
                example: "15", check: positive, show: { .number($0) }),
        KeySpec(.handOver, \.handOver, expects: "true or false", default: false, defaultText: "false", flags: ["--hand-over"],
                meaning: "Connected bottles that other gateways are configured for too: this gateway connects one only when the claims on the MQTT broker say it hears it best (docs/hub.md).",
                note: "Set it on each of those gateways, with [mqtt] and `quench mqtt run` beside them: the publisher carries the claims.",
                example: "true", check: { $0.bool }, show: { .text($0 ? "true" : "false") }),
        KeySpec(.reminderCommand, \.reminderCommand, expects: "an absolute program path (a string starting with /)",
                defaultText: "none: the reminder goes to the journal", unset: "none", flags: ["--command"],
                meaning: "A program to run (no shell) when a reminder is due, stopped after 10 s.",
                note: "Its environment has QUENCH_INTAKE_ML, QUENCH_GOAL_ML, QUENCH_PACE_ML, QUENCH_BEHIND_ML, QUENCH_REASON and QUENCH_PERSON. "
                    + "The reminder policy itself (window, pace, snooze) is kept in the database: `quench remind set`.",
                example: "\"/usr/local/bin/quench-notify\"", check: absolutePath, show: { .text($0) }),
        KeySpec(.mqttBroker, \.mqttBroker, expects: "a broker URL, \"mqtt://[USER@]HOST[:PORT]\" or \"mqtts://…\"",
                defaultText: "none: no MQTT", unset: "no MQTT", environment: "QUENCH_MQTT", flags: ["--broker"],
                meaning: "The broker: `mqtt://[USER@]HOST[:PORT]` (1883) or `mqtts://...` (TLS, 8883).",
                example: "\"mqtt://quench@homeassistant.local:1883\"", check: brokerURL, show: { .text($0) }),
        KeySpec(.mqttPasswordFile, \.mqttPasswordFile, expects: absolute, defaultText: "no password", unset: "no password",
                environment: "QUENCH_MQTT_PASSWORD_FILE", flags: ["--password-file"],
                meaning: "A file whose first line is the broker password (keep it readable by the quench user only); never in the URL.",
                example: "\"/etc/quench/mqtt-password\"", check: absolutePath, show: { .text($0) }),
        KeySpec(.mqttClientID, \.mqttClientID, expects: "a non-empty string", defaultText: "`quench-NODEID-DATABASEID`",
                unset: "quench-NODEID-DATABASEID",
                flags: ["--client-id"], meaning: "The MQTT client id; the default is this machine's and this database's, which no other shares.",
                example: "\"quench-kitchen\"", check: nonEmpty, show: { .text($0) }),
        KeySpec(.mqttCAFile, \.mqttCAFile, expects: absolute, defaultText: "the system's CA certificates", unset: "the system's CAs",
                flags: ["--ca-file"], meaning: "For `mqtts://`: the CA certificate that signed the broker's.",
                example: "\"/etc/quench/broker-ca.crt\"", check: absolutePath, show: { .text($0) }),
        KeySpec(.mqttCertFile, \.mqttCertFile, expects: absolute, defaultText: "none", unset: "none",
                flags: ["--cert"], meaning: "For a broker that asks for a client certificate (`mqtts://`): this gateway's certificate (PEM).",
                example: "\"/etc/quench/mqtt-client.crt\"", check: absolutePath, show: { .text($0) }),
        KeySpec(.mqttKeyFile, \.mqttKeyFile, expects: absolute, defaultText: "none", unset: "none",
                flags: ["--key"], meaning: "The client certificate's private key (PEM; readable by the quench user only).",
                example: "\"/etc/quench/mqtt-client.key\"", check: absolutePath, show: { .text($0) }),
        KeySpec(.mqttNode, \.mqttNode, expects: "a non-empty string", defaultText: "the host name", unset: "the host name",
                flags: ["--node"], meaning: "This gateway's name as Home Assistant shows it; renaming it changes no topic or id.",
                example: "\"kitchen\"", check: nonEmpty, show: { .text($0) }),
        KeySpec(.mqttNodeID, \.mqttNodeID, expects: "1 to 64 of a-z, 0-9, _ and - (not hub, the hub's own)",
                defaultText: "from /etc/machine-id (else a random id kept in the database)", unset: "from the machine id",
                flags: ["--node-id"],
                meaning: "This gateway's id in topics (quench/NODEID/...) and Home Assistant's unique ids: set it to keep a replaced machine's entities.",
                example: "\"kitchen\"", check: nodeID, show: { .text($0) }),
        KeySpec(.mqttDiscovery, \.mqttDiscovery, expects: "components or device", defaultText: "`components`", unset: "components",
                flags: ["--discovery"],
                meaning: "Home Assistant discovery: `components` (one config per entity, every version) or `device` (one per device, 2024.11 and later).",
                example: "\"device\"", check: discoveryForm, show: { .text($0) }),
        KeySpec(.mqttDiscoveryPrefix, \.mqttDiscoveryPrefix, expects: "1 to 64 of letters, digits, _, - and / between levels",
                defaultText: "`homeassistant`", unset: "homeassistant", flags: ["--discovery-prefix"],
                meaning: "Home Assistant's discovery prefix (its MQTT integration's setting), where the configs go and its status is read.",
                example: "\"homeassistant\"", check: topicPrefix, show: { .text($0) }),
        KeySpec(.mqttTopicPrefix, \.mqttTopicPrefix, expects: "1 to 64 of letters, digits, _, - and / between levels",
                defaultText: "`quench`", unset: "quench", flags: ["--topic-prefix"],
                meaning: "The first level(s) of Quench's own topics (PREFIX/NODEID/...).",
                example: "\"home/quench\"", check: topicPrefix, show: { .text($0) }),
        KeySpec(.webListen, \.webListen, expects: HostPort.expected, default: Configuration.defaultWebListen,
                defaultText: "`\(Configuration.defaultWebListen)`", environment: "QUENCH_WEB_LISTEN", flags: ["--listen"],
                meaning: "Where `quench serve` listens: `HOST:PORT` or `[IPv6]:PORT`; anything but loopback asks for the access token.",
                note: "Loopback (127.0.0.1) is this machine only; \"0.0.0.0:8080\" serves the home network, "
                    + "and then every phone needs the access token once (`quench serve token` shows the link).",
                example: "\"0.0.0.0:8080\"", check: listenAddress, show: { .text($0) }),
        KeySpec(.webTokenFile, \.webTokenFile, expects: absolute,
                defaultText: "`web-token` beside the database (`/var/lib/quench/web-token` for the service)",
                unset: "web-token beside the database", flags: ["--token-file"],
                meaning: "The access token's file (made on first use, mode 0600, readable by whoever runs `quench serve`).",
                example: "\"/var/lib/quench/web-token\"", check: absolutePath, show: { .text($0) }),
        KeySpec(.backupDir, \.backupDir, expects: absolute,
                defaultText: "`backups` beside the database (`/var/lib/quench/backups` for the service)",
                unset: "backups beside the database", flags: ["--dir"],
                meaning: "Where `quench backup` writes its copies of the database; a folder elsewhere (not made for you) keeps them when the SD card dies.",
                note: "A USB stick or a network share must be mounted when the timer runs, writable by the quench user, and allowed "
                    + "in the quench-backup unit: `ReadWritePaths=` with `systemctl edit quench-backup` (docs/backup.md).",
                example: "\"/media/usb/quench-backups\"", check: absolutePath, show: { .text($0) }),
        KeySpec(.backupKeepDaily, \.backupKeepDaily, expects: "a whole number from 1 to 1000", default: Configuration.defaultKeepDaily,
                defaultText: "\(Configuration.defaultKeepDaily)", flags: ["--keep-daily"],
                meaning: "How many days back `quench backup` keeps a backup of each day (the newest of the day).",
                example: "\(Configuration.defaultKeepDaily)", check: wholeNumber(1...1000), show: { .number(Double($0)) }),
        KeySpec(.backupKeepWeekly, \.backupKeepWeekly, expects: "a whole number from 0 to 1000", default: Configuration.defaultKeepWeekly,
                defaultText: "\(Configuration.defaultKeepWeekly)", flags: ["--keep-weekly"],
                meaning: "Before those days, how many weeks back it keeps one backup a week (the newest of the week).",
                example: "\(Configuration.defaultKeepWeekly)", check: wholeNumber(0...1000), show: { .number(Double($0)) }),
        KeySpec(.notifyURL, \.notifyURL, expects: "an https:// URL (http:// only to localhost)", defaultText: "none: no push",
                unset: "no push", environment: "QUENCH_NOTIFY_URL", flags: [],
                meaning: "Where `quench remind --notify` pushes a reminder: an ntfy topic (`https://ntfy.sh/TOPIC`, or your own server) or a webhook.",
                note: "One POST to this URL and nothing else: no redirects followed, each try limited by `timeout`, three tries in all "
                    + "(again after 1 s and 2 s when the server is away, slow, or answers 429 or 5xx). docs/service.md, \"Reminders on a phone\".",
                example: "\"https://ntfy.sh/quench-kitchen-5f2a\"", check: notifyURLText, show: { .text($0) }),
        KeySpec(.notifyFormat, \.notifyFormat, expects: "\"ntfy\" or \"json\"", default: "ntfy", defaultText: "`ntfy`", flags: [],
                meaning: "`ntfy`: the message as the body, title, priority and tags as headers; `json`: one JSON object "
                    + "(`kind`, `title`, `message`, `priority`, `tags`, `fields`) for any webhook.",
                example: "\"ntfy\"", check: { $0.string.flatMap { ["ntfy", "json"].contains($0) ? $0 : nil } }, show: { .text($0) }),
        KeySpec(.notifyTokenFile, \.notifyTokenFile, expects: absolute, defaultText: "no token", unset: "no token", flags: [],
                meaning: "A file whose first line is the access token, sent as `Authorization: Bearer` (keep it readable by the quench user only).",
                example: "\"/etc/quench/notify-token\"", check: absolutePath, show: { .text($0) }),
        KeySpec(.notifyCAFile, \.notifyCAFile, expects: absolute, defaultText: "the system's CA certificates", unset: "the system's CAs",
                flags: [], meaning: "The CA certificate that signed the server's (a server of your own).",
                example: "\"/etc/quench/notify-ca.crt\"", check: absolutePath, show: { .text($0) }),
        KeySpec(.notifyTimeout, \.notifyTimeout, expects: "a number of seconds > 0, a year at most", default: Configuration.defaultNotifyTimeout,
                defaultText: Configuration.defaultNotifyTimeout.compactDescription, flags: [],
                meaning: "Seconds each try of a push may take, connection and answer together.",
                example: Configuration.defaultNotifyTimeout.compactDescription, check: positive, show: { .number($0) }),
    ]

    /// The sections in the order the sample file has them, and what reads each.
    static let sectionIntros: [(name: String, intro: String)] = [
        ("gateway", "The gateway: `quench run` and quenchd."),
        ("reminders", "Reminders to drink: `quench remind --notify` (the quench-remind timer)."),
        ("mqtt", "MQTT: `quench mqtt run` (the quench-mqtt service) and `quench mqtt sync` publish the history to a broker, "
            + "with Home Assistant discovery. docs/mqtt.md."),
        ("web", "The web page: `quench serve` (the quench-web service) and `quench serve token`. "
            + "docs/service.md, \"The web page as a service\"."),
        ("backup", "Backups: `quench backup` (the quench-backup timer, daily) and `quench doctor`. docs/backup.md."),
        ("notify", "Reminders pushed to a phone (ntfy, or any webhook) by `quench remind --notify`. "
            + "docs/service.md, \"Reminders on a phone\"."),
    ]

    static var sections: Set<String> { Set(all.compactMap(\.key.section)) }

    static func spec(_ key: ConfigKey) -> KeySpec? { all.first { $0.key == key } }

    /// Every key's built-in default, as a layer under the files.
    static var defaults: ConfigValues {
        var values = ConfigValues()
        for spec in all { spec.setDefault(&values) }
        return values
    }
}

private let absolute = "an absolute path (a string starting with /)"

extension KeySpec {
    /// A file path: in a file it must be absolute (relative to what?), but from the
    /// environment, as on the command line, it is relative to the working directory.
    var takesPath: Bool { expected == absolute }
}

/// The scheme is checked here; the rest when the broker is used (with the same words).
private func brokerURL(_ value: TOMLValue) -> String? {
    guard let text = value.string, text.hasPrefix("mqtt://") || text.hasPrefix("mqtts://") else { return nil }
    return text
}

/// Checked whole, with the parser `quench serve --listen` uses (`HostPort`'s
/// words for why not); kept as written.
private func listenAddress(_ value: TOMLValue) -> Result<String, KeySpec.Refusal> {
    guard let text = value.string else { return .failure(KeySpec.Refusal()) }
    do {
        _ = try HostPort(parsing: text)
        return .success(text)
    } catch {
        return .failure(KeySpec.Refusal(reason: error.description))
    }
}

/// An integer within `range` (written without a fraction).
private func wholeNumber(_ range: ClosedRange<Int>) -> @Sendable (TOMLValue) -> Int? {
    { value in
        guard let n = value.int, n >= Int64(range.lowerBound), n <= Int64(range.upperBound) else { return nil }
        return Int(n)
    }
}

/// The scheme only (the rest is libcurl's to parse, when the push is made): a
/// token or a health fact never goes out in clear, except to this machine.
private func notifyURLText(_ value: TOMLValue) -> String? {
    guard let text = value.string else { return nil }
    let lower = text.lowercased()
    if lower.hasPrefix("https://") { return text }
    for local in ["http://localhost", "http://127.", "http://[::1]"] where lower.hasPrefix(local) { return text }
    return nil
}

/// As `MQTTSettings.isValidNodeID` (QuenchConfig does not link QuenchMQTT): a topic level and an id.
private func nodeID(_ value: TOMLValue) -> String? {
    guard let text = value.string, text != "hub", (1...64).contains(text.utf8.count),
          text.utf8.allSatisfy({ (0x61...0x7a).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5f || $0 == 0x2d }) else { return nil }
    return text
}

/// An MQTT topic prefix: letters, digits, `_`, `-` and `/` between levels; no wildcard, no empty level.
private func topicPrefix(_ value: TOMLValue) -> String? {
    guard let text = value.string, (1...64).contains(text.utf8.count), !text.hasPrefix("/"), !text.hasSuffix("/"), !text.contains("//"),
          text.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "_-/".unicodeScalars.contains($0)) })
    else { return nil }
    return text
}

private func discoveryForm(_ value: TOMLValue) -> String? {
    guard let text = value.string, ["components", "device"].contains(text) else { return nil }
    return text
}

private func nonEmpty(_ value: TOMLValue) -> String? {
    guard let text = value.string, !text.isEmpty else { return nil }
    return text
}

private func absolutePath(_ value: TOMLValue) -> String? {
    guard let text = value.string, text.hasPrefix("/") else { return nil }
    return text
}

/// A duration: a finite number above zero, a year at most, written as an integer or not.
private func positive(_ value: TOMLValue) -> Double? {
    (value.double ?? value.int.map(Double.init)).flatMap(Configuration.duration)
}

/// Addresses as `BluetoothAddress` prints them, so the store finds them.
private func addresses(_ value: TOMLValue) -> [String]? {
    guard let array = value.array else { return nil }
    var out: [String] = []
    for element in array {
        guard let address = element.string.flatMap(BluetoothAddress.init) else { return nil }
        out.append(address.description)
    }
    return out
}

/// A value as an error shows what it got: `"ten"`, `10`, `an array`.
func shown(_ value: TOMLValue) -> String {
    switch value {
    case .string(let text): "\"\(text.shownSafely(limit: 40))\""
    case .integer(let n): String(n)
    case .float(let x): "\(x)"
    case .boolean(let b): "\(b)"
    case .array(let elements): ("[" + elements.map(shown).joined(separator: ", ") + "]").shownSafely(limit: 60)
    case .table: "a table"
    case .dateTime(.localDate): "a date"
    case .dateTime(.localTime): "a time"
    case .dateTime: "a date-time"
    }
}

/// The known key or section nearest to what was typed, if any is near: a
/// misspelling (`conect_timeout`), or a key in the wrong section.
func suggestion(for typed: ConfigKey, isTable: Bool) -> String? {
    if typed.section == nil && isTable {
        return nearest(typed.name, among: KeySpec.sections.sorted()).map { "[\($0)]" }
    }
    let keys = KeySpec.all.map(\.key)
    if let moved = keys.first(where: { $0.name == typed.name }) { return moved.description }
    return nearest(typed.description, among: keys.map(\.description))
}

private func nearest(_ typed: String, among candidates: [String]) -> String? {
    Spelling.nearest(to: typed, among: candidates, perEdit: 4)
}

/// An adapter as Linux names it: `hci0` is index 0.
public enum BluetoothAdapterName {
    /// The index of `hciN` (N 0–15), nil for anything else.
    public static func index(_ name: String) -> UInt16? {
        guard name.hasPrefix("hci"), let n = UInt16(name.dropFirst(3)), n <= 15, String(n) == name.dropFirst(3) else { return nil }
        return n
    }

    public static func name(_ index: UInt16) -> String { "hci\(index)" }
}

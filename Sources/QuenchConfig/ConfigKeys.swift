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
    public static let drainEvery = ConfigKey("gateway", "drain_every")
    public static let reminderCommand = ConfigKey("reminders", "command")
    public static let mqttBroker = ConfigKey("mqtt", "broker")
    public static let mqttPasswordFile = ConfigKey("mqtt", "password_file")
    public static let mqttClientID = ConfigKey("mqtt", "client_id")
    public static let mqttCAFile = ConfigKey("mqtt", "ca_file")
    public static let mqttNode = ConfigKey("mqtt", "node")
    public static let webListen = ConfigKey("web", "listen")
    public static let webTokenFile = ConfigKey("web", "token_file")
}

/// One key a file may set: what it takes, and how a TOML value becomes its field.
struct KeySpec: Sendable {
    let key: ConfigKey
    /// What the error says was expected: "a number of seconds > 0".
    let expected: String
    /// Sets the field; when the value is not what `expected` says, `.failure`
    /// with the reason its parser gave, if it gave one.
    let apply: @Sendable (inout ConfigValues, TOMLValue) -> Result<Void, Refusal>

    struct Refusal: Error {
        var reason: String?
    }

    init<T>(_ key: ConfigKey, expects expected: String, _ field: WritableKeyPath<ConfigValues, T?> & Sendable,
            _ convert: @escaping @Sendable (TOMLValue) -> T?) {
        self.init(key, expects: expected, field) { toml in convert(toml).map { .success($0) } ?? .failure(Refusal()) }
    }

    init<T>(_ key: ConfigKey, expects expected: String, _ field: WritableKeyPath<ConfigValues, T?> & Sendable,
            _ convert: @escaping @Sendable (TOMLValue) -> Result<T, Refusal>) {
        self.key = key
        self.expected = expected
        apply = { values, toml in convert(toml).map { values[keyPath: field] = $0 } }
    }

    /// Every key, in the order `quench config show` lists them.
    static let all: [KeySpec] = [
        KeySpec(.database, expects: "an absolute path (a string starting with /)", \.database, absolutePath),
        KeySpec(.logLevel, expects: LogLevel.expected, \.logLevel) { $0.string.flatMap(LogLevel.init(name:)) },
        KeySpec(.units, expects: "\"ml\" or \"oz\"", \.units) { $0.string.flatMap { VolumeUnit(rawValue: $0.lowercased()) } },
        KeySpec(.person, expects: "a person's name (a non-empty string)", \.person, nonEmpty),
        KeySpec(.devices, expects: "an array of Bluetooth addresses like \"F0:F1:F2:F3:F4:F5\"", \.devices, addresses),
        KeySpec(.connectTimeout, expects: "a number of seconds > 0", \.connectTimeout, positive),
        KeySpec(.drainEvery, expects: "a number of minutes > 0", \.drainEvery, positive),
        KeySpec(.reminderCommand, expects: "an absolute program path (a string starting with /)", \.reminderCommand, absolutePath),
        KeySpec(.mqttBroker, expects: "a broker URL, \"mqtt://[USER@]HOST[:PORT]\" or \"mqtts://…\"", \.mqttBroker, brokerURL),
        KeySpec(.mqttPasswordFile, expects: "an absolute path (a string starting with /)", \.mqttPasswordFile, absolutePath),
        KeySpec(.mqttClientID, expects: "a non-empty string", \.mqttClientID, nonEmpty),
        KeySpec(.mqttCAFile, expects: "an absolute path (a string starting with /)", \.mqttCAFile, absolutePath),
        KeySpec(.mqttNode, expects: "a non-empty string", \.mqttNode, nonEmpty),
        KeySpec(.webListen, expects: HostPort.expected, \.webListen, listenAddress),
        KeySpec(.webTokenFile, expects: "an absolute path (a string starting with /)", \.webTokenFile, absolutePath),
    ]

    static var sections: Set<String> { Set(all.compactMap(\.key.section)) }

    static func spec(_ key: ConfigKey) -> KeySpec? { all.first { $0.key == key } }
}

/// The scheme is checked here; the rest when the broker is used (with the same words).
private func brokerURL(_ value: TOMLValue) -> String? {
    guard let text = value.string, text.hasPrefix("mqtt://") || text.hasPrefix("mqtts://") else { return nil }
    return text
}

/// Checked whole, with the parser `quench serve --listen` uses; kept as written.
private func listenAddress(_ value: TOMLValue) -> Result<String, KeySpec.Refusal> {
    guard let text = value.string else { return .failure(KeySpec.Refusal()) }
    return listenProblem(text).map { .failure(KeySpec.Refusal(reason: $0)) } ?? .success(text)
}

/// Why `text` is not `HOST:PORT` (`HostPort`'s words), nil when it is: for the
/// file's `web.listen` and `$QUENCH_WEB_LISTEN` alike.
func listenProblem(_ text: String) -> String? {
    do {
        _ = try HostPort(parsing: text)
        return nil
    } catch {
        return error.description
    }
}

private func nonEmpty(_ value: TOMLValue) -> String? {
    guard let text = value.string, !text.isEmpty else { return nil }
    return text
}

private func absolutePath(_ value: TOMLValue) -> String? {
    guard let text = value.string, text.hasPrefix("/") else { return nil }
    return text
}

/// A finite number above zero, written as an integer or not.
private func positive(_ value: TOMLValue) -> Double? {
    guard let n = value.double ?? value.int.map(Double.init), n.isFinite, n > 0 else { return nil }
    return n
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
    let best = candidates.map { (text: $0, distance: editDistance(typed, $0)) }.min { $0.distance < $1.distance }
    guard let best, best.distance <= max(2, typed.count / 4) else { return nil }
    return best.text
}

/// Levenshtein distance over characters.
func editDistance(_ a: String, _ b: String) -> Int {
    let (a, b) = (Array(a), Array(b))
    guard !a.isEmpty, !b.isEmpty else { return a.count + b.count }
    var previous = Array(0...b.count)
    for i in 1...a.count {
        var row = [i] + Array(repeating: 0, count: b.count)
        for j in 1...b.count {
            row[j] = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        previous = row
    }
    return previous[b.count]
}

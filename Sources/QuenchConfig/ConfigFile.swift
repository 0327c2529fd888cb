import TOMLKit

/// What one configuration file says, and the line each key is on.
struct ConfigFile: Sendable {
    var path: String
    var values = ConfigValues()
    var lines: [ConfigKey: Int] = [:]

    func source(_ key: ConfigKey) -> ConfigSource { .file(path: path, line: lines[key]) }

    /// Reads `bytes` as TOML with toml++ and takes the keys it knows; anything
    /// else is refused (the problem on the earliest line first), never ignored.
    init(parsing bytes: [UInt8], path: String) throws(ConfigError) {
        self.path = path
        let text = try Self.text(bytes, path: path)
        if let trap = TOMLPreflight.check(text) {
            throw .syntax(path: path, line: trap.line, column: trap.column, message: trap.message)
        }
        let root: TOMLTable
        do {
            root = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw .syntax(path: path, line: error.source.begin.line, column: error.source.begin.column, message: error.description)
        } catch {
            throw .syntax(path: path, line: 1, column: 1, message: "\(error)")
        }
        let locator = KeyLocator(text)
        var problems: [ConfigError] = []
        for (name, value) in Self.entries(root) {
            let at = ConfigSource.file(path: path, line: locator.line(of: [name]))
            if KeySpec.sections.contains(name) {
                guard let table = value.table else {
                    problems.append(.badValue(at, key: name, expected: "a table ([\(name)])", got: shown(value)))
                    continue
                }
                for (key, value) in Self.entries(table) {
                    take(ConfigKey(name, key), value, locator, &problems)
                }
            } else {
                take(ConfigKey(nil, name), value, locator, &problems)
            }
        }
        if let first = problems.min(by: { ($0.line ?? .max) < ($1.line ?? .max) }) { throw first }
    }

    private mutating func take(_ key: ConfigKey, _ value: any TOMLValueConvertible, _ locator: KeyLocator, _ problems: inout [ConfigError]) {
        let line = locator.line(of: key.path)
        let at = ConfigSource.file(path: path, line: line)
        guard let spec = KeySpec.spec(key) else {
            return problems.append(.unknownKey(at, key: key.description, suggestion: suggestion(for: key, isTable: value.type == .table)))
        }
        if case .failure(let refusal) = spec.apply(&values, value) {
            return problems.append(.badValue(at, key: key.description, expected: spec.expected, got: shown(value), reason: refusal.reason))
        }
        lines[key] = line
    }

    /// A table's keys and values side by side. (TOMLKit's iterator looks each
    /// key up again by its C string, which a key with an escaped NUL defeats.)
    private static func entries(_ table: TOMLTable) -> Zip2Sequence<[String], [TOMLValue]> {
        zip(table.keys, table.values)
    }

    /// The file as text toml++ reads whole: UTF-8 with no NUL, raw or escaped
    /// (toml++ gets a C string, and TOMLKit hands back C strings too: a NUL
    /// would cut a key or a path short without a word).
    private static func text(_ bytes: [UInt8], path: String) throws(ConfigError) -> String {
        func line(at offset: Int) -> Int { bytes[..<offset].lazy.filter { $0 == UInt8(ascii: "\n") }.count + 1 }
        var iterator = bytes.makeIterator()
        var parser = Unicode.UTF8.ForwardParser()
        var offset = 0
        decoding: while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let scalar): offset += scalar.count
            case .emptyInput: break decoding
            case .error: throw .notText(path: path, line: line(at: offset), problem: "not UTF-8 text (byte \(offset + 1) of the file)")
            }
        }
        if let nul = bytes.firstIndex(of: 0) {
            throw .notText(path: path, line: line(at: nul), problem: "a NUL byte, which a configuration file cannot hold")
        }
        let text = String(decoding: bytes, as: UTF8.self)
        for escape in ["\\u0000", "\\U00000000"] {
            if let range = text.utf8.firstRange(of: escape.utf8) {
                throw .notText(path: path, line: line(at: text.utf8.distance(from: text.utf8.startIndex, to: range.lowerBound)),
                               problem: "\(escape) (a NUL character), which Quench does not take in a key or a value")
            }
        }
        return text
    }
}

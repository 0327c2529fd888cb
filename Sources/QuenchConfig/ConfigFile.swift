/// What one configuration file says, and the line each key is on.
struct ConfigFile: Sendable {
    var path: String
    var values = ConfigValues()
    var lines: [ConfigKey: Int] = [:]

    func source(_ key: ConfigKey) -> ConfigSource { .file(path: path, line: lines[key]) }

    /// Reads `bytes` as TOML (`TOMLParser`) and takes the keys it knows;
    /// anything else is refused (the problem on the earliest line first), never ignored.
    init(parsing bytes: [UInt8], path: String) throws(ConfigError) {
        self.path = path
        try Self.checkText(bytes, path: path)
        let root: TOMLTable
        do {
            root = try TOMLParser.parse(bytes)
        } catch {
            throw .syntax(path: path, line: error.line, column: error.column, message: error.message)
        }
        var problems: [ConfigError] = []
        for entry in root.entries {
            let name = entry.key
            if KeySpec.sections.contains(name) {
                guard let table = entry.value.table else {
                    problems.append(.badValue(.file(path: path, line: entry.line), key: name, expected: "a table ([\(name)])", got: shown(entry.value)))
                    continue
                }
                for inner in table.entries {
                    take(ConfigKey(name, inner.key), inner.value, line: inner.line, &problems)
                }
            } else {
                take(ConfigKey(nil, name), entry.value, line: entry.line, &problems)
            }
        }
        if let first = problems.min(by: { ($0.line ?? .max) < ($1.line ?? .max) }) { throw first }
    }

    private mutating func take(_ key: ConfigKey, _ value: TOMLValue, line: Int, _ problems: inout [ConfigError]) {
        let at = ConfigSource.file(path: path, line: line)
        guard let spec = KeySpec.spec(key) else {
            return problems.append(.unknownKey(at, key: key.description, suggestion: suggestion(for: key, isTable: value.table != nil)))
        }
        if case .failure(let refusal) = spec.apply(&values, value) {
            return problems.append(.badValue(at, key: key.description, expected: spec.expected, got: shown(value), reason: refusal.reason))
        }
        lines[key] = line
    }

    /// UTF-8 with no NUL, raw or escaped: a NUL would cut a path short where
    /// it reaches a system call, so no key or value may hold one.
    private static func checkText(_ bytes: [UInt8], path: String) throws(ConfigError) {
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
    }
}

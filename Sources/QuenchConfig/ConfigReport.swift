import QuenchCore

/// `quench config show` as data: each key's effective value and where it came
/// from, and the files looked at. Encodes as its JSON.
public struct ConfigReport: Sendable, Encodable {
    public struct Entry: Sendable, Encodable {
        public var key: String
        public var value: ShownValue
        public var source: String
    }

    public struct File: Sendable, Encodable {
        public var path: String
        public var role: String
        /// "read", "not present", or "not read" (a file not looked at yet).
        public var status: String
    }

    /// In the order the keys are documented.
    public var settings: [Entry]
    public var files: [File]
}

/// A value as `config show` prints it: text, a number, a list; or unset, which
/// JSON says as null and the text as what it means ("every paired device").
public enum ShownValue: Sendable, Encodable, CustomStringConvertible {
    case text(String)
    case number(Double)
    case list([String])
    case unset(meaning: String)

    public var description: String {
        switch self {
        case .text(let text): text.shownSafely(limit: 200)
        case .number(let n): n.compactDescription
        case .list(let items): items.joined(separator: ", ").shownSafely(limit: 200)
        case .unset(let meaning): "(\(meaning))"
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .text(let text): try container.encode(text.redactingURLPassword())
        case .number(let n): try container.encode(n)
        case .list(let items): try container.encode(items)
        case .unset: try container.encodeNil()
        }
    }
}

extension Configuration {
    /// The report; with `home`, paths under it are shown as `~/…` (text, not JSON).
    public func report(abbreviatingHome: Bool) -> ConfigReport {
        let home = abbreviatingHome ? home : nil
        func row(_ key: ConfigKey, _ value: ShownValue, _ source: ConfigSource) -> ConfigReport.Entry {
            let shownSource = if case .file(let path, let line) = source {
                ConfigSource.file(path: Self.shortened(path, home: home), line: line).description
            } else {
                source.description
            }
            return ConfigReport.Entry(key: key.description, value: value, source: shownSource)
        }
        let settings = KeySpec.all.map { spec in
            row(spec.key, spec.show(values) ?? .unset(meaning: spec.unset ?? "none"), source(spec.key))
        }
        return ConfigReport(settings: settings, files: Self.report(files, home: home))
    }

    /// The files, as `config show` lists them.
    static func report(_ files: [ConfigFileStatus], home: String?) -> [ConfigReport.File] {
        files.map { file in
            let status = file.present.map { $0 ? "read" : "not present" } ?? "not read"
            return ConfigReport.File(path: shortened(file.path, home: home), role: file.role.description, status: status)
        }
    }

    private static func shortened(_ path: String, home: String?) -> String {
        guard let home, home.count > 1, path.hasPrefix(home + "/") else { return path }
        return "~" + path.dropFirst(home.count)
    }
}

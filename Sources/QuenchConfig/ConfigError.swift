import Threading

/// Why the configuration cannot be used. Each case names where (the file and
/// line, the variable, the option) and what; the description is the whole
/// message: `/etc/quench/quench.toml:7: gateway.connect_timeout: expected a
/// number of seconds > 0, got "ten"`.
public enum ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not TOML: `TOMLParser`'s message, at its line and column.
    case syntax(path: String, line: Int, column: Int, message: String)
    /// Not text TOML can hold: invalid UTF-8, a NUL.
    case notText(path: String, line: Int, problem: String)
    case cannotRead(path: String, ReadProblem)
    /// A file named by `$QUENCH_CONFIG` or `--config` that is not there.
    case missing(path: String, namedBy: String)
    case unknownKey(ConfigSource, key: String, suggestion: String?)
    /// `reason`: why the value is not what was expected, where its parser says
    /// (`web.listen`: "no port"), after what it got.
    case badValue(ConfigSource, key: String, expected: String, got: String, reason: String? = nil)
    /// A file another user could have written (the configuration, or one it
    /// names): its owner and mode, and the command that fixes them.
    case untrusted(UntrustedFile)

    public var description: String {
        switch self {
        case .syntax(let path, let line, let column, let message): "\(path):\(line):\(column): \(message)"
        case .notText(let path, let line, let problem): "\(path):\(line): \(problem)"
        case .cannotRead(let path, let problem): "\(path): cannot read it: \(problem)"
        case .missing(let path, let namedBy): "\(path): no such file (named by \(namedBy))"
        case .unknownKey(let at, let key, let suggestion):
            "\(at): \(key): unknown key (" + (suggestion.map { "did you mean \($0)?" } ?? "`quench config show` lists the keys") + ")"
        case .badValue(.environment(let name), _, let expected, let got, let reason):
            "$\(name): expected \(expected), got \(got)" + (reason.map { " (\($0))" } ?? "")
        case .badValue(.commandLine, let option, let expected, let got, let reason):
            // The option as typed: `--listen "127.0.0.1:99999": the port must be …`.
            "\(option) \(got): " + (reason.map { "\($0) (expected \(expected))" } ?? "expected \(expected)")
        case .badValue(let at, let key, let expected, let got, let reason):
            "\(at): \(key): expected \(expected), got \(got)" + (reason.map { " (\($0))" } ?? "")
        case .untrusted(let problem): problem.description
        }
    }

    /// The line the problem is on, for choosing the first of several.
    var line: Int? {
        switch self {
        case .syntax(_, let line, _, _), .notText(_, let line, _): line
        case .unknownKey(.file(_, let line), _, _), .badValue(.file(_, let line), _, _, _, _): line
        default: nil
        }
    }
}

/// Why a file could not be read.
public enum ReadProblem: Sendable, Equatable, CustomStringConvertible {
    case errno(Int32)
    case notAFile
    case tooLarge(limit: Int)

    public var description: String {
        switch self {
        case .errno(let code): errnoDescription(code)
        case .notAFile: "not a regular file"
        case .tooLarge(let limit): "larger than \(limit / 1024) KiB, too large for a configuration file"
        }
    }
}

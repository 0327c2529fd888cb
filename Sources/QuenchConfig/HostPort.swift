/// `HOST:PORT` or `[IPv6]:PORT`, the form of `[web]` `listen`,
/// `$QUENCH_WEB_LISTEN` and `quench serve --listen`. Parsed here, below both
/// the configuration and the web server, so the file is checked with the very
/// words `--listen` is (QuenchWeb's `ListenAddress(parsing:)` calls this).
public struct HostPort: Sendable, Equatable {
    public var host: String
    public var port: Int

    public init(parsing text: String) throws(HostPortProblem) {
        let hostPart: Substring
        let portPart: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw .noClosingBracket }
            hostPart = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { throw .noPortAfterBracket }
            portPart = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw .noPort }
            hostPart = text[..<colon]
            portPart = text[text.index(after: colon)...]
            guard !hostPart.contains(":") else { throw .unbracketedIPv6 }
        }
        guard !hostPart.isEmpty else { throw .noHost }
        guard let port = Int(portPart), (0...65535).contains(port) else { throw .badPort }
        host = String(hostPart)
        self.port = port
    }

    /// What `listen` takes, for messages: the same example everywhere.
    public static let expected = "HOST:PORT, e.g. 127.0.0.1:8080 or 0.0.0.0:8080"
}

/// Why a text is not `HOST:PORT`, in words a person can act on.
public enum HostPortProblem: Error, Sendable, Equatable, CustomStringConvertible {
    case noClosingBracket, noPortAfterBracket, noPort, unbracketedIPv6, noHost, badPort

    public var description: String {
        switch self {
        case .noClosingBracket: "no closing ]"
        case .noPortAfterBracket: "no port after ]"
        case .noPort: "no port"
        case .unbracketedIPv6: "an IPv6 address goes in brackets, [::1]:8080"
        case .noHost: "no host (0.0.0.0 for every interface)"
        case .badPort: "the port must be a number from 0 to 65535"
        }
    }
}

/// `HOST:PORT` or `[IPv6]:PORT`, the form of `[web]` `listen`,
/// `$QUENCH_WEB_LISTEN` and `quench serve --listen`. Parsed here, below both
/// the configuration and the web server, so the file is checked with the very
/// words `--listen` is (QuenchWeb's `ListenAddress(parsing:)` calls this).
public struct HostPort: Sendable, Equatable {
    public var host: String
    public var port: Int

    public init(parsing text: String) throws(HostPortProblem) {
        // On the UTF-8 bytes: String's Character operations would touch the standard
        // library's Unicode tables, over a megabyte of quenchd's resident memory, for
        // a key quenchd only checks.
        let bytes = Array(text.utf8)
        let colon = UInt8(ascii: ":")
        let hostBytes: ArraySlice<UInt8>
        let portBytes: ArraySlice<UInt8>
        if bytes.first == UInt8(ascii: "[") {
            guard let close = bytes.firstIndex(of: UInt8(ascii: "]")) else { throw .noClosingBracket }
            hostBytes = bytes[1..<close]
            guard close + 1 < bytes.count, bytes[close + 1] == colon else { throw .noPortAfterBracket }
            portBytes = bytes[(close + 2)...]
        } else {
            guard let last = bytes.lastIndex(of: colon) else { throw .noPort }
            hostBytes = bytes[..<last]
            portBytes = bytes[(last + 1)...]
            guard !hostBytes.contains(colon) else { throw .unbracketedIPv6 }
        }
        guard !hostBytes.isEmpty else { throw .noHost }
        // A name (RFC 1123: letters, digits, hyphens, dots) or an address; in brackets an IPv6
        // address, with a zone after `%`. Nothing else ends up in a link or a resolver.
        let bracketed = bytes.first == UInt8(ascii: "[")
        guard hostBytes.allSatisfy({ b in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(b | 0x20) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b)
                || b == UInt8(ascii: "-") || b == UInt8(ascii: ".") || (bracketed && (b == colon || b == UInt8(ascii: "%") || b == UInt8(ascii: "_")))
        }) else { throw .badHost }
        guard (1...5).contains(portBytes.count), portBytes.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            throw .badPort
        }
        let port = portBytes.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        guard port <= 65535 else { throw .badPort }
        host = String(decoding: hostBytes, as: UTF8.self)
        self.port = port
    }

    /// What `listen` takes, for messages: the same example everywhere.
    public static let expected = "HOST:PORT, e.g. 127.0.0.1:8080 or 0.0.0.0:8080"
}

/// Why a text is not `HOST:PORT`, in words a person can act on.
public enum HostPortProblem: Error, Sendable, Equatable, CustomStringConvertible {
    case noClosingBracket, noPortAfterBracket, noPort, unbracketedIPv6, noHost, badHost, badPort

    public var description: String {
        switch self {
        case .noClosingBracket: "no closing ]"
        case .noPortAfterBracket: "no port after ]"
        case .noPort: "no port"
        case .unbracketedIPv6: "an IPv6 address goes in brackets, [::1]:8080"
        case .noHost: "no host (0.0.0.0 for every interface)"
        case .badHost: "the host is a name (letters, digits, - and .) or an IP address"
        case .badPort: "the port must be a number from 0 to 65535"
        }
    }
}

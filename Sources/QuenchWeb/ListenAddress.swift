/// Where `quench serve` listens: `HOST:PORT`, `[IPv6]:PORT`. Loopback by
/// default; anything else serves the home network and requires the access token.
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public static let loopbackDefault = ListenAddress(host: "127.0.0.1", port: 8080)

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    public init(parsing text: String) throws(WebError) {
        let hostPart: Substring
        let portPart: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw .badListenAddress(text, reason: "no closing ]") }
            hostPart = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { throw .badListenAddress(text, reason: "no port after ]") }
            portPart = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw .badListenAddress(text, reason: "no port") }
            hostPart = text[..<colon]
            portPart = text[text.index(after: colon)...]
            guard !hostPart.contains(":") else { throw .badListenAddress(text, reason: "an IPv6 address goes in brackets, [::1]:8080") }
        }
        guard !hostPart.isEmpty else { throw .badListenAddress(text, reason: "no host (0.0.0.0 for every interface)") }
        guard let port = Int(portPart), (0...65535).contains(port) else {
            throw .badListenAddress(text, reason: "the port must be a number from 0 to 65535")
        }
        self.init(host: String(hostPart), port: port)
    }

    /// Only this machine can connect: no token needed.
    public var isLoopback: Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

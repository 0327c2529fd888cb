import QuenchCore

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

    /// The form is QuenchConfig's `HostPort`, so `[web]` `listen` in a
    /// configuration file is refused for the same reasons as `--listen`.
    public init(parsing text: String) throws(WebError) {
        do {
            let parsed = try HostPort(parsing: text)
            self.init(host: parsed.host, port: parsed.port)
        } catch {
            throw .badListenAddress(text, reason: error.description)
        }
    }

    /// Only this machine can connect: no token needed.
    public var isLoopback: Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

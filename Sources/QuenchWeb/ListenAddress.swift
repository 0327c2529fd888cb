import NIOCore
import QuenchCore
#if canImport(Glibc)
import Glibc
#endif

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

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

extension ListenAddress {
    /// Whether the name resolves to a loopback address: what `serve token` says
    /// before any socket is bound, by the same rule the server applies once it is
    /// (`BoundAddress`). A name that does not resolve is not loopback.
    public var resolvesToLoopback: Bool {
        guard let resolved = try? SocketAddress.makeAddressResolvingHost(host, port: port) else { return false }
        return BoundAddress(resolved)?.isLoopback == true
    }
}

/// The address a listener holds, numeric, read back from its socket once bound:
/// what decides whether only this machine can connect (no token). Never the text
/// asked for: `127.example.com` is a name, and may resolve to the home network.
public struct BoundAddress: Sendable, Equatable, CustomStringConvertible {
    /// The numeric address and the port.
    public var address: ListenAddress
    /// In 127.0.0.0/8 or ::1 (or IPv4-mapped ::ffff:127.x.x.x).
    public var isLoopback: Bool

    /// Nil for a socket that has no IP address (a Unix socket): never loopback.
    public init?(_ socket: SocketAddress) {
        let (family, count): (Int32, Int)
        switch socket {
        case .v4: (family, count) = (AF_INET, 4)
        case .v6: (family, count) = (AF_INET6, 16)
        case .unixDomainSocket: return nil
        }
        // The socket's own numeric text back to its bytes.
        var bytes = [UInt8](repeating: 0, count: 16)
        guard let host = socket.ipAddress, let port = socket.port, inet_pton(family, host, &bytes) == 1 else { return nil }
        self.address = ListenAddress(host: host, port: port)
        self.isLoopback = Self.isLoopback(Array(bytes.prefix(count)))
    }

    /// An IPv4 (4 bytes) or IPv6 (16 bytes) address in network order.
    static func isLoopback(_ bytes: [UInt8]) -> Bool {
        switch bytes.count {
        case 4: return bytes[0] == 127
        case 16:
            if bytes == Array(repeating: 0, count: 15) + [1] { return true }
            let mapped = bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
            return mapped && bytes[12] == 127
        default: return false
        }
    }

    public var description: String { address.description }
}

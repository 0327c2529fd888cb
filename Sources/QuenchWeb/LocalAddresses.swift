#if canImport(Glibc)
import Glibc
#endif
import Threading

extension WebServer {
    /// This machine's IPv4 addresses other than loopback, for the link a phone
    /// opens (`quench serve token`).
    public static func localAddresses() -> [String] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(list) }
        var out: [String] = []
        for entry in sequence(first: first, next: { $0.pointee.ifa_next }) {
            guard let address = entry.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET),
                  entry.pointee.ifa_flags & UInt32(IFF_LOOPBACK) == 0 else { continue }
            // getnameinfo, not sin_addr: NIO's C module declares sockaddr_in too, and with
            // MemberImportVisibility its fields would need that module imported here.
            var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            guard getnameinfo(address, socklen_t(MemoryLayout<sockaddr_in>.size), &text, socklen_t(text.count),
                              nil, 0, NI_NUMERICHOST) == 0 else { continue }
            out.append(String(nulTerminated: text))
        }
        return out
    }

    /// What `quench serve` says once it listens: where, and for whom.
    public static func greeting(_ bound: BoundAddress) -> String {
        let address = bound.address
        let shown = address.host == "0.0.0.0" || address.host == "::" ? "every interface, port \(address.port)" : address.description
        if bound.isLoopback {
            return "Quench is serving http://\(address)/ (this machine only; --listen 0.0.0.0:\(address.port) for phones on your network)"
        }
        return "Quench is serving \(shown); it asks for the access token: `quench serve token` shows the link to open on a phone"
    }

    /// `quench serve token`: the links that work for where the server listens.
    public struct TokenLinks: Sendable, Encodable {
        /// Where the server is configured to listen.
        public var listen: String
        /// True on loopback: this machine only, and no token is asked for.
        public var loopback: Bool
        /// The links to open: the plain page on loopback, else each with the token.
        public var links: [String]
        /// With the token, for when the server listens beyond loopback (on every
        /// interface, one per address of this machine); the same as `links` off loopback.
        public var tokenLinks: [String]
        public var tokenFile: String
    }

    /// The links for `listen`: on a wildcard address one per address of this
    /// machine (`addresses`), on another address that address alone.
    public static func tokenLinks(_ token: AccessToken, listen: ListenAddress, addresses: [String], tokenFile: String) -> TokenLinks {
        // ListenAddress prints HOST:PORT, brackets and all, as the greeting does.
        func url(_ host: String) -> String { "http://\(ListenAddress(host: host, port: listen.port))/" }
        let wildcard = listen.host == "0.0.0.0" || listen.host == "::"
        let loopback = listen.resolvesToLoopback
        let hosts = loopback || wildcard ? (addresses.isEmpty ? ["THIS-PI"] : addresses) : [listen.host]
        let withToken = hosts.map { url($0) + "?token=\(token.value)" }
        return TokenLinks(listen: listen.description, loopback: loopback,
                          links: loopback ? [url(listen.host)] : withToken,
                          tokenLinks: withToken, tokenFile: tokenFile)
    }

    /// The same as text: on loopback the plain link and when the token is needed.
    public static func tokenLinksText(_ links: TokenLinks) -> String {
        guard links.loopback else {
            return "Open on a phone (once; it keeps a cookie). Anyone with this link can read the intake history:\n"
                + links.links.map { "  \($0)" }.joined(separator: "\n")
        }
        return "The server listens on \(links.listen), this machine only: open \(links.links[0]) (no token is needed on loopback).\n"
            + "The token is only needed off loopback (--listen 0.0.0.0:PORT, or `listen` under [web]); phones then open "
            + "(once; it keeps a cookie; anyone with this link can read the intake history):\n"
            + links.tokenLinks.map { "  \($0)" }.joined(separator: "\n")
    }
}

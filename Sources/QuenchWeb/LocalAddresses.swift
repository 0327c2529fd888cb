#if canImport(Glibc)
import Glibc
#endif

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
            out.append(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
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

    /// `quench serve token`: the link(s) that let a phone in once, then a cookie.
    public static func tokenLinks(_ token: AccessToken, port: Int, addresses: [String]) -> String {
        let hosts = addresses.isEmpty ? ["THIS-PI"] : addresses
        return "Open on a phone (once; it keeps a cookie). Anyone with this link can read the intake history:\n"
            + hosts.map { "  http://\($0):\(port)/?token=\(token.value)" }.joined(separator: "\n")
    }
}

#if canImport(Glibc)
import Glibc
#endif
import Threading

/// Whether this machine can listen where `listen` says, asked before binding so
/// the service refuses a wrong address in words that are true (where the value
/// came from, the addresses this machine has) rather than failing at the bind.
public enum ListenAddressCheck: Sendable, Equatable {
    case ok
    /// A numeric address no interface of this machine has (a lease that moved, a typo):
    /// only a change of configuration mends it.
    case notOnThisMachine(address: String, here: [String])
    /// A name that does not resolve (now: the network or the resolver may come up later).
    case unresolved(name: String, reason: String)

    /// `host` against this machine's interfaces (`interfaces`: their numeric
    /// addresses, in network order; the tests pass their own).
    public static func check(_ host: String, interfaces: [[UInt8]] = ListenAddressCheck.interfaceAddresses()) -> ListenAddressCheck {
        var resolved: [UInt8]
        if let numeric = numericAddress(host) {
            resolved = numeric
        } else {
            var hints = addrinfo()
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            var list: UnsafeMutablePointer<addrinfo>?
            let rc = getaddrinfo(host, nil, &hints, &list)
            guard rc == 0, let first = list else { return .unresolved(name: host, reason: String(cString: gai_strerror(rc))) }
            defer { freeaddrinfo(list) }
            // The server binds the first address the name resolves to.
            guard let bytes = addressBytes(first.pointee.ai_addr) else { return .unresolved(name: host, reason: "no IP address") }
            resolved = bytes
        }
        if resolved.allSatisfy({ $0 == 0 }) || BoundAddress.isLoopback(resolved) || interfaces.contains(resolved) { return .ok }
        return .notOnThisMachine(address: host, here: interfaces.filter { !BoundAddress.isLoopback($0) }.compactMap(text))
    }

    /// An IPv4 or IPv6 literal's bytes (an IPv6 zone, `%eth0`, left out); nil for a name.
    static func numericAddress(_ host: String) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: 16)
        if inet_pton(AF_INET, host, &bytes) == 1 { return Array(bytes.prefix(4)) }
        let bare = host.split(separator: "%", maxSplits: 1).first.map(String.init) ?? host
        if inet_pton(AF_INET6, bare, &bytes) == 1 { return bytes }
        return nil
    }

    static func addressBytes(_ address: UnsafeMutablePointer<sockaddr>?) -> [UInt8]? {
        guard let address else { return nil }
        var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        let length = socklen_t(address.pointee.sa_family == sa_family_t(AF_INET6) ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
        guard [sa_family_t(AF_INET), sa_family_t(AF_INET6)].contains(address.pointee.sa_family),
              getnameinfo(address, length, &text, socklen_t(text.count), nil, 0, NI_NUMERICHOST) == 0 else { return nil }
        return numericAddress(String(nulTerminated: text))
    }

    static func text(_ bytes: [UInt8]) -> String? {
        var out = [CChar](repeating: 0, count: 64)
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        guard inet_ntop(family, bytes, &out, socklen_t(out.count)) != nil else { return nil }
        return String(nulTerminated: out)
    }

    /// Every IPv4 and IPv6 address of this machine's interfaces (getifaddrs(3)).
    public static func interfaceAddresses() -> [[UInt8]] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(list) }
        return sequence(first: first, next: { $0.pointee.ifa_next }).compactMap { addressBytes($0.pointee.ifa_addr) }
    }
}

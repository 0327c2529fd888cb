import Foundation
import Synchronization

/// Loopback ports for the servers the tests start (brokers, `quench serve`, chromedriver, Home
/// Assistant), and for addresses where nobody listens.
///
/// Not `bind(0)`'s choice, as before: the kernel hands a port out again as soon as it is released,
/// so between one test asking and its server binding (seconds, under load) another test could be
/// given the same port. Seen in CI: one `quench serve` failed to bind and exited 1, and its test
/// talked to another test's server, which then closed the connection. These ports are
///
/// - below the kernel's ephemeral range (`ip_local_port_range`), where no outgoing connection's own
///   port lands between the check and the bind;
/// - in a block of their own per test process (`scripts/test.sh` numbers its shards in
///   `$QUENCH_TEST_PORT_BLOCK`; a process started otherwise takes a block from its pid);
/// - never handed out twice by one process, until its block has gone round.
public enum TestPorts {
    static let lowest = 20000
    static let blocks = 12

    static let block: Int = {
        let fromEnvironment = ProcessInfo.processInfo.environment["QUENCH_TEST_PORT_BLOCK"].flatMap { Int($0) }
        return (fromEnvironment ?? Int(getpid())) % blocks
    }()

    /// Ports up to the ephemeral range's first (32768 by default).
    static let blockSize: Int = {
        let range = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
        let ephemeralStart = range.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) } ?? 32768
        return max(100, (min(ephemeralStart, 32768) - lowest) / blocks)
    }()

    private static let handedOut = Mutex(0)

    /// A port free now on 127.0.0.1 that this process has not handed out before.
    public static func next() throws -> Int {
        for _ in 0..<blockSize {
            let offset = handedOut.withLock { count in
                defer { count += 1 }
                return count % blockSize
            }
            let port = lowest + block * blockSize + offset
            if isFree(port) { return port }
        }
        throw PortError("no free port in \(lowest + block * blockSize)..<\(lowest + (block + 1) * blockSize) on 127.0.0.1")
    }

    /// Whether a listener could bind the port now.
    static func isFree(_ port: Int) -> Bool { onLoopback(port) { bind($0, $1, $2) } }

    /// Whether something listens on the port now.
    public static func accepts(_ port: Int) -> Bool { onLoopback(port) { connect($0, $1, $2) } }

    /// A TCP socket and 127.0.0.1:`port` for `body` to bind or connect (0 is success); closed after.
    private static func onLoopback(_ port: Int, _ body: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    public struct PortError: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }
}

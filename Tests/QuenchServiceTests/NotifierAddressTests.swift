#if os(Linux)
import Glibc
import QuenchService
import Testing

/// sd_notify(3)'s addressing as ServiceNotifier reads it: `$NOTIFY_SOCKET` (a path, or
/// `@name` in the abstract namespace), `$WATCHDOG_USEC` and `$WATCHDOG_PID`.
@Suite struct NotifierAddressTests {
    @Test("the watchdog interval from WATCHDOG_USEC, only when WATCHDOG_PID is this process or unset")
    func watchdogFromEnvironment() {
        func notifier(_ variables: [String: String]) -> ServiceNotifier {
            ServiceNotifier.fromEnvironment({ variables[$0] }, pid: 4242)
        }
        let ours = notifier(["NOTIFY_SOCKET": "/run/systemd/notify", "WATCHDOG_USEC": "2500000", "WATCHDOG_PID": "4242"])
        #expect(ours.socketPath == "/run/systemd/notify" && ours.watchdogInterval == 2.5 && ours.isActive)
        #expect(notifier(["WATCHDOG_USEC": "2500000"]).watchdogInterval == 2.5, "no WATCHDOG_PID: the watchdog is ours")
        #expect(notifier(["WATCHDOG_USEC": "2500000", "WATCHDOG_PID": "1"]).watchdogInterval == nil, "another process's watchdog")
        #expect(notifier(["WATCHDOG_USEC": "0"]).watchdogInterval == nil)
        #expect(notifier(["WATCHDOG_USEC": "soon"]).watchdogInterval == nil)
        #expect(!notifier([:]).isActive)
        #expect(!notifier(["NOTIFY_SOCKET": ""]).isActive, "an empty NOTIFY_SOCKET is no socket")
    }

    @Test("@name is a socket in the abstract namespace: the datagram arrives there")
    func abstractSocket() throws {
        let name = "quench-notify-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes: [UInt8] = [0] + Array(name.utf8)  // abstract: a leading NUL, no terminator
        withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, b) in bytes.enumerated() { raw[i] = b } }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        try #require(bound == 0, "bind @\(name): errno \(errno)")

        ServiceNotifier(socketPath: "@" + name, watchdogInterval: nil).ready(status: "abstract")
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        try #require(poll(&p, 1, 10_000) == 1, "nothing arrived at @\(name)")
        var buffer = [UInt8](repeating: 0, count: 512)
        let n = recv(fd, &buffer, buffer.count, 0)
        #expect(n > 0 && String(decoding: buffer.prefix(max(n, 0)), as: UTF8.self) == "READY=1\nSTATUS=abstract")
    }

    @Test("a path too long for sun_path is not sent anywhere (nor truncated to another socket's name)")
    func pathTooLong() throws {
        let long = "/tmp/" + String(repeating: "n", count: 200)
        let notifier = ServiceNotifier(socketPath: long, watchdogInterval: nil)
        #expect(notifier.isActive)
        notifier.ready(status: "x")  // must neither trap nor write past sun_path
        // The first 107 bytes name a socket that is bound: nothing arrives there either.
        let truncated = String(long.prefix(107))
        unlink(truncated)
        let socket = try ServiceNotifierTests.NotifySocket(path: truncated)
        let fd = socket.fd
        notifier.ready(status: "x")
        ServiceNotifier(socketPath: truncated, watchdogInterval: nil).status("control")
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        try #require(poll(&p, 1, 10_000) == 1)
        var buffer = [UInt8](repeating: 0, count: 512)
        let n = recv(fd, &buffer, buffer.count, 0)
        // Datagrams arrive in order: the control message is the first, so the long path sent nothing here.
        #expect(n > 0 && String(decoding: buffer.prefix(max(n, 0)), as: UTF8.self) == "STATUS=control")
        withExtendedLifetime(socket) {}  // bound (and its path there) until here
    }
}
#endif

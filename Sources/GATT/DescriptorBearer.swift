#if canImport(Glibc)
import Glibc
import Synchronization
import BluetoothWire

/// The `ATTBearer`: over a connected `SOCK_SEQPACKET` descriptor, where one
/// `recv` is one PDU: an L2CAP socket on the ATT channel (BluetoothLinux's
/// `L2CAPBearer.connect` opens it and hands the descriptor here, as BlueZ's
/// btgatt-client hands its socket to `bt_att_new`), or one end of
/// `socketpair(AF_UNIX, SOCK_SEQPACKET)` in tests and simulated peripherals.
///
/// The descriptor is made non-blocking and driven by `poll`; `EINTR` is
/// retried; failures keep their errno and the name of the call. The bearer
/// owns the descriptor and closes it in `close()` (or when released).
///
/// One thread receives at a time; `send` may be called from any thread (a
/// SEQPACKET send is atomic). A blocked receive wakes with `.cancelled` when
/// the `wakeup` descriptor (an eventfd that someone else owns: a session's
/// stop) becomes readable, and with `.closed` after `interrupt()`, which also
/// ends the link for the peer; call `close()` only once no other thread uses
/// the bearer.
public final class DescriptorBearer: ATTBearer {
    public let fileDescriptor: Int32
    /// Largest PDU accepted; longer ones fail with EMSGSIZE rather than being cut.
    public let maximumPDUSize: Int
    /// How long `send` waits for room in a full socket buffer before failing with ETIMEDOUT.
    public let sendTimeout: Double
    /// How long `close()` waits, once the link was seen lost, before it closes the descriptor.
    public let lingerAfterLinkLoss: Double
    private let securityUpgrade: (@Sendable (ATTErrorCode) throws(BearerError) -> Void)?
    private let wakeup: Int32?
    private let isClosed = Mutex(false)
    private let linkLost = Atomic(false)

    /// Takes ownership of `fileDescriptor` and makes it non-blocking.
    /// - Parameters:
    ///   - upgradeSecurity: raises the link's security as the ATT error asks;
    ///     the L2CAP layer supplies one that sets `BT_SECURITY`. Without it
    ///     `upgradeSecurity(for:)` throws `.unsupported`.
    ///   - wakeup: a descriptor polled beside the socket; once readable, a
    ///     blocked receive ends with `.cancelled` (it is not read or closed here).
    ///   - lingerAfterLinkLoss: seconds `close()` waits after a send or receive
    ///     found the link lost, so the kernel's own teardown of the link ends
    ///     first (the L2CAP layer says why it needs this).
    public init(fileDescriptor: Int32, maximumPDUSize: Int = 1024, sendTimeout: Double = 30,
                upgradeSecurity: (@Sendable (ATTErrorCode) throws(BearerError) -> Void)? = nil,
                wakeup: Int32? = nil, lingerAfterLinkLoss: Double = 0) throws(BearerError) {
        let flags = fcntl(fileDescriptor, F_GETFL)
        guard flags >= 0 else { throw .system(operation: "fcntl(F_GETFL)", errno: errno) }
        if flags & O_NONBLOCK == 0, fcntl(fileDescriptor, F_SETFL, flags | O_NONBLOCK) < 0 {
            throw .system(operation: "fcntl(F_SETFL, O_NONBLOCK)", errno: errno)
        }
        self.fileDescriptor = fileDescriptor
        self.maximumPDUSize = maximumPDUSize
        self.sendTimeout = sendTimeout
        self.lingerAfterLinkLoss = min(max(lingerAfterLinkLoss, 0), 10)
        self.securityUpgrade = upgradeSecurity
        self.wakeup = wakeup
    }

    deinit { close() }

    /// `socketpair(AF_UNIX, SOCK_SEQPACKET)` opened close-on-exec and
    /// non-blocking: message boundaries are kept, like L2CAP's.
    public static func makeSocketPair() throws(BearerError) -> (Int32, Int32) {
        var fds: [Int32] = [-1, -1]
        let type = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        guard socketpair(AF_UNIX, type, 0, &fds) == 0 else {
            throw .system(operation: "socketpair(AF_UNIX, SOCK_SEQPACKET)", errno: errno)
        }
        return (fds[0], fds[1])
    }

    /// Two bearers connected to each other, for an in-process client and server.
    public static func makePair(upgradeSecurity: (@Sendable (ATTErrorCode) throws(BearerError) -> Void)? = nil, wakeup: Int32? = nil)
        throws(BearerError) -> (client: DescriptorBearer, server: DescriptorBearer) {
        let (a, b) = try makeSocketPair()
        do {
            let client = try DescriptorBearer(fileDescriptor: a, upgradeSecurity: upgradeSecurity, wakeup: wakeup)
            let server = try DescriptorBearer(fileDescriptor: b)
            return (client, server)
        } catch {
            _ = Glibc.close(a)
            _ = Glibc.close(b)
            throw error
        }
    }

    public func send(_ pdu: [UInt8]) throws(BearerError) {
        try checkOpen()
        var deadline: ContinuousClock.Instant?
        while true {
            let n = pdu.withUnsafeBytes { Glibc.send(fileDescriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n >= 0 { return }
            let e = errno
            switch e {
            case EINTR:
                continue
            case EAGAIN, EWOULDBLOCK:
                // The peer is not reading: wait for room, but not forever.
                let until = deadline ?? ContinuousClock.now + .seconds(sendTimeout)
                deadline = until
                if try wait(for: Int16(POLLOUT), until: until) == 0 {
                    throw .system(operation: "send (waiting for buffer space)", errno: ETIMEDOUT)
                }
            default:
                if Self.isLinkLoss(e) { throw lost(errno: e) }
                throw .system(operation: "send", errno: e)
            }
        }
    }

    public func receive(timeout: Double) throws(BearerError) -> [UInt8]? {
        try checkOpen()
        // Beyond ~31 years is no limit, so the clock arithmetic cannot overflow.
        let deadline: ContinuousClock.Instant? = timeout < 1e9 ? ContinuousClock.now + .seconds(max(0, timeout)) : nil
        while true {
            // Readiness first: recv on an empty non-blocking socket would only say EAGAIN.
            let revents = try wait(for: Int16(POLLIN), until: deadline)
            if revents == 0 { return nil }
            if revents & Int16(POLLNVAL) != 0 { throw .system(operation: "poll", errno: EBADF) }
            // POLLIN, POLLHUP and POLLERR all resolve in recv: data, end of stream, or the socket error.
            var length = 0
            let bytes = [UInt8](unsafeUninitializedCapacity: maximumPDUSize) { buffer, count in
                length = Glibc.recv(fileDescriptor, buffer.baseAddress, maximumPDUSize, Int32(MSG_TRUNC))
                count = length < 0 ? 0 : min(length, maximumPDUSize)
            }
            if length > maximumPDUSize { throw .system(operation: "recv (PDU of \(length) bytes)", errno: EMSGSIZE) }
            if length > 0 { return bytes }
            // ATT PDUs are never empty, so a zero-length read is the peer's shutdown.
            if length == 0 { throw lost(errno: nil) }
            let e = errno
            switch e {
            case EINTR, EAGAIN, EWOULDBLOCK:
                continue
            default:
                if Self.isLinkLoss(e) { throw lost(errno: e) }
                throw .system(operation: "recv", errno: e)
            }
        }
    }

    public func upgradeSecurity(for error: ATTErrorCode) throws(BearerError) {
        guard let securityUpgrade else { throw .unsupported("security upgrade") }
        try securityUpgrade(error)
    }

    /// Shuts the socket down so a receiver blocked in another thread wakes
    /// with `.closed`; the descriptor stays open until `close()`.
    public func interrupt() {
        isClosed.withLock { closed in
            if !closed { _ = shutdown(fileDescriptor, Int32(SHUT_RDWR)) }
        }
    }

    public func close() {
        if lingerAfterLinkLoss > 0, linkLost.load(ordering: .acquiring), !isClosed.withLock({ $0 }) {
            usleep(useconds_t(lingerAfterLinkLoss * 1_000_000))
        }
        isClosed.withLock { closed in
            guard !closed else { return }
            closed = true
            _ = Glibc.close(fileDescriptor)
        }
    }

    private func lost(errno: Int32?) -> BearerError {
        linkLost.store(true, ordering: .releasing)
        return .closed(errno: errno)
    }

    private func checkOpen() throws(BearerError) {
        if isClosed.withLock({ $0 }) { throw .closed(errno: EBADF) }
    }

    /// Polls for `events` until `deadline` (nil: no limit), beside the wake-up
    /// descriptor; returns the revents, or 0 when the deadline passed.
    private func wait(for events: Int16, until deadline: ContinuousClock.Instant?) throws(BearerError) -> Int16 {
        var fds = [pollfd(fd: fileDescriptor, events: events, revents: 0)]
        if let wakeup { fds.append(pollfd(fd: wakeup, events: Int16(POLLIN), revents: 0)) }
        while true {
            let milliseconds = deadline.map(Self.pollMilliseconds(until:)) ?? -1
            for i in fds.indices { fds[i].revents = 0 }
            let n = poll(&fds, nfds_t(fds.count), milliseconds)
            if n > 0 {
                if fds.count > 1, fds[1].revents != 0 { throw .cancelled }
                return fds[0].revents
            }
            if n == 0 {
                if milliseconds == 0 { return 0 }
                continue
            }
            let e = errno
            if e == EINTR { continue }
            throw .system(operation: "poll", errno: e)
        }
    }

    /// poll(2)'s timeout for a deadline, rounded up so poll never returns
    /// just before it; 0 once it has passed.
    public static func pollMilliseconds(until deadline: ContinuousClock.Instant) -> Int32 {
        let left = deadline - ContinuousClock.now
        guard left > .zero else { return 0 }
        let (s, atto) = left.components
        return Int32(clamping: s * 1000 + (atto + 999_999_999_999_999) / 1_000_000_000_000_000)
    }

    /// Errors that mean the link itself is gone (peer reset, LE supervision
    /// timeout, adapter removed) rather than a local failure.
    static func isLinkLoss(_ e: Int32) -> Bool {
        switch e {
        case EPIPE, ECONNRESET, ENOTCONN, ECONNABORTED, ESHUTDOWN, ETIMEDOUT, EHOSTDOWN, EHOSTUNREACH, ENODEV:
            true
        default:
            false
        }
    }
}
#endif

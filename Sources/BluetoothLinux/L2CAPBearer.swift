#if os(Linux)
import Glibc
import CBlueZ
import BluetoothWire
import GATT

/// A link's security level, as BT_SECURITY sets it (BlueZ lib/bluetooth.h):
/// medium = encrypted (unauthenticated pairing), high = authenticated (MITM).
public struct BluetoothSecurityLevel: RawRepresentable, Sendable, Hashable, Comparable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let low = BluetoothSecurityLevel(rawValue: UInt8(BT_SECURITY_LOW))
    public static let medium = BluetoothSecurityLevel(rawValue: UInt8(BT_SECURITY_MEDIUM))
    public static let high = BluetoothSecurityLevel(rawValue: UInt8(BT_SECURITY_HIGH))
    public static let fips = BluetoothSecurityLevel(rawValue: 4)

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }

    public var description: String {
        switch self {
        case .low: "low"
        case .medium: "medium"
        case .high: "high"
        case .fips: "fips"
        default: "level \(rawValue)"
        }
    }
}

/// An ATT bearer over an L2CAP socket on the LE ATT fixed channel (CID 4;
/// Core Spec Vol 3, Part A, 2.1): SOCK_SEQPACKET, so each read or write is one
/// whole PDU.
public final class L2CAPBearer: ATTBearer {
    public static let attCID: UInt16 = 4

    public let peer: BluetoothAddress
    public let peerType: AddressType
    public let adapter: UInt16
    let socket: PacketSocket

    private init(socket: PacketSocket, peer: BluetoothAddress, peerType: AddressType, adapter: UInt16) {
        self.socket = socket
        self.peer = peer
        self.peerType = peerType
        self.adapter = adapter
    }

    /// Connects to a peer's ATT channel. The adapter (default: the first) is
    /// brought up first, never connected through while down. The connect is
    /// non-blocking and abandoned (the socket closed, which cancels it in the
    /// kernel) after `timeout` seconds or when `cancellation` fires: a blocking
    /// connect to an absent device would wait about 40 s. The address type
    /// must be the one the device advertises with; a mismatch just times out.
    /// With `security`, BT_SECURITY is set before connecting, so the link is
    /// encrypted (and paired, if needed) before the socket becomes writable.
    public static func connect(to peer: BluetoothAddress, type: AddressType, adapter: UInt16? = nil,
                               timeout: Double = 10, security: BluetoothSecurityLevel? = nil,
                               cancellation: BluetoothCancellation? = nil) throws(BluetoothLinuxError) -> L2CAPBearer {
        let index = try BluetoothAdapter.resolve(adapter)
        let local = try BluetoothAdapter.info(index)
        guard local.isUp else { throw .adapterDown(index: index, attempts: []) }
        let what = "L2CAP ATT \(peer) \(type)"
        let fd: Int32
        do throws(BluetoothSocketError) {
            fd = try Sys.bluetoothSocket(type: Int32(SOCK_SEQPACKET.rawValue), protocol: BTPROTO_L2CAP, "SOCK_SEQPACKET, BTPROTO_L2CAP")
        } catch {
            throw .system(error)
        }
        let socket = PacketSocket(fd: fd, name: what)
        let end = deadline(after: timeout)
        let outcome: PollOutcome
        do throws(BluetoothSocketError) {
            try Sys.bind(fd, sockaddrL2(local.address, .lePublic), "bind(L2CAP ATT, \(local.name) \(local.address))")
            if let security { try setSecurityOption(fd, security) }
            var remote = sockaddrL2(peer, type)
            let r = withUnsafePointer(to: &remote) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_l2>.size)) }
            }
            if r == 0 { return L2CAPBearer(socket: socket, peer: peer, peerType: type, adapter: index) }
            guard errno == EINPROGRESS || errno == EAGAIN || errno == EINTR else {
                throw BluetoothSocketError(operation: "connect(\(what))", errno: errno)
            }
            outcome = try waitFor(fd, events: Int16(POLLOUT), until: end, cancellation: cancellation, "connect(\(what))")
            if case .ready = outcome {
                let e = try Sys.getOption(fd, level: SOL_SOCKET, name: SO_ERROR, Int32(0), "getsockopt(SO_ERROR, \(what))")
                if e != 0 { throw BluetoothSocketError(operation: "connect(\(what))", errno: e) }
            }
        } catch {
            throw .system(error)
        }
        switch outcome {
        case .ready: return L2CAPBearer(socket: socket, peer: peer, peerType: type, adapter: index)
        // Closing the socket aborts the pending connect in the kernel.
        case .timedOut: socket.close(); throw .timeout(operation: "connect(\(what))", seconds: timeout)
        case .cancelled: socket.close(); throw .cancelled
        }
    }

    static func sockaddrL2(_ address: BluetoothAddress, _ type: AddressType) -> sockaddr_l2 {
        var a = sockaddr_l2()
        a.l2_family = sa_family_t(AF_BLUETOOTH)
        a.l2_cid = attCID.littleEndian
        let le = address.littleEndianBytes
        a.l2_bdaddr.b = (le[0], le[1], le[2], le[3], le[4], le[5])
        a.l2_bdaddr_type = UInt8(type.isRandom ? BDADDR_LE_RANDOM : BDADDR_LE_PUBLIC)
        return a
    }

    static func setSecurityOption(_ fd: Int32, _ level: BluetoothSecurityLevel) throws(BluetoothSocketError) {
        var s = bt_security()
        s.level = level.rawValue
        try Sys.setOption(fd, level: SOL_BLUETOOTH, name: BT_SECURITY, s, "setsockopt(BT_SECURITY, \(level))")
    }

    /// The link's current security level (getsockopt BT_SECURITY).
    public func securityLevel() throws(BluetoothLinuxError) -> BluetoothSecurityLevel {
        let level = try socket.withDescriptor { fd throws(BluetoothLinuxError) in
            do throws(BluetoothSocketError) {
                let s = try Sys.getOption(fd, level: SOL_BLUETOOTH, name: BT_SECURITY, bt_security(), "getsockopt(BT_SECURITY, \(socket.name))")
                return BluetoothSecurityLevel(rawValue: s.level)
            } catch {
                throw .system(error)
            }
        }
        guard let level else { throw .system(BluetoothSocketError(operation: "getsockopt(BT_SECURITY, \(socket.name))", errno: EBADF)) }
        return level
    }

    /// Raises the link's security: the kernel encrypts the link, pairing (and
    /// bonding, when the adapter is bondable) if it has no key. Waits up to
    /// `timeout` seconds for that to finish: the socket is not writable until then.
    public func setSecurity(_ level: BluetoothSecurityLevel, timeout: Double = 30) throws(BluetoothLinuxError) {
        let outcome = try socket.withDescriptor { fd throws(BluetoothLinuxError) -> PollOutcome in
            do throws(BluetoothSocketError) {
                try Self.setSecurityOption(fd, level)
                let outcome = try waitFor(fd, events: Int16(POLLOUT), until: deadline(after: timeout), cancellation: nil,
                                          wakeup: socket.wakeup, "BT_SECURITY \(level)")
                let e = try Sys.getOption(fd, level: SOL_SOCKET, name: SO_ERROR, Int32(0), "getsockopt(SO_ERROR)")
                if e != 0 { throw BluetoothSocketError(operation: "BT_SECURITY \(level) on \(socket.name)", errno: e) }
                return outcome
            } catch {
                throw .system(error)
            }
        }
        switch outcome {
        case nil, .cancelled?: throw .system(BluetoothSocketError(operation: "BT_SECURITY \(level) on \(socket.name)", errno: EBADF))
        case .timedOut?: throw .timeout(operation: "BT_SECURITY \(level) on \(socket.name)", seconds: timeout)
        case .ready?: return
        }
    }

    // MARK: ATTBearer

    /// Errnos with which the kernel reports a lost or closed link.
    static let linkLost: Set<Int32> = [ENOTCONN, ECONNRESET, ETIMEDOUT, EPIPE, ECONNABORTED, EHOSTDOWN, ECONNREFUSED, EBADF]

    static func bearerError(_ e: BluetoothLinuxError) -> BearerError {
        switch e {
        case .system(let s) where linkLost.contains(s.errno): .closed(errno: s.errno)
        case .system(let s): .system(operation: s.operation, errno: s.errno)
        case .timeout(let op, _): .system(operation: op, errno: ETIMEDOUT)
        case .cancelled: .closed(errno: nil)
        default: .system(operation: e.description, errno: EIO)
        }
    }

    public func send(_ pdu: [UInt8]) throws(BearerError) {
        do throws(BluetoothLinuxError) {
            // While pairing runs the socket is not writable; the ATT timeout bounds the wait.
            try socket.send(pdu, until: deadline(after: 30))
        } catch {
            throw Self.bearerError(error)
        }
    }

    public func receive(timeout: Double) throws(BearerError) -> [UInt8]? {
        let packet: [UInt8]?
        do throws(BluetoothLinuxError) {
            packet = try socket.receive(until: deadline(after: timeout), maximum: 1024)
        } catch {
            throw Self.bearerError(error)
        }
        if let packet, packet.isEmpty { throw .closed(errno: nil) }
        return packet
    }

    public func upgradeSecurity() throws(BearerError) {
        let current: BluetoothSecurityLevel
        do throws(BluetoothLinuxError) { current = try securityLevel() } catch { throw Self.bearerError(error) }
        guard current < .high else { throw .unsupported("security above \(current)") }
        do throws(BluetoothLinuxError) {
            try setSecurity(current < .medium ? .medium : .high)
        } catch {
            throw Self.bearerError(error)
        }
    }

    public func close() { socket.close() }
}
#endif

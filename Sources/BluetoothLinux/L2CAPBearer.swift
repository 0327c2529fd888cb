#if os(Linux)
import Glibc
import CBlueZ
import BluetoothWire
import GATT

/// A link's security level, as BT_SECURITY sets it (the values of BlueZ
/// lib/bluetooth.h's BT_SECURITY_*; GATT decides which one an error asks for).
public typealias BluetoothSecurityLevel = ATTSecurityLevel

/// ATT over an L2CAP socket on the LE ATT fixed channel (CID 4; Core Spec
/// Vol 3, Part A, 2.1): SOCK_SEQPACKET, so each read or write is one whole
/// PDU. This layer only opens and connects the socket and sets its security;
/// the descriptor is then GATT's `DescriptorBearer`, the same bearer the
/// tests drive over a socketpair.
public enum L2CAPBearer {
    public static let attCID: UInt16 = 4

    /// Linux 6.1 (Debian 12's kernel, the one in ../shared/ble-vm) wakes a socket's reader with the link's
    /// error before its kworker has finished tearing the link down (l2cap_conn_del ends with
    /// hci_chan_del); a close in that window releases the same channel a second time, and the kernel
    /// stops on the list corruption in hci_chan_del (3 times in 4 runs of a bottle whose link
    /// dropped again and again mid-drain, on a starved host; the gateway closed at once to reconnect).
    /// Closing a moment later is meant to let the kworker finish first; the reconnect waits longer
    /// than this anyway. It is not a cure: with it, 9 runs (about 100 drops) went without a crash,
    /// then a starved full test run crashed twice in two, on the same path (2026-12-02).
    static let lingerAfterLinkLoss = 0.3

    /// Connects to a peer's ATT channel. The adapter (default: the first) is
    /// brought up first, never connected through while down. The connect is
    /// non-blocking and abandoned (the socket closed, which cancels it in the
    /// kernel) after `timeout` seconds or when `cancellation` fires: a blocking
    /// connect to an absent device would wait about 40 s. The address type
    /// must be the one the device advertises with; a mismatch just times out.
    /// With `security`, BT_SECURITY is set before connecting, so the link is
    /// encrypted (and paired, if needed) before the socket becomes writable.
    /// The bearer's blocked receives end with `.cancelled` once `cancellation` fires.
    public static func connect(to peer: BluetoothAddress, type: AddressType, adapter: UInt16? = nil,
                               timeout: Double = 10, security: BluetoothSecurityLevel? = nil,
                               cancellation: BluetoothCancellation? = nil) throws(BluetoothLinuxError) -> DescriptorBearer {
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
        let end = deadline(after: timeout)
        let outcome: PollOutcome
        do throws(BluetoothSocketError) {
            try Sys.bind(fd, sockaddrL2(local.address, .lePublic), "bind(L2CAP ATT, \(local.name) \(local.address))")
            if let security { try setSecurityOption(fd, security) }
            var remote = sockaddrL2(peer, type)
            let r = withUnsafePointer(to: &remote) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_l2>.size)) }
            }
            if r == 0 {
                outcome = .ready(0)
            } else {
                guard errno == EINPROGRESS || errno == EAGAIN || errno == EINTR else {
                    throw BluetoothSocketError(operation: "connect(\(what))", errno: errno)
                }
                outcome = try waitFor(fd, events: Int16(POLLOUT), until: end, cancellation: cancellation, "connect(\(what))")
                if case .ready = outcome {
                    let e = try Sys.getOption(fd, level: SOL_SOCKET, name: SO_ERROR, Int32(0), "getsockopt(SO_ERROR, \(what))")
                    if e != 0 { throw BluetoothSocketError(operation: "connect(\(what))", errno: e) }
                }
            }
        } catch {
            Glibc.close(fd)
            throw .system(error)
        }
        switch outcome {
        case .ready:
            do {
                return try DescriptorBearer(fileDescriptor: fd, upgradeSecurity: { code throws(BearerError) in
                    // Called by the GATT client on the thread that uses the bearer, so the descriptor is still open.
                    try raiseSecurity(fd, for: code, name: what)
                }, wakeup: cancellation?.fileDescriptor, lingerAfterLinkLoss: lingerAfterLinkLoss)
            } catch {
                Glibc.close(fd)
                throw .system(BluetoothSocketError(operation: "ATT bearer on \(what)", errno: error.errno ?? EIO))
            }
        // Closing the socket aborts the pending connect in the kernel.
        case .timedOut: Glibc.close(fd); throw .timeout(operation: "connect(\(what))", seconds: timeout)
        case .cancelled: Glibc.close(fd); throw .cancelled
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

    /// The security level of a bearer's link (getsockopt BT_SECURITY).
    public static func securityLevel(of bearer: DescriptorBearer) throws(BluetoothLinuxError) -> BluetoothSecurityLevel {
        do throws(BluetoothSocketError) { return try securityLevel(bearer.fileDescriptor, name: "ATT bearer") } catch { throw .system(error) }
    }

    /// The link's current security level (getsockopt BT_SECURITY).
    static func securityLevel(_ fd: Int32, name: String) throws(BluetoothSocketError) -> BluetoothSecurityLevel {
        let s = try Sys.getOption(fd, level: SOL_BLUETOOTH, name: BT_SECURITY, bt_security(), "getsockopt(BT_SECURITY, \(name))")
        return BluetoothSecurityLevel(rawValue: s.level)
    }

    /// Raises the link's security as `code` asks (BlueZ's rule, in GATT): the
    /// kernel encrypts the link, pairing (and bonding, when the adapter is
    /// bondable) if it has no key. Waits up to `timeout` seconds for that: the
    /// socket is not writable until then.
    static func raiseSecurity(_ fd: Int32, for code: ATTErrorCode, name: String, timeout: Double = 30) throws(BearerError) {
        let current: BluetoothSecurityLevel
        do throws(BluetoothSocketError) { current = try securityLevel(fd, name: name) } catch {
            throw .system(operation: error.operation, errno: error.errno)
        }
        guard let level = ATTSecurityLevel.raised(for: code, from: current) else {
            throw .unsupported("raising security above \(current) for \(code)")
        }
        do throws(BluetoothSocketError) {
            try setSecurityOption(fd, level)
            let outcome = try waitFor(fd, events: Int16(POLLOUT), until: deadline(after: timeout), cancellation: nil, "BT_SECURITY \(level)")
            let e = try Sys.getOption(fd, level: SOL_SOCKET, name: SO_ERROR, Int32(0), "getsockopt(SO_ERROR)")
            if e != 0 { throw BluetoothSocketError(operation: "BT_SECURITY \(level) on \(name)", errno: e) }
            if case .timedOut = outcome { throw BluetoothSocketError(operation: "BT_SECURITY \(level) on \(name)", errno: ETIMEDOUT) }
        } catch {
            throw .system(operation: error.operation, errno: error.errno)
        }
    }
}
#endif

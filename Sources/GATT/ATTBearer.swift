#if canImport(Glibc)
import Glibc
#endif
import BluetoothWire
import Threading

/// A channel carrying whole ATT PDUs. Its one implementation is
/// `DescriptorBearer`, over an L2CAP socket on the ATT fixed channel (CID 4)
/// in production and over `socketpair(AF_UNIX, SOCK_SEQPACKET)` in tests, so
/// the tests drive the production path (as BlueZ's `bt_att` serves both). It
/// knows nothing of ATT itself; the client above owns request/response
/// pairing and timeouts.
public protocol ATTBearer: AnyObject, Sendable {
    /// Sends one PDU.
    func send(_ pdu: [UInt8]) throws(BearerError)
    /// Waits up to `timeout` seconds for the next PDU; nil when none arrived in time.
    /// `timeout` 0 only checks; `.infinity` waits until a PDU arrives or the
    /// link ends. Throws `.closed` when the peer went away.
    func receive(timeout: Double) throws(BearerError) -> [UInt8]?
    /// Raises the link's security (BT_SECURITY) as the error that asked for
    /// it says (see `ATTSecurityLevel.raised(for:from:)`); bearers without
    /// security throw `.unsupported`.
    func upgradeSecurity(for error: ATTErrorCode) throws(BearerError)
    func close()
}

/// A bearer failure; the system error is kept as its errno value plus the
/// operation that failed.
public enum BearerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The peer closed the link or it was lost (with the errno that said so, if any).
    case closed(errno: Int32?)
    /// A system call failed.
    case system(operation: String, errno: Int32)
    case unsupported(String)
    /// A blocked receive was woken on purpose (the session is stopping).
    case cancelled

    public var description: String {
        switch self {
        case .closed(let e?): "link lost: \(Self.errnoName(e))"
        case .closed(nil): "link closed by the peer"
        case .system(let op, let e): "\(op) failed: \(Self.errnoName(e))"
        case .unsupported(let what): "\(what) is not supported by this bearer"
        case .cancelled: "cancelled"
        }
    }

    /// The errno itself, if any.
    public var errno: Int32? {
        switch self {
        case .closed(let e): e
        case .system(_, let e): e
        case .unsupported, .cancelled: nil
        }
    }

    static func errnoName(_ e: Int32) -> String { errnoDescription(e) }
}

/// A link's security level, as BT_SECURITY sets it (BlueZ lib/bluetooth.h):
/// medium = encrypted (unauthenticated pairing), high = authenticated (MITM),
/// fips = Secure Connections.
public struct ATTSecurityLevel: RawRepresentable, Sendable, Hashable, Comparable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let low = ATTSecurityLevel(rawValue: 1)
    public static let medium = ATTSecurityLevel(rawValue: 2)
    public static let high = ATTSecurityLevel(rawValue: 3)
    public static let fips = ATTSecurityLevel(rawValue: 4)

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

    /// The level to ask for after `error`, from `current`; nil when raising
    /// cannot help. As BlueZ's `bt_att` does (src/shared/att.c,
    /// change_security): Insufficient Encryption asks for medium when below
    /// it; Insufficient Authentication steps up one level, up to fips.
    public static func raised(for error: ATTErrorCode, from current: ATTSecurityLevel) -> ATTSecurityLevel? {
        switch error {
        case .insufficientEncryption:
            return current < .medium ? .medium : nil
        case .insufficientAuthentication:
            if current < .medium { return .medium }
            if current < .high { return .high }
            if current < .fips { return .fips }
            return nil
        default:
            return nil
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// A channel carrying whole ATT PDUs: an L2CAP socket on the ATT fixed channel
/// (CID 4), or `socketpair(AF_UNIX, SOCK_SEQPACKET)` in tests. It knows nothing
/// of ATT itself; the client above owns request/response pairing and timeouts.
public protocol ATTBearer: AnyObject, Sendable {
    /// Sends one PDU.
    func send(_ pdu: [UInt8]) throws(BearerError)
    /// Waits up to `timeout` seconds for the next PDU; nil when none arrived in time.
    /// `timeout` 0 only checks; `.infinity` waits until a PDU arrives or the
    /// link ends. Throws `.closed` when the peer went away.
    func receive(timeout: Double) throws(BearerError) -> [UInt8]?
    /// Raises the link's security (BT_SECURITY) after an Insufficient
    /// Authentication/Encryption error; bearers without security throw `.unsupported`.
    func upgradeSecurity() throws(BearerError)
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

    public var description: String {
        switch self {
        case .closed(let e?): "link lost: \(Self.errnoName(e))"
        case .closed(nil): "link closed by the peer"
        case .system(let op, let e): "\(op) failed: \(Self.errnoName(e))"
        case .unsupported(let what): "\(what) is not supported by this bearer"
        }
    }

    /// The errno itself, if any.
    public var errno: Int32? {
        switch self {
        case .closed(let e): e
        case .system(_, let e): e
        case .unsupported: nil
        }
    }

    /// `strerror` text plus the number, e.g. "Connection reset by peer (errno 104)".
    static func errnoName(_ e: Int32) -> String {
        #if canImport(Glibc)
        if let text = strerror(e) { return "\(String(cString: text)) (errno \(e))" }
        #endif
        return "errno \(e)"
    }
}

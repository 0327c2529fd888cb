#if os(Linux)
import Glibc
import BluetoothWire
import Threading

/// A failed system call: which operation, and the errno it set.
public struct BluetoothSocketError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The call and what it was for, e.g. `connect(L2CAP ATT F0:F1:F2:F3:F4:F5)`.
    public var operation: String
    public var errno: Int32

    public init(operation: String, errno: Int32) {
        self.operation = operation
        self.errno = errno
    }

    public var description: String {
        let failed = "\(operation) failed: \(errnoDescription(errno))"
        if errno == EAFNOSUPPORT, operation.hasPrefix("socket(AF_BLUETOOTH") {
            // What a person can do about it, not only what the kernel said.
            return "this kernel has no Bluetooth support (\(failed)): "
                + "load it with `sudo modprobe bluetooth`, or use a kernel built with Bluetooth (Raspberry Pi OS has it)"
        }
        return failed
    }
}

/// Why a Bluetooth operation on the kernel's sockets failed. Each case keeps its cause.
public indirect enum BluetoothLinuxError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A system call failed.
    case system(BluetoothSocketError)
    /// A management command was answered with an error status.
    case management(opcode: MgmtOpcode, index: MgmtIndex, status: MgmtStatus)
    /// An HCI command was answered with an error status.
    case hci(opcode: HCIOpcode, status: HCIStatus)
    /// Nothing answered in time.
    case timeout(operation: String, seconds: Double)
    /// The controller did not answer a management or HCI command: the adapter
    /// itself is stuck (the peer plays no part in these commands).
    case controllerTimeout(command: String, seconds: Double)
    /// The kernel sent bytes that do not decode.
    case malformed(DecodeError)
    /// The kernel has no Bluetooth adapter (or none with this index).
    case noAdapter(index: UInt16?)
    /// The adapter is down and could not be brought up; `attempts` says why each way failed.
    case adapterDown(index: UInt16, attempts: [BluetoothLinuxError])
    /// Neither scanning through the management socket nor raw HCI worked.
    case scanUnavailable(management: BluetoothLinuxError, rawHCI: BluetoothLinuxError)
    /// The operation was cancelled through a `BluetoothCancellation`.
    case cancelled

    /// The errno at the root of this error, when a system call failed.
    public var errno: Int32? {
        switch self {
        case .system(let e): e.errno
        default: nil
        }
    }

    public var description: String {
        switch self {
        case .system(let e):
            return e.description
        case .management(let op, let index, let status):
            var text = "\(op) on \(index) failed: \(status)"
            if status == .permissionDenied { text += " (needs CAP_NET_ADMIN)" }
            return text
        case .hci(let op, let status):
            var text = "\(op) failed: \(status)"
            if status == .commandDisallowed {
                text += " (another program or the kernel is scanning or connecting; stop it or scan through the management socket)"
            }
            return text
        case .timeout(let op, let s):
            return "\(op): no answer within \(s) s"
        case .controllerTimeout(let command, let s):
            return "\(command): the Bluetooth controller did not answer within \(s) s"
        case .malformed(let e):
            return "malformed packet from the kernel: \(e)"
        case .noAdapter(let index?):
            return "no Bluetooth adapter hci\(index)"
        case .noAdapter(nil):
            return "no Bluetooth adapter found"
        case .adapterDown(let index, let attempts):
            return "Bluetooth adapter hci\(index) is down and could not be brought up: "
                + attempts.map(\.description).joined(separator: "; ")
        case .scanUnavailable(let m, let r):
            return "cannot scan: management socket: \(m); raw HCI: \(r)"
        case .cancelled:
            return "cancelled"
        }
    }
}
#endif

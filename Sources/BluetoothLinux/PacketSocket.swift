#if os(Linux)
import Glibc
import Synchronization

/// A non-blocking socket carrying whole packets (HCI, mgmt, L2CAP seqpacket),
/// driven by poll. `close()` shuts the socket down, which wakes any thread
/// waiting on it; the descriptor itself is released when the object goes, so
/// a waiter never touches a number the process has reused.
final class PacketSocket: Sendable {
    let fd: Int32
    /// For error messages, e.g. "mgmt" or "L2CAP ATT F0:F1:F2:F3:F4:F5".
    let name: String
    private let closed = Atomic<Bool>(false)

    init(fd: Int32, name: String) {
        self.fd = fd
        self.name = name
    }

    var isClosed: Bool { closed.load(ordering: .acquiring) }

    /// Sends one packet, waiting for room until the deadline.
    func send(_ bytes: [UInt8], until deadline: ContinuousClock.Instant,
              cancellation: BluetoothCancellation? = nil) throws(BluetoothLinuxError) {
        while true {
            guard !isClosed else { throw .system(BluetoothSocketError(operation: "write(\(name))", errno: EBADF)) }
            let outcome: PollOutcome
            do throws(BluetoothSocketError) {
                if try Sys.writePacket(fd, bytes, "write(\(name))") { return }
                outcome = try waitFor(fd, events: Int16(POLLOUT), until: deadline, cancellation: cancellation, name)
            } catch {
                throw .system(error)
            }
            switch outcome {
            case .ready: continue
            case .timedOut: throw .timeout(operation: "write(\(name))", seconds: 0)
            case .cancelled: throw .cancelled
            }
        }
    }

    /// The next packet; nil when the deadline passes first; `.cancelled` when cancelled.
    func receive(until deadline: ContinuousClock.Instant, cancellation: BluetoothCancellation? = nil,
                 maximum: Int = 1100) throws(BluetoothLinuxError) -> [UInt8]? {
        while true {
            guard !isClosed else { throw .system(BluetoothSocketError(operation: "read(\(name))", errno: EBADF)) }
            let outcome: PollOutcome
            do throws(BluetoothSocketError) {
                if let packet = try Sys.readPacket(fd, maximum: maximum, "read(\(name))") { return packet }
                outcome = try waitFor(fd, events: Int16(POLLIN), until: deadline, cancellation: cancellation, name)
            } catch {
                throw .system(error)
            }
            switch outcome {
            case .ready: continue
            case .timedOut: return nil
            case .cancelled: throw .cancelled
            }
        }
    }

    func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        _ = shutdown(fd, Int32(SHUT_RDWR))
    }

    deinit { Glibc.close(fd) }
}
#endif

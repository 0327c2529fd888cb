#if os(Linux)
import Glibc
import Synchronization
import CBlueZ

/// A non-blocking socket carrying whole packets (HCI, mgmt, L2CAP seqpacket),
/// driven by poll. `close()` may come from any thread: it wakes waiters
/// through an eventfd, and the descriptor is closed once no call is using it,
/// so no thread ever touches a number the process has since reused.
/// Known kernel problem (Linux 6.1, seen in ../shared/ble-vm): closing an
/// L2CAP ATT socket just after its link dropped can hit a BUG in hci_chan_del
/// (list corruption); `L2CAPBearer.lingerAfterLinkLoss` says why, and what was tried.
final class PacketSocket: Sendable {
    /// Use only through `withDescriptor` once the socket is shared.
    let fd: Int32
    /// For error messages, e.g. "mgmt" or "L2CAP ATT F0:F1:F2:F3:F4:F5".
    let name: String
    let wakeup: Int32

    private struct State {
        var closed = false
        var users = 0
        var released = false
    }
    private let state = Mutex(State())

    init(fd: Int32, name: String) {
        self.fd = fd
        self.name = name
        wakeup = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
    }

    var isClosed: Bool { state.withLock { $0.closed } }

    /// Runs `body` with the descriptor, which stays open meanwhile; nil when closed.
    func withDescriptor<T>(_ body: (Int32) throws(BluetoothLinuxError) -> T) throws(BluetoothLinuxError) -> T? {
        let open = state.withLock { s -> Bool in
            guard !s.closed else { return false }
            s.users += 1
            return true
        }
        guard open else { return nil }
        defer {
            let closeNow = state.withLock { s -> Bool in
                s.users -= 1
                guard s.closed, s.users == 0, !s.released else { return false }
                s.released = true
                return true
            }
            if closeNow { Glibc.close(fd) }
        }
        return try body(fd)
    }

    private func closedError(_ operation: String) -> BluetoothLinuxError {
        .system(BluetoothSocketError(operation: "\(operation)(\(name))", errno: EBADF))
    }

    /// Sends one packet, waiting for room until the deadline.
    func send(_ bytes: [UInt8], until deadline: ContinuousClock.Instant,
              cancellation: BluetoothCancellation? = nil) throws(BluetoothLinuxError) {
        let sent: Void? = try withDescriptor { fd throws(BluetoothLinuxError) in
            while true {
                let outcome: PollOutcome
                do throws(BluetoothSocketError) {
                    if try Sys.writePacket(fd, bytes, "write(\(name))") { return }
                    outcome = try waitFor(fd, events: Int16(POLLOUT), until: deadline, cancellation: cancellation, wakeup: wakeup, name)
                } catch {
                    throw .system(error)
                }
                switch outcome {
                case .ready: continue
                case .timedOut: throw .timeout(operation: "write(\(name))", seconds: 0)
                case .cancelled: throw isClosed ? closedError("write") : .cancelled
                }
            }
        }
        if sent == nil { throw closedError("write") }
    }

    /// The next packet; nil when the deadline passes first; `.cancelled` when cancelled.
    func receive(until deadline: ContinuousClock.Instant, cancellation: BluetoothCancellation? = nil,
                 maximum: Int = 1100) throws(BluetoothLinuxError) -> [UInt8]? {
        let result: [UInt8]?? = try withDescriptor { fd throws(BluetoothLinuxError) -> [UInt8]? in
            while true {
                let outcome: PollOutcome
                do throws(BluetoothSocketError) {
                    if let packet = try Sys.readPacket(fd, maximum: maximum, "read(\(name))") { return packet }
                    outcome = try waitFor(fd, events: Int16(POLLIN), until: deadline, cancellation: cancellation, wakeup: wakeup, name)
                } catch {
                    throw .system(error)
                }
                switch outcome {
                case .ready: continue
                case .timedOut: return nil
                case .cancelled: throw isClosed ? closedError("read") : .cancelled
                }
            }
        }
        guard let result else { throw closedError("read") }
        return result
    }

    func close() {
        let closeNow = state.withLock { s -> Bool in
            guard !s.closed else { return false }
            s.closed = true
            guard s.users == 0 else { return false }
            s.released = true
            return true
        }
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { Glibc.write(wakeup, $0.baseAddress, 8) }
        if closeNow { Glibc.close(fd) }
    }

    deinit {
        if !state.withLock({ $0.released }) { Glibc.close(fd) }
        Glibc.close(wakeup)
    }
}
#endif

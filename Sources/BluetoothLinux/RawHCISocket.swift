#if os(Linux)
import Glibc
import CBlueZ
import BluetoothWire

/// An HCI socket bound to one controller on HCI_CHANNEL_RAW, filtered to the
/// events LE scanning needs. Sending commands needs CAP_NET_RAW. Commands go
/// through the kernel's command queue, so they interleave safely with its own.
public final class RawHCISocket {
    let socket: PacketSocket
    public let adapter: UInt16

    public init(adapter: UInt16) throws(BluetoothLinuxError) {
        self.adapter = adapter
        do throws(BluetoothSocketError) {
            let fd = try Sys.bluetoothSocket(type: Int32(SOCK_RAW.rawValue), protocol: BTPROTO_HCI, "SOCK_RAW, BTPROTO_HCI")
            socket = PacketSocket(fd: fd, name: "raw HCI hci\(adapter)")
            var filter = hci_filter()
            hci_filter_clear(&filter)
            hci_filter_set_ptype(HCI_EVENT_PKT, &filter)
            for event in [EVT_CMD_COMPLETE, EVT_CMD_STATUS, EVT_LE_META_EVENT, EVT_DISCONN_COMPLETE] {
                hci_filter_set_event(event, &filter)
            }
            try Sys.setOption(fd, level: SOL_HCI, name: HCI_FILTER, filter, "setsockopt(HCI_FILTER)")
            var address = sockaddr_hci()
            address.hci_family = sa_family_t(AF_BLUETOOTH)
            address.hci_dev = adapter
            address.hci_channel = UInt16(HCI_CHANNEL_RAW)
            try Sys.bind(fd, address, "bind(HCI_CHANNEL_RAW, hci\(adapter))")
        } catch {
            throw .system(error)
        }
    }

    public func send(_ command: HCICommandPacket, timeout: Double = 2) throws(BluetoothLinuxError) {
        try socket.send(command.encoded(withIndicator: true), until: deadline(after: timeout))
    }

    /// The next event; nil when none came before the deadline.
    public func nextEvent(until deadline: ContinuousClock.Instant,
                          cancellation: BluetoothCancellation? = nil) throws(BluetoothLinuxError) -> HCIEvent? {
        guard let bytes = try socket.receive(until: deadline, cancellation: cancellation) else { return nil }
        do throws(DecodeError) {
            return try HCIEvent(decoding: bytes, withIndicator: true)
        } catch {
            throw .malformed(error)
        }
    }

    /// Sends a command and waits for its Command Complete (or a failing Command
    /// Status); a non-success status throws `.hci`. Other events are dropped:
    /// call this before scanning starts, not during.
    @discardableResult
    public func execute(_ command: HCICommandPacket, timeout: Double = 2) throws(BluetoothLinuxError) -> HCICommandComplete {
        let end = deadline(after: timeout)
        try socket.send(command.encoded(withIndicator: true), until: end)
        while true {
            guard let event = try nextEvent(until: end) else {
                throw .controllerTimeout(command: "\(command.opcode) on hci\(adapter)", seconds: timeout)
            }
            switch event {
            case .commandComplete(let c) where c.opcode == command.opcode:
                if let status = c.status, status != .success { throw .hci(opcode: c.opcode, status: status) }
                return c
            case .commandStatus(let s) where s.opcode == command.opcode && s.status != .success:
                throw .hci(opcode: s.opcode, status: s.status)
            default:
                continue
            }
        }
    }

    public func close() { socket.close() }
}
#endif

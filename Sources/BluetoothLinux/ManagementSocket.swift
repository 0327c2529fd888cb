#if os(Linux)
import Glibc
import CBlueZ
import BluetoothWire

/// The kernel's Bluetooth management interface (BlueZ doc/mgmt-api.txt): an
/// HCI socket bound to HCI_CHANNEL_CONTROL. Several clients, bluetoothd among
/// them, may use it at once. Most commands need CAP_NET_ADMIN.
///
/// Not for concurrent use from several threads; events that arrive while a
/// command waits for its reply are kept for `nextEvent`.
public final class ManagementSocket {
    let socket: PacketSocket
    private var pending: [MgmtEventPacket] = []

    public init() throws(BluetoothLinuxError) {
        do throws(BluetoothSocketError) {
            let fd = try Sys.bluetoothSocket(type: Int32(SOCK_RAW.rawValue), protocol: BTPROTO_HCI, "SOCK_RAW, BTPROTO_HCI")
            socket = PacketSocket(fd: fd, name: "mgmt")
            var address = sockaddr_hci()
            address.hci_family = sa_family_t(AF_BLUETOOTH)
            address.hci_dev = UInt16(HCI_DEV_NONE)
            address.hci_channel = UInt16(HCI_CHANNEL_CONTROL)
            try Sys.bind(fd, address, "bind(HCI_CHANNEL_CONTROL)")
        } catch {
            throw .system(error)
        }
    }

    public func send(_ command: MgmtCommand, timeout: Double = 5) throws(BluetoothLinuxError) {
        try socket.send(command.encoded, until: deadline(after: timeout))
    }

    /// The next event (kept ones first); nil when none came before the deadline.
    public func nextEvent(until deadline: ContinuousClock.Instant,
                          cancellation: BluetoothCancellation? = nil) throws(BluetoothLinuxError) -> MgmtEventPacket? {
        if !pending.isEmpty { return pending.removeFirst() }
        return try readEvent(until: deadline, cancellation: cancellation)
    }

    private func readEvent(until deadline: ContinuousClock.Instant,
                           cancellation: BluetoothCancellation?) throws(BluetoothLinuxError) -> MgmtEventPacket? {
        guard let bytes = try socket.receive(until: deadline, cancellation: cancellation) else { return nil }
        do throws(DecodeError) {
            return try MgmtEventPacket(decoding: bytes)
        } catch {
            throw .malformed(error)
        }
    }

    /// Sends a command and waits for its Command Complete or Command Status.
    /// Returns the return parameters; a status other than success throws
    /// `.management`. Other events read meanwhile are kept for `nextEvent`.
    @discardableResult
    public func execute(_ command: MgmtCommand, timeout: Double = 5) throws(BluetoothLinuxError) -> [UInt8] {
        let end = deadline(after: timeout)
        try socket.send(command.encoded, until: end)
        while true {
            guard let packet = try readEvent(until: end, cancellation: nil) else {
                throw .controllerTimeout(command: "\(command.opcode) on \(command.index)", seconds: timeout)
            }
            switch packet.event {
            case .commandComplete(let c) where c.opcode == command.opcode && packet.index == command.index:
                guard c.status == .success else {
                    throw .management(opcode: c.opcode, index: packet.index, status: c.status)
                }
                return c.returnParameters
            case .commandStatus(let s) where s.opcode == command.opcode && packet.index == command.index:
                guard s.status == .success else {
                    throw .management(opcode: s.opcode, index: packet.index, status: s.status)
                }
                return []
            default:
                pending.append(packet)
            }
        }
    }

    private func decode<T>(_ body: () throws(DecodeError) -> T) throws(BluetoothLinuxError) -> T {
        do throws(DecodeError) { return try body() } catch { throw .malformed(error) }
    }

    /// Read Management Version Information.
    public func version() throws(BluetoothLinuxError) -> MgmtVersion {
        let reply = try execute(.readVersion)
        return try decode { () throws(DecodeError) in try MgmtVersion(decoding: reply) }
    }

    /// Read Controller Index List.
    public func controllerIndexes() throws(BluetoothLinuxError) -> [UInt16] {
        let reply = try execute(.readIndexList)
        return try decode { () throws(DecodeError) in try MgmtIndexList(decoding: reply).indexes }
    }

    /// Read Controller Information.
    public func controllerInfo(_ index: UInt16) throws(BluetoothLinuxError) -> MgmtControllerInfo {
        let reply = try execute(.readInfo(MgmtIndex(index)))
        return try decode { () throws(DecodeError) in try MgmtControllerInfo(decoding: reply) }
    }

    /// Set Powered; returns the settings afterwards. Powering on through mgmt
    /// also cancels the kernel's automatic power-off of a new controller.
    @discardableResult
    public func setPowered(_ index: UInt16, _ on: Bool, timeout: Double = 10) throws(BluetoothLinuxError) -> MgmtSettings {
        let reply = try execute(.setPowered(MgmtIndex(index), on), timeout: timeout)
        return try decode { () throws(DecodeError) in
            var r = ByteReader(reply, context: "mgmt Set Powered reply")
            return MgmtSettings(rawValue: try r.uint32("current settings"))
        }
    }

    /// Set Bondable: whether pairing (triggered by BT_SECURITY) stores keys.
    @discardableResult
    public func setBondable(_ index: UInt16, _ on: Bool) throws(BluetoothLinuxError) -> MgmtSettings {
        let reply = try execute(.setBondable(MgmtIndex(index), on))
        return try decode { () throws(DecodeError) in
            var r = ByteReader(reply, context: "mgmt Set Bondable reply")
            return MgmtSettings(rawValue: try r.uint32("current settings"))
        }
    }

    public func close() { socket.close() }
}
#endif

#if os(Linux)
import Glibc
import CBlueZ
import BluetoothWire

/// A local Bluetooth controller as the kernel lists it (HCIGETDEVINFO).
public struct BluetoothAdapterInfo: Sendable, Hashable, CustomStringConvertible {
    public var index: UInt16
    /// `hci0`, ...
    public var name: String
    public var address: BluetoothAddress
    /// The HCI_UP flag: the controller is powered and usable.
    public var isUp: Bool

    public var description: String { "\(name) \(address) \(isUp ? "up" : "down")" }
}

/// Listing adapters and bringing them up. Connecting through an adapter that is
/// down must never happen: Linux 6.1 hits a kernel BUG on that path, so
/// `L2CAPBearer.connect` calls `ensureUp` first.
public enum BluetoothAdapter {
    /// An HCI socket bound to no device, for the HCIGET* ioctls.
    static func controlSocket() throws(BluetoothSocketError) -> PacketSocket {
        let fd = try Sys.bluetoothSocket(type: Int32(SOCK_RAW.rawValue), protocol: BTPROTO_HCI, "SOCK_RAW, BTPROTO_HCI")
        return PacketSocket(fd: fd, name: "HCI control")
    }

    /// Every adapter the kernel knows, up or down (HCIGETDEVLIST, then HCIGETDEVINFO each).
    public static func list() throws(BluetoothLinuxError) -> [BluetoothAdapterInfo] {
        do throws(BluetoothSocketError) {
            let s = try controlSocket()
            var ids = [UInt16](repeating: 0, count: Int(HCI_MAX_DEV))
            let count = try Sys.check(quench_hci_dev_list(s.fd, &ids, Int32(ids.count)), "ioctl(HCIGETDEVLIST)")
            var out: [BluetoothAdapterInfo] = []
            for id in ids.prefix(Int(count)) { out.append(try info(id, socket: s)) }
            return out
        } catch {
            throw .system(error)
        }
    }

    /// One adapter's state; `.noAdapter` when there is no such index.
    public static func info(_ index: UInt16) throws(BluetoothLinuxError) -> BluetoothAdapterInfo {
        do throws(BluetoothSocketError) {
            return try info(index, socket: try controlSocket())
        } catch where error.errno == ENODEV {
            throw .noAdapter(index: index)
        } catch {
            throw .system(error)
        }
    }

    static func info(_ index: UInt16, socket s: PacketSocket) throws(BluetoothSocketError) -> BluetoothAdapterInfo {
        var di = hci_dev_info()
        di.dev_id = index
        _ = try Sys.check(quench_ioctl_ptr(s.fd, QUENCH_HCIGETDEVINFO, &di), "ioctl(HCIGETDEVINFO, hci\(index))")
        let name = withUnsafeBytes(of: di.name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let address = withUnsafeBytes(of: di.bdaddr.b) { BluetoothAddress(littleEndian: Array($0))! }
        let up = di.flags & (UInt32(1) << UInt32(QUENCH_HCI_UP_FLAG)) != 0
        return BluetoothAdapterInfo(index: index, name: name, address: address, isUp: up)
    }

    /// The adapter to use when none is named: the first the kernel lists.
    public static func defaultIndex() throws(BluetoothLinuxError) -> UInt16 {
        guard let first = try list().first else { throw .noAdapter(index: nil) }
        return first.index
    }

    /// The given adapter, or the first one, brought up.
    static func resolve(_ index: UInt16?) throws(BluetoothLinuxError) -> UInt16 {
        let i: UInt16
        if let index { i = index } else { i = try defaultIndex() }
        try ensureUp(i)
        return i
    }

    /// Makes sure the adapter is up, powering it through mgmt Set Powered
    /// (works beside bluetoothd; needs CAP_NET_ADMIN), else the HCIDEVUP ioctl.
    /// Throws `.adapterDown` with both causes when it stays down.
    @discardableResult
    public static func ensureUp(_ index: UInt16, timeout: Double = 10) throws(BluetoothLinuxError) -> BluetoothAdapterInfo {
        var attempts: [BluetoothLinuxError] = []
        // mgmt first even when HCI_UP is set: a new controller is up during its
        // setup and is switched off 2 s later unless someone claims it.
        do throws(BluetoothLinuxError) {
            let mgmt = try ManagementSocket()
            let current = try mgmt.controllerInfo(index).currentSettings
            if !current.contains(.powered) {
                let settings = try mgmt.setPowered(index, true, timeout: timeout)
                if !settings.contains(.powered) {
                    attempts.append(.management(opcode: .setPowered, index: MgmtIndex(index), status: .failed))
                }
            }
        } catch {
            if case .management(_, _, .invalidIndex) = error { throw .noAdapter(index: index) }
            attempts.append(error)
        }
        let state = try info(index)
        if state.isUp { return state }
        do throws(BluetoothSocketError) {
            let s = try controlSocket()
            let r = quench_ioctl_int(s.fd, QUENCH_HCIDEVUP, Int32(index))
            if r < 0 && errno != EALREADY { _ = try Sys.check(r, "ioctl(HCIDEVUP, hci\(index))") }
        } catch {
            attempts.append(.system(error))
        }
        let after = try info(index)
        guard after.isUp else { throw .adapterDown(index: index, attempts: attempts) }
        return after
    }

    /// Powers the adapter off and on again (mgmt Set Powered): what resets a
    /// controller that stopped reporting or answering, short of unloading its
    /// driver. Links through it drop. Needs CAP_NET_ADMIN.
    @discardableResult
    public static func powerCycle(_ index: UInt16?) throws(BluetoothLinuxError) -> BluetoothAdapterInfo {
        let i: UInt16
        if let index { i = index } else { i = try defaultIndex() }
        do throws(BluetoothLinuxError) {
            let mgmt = try ManagementSocket()
            defer { mgmt.close() }
            try mgmt.setPowered(i, false)
        } catch {
            if case .management(_, _, .invalidIndex) = error { throw .noAdapter(index: i) }
            // A controller too stuck to power off may still come back on; ensureUp says if not.
        }
        return try ensureUp(i)
    }
}
#endif

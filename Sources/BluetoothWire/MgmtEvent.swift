// Management events (BlueZ doc/mgmt-api.txt, "Management Events").

/// A management event code.
public struct MgmtEventCode: RawRepresentable, Sendable, Hashable {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public static let commandComplete = MgmtEventCode(rawValue: 0x0001)
    public static let commandStatus = MgmtEventCode(rawValue: 0x0002)
    public static let controllerError = MgmtEventCode(rawValue: 0x0003)
    public static let indexAdded = MgmtEventCode(rawValue: 0x0004)
    public static let indexRemoved = MgmtEventCode(rawValue: 0x0005)
    public static let newSettings = MgmtEventCode(rawValue: 0x0006)
    public static let deviceFound = MgmtEventCode(rawValue: 0x0012)
    public static let discovering = MgmtEventCode(rawValue: 0x0013)
}

/// Command Complete Event (0x0001): command opcode (2), status (1), return parameters.
public struct MgmtCommandComplete: Sendable, Hashable {
    public var opcode: MgmtOpcode
    public var status: MgmtStatus
    public var returnParameters: [UInt8]
    public init(opcode: MgmtOpcode, status: MgmtStatus, returnParameters: [UInt8] = []) {
        self.opcode = opcode
        self.status = status
        self.returnParameters = returnParameters
    }
}

/// Command Status Event (0x0002): command opcode (2), status (1). Sent instead
/// of Command Complete when a command fails before producing return parameters.
public struct MgmtCommandStatus: Sendable, Hashable {
    public var opcode: MgmtOpcode
    public var status: MgmtStatus
    public init(opcode: MgmtOpcode, status: MgmtStatus) { self.opcode = opcode; self.status = status }
}

/// Flags of the Device Found event (mgmt-api.txt, "Device Found Event").
public struct MgmtDeviceFoundFlags: OptionSet, Sendable, Hashable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let confirmName = MgmtDeviceFoundFlags(rawValue: 1 << 0)
    public static let legacyPairing = MgmtDeviceFoundFlags(rawValue: 1 << 1)
    public static let notConnectable = MgmtDeviceFoundFlags(rawValue: 1 << 2)
    public static let initiatedConnection = MgmtDeviceFoundFlags(rawValue: 1 << 3)
    public static let nameRequestFailed = MgmtDeviceFoundFlags(rawValue: 1 << 4)
    /// Set by newer kernels (not 6.1) when the data came from a scan response.
    public static let scanResponse = MgmtDeviceFoundFlags(rawValue: 1 << 5)
}

/// Device Found Event (0x0012): address (6), address type (1), RSSI (1, signed),
/// flags (4), EIR/AD data length (2), data. For LE the data is the advertising
/// data (and scan response), both in AD structure format.
public struct MgmtDeviceFound: Sendable, Hashable {
    public var address: BluetoothAddress
    public var addressType: MgmtAddressType
    public var rssi: Int8
    public var flags: MgmtDeviceFoundFlags
    public var data: [UInt8]

    public init(address: BluetoothAddress, addressType: MgmtAddressType, rssi: Int8,
                flags: MgmtDeviceFoundFlags, data: [UInt8]) {
        self.address = address
        self.addressType = addressType
        self.rssi = rssi
        self.flags = flags
        self.data = data
    }
}

/// Discovering Event (0x0013): address type (1), discovering (1).
public struct MgmtDiscovering: Sendable, Hashable {
    public var type: MgmtDiscoveryType
    public var isDiscovering: Bool
    public init(type: MgmtDiscoveryType, isDiscovering: Bool) { self.type = type; self.isDiscovering = isDiscovering }
}

/// A decoded management event. Events this layer does not use keep their code
/// and raw parameters.
public enum MgmtEvent: Sendable, Hashable {
    case commandComplete(MgmtCommandComplete)
    case commandStatus(MgmtCommandStatus)
    case controllerError(UInt8)
    case indexAdded
    case indexRemoved
    case newSettings(MgmtSettings)
    case deviceFound(MgmtDeviceFound)
    case discovering(MgmtDiscovering)
    case other(MgmtEventCode, [UInt8])

    public var code: MgmtEventCode {
        switch self {
        case .commandComplete: .commandComplete
        case .commandStatus: .commandStatus
        case .controllerError: .controllerError
        case .indexAdded: .indexAdded
        case .indexRemoved: .indexRemoved
        case .newSettings: .newSettings
        case .deviceFound: .deviceFound
        case .discovering: .discovering
        case .other(let code, _): code
        }
    }

    /// Decodes the parameters of an event with this code.
    public init(code: MgmtEventCode, parameters: [UInt8]) throws(DecodeError) {
        var r = ByteReader(parameters, context: "mgmt event 0x" + [UInt8(code.rawValue >> 8), UInt8(truncatingIfNeeded: code.rawValue)].hexString)
        switch code {
        case .commandComplete:
            let opcode = MgmtOpcode(rawValue: try r.uint16("command opcode"))
            let status = MgmtStatus(rawValue: try r.uint8("status"))
            self = .commandComplete(MgmtCommandComplete(opcode: opcode, status: status, returnParameters: r.rest()))
        case .commandStatus:
            let opcode = MgmtOpcode(rawValue: try r.uint16("command opcode"))
            let status = MgmtStatus(rawValue: try r.uint8("status"))
            try r.expectEnd()
            self = .commandStatus(MgmtCommandStatus(opcode: opcode, status: status))
        case .controllerError:
            let e = try r.uint8("error code")
            try r.expectEnd()
            self = .controllerError(e)
        case .indexAdded:
            try r.expectEnd()
            self = .indexAdded
        case .indexRemoved:
            try r.expectEnd()
            self = .indexRemoved
        case .newSettings:
            let s = MgmtSettings(rawValue: try r.uint32("current settings"))
            try r.expectEnd()
            self = .newSettings(s)
        case .deviceFound:
            let address = BluetoothAddress(littleEndian: try r.bytes(6, "address"))!
            let type = MgmtAddressType(rawValue: try r.uint8("address type"))
            let rssi = Int8(bitPattern: try r.uint8("RSSI"))
            let flags = MgmtDeviceFoundFlags(rawValue: try r.uint32("flags"))
            let length = try r.uint16("EIR data length")
            let data = try r.bytes(Int(length), "EIR data")
            try r.expectEnd()
            self = .deviceFound(MgmtDeviceFound(address: address, addressType: type, rssi: rssi, flags: flags, data: data))
        case .discovering:
            let type = MgmtDiscoveryType(rawValue: try r.uint8("address type"))
            let on = try readBoolean(&r, "discovering")
            try r.expectEnd()
            self = .discovering(MgmtDiscovering(type: type, isDiscovering: on))
        default:
            self = .other(code, parameters)
        }
    }

    public var parameters: [UInt8] {
        var w = ByteWriter()
        switch self {
        case .commandComplete(let c):
            w.uint16(c.opcode.rawValue); w.uint8(c.status.rawValue); w.append(c.returnParameters)
        case .commandStatus(let s):
            w.uint16(s.opcode.rawValue); w.uint8(s.status.rawValue)
        case .controllerError(let e):
            w.uint8(e)
        case .indexAdded, .indexRemoved:
            break
        case .newSettings(let s):
            w.uint32(s.rawValue)
        case .deviceFound(let d):
            w.append(d.address.littleEndianBytes)
            w.uint8(d.addressType.rawValue)
            w.uint8(UInt8(bitPattern: d.rssi))
            w.uint32(d.flags.rawValue)
            w.uint16(UInt16(d.data.count))
            w.append(d.data)
        case .discovering(let d):
            w.uint8(d.type.rawValue); w.uint8(d.isDiscovering ? 1 : 0)
        case .other(_, let p):
            w.append(p)
        }
        return w.bytes
    }
}

/// A whole event packet as read from the management socket: header, then the event.
public struct MgmtEventPacket: Sendable, Hashable {
    public var index: MgmtIndex
    public var event: MgmtEvent

    public init(index: MgmtIndex, event: MgmtEvent) { self.index = index; self.event = event }

    public init(decoding bytes: [UInt8]) throws(DecodeError) {
        let (header, parameters) = try decodeMgmtPacket(bytes, context: "mgmt event")
        index = header.index
        event = try MgmtEvent(code: MgmtEventCode(rawValue: header.code), parameters: parameters)
    }

    public var encoded: [UInt8] { encodeMgmtPacket(code: event.code.rawValue, index: index, parameters: event.parameters) }
}

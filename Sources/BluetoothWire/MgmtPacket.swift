// The Linux kernel's Bluetooth Management API (BlueZ doc/mgmt-api.txt):
// commands and events on an HCI_CHANNEL_CONTROL socket. All fields are
// little-endian; every packet starts with a 6-byte header.

/// A controller index in a management packet; `none` (0xFFFF) addresses the
/// management interface itself (mgmt-api.txt, "Packet Structures").
public struct MgmtIndex: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(_ index: UInt16) { rawValue = index }
    public static let none = MgmtIndex(rawValue: 0xFFFF)
    public var description: String { self == .none ? "none" : "hci\(rawValue)" }
}

/// The header before every command and event: opcode or event code,
/// controller index and parameter length (mgmt-api.txt, "Packet Structures").
public struct MgmtHeader: Sendable, Hashable {
    public static let size = 6
    public var code: UInt16
    public var index: MgmtIndex
    public var parameterLength: UInt16

    public init(code: UInt16, index: MgmtIndex, parameterLength: UInt16) {
        self.code = code
        self.index = index
        self.parameterLength = parameterLength
    }

    public init(from reader: inout ByteReader) throws(DecodeError) {
        code = try reader.uint16("code")
        index = MgmtIndex(rawValue: try reader.uint16("controller index"))
        parameterLength = try reader.uint16("parameter length")
    }

    public func encode(into w: inout ByteWriter) {
        w.uint16(code)
        w.uint16(index.rawValue)
        w.uint16(parameterLength)
    }
}

/// Splits a packet into its header and exactly `parameterLength` bytes of parameters.
func decodeMgmtPacket(_ bytes: [UInt8], context: String) throws(DecodeError) -> (MgmtHeader, [UInt8]) {
    var r = ByteReader(bytes, context: context)
    let header = try MgmtHeader(from: &r)
    let parameters = try r.bytes(Int(header.parameterLength), "parameters")
    try r.expectEnd()
    return (header, parameters)
}

func encodeMgmtPacket(code: UInt16, index: MgmtIndex, parameters: [UInt8]) -> [UInt8] {
    var w = ByteWriter(capacity: MgmtHeader.size + parameters.count)
    MgmtHeader(code: code, index: index, parameterLength: UInt16(parameters.count)).encode(into: &w)
    w.append(parameters)
    return w.bytes
}

/// A management command opcode (mgmt-api.txt, "Management Commands").
public struct MgmtOpcode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let readVersion = MgmtOpcode(rawValue: 0x0001)
    public static let readIndexList = MgmtOpcode(rawValue: 0x0003)
    public static let readInfo = MgmtOpcode(rawValue: 0x0004)
    public static let setPowered = MgmtOpcode(rawValue: 0x0005)
    public static let setBondable = MgmtOpcode(rawValue: 0x0009)
    public static let setLowEnergy = MgmtOpcode(rawValue: 0x000D)
    public static let startDiscovery = MgmtOpcode(rawValue: 0x0023)
    public static let stopDiscovery = MgmtOpcode(rawValue: 0x0024)

    public var description: String {
        let name: String? = switch self {
        case .readVersion: "Read Management Version Information"
        case .readIndexList: "Read Controller Index List"
        case .readInfo: "Read Controller Information"
        case .setPowered: "Set Powered"
        case .setBondable: "Set Bondable"
        case .setLowEnergy: "Set Low Energy"
        case .startDiscovery: "Start Discovery"
        case .stopDiscovery: "Stop Discovery"
        default: nil
        }
        let hex = "0x" + [UInt8(rawValue >> 8), UInt8(truncatingIfNeeded: rawValue)].hexString
        return name.map { "\($0) (\(hex))" } ?? "mgmt command \(hex)"
    }
}

/// A management status code (mgmt-api.txt, "Error Codes").
public struct MgmtStatus: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let success = MgmtStatus(rawValue: 0x00)
    public static let unknownCommand = MgmtStatus(rawValue: 0x01)
    public static let notConnected = MgmtStatus(rawValue: 0x02)
    public static let failed = MgmtStatus(rawValue: 0x03)
    public static let connectFailed = MgmtStatus(rawValue: 0x04)
    public static let authenticationFailed = MgmtStatus(rawValue: 0x05)
    public static let notPaired = MgmtStatus(rawValue: 0x06)
    public static let noResources = MgmtStatus(rawValue: 0x07)
    public static let timeout = MgmtStatus(rawValue: 0x08)
    public static let alreadyConnected = MgmtStatus(rawValue: 0x09)
    public static let busy = MgmtStatus(rawValue: 0x0A)
    public static let rejected = MgmtStatus(rawValue: 0x0B)
    public static let notSupported = MgmtStatus(rawValue: 0x0C)
    public static let invalidParameters = MgmtStatus(rawValue: 0x0D)
    public static let disconnected = MgmtStatus(rawValue: 0x0E)
    public static let notPowered = MgmtStatus(rawValue: 0x0F)
    public static let cancelled = MgmtStatus(rawValue: 0x10)
    public static let invalidIndex = MgmtStatus(rawValue: 0x11)
    public static let rfkilled = MgmtStatus(rawValue: 0x12)
    public static let alreadyPaired = MgmtStatus(rawValue: 0x13)
    public static let permissionDenied = MgmtStatus(rawValue: 0x14)

    static let names = ["Success", "Unknown Command", "Not Connected", "Failed", "Connect Failed",
                        "Authentication Failed", "Not Paired", "No Resources", "Timeout",
                        "Already Connected", "Busy", "Rejected", "Not Supported", "Invalid Parameters",
                        "Disconnected", "Not Powered", "Cancelled", "Invalid Index", "RFKilled",
                        "Already Paired", "Permission Denied"]

    public var description: String {
        let hex = "0x" + [rawValue].hexString
        return Int(rawValue) < Self.names.count ? "\(Self.names[Int(rawValue)]) (\(hex))" : "mgmt status \(hex)"
    }
}

/// The discovery address types of Start/Stop Discovery: a bit mask of
/// BR/EDR (bit 0), LE public (bit 1) and LE random (bit 2) (mgmt-api.txt, "Start Discovery Command").
public struct MgmtDiscoveryType: RawRepresentable, Sendable, Hashable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let bredr = MgmtDiscoveryType(rawValue: 0x01)
    /// LE public and random addresses: 0x06.
    public static let le = MgmtDiscoveryType(rawValue: 0x06)
    public static let interleaved = MgmtDiscoveryType(rawValue: 0x07)
}

/// The address type used in mgmt events and commands: 0 BR/EDR, 1 LE public,
/// 2 LE random (mgmt-api.txt, "Pair Device Command").
public struct MgmtAddressType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let bredr = MgmtAddressType(rawValue: 0)
    public static let lePublic = MgmtAddressType(rawValue: 1)
    public static let leRandom = MgmtAddressType(rawValue: 2)

    public init(_ type: AddressType) { self = type.isRandom ? .leRandom : .lePublic }

    /// The HCI LE address type, or nil for BR/EDR and unknown values.
    public var leAddressType: AddressType? {
        switch self {
        case .lePublic: .lePublic
        case .leRandom: .leRandom
        default: nil
        }
    }

    public var description: String {
        switch self {
        case .bredr: "BR/EDR"
        case .lePublic: "LE public"
        case .leRandom: "LE random"
        default: "mgmt address type \(rawValue)"
        }
    }
}

/// A controller's settings bit mask (mgmt-api.txt, "Read Controller Information Command").
public struct MgmtSettings: OptionSet, Sendable, Hashable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let powered = MgmtSettings(rawValue: 1 << 0)
    public static let connectable = MgmtSettings(rawValue: 1 << 1)
    public static let fastConnectable = MgmtSettings(rawValue: 1 << 2)
    public static let discoverable = MgmtSettings(rawValue: 1 << 3)
    public static let bondable = MgmtSettings(rawValue: 1 << 4)
    public static let linkSecurity = MgmtSettings(rawValue: 1 << 5)
    public static let secureSimplePairing = MgmtSettings(rawValue: 1 << 6)
    public static let bredr = MgmtSettings(rawValue: 1 << 7)
    public static let highSpeed = MgmtSettings(rawValue: 1 << 8)
    public static let lowEnergy = MgmtSettings(rawValue: 1 << 9)
    public static let advertising = MgmtSettings(rawValue: 1 << 10)
    public static let secureConnections = MgmtSettings(rawValue: 1 << 11)
    public static let debugKeys = MgmtSettings(rawValue: 1 << 12)
    public static let privacy = MgmtSettings(rawValue: 1 << 13)
}

/// A one-byte boolean of the mgmt and HCI specs: 0x00 or 0x01; anything else is refused.
func readBoolean(_ r: inout ByteReader, _ field: String) throws(DecodeError) -> Bool {
    let at = r.offset
    let v = try r.uint8(field)
    guard v <= 1 else { throw r.error(field, .invalidValue("0x\([v].hexString) is not 0x00 or 0x01"), at: at) }
    return v == 1
}

// HCI commands (Core Spec v5.4, Vol 4, Part E, 5.4.1 and 7.8).

/// HCI packet indicators of the UART transport, which Linux raw HCI sockets
/// also put before each packet (Core Spec Vol 4, Part A, 2).
public struct HCIPacketType: RawRepresentable, Sendable, Hashable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let command = HCIPacketType(rawValue: 0x01)
    public static let aclData = HCIPacketType(rawValue: 0x02)
    public static let event = HCIPacketType(rawValue: 0x04)
}

/// A command opcode: OGF in the upper 6 bits, OCF in the lower 10 (Vol 4, Part E, 5.4.1).
public struct HCIOpcode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(ogf: UInt8, ocf: UInt16) { rawValue = UInt16(ogf & 0x3F) << 10 | (ocf & 0x3FF) }

    public var ogf: UInt8 { UInt8(rawValue >> 10) }
    public var ocf: UInt16 { rawValue & 0x3FF }

    public static let leSetScanParameters = HCIOpcode(ogf: 0x08, ocf: 0x000B)
    public static let leSetScanEnable = HCIOpcode(ogf: 0x08, ocf: 0x000C)
    public static let leSetExtendedScanParameters = HCIOpcode(ogf: 0x08, ocf: 0x0041)
    public static let leSetExtendedScanEnable = HCIOpcode(ogf: 0x08, ocf: 0x0042)

    public var description: String {
        let name: String? = switch self {
        case .leSetScanParameters: "LE Set Scan Parameters"
        case .leSetScanEnable: "LE Set Scan Enable"
        case .leSetExtendedScanParameters: "LE Set Extended Scan Parameters"
        case .leSetExtendedScanEnable: "LE Set Extended Scan Enable"
        default: nil
        }
        let hex = "0x" + [UInt8(rawValue >> 8), UInt8(truncatingIfNeeded: rawValue)].hexString
        return name.map { "\($0) (\(hex))" } ?? "HCI command \(hex)"
    }
}

extension ByteReader {
    /// The H4 packet indicator in front of an HCI packet (Vol 4, Part A, 2).
    mutating func packetIndicator(_ expected: HCIPacketType, _ what: String) throws(DecodeError) {
        let t = try uint8("packet indicator")
        guard t == expected.rawValue else {
            throw error("packet indicator", .invalidValue("0x\([t].hexString) is not \(what)"), at: 0)
        }
    }

    /// The tail HCI command and event packets share: a one-byte parameter
    /// length, then exactly that many parameter bytes (Vol 4, Part E, 5.4).
    mutating func hciParameters() throws(DecodeError) -> [UInt8] {
        let length = try uint8("parameter length")
        let parameters = try bytes(Int(length), "parameters")
        try expectEnd()
        return parameters
    }
}

extension ByteWriter {
    /// The length-prefixed parameters of an HCI command or event packet.
    mutating func hciParameters(_ parameters: [UInt8]) {
        uint8(UInt8(parameters.count))
        append(parameters)
    }
}

/// An HCI command packet: opcode (2), parameter length (1), parameters (Vol 4, Part E, 5.4.1).
public struct HCICommandPacket: Sendable, Hashable {
    public var opcode: HCIOpcode
    public var parameters: [UInt8]

    public init(opcode: HCIOpcode, parameters: [UInt8] = []) {
        precondition(parameters.count <= 255, "HCI command parameters hold at most 255 bytes")
        self.opcode = opcode
        self.parameters = parameters
    }

    /// Decodes a packet with or without the 0x01 packet indicator in front.
    public init(decoding bytes: [UInt8], withIndicator: Bool) throws(DecodeError) {
        var r = ByteReader(bytes, context: "HCI command")
        if withIndicator { try r.packetIndicator(.command, "a command") }
        opcode = HCIOpcode(rawValue: try r.uint16("opcode"))
        parameters = try r.hciParameters()
    }

    public func encoded(withIndicator: Bool) -> [UInt8] {
        var w = ByteWriter(capacity: 4 + parameters.count)
        if withIndicator { w.uint8(HCIPacketType.command.rawValue) }
        w.uint16(opcode.rawValue)
        w.hciParameters(parameters)
        return w.bytes
    }
}

/// LE scan type: passive (0x00) or active with scan requests (0x01).
public struct LEScanType: RawRepresentable, Sendable, Hashable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let passive = LEScanType(rawValue: 0x00)
    public static let active = LEScanType(rawValue: 0x01)
}

/// LE Set Scan Parameters (OGF 0x08, OCF 0x000B; Vol 4, Part E, 7.8.10):
/// scan type (1), interval (2) and window (2) in 0.625 ms units, own address
/// type (1), filter policy (1).
public struct LESetScanParameters: Sendable, Hashable {
    public var scanType: LEScanType
    public var interval: UInt16
    public var window: UInt16
    public var ownAddressType: AddressType
    public var filterPolicy: UInt8

    /// Defaults: 10 ms interval and window (0x0010), i.e. scanning all the time.
    public init(scanType: LEScanType, interval: UInt16 = 0x0010, window: UInt16 = 0x0010,
                ownAddressType: AddressType = .lePublic, filterPolicy: UInt8 = 0) {
        self.scanType = scanType
        self.interval = interval
        self.window = window
        self.ownAddressType = ownAddressType
        self.filterPolicy = filterPolicy
    }

    public init(decoding parameters: [UInt8]) throws(DecodeError) {
        var r = ByteReader(parameters, context: "LE Set Scan Parameters")
        scanType = LEScanType(rawValue: try r.uint8("LE_Scan_Type"))
        interval = try r.uint16("LE_Scan_Interval")
        window = try r.uint16("LE_Scan_Window")
        ownAddressType = AddressType(rawValue: try r.uint8("Own_Address_Type"))
        filterPolicy = try r.uint8("Scanning_Filter_Policy")
        try r.expectEnd()
    }

    public var command: HCICommandPacket {
        var w = ByteWriter(capacity: 7)
        w.uint8(scanType.rawValue); w.uint16(interval); w.uint16(window)
        w.uint8(ownAddressType.rawValue); w.uint8(filterPolicy)
        return HCICommandPacket(opcode: .leSetScanParameters, parameters: w.bytes)
    }
}

/// LE Set Scan Enable (OGF 0x08, OCF 0x000C; Vol 4, Part E, 7.8.11):
/// enable (1), filter duplicates (1).
public struct LESetScanEnable: Sendable, Hashable {
    public var enable: Bool
    public var filterDuplicates: Bool
    public init(enable: Bool, filterDuplicates: Bool) { self.enable = enable; self.filterDuplicates = filterDuplicates }

    public init(decoding parameters: [UInt8]) throws(DecodeError) {
        var r = ByteReader(parameters, context: "LE Set Scan Enable")
        enable = try readBoolean(&r, "LE_Scan_Enable")
        filterDuplicates = try readBoolean(&r, "Filter_Duplicates")
        try r.expectEnd()
    }

    public var command: HCICommandPacket {
        HCICommandPacket(opcode: .leSetScanEnable, parameters: [enable ? 1 : 0, filterDuplicates ? 1 : 0])
    }
}

/// LE Set Extended Scan Parameters (OGF 0x08, OCF 0x0041; Vol 4, Part E, 7.8.64):
/// own address type (1), filter policy (1), scanning PHYs (1), then per PHY bit
/// set: scan type (1), interval (2), window (2).
public struct LESetExtendedScanParameters: Sendable, Hashable {
    public struct PHYParameters: Sendable, Hashable {
        public var scanType: LEScanType
        public var interval: UInt16
        public var window: UInt16
        public init(scanType: LEScanType, interval: UInt16 = 0x0010, window: UInt16 = 0x0010) {
            self.scanType = scanType; self.interval = interval; self.window = window
        }
    }

    public var ownAddressType: AddressType
    public var filterPolicy: UInt8
    /// Bit 0: LE 1M, bit 2: LE Coded; one `phys` entry per bit set, in bit order.
    public var scanningPHYs: UInt8
    public var phys: [PHYParameters]

    /// Scanning on LE 1M only.
    public init(ownAddressType: AddressType = .lePublic, filterPolicy: UInt8 = 0, le1M: PHYParameters) {
        self.ownAddressType = ownAddressType
        self.filterPolicy = filterPolicy
        scanningPHYs = 0x01
        phys = [le1M]
    }

    public init(decoding parameters: [UInt8]) throws(DecodeError) {
        var r = ByteReader(parameters, context: "LE Set Extended Scan Parameters")
        ownAddressType = AddressType(rawValue: try r.uint8("Own_Address_Type"))
        filterPolicy = try r.uint8("Scanning_Filter_Policy")
        scanningPHYs = try r.uint8("Scanning_PHYs")
        phys = []
        for _ in 0..<scanningPHYs.nonzeroBitCount {
            let type = LEScanType(rawValue: try r.uint8("Scan_Type"))
            let interval = try r.uint16("Scan_Interval")
            let window = try r.uint16("Scan_Window")
            phys.append(PHYParameters(scanType: type, interval: interval, window: window))
        }
        try r.expectEnd()
    }

    public var command: HCICommandPacket {
        var w = ByteWriter(capacity: 8)
        w.uint8(ownAddressType.rawValue); w.uint8(filterPolicy); w.uint8(scanningPHYs)
        for p in phys { w.uint8(p.scanType.rawValue); w.uint16(p.interval); w.uint16(p.window) }
        return HCICommandPacket(opcode: .leSetExtendedScanParameters, parameters: w.bytes)
    }
}

/// LE Set Extended Scan Enable (OGF 0x08, OCF 0x0042; Vol 4, Part E, 7.8.65):
/// enable (1), filter duplicates (1), duration (2, 10 ms units, 0 = until
/// disabled), period (2, 1.28 s units, 0 = continuous).
public struct LESetExtendedScanEnable: Sendable, Hashable {
    public var enable: Bool
    public var filterDuplicates: UInt8
    public var duration: UInt16
    public var period: UInt16

    public init(enable: Bool, filterDuplicates: Bool, duration: UInt16 = 0, period: UInt16 = 0) {
        self.enable = enable
        self.filterDuplicates = filterDuplicates ? 1 : 0
        self.duration = duration
        self.period = period
    }

    public init(decoding parameters: [UInt8]) throws(DecodeError) {
        var r = ByteReader(parameters, context: "LE Set Extended Scan Enable")
        enable = try readBoolean(&r, "Enable")
        filterDuplicates = try r.uint8("Filter_Duplicates")
        duration = try r.uint16("Duration")
        period = try r.uint16("Period")
        try r.expectEnd()
    }

    public var command: HCICommandPacket {
        var w = ByteWriter(capacity: 6)
        w.uint8(enable ? 1 : 0); w.uint8(filterDuplicates); w.uint16(duration); w.uint16(period)
        return HCICommandPacket(opcode: .leSetExtendedScanEnable, parameters: w.bytes)
    }
}

// HCI events (Core Spec v5.4, Vol 4, Part E, 5.4.4 and 7.7).

/// An HCI event code (Vol 4, Part E, 7.7).
public struct HCIEventCode: RawRepresentable, Sendable, Hashable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let disconnectionComplete = HCIEventCode(rawValue: 0x05)
    public static let commandComplete = HCIEventCode(rawValue: 0x0E)
    public static let commandStatus = HCIEventCode(rawValue: 0x0F)
    public static let leMeta = HCIEventCode(rawValue: 0x3E)
}

/// An HCI status or error code (Vol 1, Part F).
public struct HCIStatus: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let success = HCIStatus(rawValue: 0x00)
    public static let unknownCommand = HCIStatus(rawValue: 0x01)
    public static let connectionTimeout = HCIStatus(rawValue: 0x08)
    /// Returned to scan commands while another client (or the kernel) is scanning.
    public static let commandDisallowed = HCIStatus(rawValue: 0x0C)
    public static let invalidParameters = HCIStatus(rawValue: 0x12)
    public static let remoteUserTerminated = HCIStatus(rawValue: 0x13)
    public static let localHostTerminated = HCIStatus(rawValue: 0x16)

    public var description: String {
        let name: String? = switch self {
        case .success: "Success"
        case .unknownCommand: "Unknown HCI Command"
        case .connectionTimeout: "Connection Timeout"
        case .commandDisallowed: "Command Disallowed"
        case .invalidParameters: "Invalid HCI Command Parameters"
        case .remoteUserTerminated: "Remote User Terminated Connection"
        case .localHostTerminated: "Connection Terminated By Local Host"
        default: nil
        }
        let hex = "0x" + [rawValue].hexString
        return name.map { "\($0) (\(hex))" } ?? "HCI status \(hex)"
    }
}

/// An HCI event packet: event code (1), parameter length (1), parameters (Vol 4, Part E, 5.4.4).
public struct HCIEventPacket: Sendable, Hashable {
    public var code: HCIEventCode
    public var parameters: [UInt8]

    public init(code: HCIEventCode, parameters: [UInt8]) {
        precondition(parameters.count <= 255, "HCI event parameters hold at most 255 bytes")
        self.code = code
        self.parameters = parameters
    }

    /// Decodes a packet with or without the 0x04 packet indicator (raw HCI sockets include it).
    public init(decoding bytes: [UInt8], withIndicator: Bool) throws(DecodeError) {
        var r = ByteReader(bytes, context: "HCI event")
        if withIndicator { try r.packetIndicator(.event, "an event") }
        code = HCIEventCode(rawValue: try r.uint8("event code"))
        parameters = try r.hciParameters()
    }

    public func encoded(withIndicator: Bool) -> [UInt8] {
        var w = ByteWriter(capacity: 3 + parameters.count)
        if withIndicator { w.uint8(HCIPacketType.event.rawValue) }
        w.uint8(code.rawValue)
        w.hciParameters(parameters)
        return w.bytes
    }
}

/// Command Complete (0x0E; Vol 4, Part E, 7.7.14): Num_HCI_Command_Packets (1),
/// Command_Opcode (2), return parameters (most start with a status byte).
public struct HCICommandComplete: Sendable, Hashable {
    public var numCommandPackets: UInt8
    public var opcode: HCIOpcode
    public var returnParameters: [UInt8]

    public init(numCommandPackets: UInt8 = 1, opcode: HCIOpcode, returnParameters: [UInt8]) {
        self.numCommandPackets = numCommandPackets
        self.opcode = opcode
        self.returnParameters = returnParameters
    }

    public init(decoding parameters: [UInt8]) throws(DecodeError) {
        var r = ByteReader(parameters, context: "HCI Command Complete")
        numCommandPackets = try r.uint8("Num_HCI_Command_Packets")
        opcode = HCIOpcode(rawValue: try r.uint16("Command_Opcode"))
        returnParameters = r.rest()
    }

    /// The leading status byte of the return parameters, when there is one.
    public var status: HCIStatus? { returnParameters.first.map { HCIStatus(rawValue: $0) } }

    public var event: HCIEventPacket {
        var w = ByteWriter()
        w.uint8(numCommandPackets); w.uint16(opcode.rawValue); w.append(returnParameters)
        return HCIEventPacket(code: .commandComplete, parameters: w.bytes)
    }
}

/// Command Status (0x0F; Vol 4, Part E, 7.7.15): Status (1), Num_HCI_Command_Packets (1), Command_Opcode (2).
public struct HCICommandStatus: Sendable, Hashable {
    public var status: HCIStatus
    public var numCommandPackets: UInt8
    public var opcode: HCIOpcode

    public init(status: HCIStatus, numCommandPackets: UInt8 = 1, opcode: HCIOpcode) {
        self.status = status
        self.numCommandPackets = numCommandPackets
        self.opcode = opcode
    }

    public init(decoding parameters: [UInt8]) throws(DecodeError) {
        var r = ByteReader(parameters, context: "HCI Command Status")
        status = HCIStatus(rawValue: try r.uint8("Status"))
        numCommandPackets = try r.uint8("Num_HCI_Command_Packets")
        opcode = HCIOpcode(rawValue: try r.uint16("Command_Opcode"))
        try r.expectEnd()
    }

    public var event: HCIEventPacket {
        var w = ByteWriter(capacity: 4)
        w.uint8(status.rawValue); w.uint8(numCommandPackets); w.uint16(opcode.rawValue)
        return HCIEventPacket(code: .commandStatus, parameters: w.bytes)
    }
}

/// Disconnection Complete (0x05; Vol 4, Part E, 7.7.5): Status (1), Connection_Handle (2), Reason (1).
public struct HCIDisconnectionComplete: Sendable, Hashable {
    public var status: HCIStatus
    public var connectionHandle: UInt16
    public var reason: HCIStatus

    public init(status: HCIStatus, connectionHandle: UInt16, reason: HCIStatus) {
        self.status = status
        self.connectionHandle = connectionHandle
        self.reason = reason
    }

    public init(decoding parameters: [UInt8]) throws(DecodeError) {
        var r = ByteReader(parameters, context: "HCI Disconnection Complete")
        status = HCIStatus(rawValue: try r.uint8("Status"))
        let at = r.offset
        connectionHandle = try r.uint16("Connection_Handle")
        guard connectionHandle <= 0x0EFF else {
            throw r.error("Connection_Handle", .invalidValue("0x\([UInt8(connectionHandle >> 8), UInt8(truncatingIfNeeded: connectionHandle)].hexString) is above 0x0EFF"), at: at)
        }
        reason = HCIStatus(rawValue: try r.uint8("Reason"))
        try r.expectEnd()
    }

    public var event: HCIEventPacket {
        var w = ByteWriter(capacity: 4)
        w.uint8(status.rawValue); w.uint16(connectionHandle); w.uint8(reason.rawValue)
        return HCIEventPacket(code: .disconnectionComplete, parameters: w.bytes)
    }
}

/// LE Meta subevent codes (Vol 4, Part E, 7.7.65).
public struct HCILESubevent: RawRepresentable, Sendable, Hashable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let advertisingReport = HCILESubevent(rawValue: 0x02)
    public static let extendedAdvertisingReport = HCILESubevent(rawValue: 0x0D)
}

/// Legacy advertising PDU types in an LE Advertising Report (Vol 4, Part E, 7.7.65.2).
public struct LEAdvertisingEventType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let advInd = LEAdvertisingEventType(rawValue: 0x00)
    public static let advDirectInd = LEAdvertisingEventType(rawValue: 0x01)
    public static let advScanInd = LEAdvertisingEventType(rawValue: 0x02)
    public static let advNonconnInd = LEAdvertisingEventType(rawValue: 0x03)
    public static let scanResponse = LEAdvertisingEventType(rawValue: 0x04)

    public var isConnectable: Bool { self == .advInd || self == .advDirectInd }

    public var description: String {
        switch self {
        case .advInd: "ADV_IND"
        case .advDirectInd: "ADV_DIRECT_IND"
        case .advScanInd: "ADV_SCAN_IND"
        case .advNonconnInd: "ADV_NONCONN_IND"
        case .scanResponse: "SCAN_RSP"
        default: "event type 0x\([rawValue].hexString)"
        }
    }
}

/// LE Advertising Report (LE Meta subevent 0x02; Vol 4, Part E, 7.7.65.2):
/// Num_Reports (1), then per report Event_Type (1), Address_Type (1),
/// Address (6), Data_Length (1), Data, RSSI (1, signed; 127 = not available).
/// Reports are laid out one after another, as the Linux kernel parses them
/// (net/bluetooth/hci_event.c, hci_le_adv_report_evt).
public struct HCILEAdvertisingReport: Sendable, Hashable {
    public struct Report: Sendable, Hashable {
        public var eventType: LEAdvertisingEventType
        public var addressType: AddressType
        public var address: BluetoothAddress
        public var data: [UInt8]
        public var rssi: Int8

        public init(eventType: LEAdvertisingEventType, addressType: AddressType, address: BluetoothAddress,
                    data: [UInt8], rssi: Int8) {
            self.eventType = eventType
            self.addressType = addressType
            self.address = address
            self.data = data
            self.rssi = rssi
        }
    }

    public var reports: [Report]
    public init(reports: [Report]) { self.reports = reports }

    /// Decodes the subevent's parameters after the subevent code.
    public init(decoding parameters: [UInt8]) throws(DecodeError) {
        var r = ByteReader(parameters, context: "LE Advertising Report")
        let count = try r.uint8("Num_Reports")
        reports = []
        for i in 0..<Int(count) {
            let type = LEAdvertisingEventType(rawValue: try r.uint8("Event_Type[\(i)]"))
            let addressType = AddressType(rawValue: try r.uint8("Address_Type[\(i)]"))
            let address = BluetoothAddress(littleEndian: try r.bytes(6, "Address[\(i)]"))!
            let length = try r.uint8("Data_Length[\(i)]")
            guard length <= 31 else {
                throw r.error("Data_Length[\(i)]", .invalidValue("\(length) exceeds 31 bytes"), at: r.offset - 1)
            }
            let data = try r.bytes(Int(length), "Data[\(i)]")
            let rssi = Int8(bitPattern: try r.uint8("RSSI[\(i)]"))
            reports.append(Report(eventType: type, addressType: addressType, address: address, data: data, rssi: rssi))
        }
        try r.expectEnd()
    }

    public var parameters: [UInt8] {
        var w = ByteWriter()
        w.uint8(UInt8(reports.count))
        for rep in reports {
            w.uint8(rep.eventType.rawValue); w.uint8(rep.addressType.rawValue)
            w.append(rep.address.littleEndianBytes)
            w.uint8(UInt8(rep.data.count)); w.append(rep.data)
            w.uint8(UInt8(bitPattern: rep.rssi))
        }
        return w.bytes
    }
}

/// Event_Type bits of an LE Extended Advertising Report (Vol 4, Part E, 7.7.65.13).
public struct LEExtendedAdvertisingEventType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public static let connectable: UInt16 = 1 << 0
    public static let scannable: UInt16 = 1 << 1
    public static let directed: UInt16 = 1 << 2
    public static let scanResponse: UInt16 = 1 << 3
    public static let legacy: UInt16 = 1 << 4

    public var isConnectable: Bool { rawValue & Self.connectable != 0 }
    public var isScannable: Bool { rawValue & Self.scannable != 0 }
    public var isDirected: Bool { rawValue & Self.directed != 0 }
    public var isScanResponse: Bool { rawValue & Self.scanResponse != 0 }
    /// The report is of a legacy advertising PDU.
    public var isLegacy: Bool { rawValue & Self.legacy != 0 }
    /// Bits 5-6: 0 complete, 1 incomplete with more to come, 2 incomplete and truncated.
    public var dataStatus: UInt8 { UInt8((rawValue >> 5) & 0x3) }

    public var description: String {
        var parts: [String] = []
        if isConnectable { parts.append("connectable") }
        if isScannable { parts.append("scannable") }
        if isDirected { parts.append("directed") }
        if isScanResponse { parts.append("scan response") }
        if isLegacy { parts.append("legacy") }
        if dataStatus != 0 { parts.append(dataStatus == 1 ? "incomplete" : "truncated") }
        return "0x" + [UInt8(rawValue >> 8), UInt8(truncatingIfNeeded: rawValue)].hexString + (parts.isEmpty ? "" : " (" + parts.joined(separator: ", ") + ")")
    }
}

/// LE Extended Advertising Report (LE Meta subevent 0x0D; Vol 4, Part E,
/// 7.7.65.13): Num_Reports (1), then per report Event_Type (2), Address_Type (1),
/// Address (6), Primary_PHY (1), Secondary_PHY (1), Advertising_SID (1),
/// TX_Power (1), RSSI (1), Periodic_Advertising_Interval (2),
/// Direct_Address_Type (1), Direct_Address (6), Data_Length (1), Data — the
/// data at offset 24 of each report.
public struct HCILEExtendedAdvertisingReport: Sendable, Hashable {
    public struct Report: Sendable, Hashable {
        public var eventType: LEExtendedAdvertisingEventType
        /// 0x00 public, 0x01 random, 0x02/0x03 resolved identity, 0xFF anonymous.
        public var addressType: AddressType
        public var address: BluetoothAddress
        public var primaryPHY: UInt8
        public var secondaryPHY: UInt8
        public var advertisingSID: UInt8
        /// 127 = not available.
        public var txPower: Int8
        /// 127 = not available.
        public var rssi: Int8
        public var periodicAdvertisingInterval: UInt16
        public var directAddressType: AddressType
        public var directAddress: BluetoothAddress
        public var data: [UInt8]

        public init(eventType: LEExtendedAdvertisingEventType, addressType: AddressType, address: BluetoothAddress,
                    primaryPHY: UInt8 = 1, secondaryPHY: UInt8 = 0, advertisingSID: UInt8 = 0xFF,
                    txPower: Int8 = 127, rssi: Int8, periodicAdvertisingInterval: UInt16 = 0,
                    directAddressType: AddressType = .lePublic,
                    directAddress: BluetoothAddress = BluetoothAddress(bytes: [0, 0, 0, 0, 0, 0])!,
                    data: [UInt8]) {
            self.eventType = eventType
            self.addressType = addressType
            self.address = address
            self.primaryPHY = primaryPHY
            self.secondaryPHY = secondaryPHY
            self.advertisingSID = advertisingSID
            self.txPower = txPower
            self.rssi = rssi
            self.periodicAdvertisingInterval = periodicAdvertisingInterval
            self.directAddressType = directAddressType
            self.directAddress = directAddress
            self.data = data
        }
    }

    public var reports: [Report]
    public init(reports: [Report]) { self.reports = reports }

    /// Decodes the subevent's parameters after the subevent code.
    public init(decoding parameters: [UInt8]) throws(DecodeError) {
        var r = ByteReader(parameters, context: "LE Extended Advertising Report")
        let count = try r.uint8("Num_Reports")
        reports = []
        for i in 0..<Int(count) {
            let type = LEExtendedAdvertisingEventType(rawValue: try r.uint16("Event_Type[\(i)]"))
            let addressType = AddressType(rawValue: try r.uint8("Address_Type[\(i)]"))
            let address = BluetoothAddress(littleEndian: try r.bytes(6, "Address[\(i)]"))!
            let primary = try r.uint8("Primary_PHY[\(i)]")
            let secondary = try r.uint8("Secondary_PHY[\(i)]")
            let sid = try r.uint8("Advertising_SID[\(i)]")
            let tx = Int8(bitPattern: try r.uint8("TX_Power[\(i)]"))
            let rssi = Int8(bitPattern: try r.uint8("RSSI[\(i)]"))
            let interval = try r.uint16("Periodic_Advertising_Interval[\(i)]")
            let directType = AddressType(rawValue: try r.uint8("Direct_Address_Type[\(i)]"))
            let direct = BluetoothAddress(littleEndian: try r.bytes(6, "Direct_Address[\(i)]"))!
            let length = try r.uint8("Data_Length[\(i)]")
            let data = try r.bytes(Int(length), "Data[\(i)]")
            reports.append(Report(eventType: type, addressType: addressType, address: address,
                                  primaryPHY: primary, secondaryPHY: secondary, advertisingSID: sid,
                                  txPower: tx, rssi: rssi, periodicAdvertisingInterval: interval,
                                  directAddressType: directType, directAddress: direct, data: data))
        }
        try r.expectEnd()
    }

    public var parameters: [UInt8] {
        var w = ByteWriter()
        w.uint8(UInt8(reports.count))
        for rep in reports {
            w.uint16(rep.eventType.rawValue); w.uint8(rep.addressType.rawValue)
            w.append(rep.address.littleEndianBytes)
            w.uint8(rep.primaryPHY); w.uint8(rep.secondaryPHY); w.uint8(rep.advertisingSID)
            w.uint8(UInt8(bitPattern: rep.txPower)); w.uint8(UInt8(bitPattern: rep.rssi))
            w.uint16(rep.periodicAdvertisingInterval)
            w.uint8(rep.directAddressType.rawValue); w.append(rep.directAddress.littleEndianBytes)
            w.uint8(UInt8(rep.data.count)); w.append(rep.data)
        }
        return w.bytes
    }
}

/// The HCI events this layer uses, decoded; others keep code and parameters.
public enum HCIEvent: Sendable, Hashable {
    case commandComplete(HCICommandComplete)
    case commandStatus(HCICommandStatus)
    case disconnectionComplete(HCIDisconnectionComplete)
    case leAdvertisingReport(HCILEAdvertisingReport)
    case leExtendedAdvertisingReport(HCILEExtendedAdvertisingReport)
    /// An LE Meta event with another subevent.
    case leMeta(HCILESubevent, [UInt8])
    case other(HCIEventCode, [UInt8])

    public init(_ packet: HCIEventPacket) throws(DecodeError) {
        switch packet.code {
        case .commandComplete: self = .commandComplete(try HCICommandComplete(decoding: packet.parameters))
        case .commandStatus: self = .commandStatus(try HCICommandStatus(decoding: packet.parameters))
        case .disconnectionComplete: self = .disconnectionComplete(try HCIDisconnectionComplete(decoding: packet.parameters))
        case .leMeta:
            guard let sub = packet.parameters.first else {
                throw DecodeError(context: "HCI LE Meta event", field: "Subevent_Code", offset: 0,
                                  reason: .truncated(needed: 1, available: 0))
            }
            let rest = Array(packet.parameters.dropFirst())
            switch HCILESubevent(rawValue: sub) {
            case .advertisingReport: self = .leAdvertisingReport(try HCILEAdvertisingReport(decoding: rest))
            case .extendedAdvertisingReport: self = .leExtendedAdvertisingReport(try HCILEExtendedAdvertisingReport(decoding: rest))
            default: self = .leMeta(HCILESubevent(rawValue: sub), rest)
            }
        default: self = .other(packet.code, packet.parameters)
        }
    }

    /// Decodes a whole packet as read from a raw HCI socket (with the 0x04 indicator).
    public init(decoding bytes: [UInt8], withIndicator: Bool) throws(DecodeError) {
        try self.init(HCIEventPacket(decoding: bytes, withIndicator: withIndicator))
    }

    public var packet: HCIEventPacket {
        switch self {
        case .commandComplete(let e): e.event
        case .commandStatus(let e): e.event
        case .disconnectionComplete(let e): e.event
        case .leAdvertisingReport(let e): HCIEventPacket(code: .leMeta, parameters: [HCILESubevent.advertisingReport.rawValue] + e.parameters)
        case .leExtendedAdvertisingReport(let e): HCIEventPacket(code: .leMeta, parameters: [HCILESubevent.extendedAdvertisingReport.rawValue] + e.parameters)
        case .leMeta(let sub, let p): HCIEventPacket(code: .leMeta, parameters: [sub.rawValue] + p)
        case .other(let code, let p): HCIEventPacket(code: code, parameters: p)
        }
    }
}

/// Linux monitor channel opcodes, the low 16 bits of a 2001 record's flags
/// (BlueZ `src/shared/btsnoop.h`, BTSNOOP_OPCODE_*).
public struct BTSnoopMonitorOpcode: RawRepresentable, Sendable, Hashable {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let newIndex = BTSnoopMonitorOpcode(rawValue: 0)
    public static let deleteIndex = BTSnoopMonitorOpcode(rawValue: 1)
    public static let commandPacket = BTSnoopMonitorOpcode(rawValue: 2)
    public static let eventPacket = BTSnoopMonitorOpcode(rawValue: 3)
    public static let aclTxPacket = BTSnoopMonitorOpcode(rawValue: 4)
    public static let aclRxPacket = BTSnoopMonitorOpcode(rawValue: 5)
    public static let scoTxPacket = BTSnoopMonitorOpcode(rawValue: 6)
    public static let scoRxPacket = BTSnoopMonitorOpcode(rawValue: 7)
    public static let openIndex = BTSnoopMonitorOpcode(rawValue: 8)
    public static let closeIndex = BTSnoopMonitorOpcode(rawValue: 9)
    public static let indexInfo = BTSnoopMonitorOpcode(rawValue: 10)
    public static let vendorDiagnostic = BTSnoopMonitorOpcode(rawValue: 11)
    public static let systemNote = BTSnoopMonitorOpcode(rawValue: 12)
    public static let userLogging = BTSnoopMonitorOpcode(rawValue: 13)
    public static let isoTxPacket = BTSnoopMonitorOpcode(rawValue: 18)
    public static let isoRxPacket = BTSnoopMonitorOpcode(rawValue: 19)
}

/// An LE advertising report found in a capture: HCI LE Advertising Report
/// (Vol 4, Part E, 7.7.65.2) or LE Extended Advertising Report (7.7.65.13).
public struct SnoopAdvertisement: Sendable, Hashable {
    public var address: BluetoothAddress
    public var addressType: AddressType
    /// Legacy: 0x00 ADV_IND … 0x04 SCAN_RSP; extended: the 2-byte event type bit field.
    public var eventType: UInt16
    public var isExtended: Bool
    /// dBm; 127 means "not available".
    public var rssi: Int8
    /// The AD structures, undecoded (see `AdvertisingData(decoding:)`).
    public var data: [UInt8]

    public init(address: BluetoothAddress, addressType: AddressType, eventType: UInt16, isExtended: Bool, rssi: Int8, data: [UInt8]) {
        self.address = address
        self.addressType = addressType
        self.eventType = eventType
        self.isExtended = isExtended
        self.rssi = rssi
        self.data = data
    }
}

/// An ATT Handle Value Notification (Vol 3, Part F, 3.4.7.1), Indication
/// (3.4.7.2) or one value of a Multiple Handle Value Notification (3.4.7.4)
/// received from a peer.
public struct SnoopATTValue: Sendable, Hashable {
    /// The peer, when the capture holds its LE (Enhanced) Connection Complete event.
    public var peer: BluetoothAddress?
    public var peerType: AddressType?
    public var connectionHandle: UInt16
    public var attributeHandle: UInt16
    /// The characteristic's UUID, when the capture holds its discovery
    /// (Read By Type for the characteristic declaration 0x2803).
    public var characteristic: BluetoothUUID?
    public var value: [UInt8]
    public var isIndication: Bool

    public init(peer: BluetoothAddress?, peerType: AddressType?, connectionHandle: UInt16, attributeHandle: UInt16,
                characteristic: BluetoothUUID?, value: [UInt8], isIndication: Bool) {
        self.peer = peer
        self.peerType = peerType
        self.connectionHandle = connectionHandle
        self.attributeHandle = attributeHandle
        self.characteristic = characteristic
        self.value = value
        self.isIndication = isIndication
    }
}

/// What a capture says about sensors: an advertisement or an ATT value, with its time.
public struct SnoopRecord: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        case advertisement(SnoopAdvertisement)
        case attValue(SnoopATTValue)
    }

    /// Seconds since the Unix epoch (the btsnoop timestamp).
    public var time: Double
    /// Controller index (monitor captures; 0 for H1/H4).
    public var controllerIndex: UInt16
    public var kind: Kind

    public init(time: Double, controllerIndex: UInt16, kind: Kind) {
        self.time = time
        self.controllerIndex = controllerIndex
        self.kind = kind
    }
}

/// Turns btsnoop records into `SnoopRecord`s: classifies each packet for the
/// datalink (H1, H4 or monitor), follows LE connections to map connection
/// handles to peers, reassembles fragmented ACL data (the emulated controller's
/// LE buffer is 27 bytes) and picks ATT values out of L2CAP CID 0x0004.
/// State is bounded: one partial PDU per connection and direction.
public struct BTSnoopExtractor: Sendable {
    public let datalink: BTSnoopDatalink

    private struct Peer: Sendable { var address: BluetoothAddress; var type: AddressType }
    private struct LinkKey: Hashable, Sendable { var index: UInt16; var handle: UInt16 }
    private struct FragmentKey: Hashable, Sendable { var link: LinkKey; var received: Bool }

    private var peers: [LinkKey: Peer] = [:]
    private var fragments: [FragmentKey: [UInt8]] = [:]
    /// Attribute type of the last Read By Type Request we sent on a link.
    private var pendingReadByType: [LinkKey: BluetoothUUID] = [:]
    private var characteristics: [LinkKey: [UInt16: BluetoothUUID]] = [:]

    private static let characteristicDeclaration = BluetoothUUID(uuid16: 0x2803)
    private static let attCID: UInt16 = 0x0004

    /// Fails for datalinks that carry no HCI packets it can classify.
    public init(datalink: BTSnoopDatalink) throws(DecodeError) {
        guard datalink == .h1 || datalink == .h4 || datalink == .monitor else {
            throw DecodeError(context: "btsnoop file header", field: "datalink type", offset: 12,
                              reason: .invalidValue("\(datalink) is not supported (H1 1001, H4 1002 or monitor 2001)"))
        }
        self.datalink = datalink
    }

    private enum Packet {
        case event([UInt8])
        case acl([UInt8], received: Bool)
        case indexReset
        case ignored
    }

    /// Appends what `record` holds to `out`. Errors name the file offset.
    public mutating func process(_ record: BTSnoopRecord, into out: inout [SnoopRecord]) throws(DecodeError) {
        // A record cut short by the capture cannot be parsed; skip it.
        guard record.originalLength == record.data.count else { return }
        let context = "btsnoop record \(record.number)"
        var index: UInt16 = 0
        let packet: Packet
        var base = record.dataOffset
        switch datalink {
        case .monitor:
            index = UInt16(record.flags >> 16)
            switch BTSnoopMonitorOpcode(rawValue: UInt16(truncatingIfNeeded: record.flags)) {
            case .eventPacket: packet = .event(record.data)
            case .aclTxPacket: packet = .acl(record.data, received: false)
            case .aclRxPacket: packet = .acl(record.data, received: true)
            case .newIndex, .deleteIndex: packet = .indexReset
            default: packet = .ignored
            }
        case .h4:
            guard let type = record.data.first else {
                throw DecodeError(context: context, field: "H4 packet type", offset: base, reason: .truncated(needed: 1, available: 0))
            }
            let body = Array(record.data.dropFirst())
            base += 1
            switch type {
            case 0x04: packet = .event(body)
            case 0x02: packet = .acl(body, received: record.flags & 1 == 1)
            default: packet = .ignored
            }
        default: // .h1: flags bit 1 = command/event, bit 0 = received
            let received = record.flags & 1 == 1
            if record.flags & 2 != 0 {
                packet = received ? .event(record.data) : .ignored
            } else {
                packet = .acl(record.data, received: received)
            }
        }
        let time = record.unixTime
        switch packet {
        case .ignored:
            return
        case .indexReset:
            reset(index: index)
        case .event(let bytes):
            try btsnoopRebasing(by: base) { () throws(DecodeError) in
                try event(bytes, index: index, time: time, context: context, into: &out)
            }
        case .acl(let bytes, let received):
            try btsnoopRebasing(by: base) { () throws(DecodeError) in
                try acl(bytes, index: index, received: received, time: time, context: context, into: &out)
            }
        }
    }

    private mutating func reset(index: UInt16) {
        peers = peers.filter { $0.key.index != index }
        fragments = fragments.filter { $0.key.link.index != index }
        pendingReadByType = pendingReadByType.filter { $0.key.index != index }
        characteristics = characteristics.filter { $0.key.index != index }
    }

    private mutating func forget(_ link: LinkKey) {
        peers[link] = nil
        fragments[FragmentKey(link: link, received: true)] = nil
        fragments[FragmentKey(link: link, received: false)] = nil
        pendingReadByType[link] = nil
        characteristics[link] = nil
    }

    // MARK: HCI events (Vol 4, Part E, 5.4.4 and 7.7)

    private mutating func event(_ bytes: [UInt8], index: UInt16, time: Double, context: String,
                                into out: inout [SnoopRecord]) throws(DecodeError) {
        var r = ByteReader(bytes, context: "\(context) HCI event")
        let code = try r.uint8("event code")
        let length = Int(try r.uint8("parameter total length"))
        guard length == r.remaining else {
            throw r.error("parameter total length", .invalidValue("says \(length), packet holds \(r.remaining)"), at: 1)
        }
        switch code {
        case 0x05: // Disconnection Complete
            let status = try r.uint8("status")
            let handle = try r.uint16("connection handle") & 0x0FFF
            if status == 0 { forget(LinkKey(index: index, handle: handle)) }
        case 0x3E: // LE Meta
            let sub = try r.uint8("LE subevent code")
            switch sub {
            case 0x01, 0x0A: // LE (Enhanced) Connection Complete: status, handle, role, peer type, peer
                let status = try r.uint8("status")
                let handle = try r.uint16("connection handle") & 0x0FFF
                _ = try r.uint8("role")
                let type = AddressType(rawValue: try r.uint8("peer address type"))
                let address = BluetoothAddress(littleEndian: try r.bytes(6, "peer address"))!
                if status == 0 {
                    let link = LinkKey(index: index, handle: handle)
                    forget(link)
                    peers[link] = Peer(address: address, type: type)
                }
            case 0x02: // LE Advertising Report
                let count = try r.uint8("number of reports")
                for i in 0..<Int(count) {
                    let eventType = try r.uint8("report \(i) event type")
                    let type = AddressType(rawValue: try r.uint8("report \(i) address type"))
                    let address = BluetoothAddress(littleEndian: try r.bytes(6, "report \(i) address"))!
                    let dataLength = Int(try r.uint8("report \(i) data length"))
                    let data = try r.bytes(dataLength, "report \(i) data")
                    let rssi = Int8(bitPattern: try r.uint8("report \(i) RSSI"))
                    out.append(SnoopRecord(time: time, controllerIndex: index, kind: .advertisement(SnoopAdvertisement(
                        address: address, addressType: type, eventType: UInt16(eventType), isExtended: false, rssi: rssi, data: data))))
                }
            case 0x0D: // LE Extended Advertising Report
                let count = try r.uint8("number of reports")
                for i in 0..<Int(count) {
                    let eventType = try r.uint16("report \(i) event type")
                    let type = AddressType(rawValue: try r.uint8("report \(i) address type"))
                    let address = BluetoothAddress(littleEndian: try r.bytes(6, "report \(i) address"))!
                    // primary PHY, secondary PHY, SID, TX power
                    _ = try r.bytes(4, "report \(i) PHYs, SID and TX power")
                    let rssi = Int8(bitPattern: try r.uint8("report \(i) RSSI"))
                    // periodic advertising interval, direct address type and address
                    _ = try r.bytes(9, "report \(i) periodic interval and direct address")
                    let dataLength = Int(try r.uint8("report \(i) data length"))
                    let data = try r.bytes(dataLength, "report \(i) data")
                    out.append(SnoopRecord(time: time, controllerIndex: index, kind: .advertisement(SnoopAdvertisement(
                        address: address, addressType: type, eventType: eventType, isExtended: true, rssi: rssi, data: data))))
                }
            default:
                break
            }
        default:
            break
        }
    }

    // MARK: ACL data (Vol 4, Part E, 5.4.2) and L2CAP basic frames (Vol 3, Part A, 3.1)

    private mutating func acl(_ bytes: [UInt8], index: UInt16, received: Bool, time: Double, context: String,
                              into out: inout [SnoopRecord]) throws(DecodeError) {
        var r = ByteReader(bytes, context: "\(context) ACL data")
        let handleAndFlags = try r.uint16("handle and flags")
        let length = Int(try r.uint16("data total length"))
        guard length == r.remaining else {
            throw r.error("data total length", .invalidValue("says \(length), packet holds \(r.remaining)"), at: 2)
        }
        let link = LinkKey(index: index, handle: handleAndFlags & 0x0FFF)
        let key = FragmentKey(link: link, received: received)
        let payload = r.rest()
        var pdu: [UInt8]
        if (handleAndFlags >> 12) & 0x3 == 0b01 {
            // Continuing fragment; without a first fragment (capture began
            // mid-PDU) there is nothing to continue.
            guard let partial = fragments[key] else { return }
            pdu = partial + payload
        } else {
            pdu = payload
        }
        fragments[key] = nil
        guard pdu.count >= 4 else { fragments[key] = pdu; return }
        let needed = 4 + (Int(pdu[0]) | Int(pdu[1]) << 8)
        if pdu.count < needed { fragments[key] = pdu; return }
        // More than the L2CAP length announced: the fragments do not belong
        // together (packets dropped by the capture); discard them.
        guard pdu.count == needed else { return }
        let cid = UInt16(pdu[2]) | UInt16(pdu[3]) << 8
        guard cid == Self.attCID else { return }
        try att(Array(pdu[4...]), link: link, received: received, time: time, context: context, into: &out)
    }

    // MARK: ATT (Vol 3, Part F, 3.4)

    private mutating func att(_ bytes: [UInt8], link: LinkKey, received: Bool, time: Double, context: String,
                              into out: inout [SnoopRecord]) throws(DecodeError) {
        var r = ByteReader(bytes, context: "\(context) ATT PDU")
        let opcode = try r.uint8("ATT opcode")
        func emit(_ handle: UInt16, _ value: [UInt8], indication: Bool) {
            let peer = peers[link]
            out.append(SnoopRecord(time: time, controllerIndex: link.index, kind: .attValue(SnoopATTValue(
                peer: peer?.address, peerType: peer?.type, connectionHandle: link.handle, attributeHandle: handle,
                characteristic: characteristics[link]?[handle], value: value, isIndication: indication))))
        }
        switch (opcode, received) {
        case (0x1B, true), (0x1D, true): // Handle Value Notification / Indication
            let handle = try r.uint16("attribute handle")
            emit(handle, r.rest(), indication: opcode == 0x1D)
        case (0x23, true): // Multiple Handle Value Notification
            while !r.isAtEnd {
                let handle = try r.uint16("attribute handle")
                let length = Int(try r.uint16("value length"))
                emit(handle, try r.bytes(length, "attribute value"), indication: false)
            }
        case (0x08, false): // Read By Type Request we sent: remember the type
            _ = try r.uint32("handle range")
            guard let type = BluetoothUUID(littleEndian: r.rest()) else {
                throw r.error("attribute type", .invalidValue("must be 2 or 16 bytes"))
            }
            pendingReadByType[link] = type
        case (0x09, true): // Read By Type Response
            guard pendingReadByType[link] == Self.characteristicDeclaration else { return }
            let length = Int(try r.uint8("length"))
            // handle(2) properties(1) value handle(2) UUID(2 or 16)
            guard length == 7 || length == 21 else {
                throw r.error("length", .invalidValue("\(length) is not a characteristic declaration (7 or 21)"), at: 1)
            }
            while !r.isAtEnd {
                _ = try r.uint16("attribute handle")
                _ = try r.uint8("characteristic properties")
                let valueHandle = try r.uint16("characteristic value handle")
                let uuid = BluetoothUUID(littleEndian: try r.bytes(length - 5, "characteristic UUID"))!
                characteristics[link, default: [:]][valueHandle] = uuid
            }
        default:
            break
        }
    }
}

/// A btsnoop file read as `SnoopRecord`s, streaming: `append` chunks of the
/// file, drain `next()` until nil, and call `finish()` after the last chunk.
public struct SnoopCaptureReader: Sendable {
    private var reader = BTSnoopReader()
    private var extractor: BTSnoopExtractor?
    private var pending: [SnoopRecord] = []
    private var pendingIndex = 0

    public init() {}

    /// Known once the file header has been read.
    public var datalink: BTSnoopDatalink? { reader.datalink }

    public mutating func append(_ bytes: some Sequence<UInt8>) { reader.append(bytes) }

    /// The next record, or nil when more bytes are needed.
    public mutating func next() throws(DecodeError) -> SnoopRecord? {
        while pendingIndex == pending.count {
            pending.removeAll(keepingCapacity: true)
            pendingIndex = 0
            guard let record = try reader.next() else { return nil }
            if extractor == nil { extractor = try BTSnoopExtractor(datalink: reader.datalink!) }
            try extractor!.process(record, into: &pending)
        }
        defer { pendingIndex += 1 }
        return pending[pendingIndex]
    }

    /// Fails when the file ended inside its header or a record.
    public func finish() throws(DecodeError) { try reader.finish() }
}

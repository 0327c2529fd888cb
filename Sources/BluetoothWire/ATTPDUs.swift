/// One ATT PDU type: its opcode, its encoding, and a decoder for the whole PDU
/// (opcode byte included) that says which field at which offset did not fit.
/// Core Spec v5.x Vol 3, Part F, 3.3 (PDU format) and 3.4 (the PDUs).
public protocol ATTPDUCodable: Sendable, Hashable {
    static var opcode: ATTOpcode { get }
    /// Decodes a whole PDU, opcode byte included.
    init(decoding pdu: [UInt8]) throws(DecodeError)
    /// The whole PDU, opcode byte included.
    func encode() -> [UInt8]
}

extension ATTPDUCodable {
    /// A reader positioned after the opcode, which must be `Self.opcode`.
    static func reader(_ pdu: [UInt8]) throws(DecodeError) -> ByteReader {
        let context = "ATT " + (opcode.name ?? opcode.description)
        var r = ByteReader(pdu, context: context)
        let op = try r.uint8("opcode")
        guard op == opcode.rawValue else {
            throw r.error("opcode", .invalidValue("0x\([op].hexString), expected 0x\([opcode.rawValue].hexString)"), at: 0)
        }
        return r
    }

    static func writer(capacity: Int = 8) -> ByteWriter {
        var w = ByteWriter(capacity: capacity)
        w.uint8(opcode.rawValue)
        return w
    }
}

extension ByteReader {
    /// An attribute type: the rest of the PDU, which must be a 16-bit or
    /// 128-bit UUID (Vol 3, Part F, 3.2.1).
    mutating func attributeType(_ field: String) throws(DecodeError) -> BluetoothUUID {
        let start = offset
        let raw = rest()
        guard raw.count == 2 || raw.count == 16, let uuid = BluetoothUUID(littleEndian: raw) else {
            throw error(field, .invalidValue("\(raw.count) bytes, expected a 2- or 16-byte UUID"), at: start)
        }
        return uuid
    }
}

/// A handle and the value of that attribute, as listed in Read By Type
/// Responses and carried by notifications.
public struct ATTHandleValue: Sendable, Hashable {
    public var handle: UInt16
    public var value: [UInt8]
    public init(handle: UInt16, value: [UInt8]) {
        self.handle = handle
        self.value = value
    }
}

// MARK: - 3.4.1 Error handling

/// Error Response (Vol 3, Part F, 3.4.1.1): the request that failed, the
/// handle that caused it (0x0000 when none) and why.
public struct ATTErrorResponse: ATTPDUCodable, Error, CustomStringConvertible {
    public static let opcode = ATTOpcode.errorResponse
    public var requestOpcode: ATTOpcode
    public var handle: UInt16
    public var errorCode: ATTErrorCode

    public init(requestOpcode: ATTOpcode, handle: UInt16, errorCode: ATTErrorCode) {
        self.requestOpcode = requestOpcode
        self.handle = handle
        self.errorCode = errorCode
    }

    public init(decoding pdu: [UInt8]) throws(DecodeError) {
        var r = try Self.reader(pdu)
        requestOpcode = ATTOpcode(try r.uint8("request opcode in error"))
        handle = try r.uint16("attribute handle in error")
        errorCode = ATTErrorCode(try r.uint8("error code"))
        try r.expectEnd()
    }

    public func encode() -> [UInt8] {
        var w = Self.writer(capacity: 5)
        w.uint8(requestOpcode.rawValue)
        w.uint16(handle)
        w.uint8(errorCode.rawValue)
        return w.bytes
    }

    public var description: String {
        "\(errorCode) for \(requestOpcode) on handle 0x\([UInt8(handle >> 8), UInt8(truncatingIfNeeded: handle)].hexString)"
    }
}

// MARK: - 3.4.2 MTU exchange

/// Exchange MTU Request (Vol 3, Part F, 3.4.2.1): the client's receive MTU.
public struct ATTExchangeMTURequest: ATTPDUCodable {
    public static let opcode = ATTOpcode.exchangeMTURequest
    public var clientRxMTU: UInt16
    public init(clientRxMTU: UInt16) { self.clientRxMTU = clientRxMTU }

    public init(decoding pdu: [UInt8]) throws(DecodeError) {
        var r = try Self.reader(pdu)
        clientRxMTU = try r.uint16("client rx MTU")
        try r.expectEnd()
    }

    public func encode() -> [UInt8] {
        var w = Self.writer(capacity: 3)
        w.uint16(clientRxMTU)
        return w.bytes
    }
}

/// Exchange MTU Response (Vol 3, Part F, 3.4.2.2): the server's receive MTU.
public struct ATTExchangeMTUResponse: ATTPDUCodable {
    public static let opcode = ATTOpcode.exchangeMTUResponse
    public var serverRxMTU: UInt16
    public init(serverRxMTU: UInt16) { self.serverRxMTU = serverRxMTU }

    public init(decoding pdu: [UInt8]) throws(DecodeError) {
        var r = try Self.reader(pdu)
        serverRxMTU = try r.uint16("server rx MTU")
        try r.expectEnd()
    }

    public func encode() -> [UInt8] {
        var w = Self.writer(capacity: 3)
        w.uint16(serverRxMTU)
        return w.bytes
    }
}

// MARK: - 3.4.3 Find information

/// Find Information Request (Vol 3, Part F, 3.4.3.1): handles and types of
/// the attributes in a range.
public struct ATTFindInformationRequest: ATTPDUCodable {
    public static let opcode = ATTOpcode.findInformationRequest
    public var startingHandle: UInt16
    public var endingHandle: UInt16
    public init(startingHandle: UInt16, endingHandle: UInt16) {
        self.startingHandle = startingHandle
        self.endingHandle = endingHandle
    }

    public init(decoding pdu: [UInt8]) throws(DecodeError) {
        var r = try Self.reader(pdu)
        startingHandle = try r.uint16("starting handle")
        endingHandle = try r.uint16("ending handle")
        try r.expectEnd()
    }

    public func encode() -> [UInt8] {
        var w = Self.writer(capacity: 5)
        w.uint16(startingHandle)
        w.uint16(endingHandle)
        return w.bytes
    }
}

/// Find Information Response (Vol 3, Part F, 3.4.3.2): handle–type pairs,
/// all 16-bit UUIDs (format 0x01) or all 128-bit UUIDs (format 0x02).
public struct ATTFindInformationResponse: ATTPDUCodable {
    public static let opcode = ATTOpcode.findInformationResponse

    public enum Format: UInt8, Sendable, Hashable {
        case uuid16 = 0x01
        case uuid128 = 0x02
        var uuidSize: Int { self == .uuid16 ? 2 : 16 }
    }

    public struct Entry: Sendable, Hashable {
        public var handle: UInt16
        public var type: BluetoothUUID
        public init(handle: UInt16, type: BluetoothUUID) {
            self.handle = handle
            self.type = type
        }
    }

    public private(set) var format: Format
    public private(set) var entries: [Entry]

    /// The format follows the entries: 16-bit only when every type has a 16-bit alias.
    public init(entries: [Entry]) {
        self.entries = entries
        format = entries.allSatisfy { $0.type.uuid16 != nil } ? .uuid16 : .uuid128
    }

    public init(decoding pdu: [UInt8]) throws(DecodeError) {
        var r = try Self.reader(pdu)
        let rawFormat = try r.uint8("format")
        guard let format = Format(rawValue: rawFormat) else {
            throw r.error("format", .invalidValue("0x\([rawFormat].hexString), expected 0x01 or 0x02"), at: 1)
        }
        self.format = format
        guard !r.isAtEnd else { throw r.error("information data", .truncated(needed: 2 + format.uuidSize, available: 0)) }
        var entries: [Entry] = []
        while !r.isAtEnd {
            let handle = try r.uint16("handle")
            let uuid = try r.bytes(format.uuidSize, "attribute type")
            // uuidSize is 2 or 16 and the reader returned exactly that many bytes.
            entries.append(Entry(handle: handle, type: BluetoothUUID(littleEndian: uuid)!))
        }
        self.entries = entries
    }

    public func encode() -> [UInt8] {
        var w = Self.writer(capacity: 2 + entries.count * (2 + format.uuidSize))
        w.uint8(format.rawValue)
        for e in entries {
            w.uint16(e.handle)
            w.append(format == .uuid16 ? e.type.littleEndianBytes : Array(e.type.bigEndianBytes.reversed()))
        }
        return w.bytes
    }
}

/// Find By Type Value Request (Vol 3, Part F, 3.4.3.3): attributes of a
/// 16-bit type with a given value, e.g. primary services by UUID (Vol 3, Part G, 4.4.2).
public struct ATTFindByTypeValueRequest: ATTPDUCodable {
    public static let opcode = ATTOpcode.findByTypeValueRequest
    public var startingHandle: UInt16
    public var endingHandle: UInt16
    /// Always a 16-bit UUID on the wire.
    public var attributeType: UInt16
    public var attributeValue: [UInt8]

    public init(startingHandle: UInt16, endingHandle: UInt16, attributeType: UInt16, attributeValue: [UInt8]) {
        self.startingHandle = startingHandle
        self.endingHandle = endingHandle
        self.attributeType = attributeType
        self.attributeValue = attributeValue
    }

    public init(decoding pdu: [UInt8]) throws(DecodeError) {
        var r = try Self.reader(pdu)
        startingHandle = try r.uint16("starting handle")
        endingHandle = try r.uint16("ending handle")
        attributeType = try r.uint16("attribute type")
        attributeValue = r.rest()
    }

    public func encode() -> [UInt8] {
        var w = Self.writer(capacity: 7 + attributeValue.count)
        w.uint16(startingHandle)
        w.uint16(endingHandle)
        w.uint16(attributeType)
        w.append(attributeValue)
        return w.bytes
    }
}

/// Find By Type Value Response (Vol 3, Part F, 3.4.3.4): found attribute
/// handles with the end of their group.
public struct ATTFindByTypeValueResponse: ATTPDUCodable {
    public static let opcode = ATTOpcode.findByTypeValueResponse

    public struct HandlesInformation: Sendable, Hashable {
        public var foundAttributeHandle: UInt16
        public var groupEndHandle: UInt16
        public init(foundAttributeHandle: UInt16, groupEndHandle: UInt16) {
            self.foundAttributeHandle = foundAttributeHandle
            self.groupEndHandle = groupEndHandle
        }
    }

    public var handlesInformation: [HandlesInformation]
    public init(handlesInformation: [HandlesInformation]) { self.handlesInformation = handlesInformation }

    public init(decoding pdu: [UInt8]) throws(DecodeError) {
        var r = try Self.reader(pdu)
        guard !r.isAtEnd else { throw r.error("handles information list", .truncated(needed: 4, available: 0)) }
        var list: [HandlesInformation] = []
        while !r.isAtEnd {
            let found = try r.uint16("found attribute handle")
            let end = try r.uint16("group end handle")
            list.append(HandlesInformation(foundAttributeHandle: found, groupEndHandle: end))
        }
        handlesInformation = list
    }

    public func encode() -> [UInt8] {
        var w = Self.writer(capacity: 1 + 4 * handlesInformation.count)
        for h in handlesInformation {
            w.uint16(h.foundAttributeHandle)
            w.uint16(h.groupEndHandle)
        }
        return w.bytes
    }
}

// MARK: - 3.4.4 Reading attributes

/// Read By Type Request (Vol 3, Part F, 3.4.4.1): values of the attributes of
/// a type in a range, e.g. characteristic declarations 0x2803.
public struct ATTReadByTypeRequest: ATTPDUCodable {
    public static let opcode = ATTOpcode.readByTypeRequest
    public var startingHandle: UInt16
    public var endingHandle: UInt16
    public var attributeType: BluetoothUUID

    public init(startingHandle: UInt16, endingHandle: UInt16, attributeType: BluetoothUUID) {
        self.startingHandle = startingHandle
        self.endingHandle = endingHandle
        self.attributeType = attributeType
    }

    public init(decoding pdu: [UInt8]) throws(DecodeError) {
        var r = try Self.reader(pdu)
        startingHandle = try r.uint16("starting handle")
        endingHandle = try r.uint16("ending handle")
        attributeType = try r.attributeType("attribute type")
    }

    public func encode() -> [UInt8] {
        var w = Self.writer(capacity: 21)
        w.uint16(startingHandle)
        w.uint16(endingHandle)
        w.append(attributeType.littleEndianBytes)
        return w.bytes
    }
}

/// Read By Type Response (Vol 3, Part F, 3.4.4.2): handle–value pairs whose
/// values all have the same length, announced once in the Length field.
public struct ATTReadByTypeResponse: ATTPDUCodable {
    public static let opcode = ATTOpcode.readByTypeResponse
    /// At least one entry; every value has the same length, at most 253 bytes
    /// (checked by `init(attributeData:)`, so the Length byte always fits).
    public private(set) var attributeData: [ATTHandleValue]

    public init(attributeData: [ATTHandleValue]) {
        precondition(!attributeData.isEmpty && Set(attributeData.map(\.value.count)).count == 1
                     && attributeData[0].value.count <= 253,
                     "Read By Type Response values must share one length of at most 253 bytes")
        self.attributeData = attributeData
    }

    public init(decoding pdu: [UInt8]) throws(DecodeError) {
        var r = try Self.reader(pdu)
        let length = Int(try r.uint8("length"))
        guard length >= 2 else { throw r.error("length", .invalidValue("\(length), must be at least 2"), at: 1) }
        guard !r.isAtEnd else { throw r.error("attribute data list", .truncated(needed: length, available: 0)) }
        var list: [ATTHandleValue] = []
        while !r.isAtEnd {
            let handle = try r.uint16("attribute handle")
            let value = try r.bytes(length - 2, "attribute value")
            list.append(ATTHandleValue(handle: handle, value: value))
        }
        attributeData = list
    }

    public func encode() -> [UInt8] {
        let length = 2 + (attributeData.first?.value.count ?? 0)
        var w = Self.writer(capacity: 2 + length * attributeData.count)
        w.uint8(UInt8(length))
        for e in attributeData {
            w.uint16(e.handle)
            w.append(e.value)
        }
        return w.bytes
    }
}

/// Read Request (Vol 3, Part F, 3.4.4.3).
public struct ATTReadRequest: ATTPDUCodable {
    public static let opcode = ATTOpcode.readRequest
    public var attributeHandle: UInt16
    public init(attributeHandle: UInt16) { self.attributeHandle = attributeHandle }

    public init(decoding pdu: [UInt8]) throws(DecodeError) {
        var r = try Self.reader(pdu)
        attributeHandle = try r.uint16("attribute handle")
        try r.expectEnd()
    }

    public func encode() -> [UInt8] {
        var w = Self.writer(capacity: 3)
        w.uint16(attributeHandle)
        return w.bytes
    }
}

/// Read Response (Vol 3, Part F, 3.4.4.4): the value, or its first ATT_MTU − 1 bytes.
public struct ATTReadResponse: ATTPDUCodable {
    public static let opcode = ATTOpcode.readResponse
    public var attributeValue: [UInt8]
    public init(attributeValue: [UInt8]) { self.attributeValue = attributeValue }

    public init(decoding pdu: [UInt8]) throws(DecodeError) {
        var r = try Self.reader(pdu)
        attributeValue = r.rest()
    }

    public func encode() -> [UInt8] { [Self.opcode.rawValue] + attributeValue }
}

/// Read Blob Request (Vol 3, Part F, 3.4.4.5): part of a long value from an offset.
public struct ATTReadBlobRequest: ATTPDUCodable {
    public static let opcode = ATTOpcode.readBlobRequest
    public var attributeHandle: UInt16
    public var valueOffset: UInt16
    public init(attributeHandle: UInt16, valueOffset: UInt16) {
        self.attributeHandle = attributeHandle
        self.valueOffset = valueOffset
    }

    public init(decoding pdu: [UInt8]) throws(DecodeError) {
        var r = try Self.reader(pdu)
        attributeHandle = try r.uint16("attribute handle")
        valueOffset = try r.uint16("value offset")
        try r.expectEnd()
    }

    public func encode() -> [UInt8] {
        var w = Self.writer(capacity: 5)
        w.uint16(attributeHandle)
        w.uint16(valueOffset)
        return w.bytes
    }
}

/// Read Blob Response (Vol 3, Part F, 3.4.4.6).
public struct ATTReadBlobResponse: ATTPDUCodable {
    public static let opcode = ATTOpcode.readBlobResponse
    public var partAttributeValue: [UInt8]
    public init(partAttributeValue: [UInt8]) { self.partAttributeValue = partAttributeValue }

    public init(decoding pdu: [UInt8]) throws(DecodeError) {
        var r = try Self.reader(pdu)
        partAttributeValue = r.rest()
    }

    public func encode() -> [UInt8] { [Self.opcode.rawValue] + partAttributeValue }
}

/// Read Multiple Request (Vol 3, Part F, 3.4.4.7): two or more handles.
public struct ATTReadMultipleRequest: ATTPDUCodable {
    public static let opcode = ATTOpcode.readMultipleRequest
    public var setOfHandles: [UInt16]
    public init(setOfHandles: [UInt16]) { self.setOfHandles = setOfHandles }

    public init(decoding pdu: [UInt8]) throws(DecodeError) {
        var r = try Self.reader(pdu)
        guard r.remaining >= 4 else { throw r.error("set of handles", .truncated(needed: 4, available: r.remaining)) }
        var handles: [UInt16] = []
        while !r.isAtEnd { handles.append(try r.uint16("handle")) }
        setOfHandles = handles
    }

    public func encode() -> [UInt8] {
        var w = Self.writer(capacity: 1 + 2 * setOfHandles.count)
        for h in setOfHandles { w.uint16(h) }
        return w.bytes
    }
}

/// Read Multiple Response (Vol 3, Part F, 3.4.4.8): the values concatenated,
/// without lengths (only the caller knows where each ends).
public struct ATTReadMultipleResponse: ATTPDUCodable {
    public static let opcode = ATTOpcode.readMultipleResponse
    public var setOfValues: [UInt8]
    public init(setOfValues: [UInt8]) { self.setOfValues = setOfValues }

    public init(decoding pdu: [UInt8]) throws(DecodeError) {
        var r = try Self.reader(pdu)
        setOfValues = r.rest()
    }

    public func encode() -> [UInt8] { [Self.opcode.rawValue] + setOfValues }
}

/// Read By Group Type Request (Vol 3, Part F, 3.4.4.9): grouping attributes
/// (primary 0x2800 or secondary 0x2801 services) in a range.
public struct ATTReadByGroupTypeRequest: ATTPDUCodable {
    public static let opcode = ATTOpcode.readByGroupTypeRequest
    public var startingHandle: UInt16
    public var endingHandle: UInt16
    public var attributeGroupType: BluetoothUUID

    public init(startingHandle: UInt16, endingHandle: UInt16, attributeGroupType: BluetoothUUID) {
        self.startingHandle = startingHandle
        self.endingHandle = endingHandle
        self.attributeGroupType = attributeGroupType
    }

    public init(decoding pdu: [UInt8]) throws(DecodeError) {
        var r = try Self.reader(pdu)
        startingHandle = try r.uint16("starting handle")
        endingHandle = try r.uint16("ending handle")
        attributeGroupType = try r.attributeType("attribute group type")
    }

    public func encode() -> [UInt8] {
        var w = Self.writer(capacity: 21)
        w.uint16(startingHandle)
        w.uint16(endingHandle)
        w.append(attributeGroupType.littleEndianBytes)
        return w.bytes
    }
}

/// Read By Group Type Response (Vol 3, Part F, 3.4.4.10): each group's first
/// and last handle and its value (for services, the service UUID); values
/// share one length, announced in the Length field.
public struct ATTReadByGroupTypeResponse: ATTPDUCodable {
    public static let opcode = ATTOpcode.readByGroupTypeResponse

    public struct AttributeData: Sendable, Hashable {
        public var attributeHandle: UInt16
        public var endGroupHandle: UInt16
        public var value: [UInt8]
        public init(attributeHandle: UInt16, endGroupHandle: UInt16, value: [UInt8]) {
            self.attributeHandle = attributeHandle
            self.endGroupHandle = endGroupHandle
            self.value = value
        }
    }

    /// At least one entry; every value has the same length, at most 251 bytes
    /// (checked by `init(attributeData:)`, so the Length byte always fits).
    public private(set) var attributeData: [AttributeData]

    public init(attributeData: [AttributeData]) {
        precondition(!attributeData.isEmpty && Set(attributeData.map(\.value.count)).count == 1
                     && attributeData[0].value.count <= 251,
                     "Read By Group Type Response values must share one length of at most 251 bytes")
        self.attributeData = attributeData
    }

    public init(decoding pdu: [UInt8]) throws(DecodeError) {
        var r = try Self.reader(pdu)
        let length = Int(try r.uint8("length"))
        guard length >= 4 else { throw r.error("length", .invalidValue("\(length), must be at least 4"), at: 1) }
        guard !r.isAtEnd else { throw r.error("attribute data list", .truncated(needed: length, available: 0)) }
        var list: [AttributeData] = []
        while !r.isAtEnd {
            let handle = try r.uint16("attribute handle")
            let end = try r.uint16("end group handle")
            let value = try r.bytes(length - 4, "attribute value")
            list.append(AttributeData(attributeHandle: handle, endGroupHandle: end, value: value))
        }
        attributeData = list
    }

    public func encode() -> [UInt8] {
        let length = 4 + (attributeData.first?.value.count ?? 0)
        var w = Self.writer(capacity: 2 + length * attributeData.count)
        w.uint8(UInt8(length))
        for e in attributeData {
            w.uint16(e.attributeHandle)
            w.uint16(e.endGroupHandle)
            w.append(e.value)
        }
        return w.bytes
    }
}

// MARK: - 3.4.5 Writing attributes

/// Write Request (Vol 3, Part F, 3.4.5.1): answered by a Write Response.
public struct ATTWriteRequest: ATTHandleValuePDU {
    public static let opcode = ATTOpcode.writeRequest
    public var attributeHandle: UInt16
    public var attributeValue: [UInt8]
    public init(attributeHandle: UInt16, attributeValue: [UInt8]) {
        self.attributeHandle = attributeHandle
        self.attributeValue = attributeValue
    }
}

/// Write Response (Vol 3, Part F, 3.4.5.2): the opcode alone.
public struct ATTWriteResponse: ATTPDUCodable {
    public static let opcode = ATTOpcode.writeResponse
    public init() {}

    public init(decoding pdu: [UInt8]) throws(DecodeError) {
        let r = try Self.reader(pdu)
        try r.expectEnd()
    }

    public func encode() -> [UInt8] { [Self.opcode.rawValue] }
}

/// Write Command (Vol 3, Part F, 3.4.5.3): a write with no response.
public struct ATTWriteCommand: ATTHandleValuePDU {
    public static let opcode = ATTOpcode.writeCommand
    public var attributeHandle: UInt16
    public var attributeValue: [UInt8]
    public init(attributeHandle: UInt16, attributeValue: [UInt8]) {
        self.attributeHandle = attributeHandle
        self.attributeValue = attributeValue
    }
}

/// The PDUs laid out as an attribute handle followed by the whole value:
/// Write Request and Command (3.4.5.1, 3.4.5.3), Handle Value Notification and
/// Indication (3.4.7.1, 3.4.7.2). Each stays its own type; the codec is shared.
public protocol ATTHandleValuePDU: ATTPDUCodable {
    var attributeHandle: UInt16 { get }
    var attributeValue: [UInt8] { get }
    init(attributeHandle: UInt16, attributeValue: [UInt8])
}

extension ATTHandleValuePDU {
    public init(decoding pdu: [UInt8]) throws(DecodeError) {
        var r = try Self.reader(pdu)
        let handle = try r.uint16("attribute handle")
        self.init(attributeHandle: handle, attributeValue: r.rest())
    }

    public func encode() -> [UInt8] {
        var w = Self.writer(capacity: 3 + attributeValue.count)
        w.uint16(attributeHandle)
        w.append(attributeValue)
        return w.bytes
    }
}

// MARK: - 3.4.7 Server initiated

/// Handle Value Notification (Vol 3, Part F, 3.4.7.1): an unconfirmed value update.
public struct ATTHandleValueNotification: ATTHandleValuePDU {
    public static let opcode = ATTOpcode.handleValueNotification
    public var attributeHandle: UInt16
    public var attributeValue: [UInt8]
    public init(attributeHandle: UInt16, attributeValue: [UInt8]) {
        self.attributeHandle = attributeHandle
        self.attributeValue = attributeValue
    }
}

/// Handle Value Indication (Vol 3, Part F, 3.4.7.2): a value update the
/// client must confirm before the server sends the next indication.
public struct ATTHandleValueIndication: ATTHandleValuePDU {
    public static let opcode = ATTOpcode.handleValueIndication
    public var attributeHandle: UInt16
    public var attributeValue: [UInt8]
    public init(attributeHandle: UInt16, attributeValue: [UInt8]) {
        self.attributeHandle = attributeHandle
        self.attributeValue = attributeValue
    }
}

/// Handle Value Confirmation (Vol 3, Part F, 3.4.7.3): the opcode alone.
public struct ATTHandleValueConfirmation: ATTPDUCodable {
    public static let opcode = ATTOpcode.handleValueConfirmation
    public init() {}

    public init(decoding pdu: [UInt8]) throws(DecodeError) {
        let r = try Self.reader(pdu)
        try r.expectEnd()
    }

    public func encode() -> [UInt8] { [Self.opcode.rawValue] }
}

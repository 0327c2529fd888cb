/// An AD type code (Core Spec Supplement Part A, 1; Assigned Numbers 2.3).
/// Open-ended: types this codec does not interpret still decode, kept raw.
public struct ADType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let flags = ADType(rawValue: 0x01)
    public static let incompleteUUIDs16 = ADType(rawValue: 0x02)
    public static let completeUUIDs16 = ADType(rawValue: 0x03)
    public static let incompleteUUIDs32 = ADType(rawValue: 0x04)
    public static let completeUUIDs32 = ADType(rawValue: 0x05)
    public static let incompleteUUIDs128 = ADType(rawValue: 0x06)
    public static let completeUUIDs128 = ADType(rawValue: 0x07)
    public static let shortenedLocalName = ADType(rawValue: 0x08)
    public static let completeLocalName = ADType(rawValue: 0x09)
    public static let txPowerLevel = ADType(rawValue: 0x0A)
    public static let serviceData16 = ADType(rawValue: 0x16)
    public static let appearance = ADType(rawValue: 0x19)
    public static let serviceData32 = ADType(rawValue: 0x20)
    public static let serviceData128 = ADType(rawValue: 0x21)
    public static let manufacturerSpecificData = ADType(rawValue: 0xFF)

    public var description: String { "AD type 0x\([rawValue].hexString)" }
}

/// One AD structure as framed on the air: `length(1) type(1) data(length-1)`
/// (Core Spec Vol 3, Part C, 11).
public struct ADStructure: Sendable, Hashable {
    public var type: ADType
    public var data: [UInt8]
    public init(type: ADType, data: [UInt8]) {
        self.type = type
        self.data = data
    }
}

/// The Flags AD type's bits (CSS Part A, 1.3).
public struct ADFlags: OptionSet, Sendable, Hashable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let leLimitedDiscoverable = ADFlags(rawValue: 0x01)
    public static let leGeneralDiscoverable = ADFlags(rawValue: 0x02)
    public static let brEdrNotSupported = ADFlags(rawValue: 0x04)
    public static let simultaneousLEBrEdrController = ADFlags(rawValue: 0x08)
}

/// A decoded AD structure (CSS Part A, 1.1-1.12). Each case keeps what the
/// wire carried, so decoding then encoding gives the same bytes.
public enum ADElement: Sendable, Hashable {
    /// 0x01 (CSS A.1.3).
    case flags(ADFlags)
    /// 0x02 / 0x03: 16-bit Service Class UUIDs (CSS A.1.1).
    case uuids16([UInt16], complete: Bool)
    /// 0x04 / 0x05: 32-bit Service Class UUIDs.
    case uuids32([UInt32], complete: Bool)
    /// 0x06 / 0x07: 128-bit Service Class UUIDs.
    case uuids128([BluetoothUUID], complete: Bool)
    /// 0x08 / 0x09 (CSS A.1.2); names that are not valid UTF-8 stay `.raw`.
    case localName(String, complete: Bool)
    /// 0x0A, dBm (CSS A.1.5).
    case txPowerLevel(Int8)
    /// 0x19 (CSS A.1.12), an Assigned Numbers appearance value.
    case appearance(UInt16)
    /// 0x16: Service Data with a 16-bit UUID (CSS A.1.11).
    case serviceData16(UInt16, [UInt8])
    /// 0x20: Service Data with a 32-bit UUID.
    case serviceData32(UInt32, [UInt8])
    /// 0x21: Service Data with a 128-bit UUID.
    case serviceData128(BluetoothUUID, [UInt8])
    /// 0xFF (CSS A.1.4): company identifier (little-endian) and the data after it.
    case manufacturerData(companyID: UInt16, data: [UInt8])
    /// Any other AD type, kept as it came.
    case raw(ADStructure)

    /// Interprets one structure; `offset` is where its length byte sits, for errors.
    public init(_ structure: ADStructure, offset: Int = 0) throws(DecodeError) {
        let d = structure.data
        let t = structure.type
        func bad(_ field: String, _ why: String) -> DecodeError {
            DecodeError(context: "Advertising data", field: field, offset: offset, reason: .invalidValue(why))
        }
        func list(_ width: Int, _ field: String) throws(DecodeError) -> [[UInt8]] {
            guard d.count % width == 0 else {
                throw bad(field, "data length \(d.count) is not a multiple of \(width)")
            }
            return stride(from: 0, to: d.count, by: width).map { Array(d[$0..<($0 + width)]) }
        }
        func le(_ b: ArraySlice<UInt8>) -> UInt32 { b.reversed().reduce(0) { $0 << 8 | UInt32($1) } }
        func needs(_ n: Int, _ field: String) throws(DecodeError) {
            guard d.count >= n else { throw bad(field, "data length \(d.count), needs at least \(n)") }
        }
        func exactly(_ n: Int, _ field: String) throws(DecodeError) {
            guard d.count == n else { throw bad(field, "data length \(d.count), must be \(n)") }
        }
        switch t {
        case .flags:
            try exactly(1, "Flags")
            self = .flags(ADFlags(rawValue: d[0]))
        case .incompleteUUIDs16, .completeUUIDs16:
            self = .uuids16(try list(2, "16-bit UUID list").map { UInt16(le($0[...])) }, complete: t == .completeUUIDs16)
        case .incompleteUUIDs32, .completeUUIDs32:
            self = .uuids32(try list(4, "32-bit UUID list").map { le($0[...]) }, complete: t == .completeUUIDs32)
        case .incompleteUUIDs128, .completeUUIDs128:
            // list(16) hands out exactly 16 bytes per UUID.
            self = .uuids128(try list(16, "128-bit UUID list").map { BluetoothUUID(littleEndian: $0)! },
                             complete: t == .completeUUIDs128)
        case .shortenedLocalName, .completeLocalName:
            guard let name = String(validating: d, as: UTF8.self) else { self = .raw(structure); return }
            self = .localName(name, complete: t == .completeLocalName)
        case .txPowerLevel:
            try exactly(1, "TX Power Level")
            self = .txPowerLevel(Int8(bitPattern: d[0]))
        case .appearance:
            try exactly(2, "Appearance")
            self = .appearance(UInt16(le(d[...])))
        case .serviceData16:
            try needs(2, "Service Data 16-bit UUID")
            self = .serviceData16(UInt16(le(d[0..<2])), Array(d[2...]))
        case .serviceData32:
            try needs(4, "Service Data 32-bit UUID")
            self = .serviceData32(le(d[0..<4]), Array(d[4...]))
        case .serviceData128:
            try needs(16, "Service Data 128-bit UUID")
            self = .serviceData128(BluetoothUUID(littleEndian: Array(d[0..<16]))!, Array(d[16...]))
        case .manufacturerSpecificData:
            try needs(2, "Manufacturer Specific Data company identifier")
            self = .manufacturerData(companyID: UInt16(le(d[0..<2])), data: Array(d[2...]))
        default:
            self = .raw(structure)
        }
    }

    /// The structure this element is sent as.
    public var structure: ADStructure {
        var w = ByteWriter()
        let type: ADType
        switch self {
        case .flags(let f):
            type = .flags; w.uint8(f.rawValue)
        case .uuids16(let list, let complete):
            type = complete ? .completeUUIDs16 : .incompleteUUIDs16
            for u in list { w.uint16(u) }
        case .uuids32(let list, let complete):
            type = complete ? .completeUUIDs32 : .incompleteUUIDs32
            for u in list { w.uint32(u) }
        case .uuids128(let list, let complete):
            type = complete ? .completeUUIDs128 : .incompleteUUIDs128
            for u in list { w.append(u.bigEndianBytes.reversed()) }
        case .localName(let name, let complete):
            type = complete ? .completeLocalName : .shortenedLocalName
            w.append(Array(name.utf8))
        case .txPowerLevel(let p):
            type = .txPowerLevel; w.uint8(UInt8(bitPattern: p))
        case .appearance(let a):
            type = .appearance; w.uint16(a)
        case .serviceData16(let u, let data):
            type = .serviceData16; w.uint16(u); w.append(data)
        case .serviceData32(let u, let data):
            type = .serviceData32; w.uint32(u); w.append(data)
        case .serviceData128(let u, let data):
            type = .serviceData128; w.append(u.bigEndianBytes.reversed()); w.append(data)
        case .manufacturerData(let company, let data):
            type = .manufacturerSpecificData; w.uint16(company); w.append(data)
        case .raw(let s):
            return s
        }
        return ADStructure(type: type, data: w.bytes)
    }
}

/// An element too long for its one-byte length field (at most 254 data bytes).
public struct ADEncodingError: Error, Sendable, Hashable, CustomStringConvertible {
    public var elementIndex: Int
    public var dataLength: Int
    public init(elementIndex: Int, dataLength: Int) {
        self.elementIndex = elementIndex
        self.dataLength = dataLength
    }
    public var description: String {
        "Advertising data: element \(elementIndex) has \(dataLength) data bytes, at most 254 fit an AD structure"
    }
}

/// Advertising or scan response data: a list of AD structures
/// (Core Spec Vol 3, Part C, 11; Core Spec Supplement Part A).
public struct AdvertisingData: Sendable, Hashable {
    public var elements: [ADElement]

    public init(_ elements: [ADElement] = []) { self.elements = elements }

    /// Parses `length type data` structures. A zero length byte ends the data
    /// early (Vol 3, Part C, 11: what follows is padding and is ignored).
    /// A structure whose length runs past the end is an error naming the
    /// offset of its length byte.
    public init(decoding bytes: [UInt8]) throws(DecodeError) {
        var r = ByteReader(bytes, context: "Advertising data")
        var out: [ADElement] = []
        while !r.isAtEnd {
            let start = r.offset
            let length = Int(try r.uint8("AD structure length"))
            if length == 0 { break }
            guard r.remaining >= length else {
                throw r.error("AD structure length", .truncated(needed: length, available: r.remaining), at: start)
            }
            let type = ADType(rawValue: try r.uint8("AD type"))
            let data = try r.bytes(length - 1, "AD data")
            out.append(try ADElement(ADStructure(type: type, data: data), offset: start))
        }
        elements = out
    }

    /// The wire form; the inverse of `init(decoding:)` (no terminator or padding).
    public func encoded() throws(ADEncodingError) -> [UInt8] {
        var w = ByteWriter(capacity: 31)
        for (i, e) in elements.enumerated() {
            let s = e.structure
            guard s.data.count <= 254 else { throw ADEncodingError(elementIndex: i, dataLength: s.data.count) }
            w.uint8(UInt8(s.data.count + 1))
            w.uint8(s.type.rawValue)
            w.append(s.data)
        }
        return w.bytes
    }

    // MARK: Convenience accessors

    /// The complete local name if present, else the shortened one.
    public var name: String? {
        var shortened: String?
        for case .localName(let n, let complete) in elements {
            if complete { return n }
            shortened = shortened ?? n
        }
        return shortened
    }

    public var flags: ADFlags? {
        for case .flags(let f) in elements { return f }
        return nil
    }

    public var txPowerLevel: Int8? {
        for case .txPowerLevel(let p) in elements { return p }
        return nil
    }

    public var appearance: UInt16? {
        for case .appearance(let a) in elements { return a }
        return nil
    }

    /// Every advertised service UUID, from all 16-, 32- and 128-bit lists, in order.
    public var serviceUUIDs: [BluetoothUUID] {
        var out: [BluetoothUUID] = []
        for e in elements {
            switch e {
            case .uuids16(let l, _): out += l.map { BluetoothUUID(uuid16: $0) }
            case .uuids32(let l, _): out += l.map { BluetoothUUID(uuid32: $0) }
            case .uuids128(let l, _): out += l
            default: break
            }
        }
        return out
    }

    /// All service data entries in order, whatever their UUID width.
    public var serviceData: [(uuid: BluetoothUUID, data: [UInt8])] {
        elements.compactMap { e in
            switch e {
            case .serviceData16(let u, let d): (BluetoothUUID(uuid16: u), d)
            case .serviceData32(let u, let d): (BluetoothUUID(uuid32: u), d)
            case .serviceData128(let u, let d): (u, d)
            default: nil
            }
        }
    }

    /// The first service data for `uuid` (16-, 32- and 128-bit forms of the same UUID are equal).
    public func serviceData(for uuid: BluetoothUUID) -> [UInt8]? {
        serviceData.first { $0.uuid == uuid }?.data
    }

    /// The first manufacturer specific data.
    public var manufacturerData: (companyID: UInt16, data: [UInt8])? {
        for case .manufacturerData(let c, let d) in elements { return (c, d) }
        return nil
    }

    /// The first manufacturer specific data from `companyID`.
    public func manufacturerData(companyID: UInt16) -> [UInt8]? {
        for case .manufacturerData(let c, let d) in elements where c == companyID { return d }
        return nil
    }
}

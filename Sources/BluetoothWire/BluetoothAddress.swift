/// A 48-bit Bluetooth device address (Core Spec Vol 6, Part B, 1.3), kept in
/// printed order (most significant byte first).
public struct BluetoothAddress: Sendable, Hashable, Comparable, CustomStringConvertible, TextCodable {
    public static let textKind = "a Bluetooth address"
    public let bytes: [UInt8]

    public init?(bytes: [UInt8]) {
        guard bytes.count == 6 else { return nil }
        self.bytes = bytes
    }

    /// From the little-endian order used on the wire (HCI, mgmt, btsnoop, bdaddr_t).
    public init?(littleEndian bytes: [UInt8]) {
        self.init(bytes: bytes.reversed())
    }

    /// `F0:F1:F2:F3:F4:F5` (case-insensitive; `-` also accepted).
    public init?(_ text: String) {
        let parts = text.split(whereSeparator: { $0 == ":" || $0 == "-" })
        guard parts.count == 6 else { return nil }
        var b: [UInt8] = []
        for p in parts {
            guard p.count == 2, let v = UInt8(p, radix: 16) else { return nil }
            b.append(v)
        }
        self.bytes = b
    }

    public var littleEndianBytes: [UInt8] { bytes.reversed() }

    /// A label as a history keys it: an address in its printed form (`aa-bb-…` → `AA:BB:…`), any
    /// other label (a trace's `kitchen`) unchanged.
    public static func normalized(_ label: String) -> String { Self(label)?.description ?? label }

    public var description: String { bytes.map { [$0].hexString.uppercased() }.joined(separator: ":") }

    public static func < (a: Self, b: Self) -> Bool { a.bytes.lexicographicallyPrecedes(b.bytes) }
}

/// LE address type (Core Spec Vol 4, Part E, 7.7.65.2; mgmt API uses 1/2 for LE).
public struct AddressType: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// HCI's LE public (0x00) and random (0x01) device address types.
    public static let lePublic = AddressType(rawValue: 0x00)
    public static let leRandom = AddressType(rawValue: 0x01)

    public var isRandom: Bool { rawValue & 0x01 == 1 }

    public init?(_ text: String) {
        switch text.lowercased() {
        case "public": self = .lePublic
        case "random": self = .leRandom
        default: return nil
        }
    }

    public var description: String {
        switch rawValue {
        case 0: "public"
        case 1: "random"
        default: "type 0x\([rawValue].hexString)"
        }
    }
}

/// A Bluetooth UUID: 16-, 32- or 128-bit (Core Spec Vol 3, Part B, 2.5.1).
/// Short forms are aliases within the Bluetooth Base UUID
/// 0000xxxx-0000-1000-8000-00805F9B34FB; equality compares the 128-bit value.
public struct BluetoothUUID: Sendable, Hashable, CustomStringConvertible, TextCodable {
    public static let textKind = "a UUID"
    /// The 128-bit value, most significant byte first (as printed).
    public let bigEndianBytes: [UInt8]

    static let base: [UInt8] = [0, 0, 0, 0, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0x80, 0x5F, 0x9B, 0x34, 0xFB]

    public init(uuid16: UInt16) { self.init(uuid32: UInt32(uuid16)) }

    public init(uuid32: UInt32) {
        var b = Self.base
        b[0] = UInt8(uuid32 >> 24); b[1] = UInt8(truncatingIfNeeded: uuid32 >> 16)
        b[2] = UInt8(truncatingIfNeeded: uuid32 >> 8); b[3] = UInt8(truncatingIfNeeded: uuid32)
        bigEndianBytes = b
    }

    public init?(bigEndianBytes: [UInt8]) {
        guard bigEndianBytes.count == 16 else { return nil }
        self.bigEndianBytes = bigEndianBytes
    }

    /// From the little-endian wire form of 2, 4 or 16 bytes (ATT, advertising data).
    public init?(littleEndian bytes: [UInt8]) {
        switch bytes.count {
        case 2: self.init(uuid16: UInt16(bytes[0]) | UInt16(bytes[1]) << 8)
        case 4: self.init(uuid32: UInt32(bytes[0]) | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) << 16 | UInt32(bytes[3]) << 24)
        case 16: self.init(bigEndianBytes: bytes.reversed())
        default: return nil
        }
    }

    /// `181D`, `0x181D`, `6e0a0000-51a5-4c5b-9f1d-7e57b0771e00`.
    public init?(_ text: String) {
        var s = Substring(text)
        if s.hasPrefix("0x") || s.hasPrefix("0X") { s = s.dropFirst(2) }
        guard let bytes = [UInt8](hexString: s.filter { $0 != "-" }) else { return nil }
        switch bytes.count {
        case 2: self.init(uuid16: UInt16(bytes[0]) << 8 | UInt16(bytes[1]))
        case 4: self.init(uuid32: UInt32(bytes[0]) << 24 | UInt32(bytes[1]) << 16 | UInt32(bytes[2]) << 8 | UInt32(bytes[3]))
        case 16: self.init(bigEndianBytes: bytes)
        default: return nil
        }
    }

    /// The 16-bit alias, when this UUID is one.
    public var uuid16: UInt16? {
        guard bigEndianBytes[0] == 0, bigEndianBytes[1] == 0, Array(bigEndianBytes[4...]) == Array(Self.base[4...]) else { return nil }
        return UInt16(bigEndianBytes[2]) << 8 | UInt16(bigEndianBytes[3])
    }

    /// The shortest wire form, little-endian: 2 bytes for 16-bit aliases, else 16.
    public var littleEndianBytes: [UInt8] {
        if let short = uuid16 { return [UInt8(truncatingIfNeeded: short), UInt8(short >> 8)] }
        return bigEndianBytes.reversed()
    }

    public var description: String {
        if let short = uuid16 {
            let hex = [UInt8(short >> 8), UInt8(truncatingIfNeeded: short)].hexString.uppercased()
            return hex
        }
        let h = bigEndianBytes.hexString
        let c = Array(h)
        return String(c[0..<8]) + "-" + String(c[8..<12]) + "-" + String(c[12..<16]) + "-" + String(c[16..<20]) + "-" + String(c[20..<32])
    }
}

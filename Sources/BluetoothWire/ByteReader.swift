/// Why a payload could not be decoded: which field, at which byte offset.
public struct DecodeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was being decoded, e.g. "ATT Read By Type Response" or "Weight Measurement".
    public var context: String
    /// The field that did not fit, e.g. "attribute handle".
    public var field: String
    /// Zero-based byte offset of the field in the payload.
    public var offset: Int
    public var reason: Reason

    public enum Reason: Sendable, Hashable {
        /// The payload ended: `needed` bytes were required at `offset`, `available` remained.
        case truncated(needed: Int, available: Int)
        case invalidValue(String)
        case trailingBytes(Int)
    }

    public init(context: String, field: String, offset: Int, reason: Reason) {
        self.context = context
        self.field = field
        self.offset = offset
        self.reason = reason
    }

    public var description: String {
        let what: String
        switch reason {
        case .truncated(let needed, let available): what = "needs \(needed) byte\(needed == 1 ? "" : "s"), \(available) left"
        case .invalidValue(let text): what = text
        case .trailingBytes(let n): what = "\(n) unexpected trailing byte\(n == 1 ? "" : "s")"
        }
        return "\(context): \(field) at byte \(offset): \(what)"
    }
}

/// Reads little-endian (or big-endian, when asked) fields from a payload and
/// says where it failed.
public struct ByteReader: Sendable {
    public let bytes: [UInt8]
    public private(set) var offset: Int
    public let context: String

    public init(_ bytes: [UInt8], context: String, offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
        self.context = context
    }

    public var remaining: Int { bytes.count - offset }
    public var isAtEnd: Bool { offset >= bytes.count }

    public func error(_ field: String, _ reason: DecodeError.Reason, at offset: Int? = nil) -> DecodeError {
        DecodeError(context: context, field: field, offset: offset ?? self.offset, reason: reason)
    }

    public mutating func bytes(_ count: Int, _ field: String) throws(DecodeError) -> [UInt8] {
        guard count >= 0, remaining >= count else {
            throw error(field, .truncated(needed: count, available: max(0, remaining)))
        }
        defer { offset += count }
        return Array(bytes[offset..<(offset + count)])
    }

    public mutating func rest() -> [UInt8] {
        defer { offset = bytes.count }
        return offset < bytes.count ? Array(bytes[offset...]) : []
    }

    public mutating func uint8(_ field: String) throws(DecodeError) -> UInt8 {
        guard remaining >= 1 else { throw error(field, .truncated(needed: 1, available: 0)) }
        defer { offset += 1 }
        return bytes[offset]
    }

    public mutating func uint16(_ field: String, bigEndian: Bool = false) throws(DecodeError) -> UInt16 {
        UInt16(truncatingIfNeeded: try unsigned(2, field, bigEndian: bigEndian))
    }

    public mutating func uint24(_ field: String, bigEndian: Bool = false) throws(DecodeError) -> UInt32 {
        UInt32(truncatingIfNeeded: try unsigned(3, field, bigEndian: bigEndian))
    }

    public mutating func uint32(_ field: String, bigEndian: Bool = false) throws(DecodeError) -> UInt32 {
        UInt32(truncatingIfNeeded: try unsigned(4, field, bigEndian: bigEndian))
    }

    public mutating func uint64(_ field: String, bigEndian: Bool = false) throws(DecodeError) -> UInt64 {
        try unsigned(8, field, bigEndian: bigEndian)
    }

    /// An unsigned integer of 1 to 8 bytes.
    public mutating func unsigned(_ width: Int, _ field: String, bigEndian: Bool = false) throws(DecodeError) -> UInt64 {
        precondition((1...8).contains(width))
        guard remaining >= width else { throw error(field, .truncated(needed: width, available: max(0, remaining))) }
        var value: UInt64 = 0
        for i in 0..<width {
            let byte = UInt64(bytes[offset + (bigEndian ? i : width - 1 - i)])
            value = value << 8 | byte
        }
        offset += width
        return value
    }

    /// Fails when bytes are left over.
    public func expectEnd(_ field: String = "end of payload") throws(DecodeError) {
        guard remaining == 0 else { throw error(field, .trailingBytes(remaining)) }
    }
}

/// Appends little-endian fields.
public struct ByteWriter: Sendable {
    public private(set) var bytes: [UInt8] = []
    public init(capacity: Int = 16) { bytes.reserveCapacity(capacity) }

    public mutating func uint8(_ v: UInt8) { bytes.append(v) }
    public mutating func uint16(_ v: UInt16, bigEndian: Bool = false) { unsigned(UInt64(v), width: 2, bigEndian: bigEndian) }
    public mutating func uint24(_ v: UInt32) { unsigned(UInt64(v), width: 3) }
    public mutating func uint32(_ v: UInt32, bigEndian: Bool = false) { unsigned(UInt64(v), width: 4, bigEndian: bigEndian) }
    public mutating func uint64(_ v: UInt64) { unsigned(v, width: 8) }
    public mutating func append(_ b: [UInt8]) { bytes.append(contentsOf: b) }

    public mutating func unsigned(_ v: UInt64, width: Int, bigEndian: Bool = false) {
        for i in 0..<width {
            let shift = UInt64(8 * (bigEndian ? width - 1 - i : i))
            bytes.append(UInt8(truncatingIfNeeded: v >> shift))
        }
    }
}

extension Array where Element == UInt8 {
    /// `0a1b2c` style, for logs and test fixtures.
    public var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(count * 2)
        for b in self {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Parses hex, ignoring spaces, colons and dashes; nil on anything else.
    public init?(hexString: some StringProtocol) {
        var out: [UInt8] = []
        var high: UInt8?
        for c in hexString.utf8 {
            if c == 0x20 || c == 0x3A || c == 0x2D { continue }
            let v: UInt8
            switch c {
            case 0x30...0x39: v = c - 0x30
            case 0x41...0x46: v = c - 0x41 + 10
            case 0x61...0x66: v = c - 0x61 + 10
            default: return nil
            }
            if let h = high { out.append(h << 4 | v); high = nil } else { high = v }
        }
        guard high == nil else { return nil }
        self = out
    }
}

/// The btsnoop datalink type in the file header (RFC 1761 "snoop" layout as
/// adapted by BlueZ / Android: 1001 H1, 1002 H4 UART, 1003 BCSP, 1004 H5,
/// 2001 Linux monitor as written by `btmon -w`).
public struct BTSnoopDatalink: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Unencapsulated HCI: flags bit 1 tells command/event from data.
    public static let h1 = BTSnoopDatalink(rawValue: 1001)
    /// HCI UART (H4): each packet starts with its packet type byte (Android's HCI snoop log).
    public static let h4 = BTSnoopDatalink(rawValue: 1002)
    public static let bcsp = BTSnoopDatalink(rawValue: 1003)
    public static let h5 = BTSnoopDatalink(rawValue: 1004)
    /// Linux monitor: flags carry `index << 16 | opcode` (BlueZ `btmon -w`).
    public static let monitor = BTSnoopDatalink(rawValue: 2001)

    public var description: String {
        switch self {
        case .h1: "H1"
        case .h4: "H4"
        case .bcsp: "BCSP"
        case .h5: "H5"
        case .monitor: "monitor"
        default: "datalink \(rawValue)"
        }
    }
}

/// One btsnoop record: a 24-byte big-endian header (original length,
/// included length, flags, cumulative drops, timestamp) then the packet.
public struct BTSnoopRecord: Sendable, Hashable {
    /// Microseconds between the btsnoop epoch (midnight, 1 January 0 AD, as
    /// BlueZ and Android define it: 1970 × 365.2425 days) and the Unix epoch.
    public static let epochDeltaMicroseconds: Int64 = 0x00DC_DDB3_0F2F_8000

    /// Zero-based index of the record in the file.
    public var number: Int
    /// Byte offset of the record header in the file.
    public var fileOffset: Int
    public var originalLength: UInt32
    public var flags: UInt32
    public var cumulativeDrops: UInt32
    /// Microseconds since the btsnoop epoch.
    public var timestamp: Int64
    /// The included bytes (may be fewer than `originalLength`).
    public var data: [UInt8]

    public init(number: Int, fileOffset: Int, originalLength: UInt32, flags: UInt32, cumulativeDrops: UInt32,
                timestamp: Int64, data: [UInt8]) {
        self.number = number
        self.fileOffset = fileOffset
        self.originalLength = originalLength
        self.flags = flags
        self.cumulativeDrops = cumulativeDrops
        self.timestamp = timestamp
        self.data = data
    }

    /// Seconds since 1970-01-01T00:00:00Z.
    public var unixTime: Double {
        Double(timestamp &- Self.epochDeltaMicroseconds) / 1_000_000
    }

    /// Byte offset in the file of the first packet byte.
    public var dataOffset: Int { fileOffset + BTSnoopReader.recordHeaderSize }
}

/// Streaming btsnoop reader: feed the file's bytes in chunks of any size
/// with `append`, take records with `next()`, and call `finish()` at the end
/// of the file. Memory holds at most one record plus the unread chunk.
/// Every error names the absolute byte offset in the file.
public struct BTSnoopReader: Sendable {
    public static let magic: [UInt8] = Array("btsnoop".utf8) + [0]
    public static let fileHeaderSize = 16
    public static let recordHeaderSize = 24
    /// Larger than any HCI packet (monitor frames carry at most 1 + 65535
    /// bytes); anything bigger is corruption, not a packet.
    public static let maximumRecordLength: UInt32 = 1 << 17

    public private(set) var datalink: BTSnoopDatalink?
    public private(set) var version: UInt32?

    private var buffer: [UInt8] = []
    private var start = 0            // first unread byte in `buffer`
    private var consumed = 0         // file offset of buffer[0]
    private var recordCount = 0

    public init() {}

    /// File offset of the next unread byte.
    public var offset: Int { consumed + start }

    public mutating func append(_ bytes: some Sequence<UInt8>) {
        if start > 0 && start >= buffer.count / 2 {
            buffer.removeFirst(start)
            consumed += start
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete record, or nil when more bytes are needed.
    public mutating func next() throws(DecodeError) -> BTSnoopRecord? {
        if datalink == nil {
            guard buffer.count - start >= Self.fileHeaderSize else {
                // Reject a wrong magic as soon as the bytes show it.
                try checkMagic(upTo: buffer.count - start)
                return nil
            }
            try checkMagic(upTo: 8)
            let bytes = Array(buffer[start..<(start + Self.fileHeaderSize)])
            let (version, link) = try btsnoopRebasing(by: offset) { () throws(DecodeError) -> (UInt32, BTSnoopDatalink) in
                var r = ByteReader(bytes, context: "btsnoop file header", offset: 8)
                let version = try r.uint32("version", bigEndian: true)
                guard version == 1 else { throw r.error("version", .invalidValue("version \(version), only 1 is defined"), at: 8) }
                return (version, BTSnoopDatalink(rawValue: try r.uint32("datalink type", bigEndian: true)))
            }
            self.version = version
            self.datalink = link
            start += Self.fileHeaderSize
        }
        guard buffer.count - start >= Self.recordHeaderSize else { return nil }
        let recordOffset = offset
        let header = Array(buffer[start..<(start + Self.recordHeaderSize)])
        let context = "btsnoop record \(recordCount)"
        let (original, included, flags, drops, ts) = try btsnoopRebasing(by: recordOffset) {
            () throws(DecodeError) -> (UInt32, UInt32, UInt32, UInt32, Int64) in
            var r = ByteReader(header, context: context)
            let original = try r.uint32("original length", bigEndian: true)
            let included = try r.uint32("included length", bigEndian: true)
            let flags = try r.uint32("packet flags", bigEndian: true)
            let drops = try r.uint32("cumulative drops", bigEndian: true)
            let ts = Int64(bitPattern: try r.uint64("timestamp", bigEndian: true))
            guard included <= original else {
                throw r.error("included length", .invalidValue("\(included) exceeds the original length \(original)"), at: 4)
            }
            guard included <= Self.maximumRecordLength else {
                throw r.error("included length", .invalidValue("\(included) bytes is not a plausible HCI packet"), at: 4)
            }
            return (original, included, flags, drops, ts)
        }
        let total = Self.recordHeaderSize + Int(included)
        guard buffer.count - start >= total else { return nil }
        let data = Array(buffer[(start + Self.recordHeaderSize)..<(start + total)])
        start += total
        defer { recordCount += 1 }
        return BTSnoopRecord(number: recordCount, fileOffset: recordOffset, originalLength: original, flags: flags,
                             cumulativeDrops: drops, timestamp: ts, data: data)
    }

    /// Call at the end of the file: fails if it stopped inside the header or a record.
    public func finish() throws(DecodeError) {
        let left = buffer.count - start
        if datalink == nil {
            throw DecodeError(context: "btsnoop file header", field: left == 0 ? "identification pattern" : "file header",
                              offset: offset, reason: .truncated(needed: Self.fileHeaderSize, available: left))
        }
        guard left == 0 else {
            let needed: Int
            if left < Self.recordHeaderSize {
                needed = Self.recordHeaderSize
            } else {
                let b = buffer[(start + 4)..<(start + 8)]
                needed = Self.recordHeaderSize + Int(b.reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
            }
            throw DecodeError(context: "btsnoop record \(recordCount)", field: left < Self.recordHeaderSize ? "record header" : "packet data",
                              offset: offset, reason: .truncated(needed: needed, available: left))
        }
    }

    private func checkMagic(upTo count: Int) throws(DecodeError) {
        let n = min(count, 8)
        for i in 0..<n where buffer[start + i] != Self.magic[i] {
            throw DecodeError(context: "btsnoop file header", field: "identification pattern", offset: offset + i,
                              reason: .invalidValue("not a btsnoop file (expected \"btsnoop\\0\")"))
        }
    }
}

/// Runs `body` and shifts the offset of any DecodeError it throws by `base`,
/// so errors from a reader over one packet name the byte's offset in the file.
func btsnoopRebasing<T>(by base: Int, _ body: () throws(DecodeError) -> T) throws(DecodeError) -> T {
    do {
        return try body()
    } catch {
        var e = error
        e.offset += base
        throw e
    }
}

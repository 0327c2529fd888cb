import FoundationEssentials
import QuenchCore
#if canImport(Glibc)
import Glibc
#endif

/// The bytes of an import, a chunk at a time: a file, stdin or a pipe of any
/// size is read in bounded memory, and every byte has an offset to name in errors.
struct ByteSource {
    private enum Origin {
        case descriptor(Int32)
        case memory
    }

    private let origin: Origin
    private let name: String
    private var buffer: [UInt8]
    /// How much of `buffer` holds input.
    private var filled: Int
    private var position = 0
    /// Offset in the input of `buffer[0]`.
    private var bufferStart = 0
    private var ended = false

    static let chunkSize = 1 << 16

    /// Reads from an open descriptor, which stays the caller's to close.
    init(descriptor: Int32, name: String) {
        origin = .descriptor(descriptor)
        self.name = name
        buffer = [UInt8](repeating: 0, count: Self.chunkSize)
        filled = 0
    }

    /// Reads bytes already in memory (tests and fuzzing).
    init(bytes: [UInt8], name: String = "input") {
        origin = .memory
        self.name = name
        buffer = bytes
        filled = bytes.count
        ended = true
    }

    /// Offset of the next byte `next()` returns.
    var offset: Int { bufferStart + position }

    mutating func peek() throws(HistoryError) -> UInt8? {
        if position == filled, !(try refill()) { return nil }
        return buffer[position]
    }

    mutating func next() throws(HistoryError) -> UInt8? {
        if position == filled, !(try refill()) { return nil }
        defer { position += 1 }
        return buffer[position]
    }

    private mutating func refill() throws(HistoryError) -> Bool {
        guard !ended, case .descriptor(let fd) = origin else { return false }
        bufferStart += filled
        position = 0
        filled = 0
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, Self.chunkSize) }
            if n > 0 {
                filled = n
                return true
            }
            if n == 0 { ended = true; return false }
            if errno == EINTR { continue }
            let code = errno
            throw .invalidImport(file: name, line: nil,
                                 reason: "reading failed at byte offset \(offset): \(String(cString: strerror(code)))")
        }
    }

    /// Skips spaces, tabs and line ends; returns the next byte without taking it.
    mutating func skipBlanks() throws(HistoryError) -> UInt8? {
        while let byte = try peek() {
            guard byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\t") else {
                return byte
            }
            _ = try next()
        }
        return nil
    }

    /// Skips a UTF-8 byte order mark at the start (spreadsheets write one).
    mutating func skipByteOrderMark() throws(HistoryError) {
        guard offset == 0, try peek() == 0xEF else { return }
        for expected: UInt8 in [0xEF, 0xBB, 0xBF] where try next() != expected {
            throw .invalidImport(file: name, line: nil, reason: "byte offset \(offset - 1): not UTF-8 text")
        }
    }
}

/// Where a problem is: a line (CSV) or an item of the JSON export, and the byte offset.
struct InputPlace: CustomStringConvertible {
    var line: Int?
    var byteOffset: Int
    var description: String {
        line.map { "line \($0) (byte offset \(byteOffset))" } ?? "byte offset \(byteOffset)"
    }
}

/// RFC 4180 CSV read row by row. A row is bounded (`maxRowBytes`), so a file
/// without line breaks (`/dev/zero`, a binary) is refused, not read into memory.
struct CSVRowReader {
    var source: ByteSource
    let file: String
    /// `,` as RFC 4180 has it; a `;` or tab file says so in its header.
    var separator = UInt8(ascii: ",")
    private var line = 1

    static let maxRowBytes = 1 << 20

    init(_ source: ByteSource, file: String) {
        self.source = source
        self.file = file
    }

    /// The next row that is not blank, with the line it starts on; nil at the end.
    mutating func next() throws(HistoryError) -> (line: Int, fields: [String])? {
        try source.skipByteOrderMark()
        while true {
            let rowLine = line, rowOffset = source.offset
            var fields: [String] = []
            var field: [UInt8] = []
            var fieldOffset = source.offset
            var quoted = false, wasQuoted = false, sawAny = false
            var rowBytes = 0
            func finishField(_ reader: Self) throws(HistoryError) {
                if let bad = String.firstInvalidUTF8Offset(field) {
                    throw reader.failure(at: InputPlace(line: reader.line, byteOffset: fieldOffset + bad), "not valid UTF-8 text")
                }
                let text = String(decoding: field, as: UTF8.self)
                fields.append(text)
                field.removeAll(keepingCapacity: true)
            }
            while true {
                guard let byte = try source.next() else {
                    if quoted { throw failure(at: InputPlace(line: rowLine, byteOffset: rowOffset), "a quoted field is never closed") }
                    guard sawAny else { return nil }
                    try finishField(self)
                    return (rowLine, fields)
                }
                sawAny = true
                rowBytes += 1
                if rowBytes > Self.maxRowBytes {
                    throw failure(at: InputPlace(line: rowLine, byteOffset: rowOffset),
                                  "a row longer than \(Self.maxRowBytes / 1024) KB: not an export")
                }
                if byte == 0 {
                    throw failure(at: InputPlace(line: line, byteOffset: source.offset - 1), "a NUL byte: this is not a text file")
                }
                if quoted {
                    if byte == UInt8(ascii: "\"") {
                        if try source.peek() == UInt8(ascii: "\"") { _ = try source.next(); field.append(byte) } else { quoted = false }
                    } else {
                        if byte == UInt8(ascii: "\n") { line += 1 }
                        field.append(byte)
                    }
                    continue
                }
                switch byte {
                case UInt8(ascii: "\"") where field.isEmpty && !wasQuoted:
                    quoted = true
                    wasQuoted = true
                case separator:
                    try finishField(self)
                    wasQuoted = false
                    fieldOffset = source.offset
                case UInt8(ascii: "\r"):
                    break
                case UInt8(ascii: "\n"):
                    try finishField(self)
                    line += 1
                    // A blank line is skipped, not a row of one empty field.
                    if fields.count == 1, fields[0].isEmpty, !wasQuoted { break }
                    return (rowLine, fields)
                default:
                    if wasQuoted {
                        throw failure(at: InputPlace(line: line, byteOffset: source.offset - 1), "text after a closing quote")
                    }
                    field.append(byte)
                }
                if byte == UInt8(ascii: "\n") { break }
            }
        }
    }

    func failure(at place: InputPlace, _ reason: String) -> HistoryError {
        .invalidImport(file: file, line: nil, reason: "\(place): \(reason)")
    }
}

/// Splits a Quench JSON export into its top-level members, and its `events`
/// array into one element at a time, without building the document: each
/// piece is then decoded on its own, so a ten-year export is read in bounded
/// memory. Only the structure is checked here (strings, nesting, separators);
/// each piece's content is left to the decoder, which names the field.
struct JSONExportReader {
    var source: ByteSource
    let file: String

    /// The largest member other than `events` (settings, goals, devices) and the largest single event.
    static let maxMemberBytes = 16 << 20
    static let maxEventBytes = 1 << 20
    static let maxDepth = 64

    init(_ source: ByteSource, file: String) {
        self.source = source
        self.file = file
    }

    /// Reads the whole document: `member` gets each top-level key other than
    /// `events` with its value's bytes; `event` gets each element of `events`
    /// with its index and byte offset.
    mutating func read(
        member: (_ key: String, _ value: [UInt8], _ offset: Int) throws(HistoryError) -> Void,
        event: (_ index: Int, _ value: [UInt8], _ offset: Int) throws(HistoryError) -> Void
    ) throws(HistoryError) {
        try source.skipByteOrderMark()
        try expect(UInt8(ascii: "{"), "a JSON object")
        var seen: Set<String> = []
        if try source.skipBlanks() == UInt8(ascii: "}") {
            _ = try source.next()
        } else {
            while true {
                let keyOffset = try skipWhitespaceOffset()
                let key = try readKey()
                guard seen.insert(key).inserted else {
                    throw failure(keyOffset, "the key \"\(key.shownSafely(limit: 40))\" appears twice")
                }
                try expect(UInt8(ascii: ":"), "':' after the key \"\(key.shownSafely(limit: 40))\"")
                if key == "events" {
                    try readEvents(event)
                } else {
                    let offset = try skipWhitespaceOffset()
                    try member(key, try captureValue(limit: Self.maxMemberBytes, what: "the value of \"\(key.shownSafely(limit: 40))\""), offset)
                }
                if try !another(closing: UInt8(ascii: "}"), inside: "the JSON object", after: "the value of \"\(key.shownSafely(limit: 40))\"") {
                    break
                }
            }
        }
        let end = try skipWhitespaceOffset()
        if try source.peek() != nil { throw failure(end, "text after the end of the JSON object") }
    }

    private mutating func readEvents(_ event: (Int, [UInt8], Int) throws(HistoryError) -> Void) throws(HistoryError) {
        try expect(UInt8(ascii: "["), "the events as a JSON array")
        if try source.skipBlanks() == UInt8(ascii: "]") { _ = try source.next(); return }
        var index = 0
        while true {
            let offset = try skipWhitespaceOffset()
            try event(index, try captureValue(limit: Self.maxEventBytes, what: "event \(index + 1)"), offset)
            index += 1
            if try !another(closing: UInt8(ascii: "]"), inside: "the events", after: "event \(index)") { return }
        }
    }

    /// After a value in an object or a list: true at ',' (another follows), false at `closing`.
    private mutating func another(closing: UInt8, inside: String, after: String) throws(HistoryError) -> Bool {
        let offset = try skipWhitespaceOffset()
        switch try source.next() {
        case UInt8(ascii: ","):
            // JSON allows no comma before the close (an editor's or a script's habit): said as that.
            _ = try skipWhitespaceOffset()
            if try source.peek() == closing { throw failure(offset, "a ',' after \(after), where '\(Character(UnicodeScalar(closing)))' ends \(inside): JSON allows no comma there") }
            return true
        case closing: return false
        case nil: throw failure(offset, "the file ends inside \(inside) (cut short?)")
        default: throw failure(offset, "expected ',' or '\(Character(UnicodeScalar(closing)))' after \(after)")
        }
    }

    /// A key: a JSON string, decoded.
    private mutating func readKey() throws(HistoryError) -> String {
        let offset = source.offset
        guard try source.peek() == UInt8(ascii: "\"") else { throw failure(offset, "expected a key in double quotes") }
        let raw = try captureValue(limit: 4096, what: "a key")
        guard let key = try? JSONDecoder().decode(String.self, from: Data(raw)) else {
            throw failure(offset, "the key is not a valid JSON string")
        }
        return key
    }

    /// The bytes of one complete JSON value (object, array, string or scalar),
    /// after checking that its brackets and strings close.
    private mutating func captureValue(limit: Int, what: String) throws(HistoryError) -> [UInt8] {
        let start = source.offset
        var value: [UInt8] = []
        var closers: [UInt8] = []
        var inString = false, escaped = false
        func append(_ byte: UInt8, _ reader: Self) throws(HistoryError) {
            value.append(byte)
            if value.count > limit { throw reader.failure(start, "\(what) is longer than \(limit >> 10) KB") }
        }
        guard let first = try source.peek() else { throw failure(start, "the file ends where \(what) should be") }
        let scalar = first != UInt8(ascii: "{") && first != UInt8(ascii: "[") && first != UInt8(ascii: "\"")
        while let byte = try source.peek() {
            if byte == 0 { throw failure(source.offset, "a NUL byte: this is not a text file") }
            if inString {
                _ = try source.next()
                try append(byte, self)
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") {
                    inString = false
                    if closers.isEmpty { return value }
                }
                continue
            }
            if scalar {
                switch byte {
                case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), UInt8(ascii: " "), UInt8(ascii: "\n"),
                     UInt8(ascii: "\r"), UInt8(ascii: "\t"):
                    return value
                default:
                    _ = try source.next()
                    try append(byte, self)
                }
                continue
            }
            _ = try source.next()
            try append(byte, self)
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                closers.append(byte == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]"))
                if closers.count > Self.maxDepth { throw failure(source.offset - 1, "\(what) nests deeper than \(Self.maxDepth) levels") }
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                guard closers.last == byte else {
                    throw failure(source.offset - 1, "a '\(Character(UnicodeScalar(byte)))' that closes nothing in \(what)")
                }
                closers.removeLast()
                if closers.isEmpty { return value }
            default: break
            }
        }
        if scalar, !value.isEmpty { return value }
        throw failure(start, "the file ends inside \(what)")
    }

    private mutating func skipWhitespaceOffset() throws(HistoryError) -> Int {
        _ = try source.skipBlanks()
        return source.offset
    }

    private mutating func expect(_ byte: UInt8, _ what: String) throws(HistoryError) {
        let offset = try skipWhitespaceOffset()
        guard let found = try source.next() else { throw failure(offset, "the file ends where \(what) should be") }
        guard found == byte else { throw failure(offset, "expected \(what)") }
    }

    func failure(_ offset: Int, _ reason: String) -> HistoryError {
        .invalidImport(file: file, line: nil, reason: "byte offset \(offset): \(reason)")
    }
}

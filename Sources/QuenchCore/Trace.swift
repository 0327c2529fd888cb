/// Trace format v1: a CSV of sensor readings with a `# key: value` header
/// (documented in docs/trace-format.md).
///
/// ```
/// # quench trace v1
/// # sensor: weight
/// # unit: g
/// # started: 2026-03-02T07:30:00Z
/// t,value
/// 0.000,1050.2
/// ```
public enum TraceFormat {
    public static let magic = "# quench trace v1"
    public static let columns = "t,value"
    /// Longer lines are refused so a corrupt file cannot make the parser buffer without bound.
    public static let maximumLineLength = 4096
    /// Header `key: value` lines kept beyond sensor, unit and started; more are
    /// counted, not kept, so a header cannot hold a trace's memory hostage.
    public static let maximumMetadata = 256
    /// The furthest `t` from 0 (s), about 317 years: room for a logger that writes
    /// epoch seconds, none for a corrupt row to make a trace span 10^295 days.
    public static let largestSeconds = 1e10
}

/// The header of a trace: what it measures and when it began.
public struct TraceHeader: Sendable, Hashable {
    public var sensor: SensorKind?
    public var unit: MeasurementUnit?
    /// Wall-clock time of t = 0.
    public var started: Timestamp?
    /// Every other `key: value` line, in file order (the first `TraceFormat.maximumMetadata`).
    public var metadata: [Metadata]
    /// Header lines beyond those, counted but not kept.
    public var droppedMetadata = 0
    /// The line of the last reading when the file ended without its line end: a recording cut off
    /// mid-line leaves its last reading cut too (`…,1050.2` read as `…,10`), so a replay says so.
    public var unterminatedReadingLine: Int?

    public struct Metadata: Sendable, Hashable {
        public var key: String
        public var value: String
        public init(key: String, value: String) {
            self.key = key
            self.value = value
        }
    }

    public init(sensor: SensorKind? = nil, unit: MeasurementUnit? = nil, started: Timestamp? = nil, metadata: [Metadata] = []) {
        self.sensor = sensor
        self.unit = unit
        self.started = started
        self.metadata = metadata
    }

    public subscript(key: String) -> String? {
        metadata.last { $0.key == key }?.value
    }

    /// The header lines as written to a file, ending with the `t,value` line.
    public func formatted() -> String {
        var lines = [TraceFormat.magic]
        if let sensor { lines.append("# sensor: \(sensor.rawValue)") }
        if let unit { lines.append("# unit: \(unit.rawValue)") }
        if let started { lines.append("# started: \(started.iso8601)") }
        for item in metadata { lines.append("# \(item.key): \(item.value)") }
        lines.append(TraceFormat.columns)
        return lines.joined(separator: "\n") + "\n"
    }
}

/// A problem in a trace file, with the line it was found on.
public typealias TraceError = LineError<TraceProblem>

/// What can be wrong on a line of a trace file.
public enum TraceProblem: Sendable, Hashable, CustomStringConvertible {
    case empty
    case missingMagic(found: String)
    case malformedHeaderLine(String)
    case unknownSensor(String)
    case unknownUnit(String)
    case unitDoesNotFitSensor(unit: MeasurementUnit, sensor: SensorKind)
    case invalidStarted(String)
    case duplicateKey(String)
    case missingColumns
    case unexpectedColumns(found: String, separatedWrongly: Bool = false)
    /// `decimalComma`: every field a run of digits, as `0,5,1050,2` is (a spreadsheet's decimal comma).
    case wrongFieldCount(Int, decimalComma: Bool = false)
    case invalidTime(String)
    case invalidValue(String)
    case timeGoesBack(previous: Double, found: Double)
    case timeOutOfRange(Double)
    case lineTooLong
    /// `capacity-ml` or `empty-weight-g` that is no number in its range (it was ignored).
    case invalidBottleValue(key: String, found: String, expected: String)
    case invalidLevelCurve(CalibrationError)
    case invalidUTF8
    /// A NUL byte in the first line: a binary file (NUL is UTF-8, so "not valid UTF-8" said what was not so).
    case binary
    /// A UTF-16 byte-order mark: text, in another encoding (a Windows "Unicode" save).
    case utf16
    /// The file is a btsnoop capture (it begins `btsnoop\0`), not a trace.
    case btsnoopCapture
    /// A carriage return inside a line: lines ended by CR alone (an old Mac's ending).
    case bareCarriageReturn
    /// The file is compressed (its first bytes are gzip's, zstd's, xz's, bzip2's or zip's).
    case compressed(format: String)

    public var description: String {
        switch self {
        case .empty: "the file is empty; a trace starts with '\(TraceFormat.magic)'"
        case .missingMagic(let found): "expected '\(TraceFormat.magic)', found '\(found)'"
        case .malformedHeaderLine(let l): "header line '\(l)' is not '# key: value'"
        case .unknownSensor(let s): "unknown sensor '\(s)' (expected weight or level)"
        case .unknownUnit(let u): "unknown unit '\(u)' (expected g, kg, lb, oz, mm, percent or raw)"
        case .unitDoesNotFitSensor(let unit, let sensor): "unit \(unit.rawValue) is not a unit of a \(sensor.rawValue) sensor"
        case .invalidStarted(let s): "started '\(s)' is not an ISO-8601 date-time with a zone (like 2026-03-02T07:30:00Z)"
        case .duplicateKey(let k): "'\(k)' is given twice"
        case .missingColumns: "no 't,value' line before the readings"
        case .unexpectedColumns(let found, let separatedWrongly):
            "expected the column line 't,value', found '\(found)'"
                + (separatedWrongly ? " (fields are separated by a comma, not a semicolon or a tab)" : "")
        case .wrongFieldCount(let n, let decimalComma):
            "expected 2 fields 't,value', found \(n)"
                + (decimalComma ? " (a decimal comma? numbers take a point: 0.5,1050.2, not 0,5,1050,2)" : "")
        case .invalidTime(let t): "t '\(t)' is not a finite number of seconds"
        case .invalidValue(let v): "value '\(v)' is not a finite number"
        case .timeOutOfRange(let t): "t \(t.compactDescription) is beyond ±\(TraceFormat.largestSeconds.compactDescription) s (317 years)"
        case .timeGoesBack(let previous, let found): "t \(found.compactDescription) is before the previous row's \(previous.compactDescription) (t must not decrease)"
        case .lineTooLong: "longer than \(TraceFormat.maximumLineLength) bytes"
        case .invalidBottleValue(let key, let found, let expected): "\(key) '\(found)' is not \(expected)"
        case .invalidLevelCurve(let error): "level-curve: \(error)"
        case .invalidUTF8: "not valid UTF-8 text"
        case .binary: "a NUL byte: a binary file, not a trace as text"
        case .utf16: "UTF-16 text (a Windows \"Unicode\" save): save it as UTF-8"
        case .btsnoopCapture: "a btsnoop capture, not a trace"
        case .bareCarriageReturn: "a line ends in a carriage return alone (CR, an old Mac's line ending): save the file with LF or CRLF line endings"
        case .compressed(let format): "\(format)-compressed, not a trace as text: decompress it first"
        }
    }
}

/// A problem found on a line of a text file (a trace, a truth file): the
/// one-based line and what was wrong there, in the file format's own words.
public struct LineError<Reason: Sendable & Hashable & CustomStringConvertible>: Error, Sendable, Hashable, CustomStringConvertible {
    public var line: Int
    public var reason: Reason

    public init(line: Int, reason: Reason) {
        self.line = line
        self.reason = reason
    }

    public var description: String { "line \(line): \(reason)" }

    /// The reason alone, for messages that name the place themselves.
    public var reasonDescription: String { reason.description }
}

/// A streaming trace parser: feed it bytes in chunks of any size; it calls
/// back with each reading. Memory is bounded by the longest allowed line.
public struct TraceParser: Sendable {
    public private(set) var header = TraceHeader()
    /// True once the `t,value` line has been read.
    public private(set) var inReadings = false
    private var sawMagic = false
    private var line = 0
    private var carry: [UInt8] = []
    private var previousT = -Double.infinity

    public init() {}

    /// Parses a chunk; a line cut at the chunk's end is kept for the next one.
    public mutating func parse(_ chunk: UnsafeRawBufferPointer, _ emit: (Reading) -> Void) throws(TraceError) {
        try parseChunk(chunk, emit)
    }

    /// Parses a chunk, appending its readings to `readings` (the replay's path:
    /// the append is compiled into the loop, no call per reading).
    public mutating func parse(_ chunk: UnsafeRawBufferPointer, into readings: inout [Reading]) throws(TraceError) {
        try parseChunk(chunk) { readings.append($0) }
    }

    @inline(__always)
    private mutating func parseChunk(_ chunk: UnsafeRawBufferPointer, _ emit: (Reading) -> Void) throws(TraceError) {
        let bytes = chunk.bindMemory(to: UInt8.self)
        var start = 0
        let count = bytes.count
        while start < count {
            // Plain rows (`12.5,1050.2`) in one pass, without looking for the line's end first;
            // anything else (and every error) through the general path below.
            if inReadings, carry.isEmpty, let next = fastRow(bytes, from: start, emit) {
                start = next
                continue
            }
            guard let newline = Self.index(of: 0x0A, in: bytes, from: start) else {
                guard carry.count + (count - start) <= TraceFormat.maximumLineLength + 1 else {  // + a CRLF's \r
                    let pending = carry + UnsafeBufferPointer(rebasing: bytes[start..<count])
                    throw TraceError(line: line + 1, reason: (line == 0 ? Self.notText(pending) : nil)
                                        ?? (pending.dropLast().contains(0x0D) ? .bareCarriageReturn : .lineTooLong))
                }
                carry.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<count]))
                return
            }
            if carry.isEmpty {
                try parseLine(UnsafeBufferPointer(rebasing: bytes[start..<newline]), emit)
            } else {
                carry.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<newline]))
                let whole = carry
                carry.removeAll(keepingCapacity: true)
                try parseLine(copying: whole, emit)
            }
            start = newline + 1
        }
    }

    /// Convenience for tests and small inputs.
    public mutating func parse(_ text: String, _ emit: (Reading) -> Void) throws(TraceError) {
        let bytes = Array(text.utf8)
        var failure: TraceError?
        bytes.withUnsafeBytes { buffer in
            do throws(TraceError) { try parse(buffer, emit) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Parses the last line if it had no newline, and checks the file was complete.
    public mutating func finish(_ emit: (Reading) -> Void) throws(TraceError) {
        if !carry.isEmpty {
            let whole = carry
            carry.removeAll()
            var read = false
            try parseLine(copying: whole) { read = true; emit($0) }
            if read { header.unterminatedReadingLine = line }
        }
        guard sawMagic else { throw TraceError(line: max(line, 1), reason: .empty) }
        guard inReadings else { throw TraceError(line: line, reason: .missingColumns) }
    }

    /// Parses a whole in-memory trace.
    public static func parse(_ text: String) throws(TraceError) -> (TraceHeader, [Reading]) {
        var parser = TraceParser()
        var readings: [Reading] = []
        try parser.parse(text) { readings.append($0) }
        try parser.finish { readings.append($0) }
        return (parser.header, readings)
    }

    @inline(__always)
    private static func index(of byte: UInt8, in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        var i = start
        while i < bytes.count {
            if bytes[i] == byte { return i }
            i += 1
        }
        return nil
    }

    private mutating func parseLine(copying bytes: [UInt8], _ emit: (Reading) -> Void) throws(TraceError) {
        var failure: TraceError?
        bytes.withUnsafeBufferPointer { line in
            do throws(TraceError) { try parseLine(line, emit) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    private mutating func parseLine(_ raw: UnsafeBufferPointer<UInt8>, _ emit: (Reading) -> Void) throws(TraceError) {
        line += 1
        var lo = 0, hi = raw.count
        if line == 1, hi >= 3, raw[0] == 0xEF, raw[1] == 0xBB, raw[2] == 0xBF { lo = 3 }  // UTF-8 BOM
        // A capture is read with --btsnoop, a compressed file after decompressing: as text they were "not valid
        // UTF-8", or a CR among their bytes blamed on an old Mac's line endings, which said nothing of that.
        if line == 1, let reason = Self.notText(Array(raw[lo...])) { throw TraceError(line: line, reason: reason) }
        // A CRLF line's \r is its ending, not its content: the limit is the same either way.
        if hi > lo, raw[hi - 1] == 0x0D { hi -= 1 }
        guard hi - lo <= TraceFormat.maximumLineLength else { throw TraceError(line: line, reason: .lineTooLong) }
        while hi > lo, raw[hi - 1] == 0x0D || raw[hi - 1] == 0x20 || raw[hi - 1] == 0x09 { hi -= 1 }
        while lo < hi, raw[lo] == 0x20 || raw[lo] == 0x09 { lo += 1 }
        if lo == hi { return }  // blank lines are ignored everywhere
        let text = UnsafeBufferPointer(rebasing: raw[lo..<hi])
        // Lines ended by CR alone ran together into one, and the error quoted a run of them.
        if text.contains(0x0D) { throw TraceError(line: line, reason: .bareCarriageReturn) }

        if inReadings {
            if text[0] == 0x23 { return }  // a comment among the readings
            emit(try parseRow(text))
            return
        }
        let string = try Self.string(text, line: line)
        if !sawMagic {
            guard string == TraceFormat.magic else { throw TraceError(line: line, reason: .missingMagic(found: Self.clip(string))) }
            sawMagic = true
            return
        }
        if string.first == "#" {
            try parseHeaderLine(string)
            return
        }
        let columns = string.replacingSpaces()
        guard columns == TraceFormat.columns else {
            if parseNumberPair(text) { throw TraceError(line: line, reason: .missingColumns) }
            // Clipped, a tab is shown `\u{9}`: the hint is judged on the line as it is.
            throw TraceError(line: line, reason: .unexpectedColumns(found: Self.clip(string), separatedWrongly: string.contains(";") || string.contains("\t")))
        }
        inReadings = true
    }

    private mutating func parseHeaderLine(_ string: String) throws(TraceError) {
        let body = string.dropFirst().drop { $0 == " " || $0 == "\t" }
        if body.isEmpty { return }  // a bare '#' is a comment
        guard let colon = body.firstIndex(of: ":") else {
            throw TraceError(line: line, reason: .malformedHeaderLine(Self.clip(string)))
        }
        let key = String(body[..<colon].trimmingSpaces).lowercased()
        // Keep everything after the first ':' (timestamps contain colons); drop the
        // documentation's trailing "(weight | level)" style hints.
        var value = body[body.index(after: colon)...].trimmingSpaces
        guard !key.isEmpty, !key.contains(" ") else {
            throw TraceError(line: line, reason: .malformedHeaderLine(Self.clip(string)))
        }
        switch key {
        case "sensor":
            if let paren = value.firstIndex(of: "(") { value = value[..<paren].trimmingSpaces }
            guard header.sensor == nil else { throw TraceError(line: line, reason: .duplicateKey(key)) }
            guard let sensor = SensorKind(rawValue: value.lowercased()) else {
                throw TraceError(line: line, reason: .unknownSensor(Self.clip(String(value))))
            }
            header.sensor = sensor
        case "unit":
            if let paren = value.firstIndex(of: "(") { value = value[..<paren].trimmingSpaces }
            guard header.unit == nil else { throw TraceError(line: line, reason: .duplicateKey(key)) }
            guard let unit = MeasurementUnit(rawValue: value.lowercased()) else {
                throw TraceError(line: line, reason: .unknownUnit(Self.clip(String(value))))
            }
            header.unit = unit
        case "started":
            if let paren = value.firstIndex(of: "(") { value = value[..<paren].trimmingSpaces }
            guard header.started == nil else { throw TraceError(line: line, reason: .duplicateKey(key)) }
            guard let started = Timestamp(iso8601: value) else {
                throw TraceError(line: line, reason: .invalidStarted(Self.clip(String(value))))
            }
            header.started = started
        case "capacity-ml", "empty-weight-g", "level-curve":
            // The bottle's calibration, which replay uses: checked here, where its line is known
            // (an unreadable one was ignored, and 0x64 read as 100).
            guard header[key] == nil else { throw TraceError(line: line, reason: .duplicateKey(key)) }
            if key == "level-curve" {
                do throws(CalibrationError) { _ = try LevelCurve(parsing: String(value)) } catch { throw TraceError(line: line, reason: .invalidLevelCurve(error)) }
            } else {
                let capacity = key == "capacity-ml"
                let range = capacity ? BottleCalibration.capacitiesML : BottleCalibration.emptyWeightsG
                guard let number = Self.decimal(value), range.contains(number) else {
                    throw TraceError(line: line, reason: .invalidBottleValue(
                        key: key, found: Self.clip(String(value)),
                        expected: capacity ? "a number of mL from 1 to 100,000" : "a number of grams from 0 to 100,000"))
                }
            }
            header.metadata.append(.init(key: key, value: String(value)))
        default:
            if header.metadata.count < TraceFormat.maximumMetadata {
                header.metadata.append(.init(key: key, value: String(value)))
            } else {
                header.droppedMetadata += 1
            }
        }
        // Said at the line of the second of the two, where the mismatch shows (it was said at the
        // `t,value` line, a line the person had not got wrong).
        if let unit = header.unit, let sensor = header.sensor, unit.sensor != sensor {
            throw TraceError(line: line, reason: .unitDoesNotFitSensor(unit: unit, sensor: sensor))
        }
        // The same for a curve in a scale's trace: one of the two lines is not what was meant.
        if let unit = header.unit, unit.sensor == .weight, header["level-curve"] != nil {
            throw TraceError(line: line, reason: .invalidLevelCurve(.levelCurveForScale(unit)))
        }
    }

    private mutating func parseRow(_ text: UnsafeBufferPointer<UInt8>) throws(TraceError) -> Reading {
        var comma = -1
        var fields = 1
        for i in 0..<text.count where text[i] == 0x2C {
            if comma < 0 { comma = i }
            fields += 1
        }
        guard fields == 2 else {
            let digitsOnly = fields > 2 && text.allSatisfy { $0 == 0x2C || $0 == 0x2D || $0 == 0x20 || (0x30...0x39).contains($0) }
            throw TraceError(line: line, reason: .wrongFieldCount(fields, decimalComma: digitsOnly))
        }
        let tField = UnsafeBufferPointer(rebasing: text[0..<comma])
        let vField = UnsafeBufferPointer(rebasing: text[(comma + 1)...])
        guard let t = Self.number(tField) else {
            throw TraceError(line: line, reason: .invalidTime(Self.clip(Self.lossyString(tField))))
        }
        guard abs(t) <= TraceFormat.largestSeconds else { throw TraceError(line: line, reason: .timeOutOfRange(t)) }
        guard t >= previousT else { throw TraceError(line: line, reason: .timeGoesBack(previous: previousT, found: t)) }
        previousT = t
        if Self.isBlank(vField) { return Reading(t: t, value: nil) }
        guard let value = Self.number(vField) else {
            throw TraceError(line: line, reason: .invalidValue(Self.clip(Self.lossyString(vField))))
        }
        return Reading(t: t, value: value)
    }

    /// A row that is exactly `NUMBER,NUMBER` or `NUMBER,` with `\n` or `\r\n`,
    /// whose numbers take `number`'s fast path and whose time does not go
    /// back: read in place, returning where the next line starts. nil leaves
    /// the line (cut by the chunk's end, or anything else) to the general path,
    /// which gives the same reading, or the error with its line.
    @inline(__always)
    private mutating func fastRow(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, _ emit: (Reading) -> Void) -> Int? {
        var i = start
        guard let t = Self.plainNumber(bytes, &i), i < bytes.count, bytes[i] == 0x2C, t >= previousT,
              abs(t) <= TraceFormat.largestSeconds else { return nil }
        i += 1
        var value: Double?
        if i < bytes.count, bytes[i] != 0x0A, bytes[i] != 0x0D {
            guard let v = Self.plainNumber(bytes, &i) else { return nil }
            value = v
        }
        if i < bytes.count, bytes[i] == 0x0D { i += 1 }
        guard i < bytes.count, bytes[i] == 0x0A else { return nil }
        line += 1
        previousT = t
        emit(Reading(t: t, value: value))
        return i + 1
    }

    /// `-123.456` at `i` (at most 15 digits, at least one), moving `i` past it;
    /// the same value as `number`'s fast path gives.
    @inline(__always)
    private static func plainNumber(_ bytes: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> Double? {
        let count = bytes.count
        guard i < count else { return nil }
        let negative = bytes[i] == 0x2D
        if negative { i += 1 }
        var mantissa: UInt64 = 0
        var digits = 0
        var pointAt = -1
        while i < count {
            let c = bytes[i]
            let d = c &- 48
            if d < 10 {
                mantissa = mantissa &* 10 &+ UInt64(d)
                digits += 1
            } else if c == 0x2E, pointAt < 0 {
                pointAt = digits
            } else {
                break
            }
            i += 1
        }
        guard digits > 0, digits <= 15 else { return nil }
        let fractionDigits = pointAt < 0 ? 0 : digits - pointAt
        let magnitude = Double(mantissa) / powersOfTen[fractionDigits]
        return negative ? -magnitude : magnitude
    }

    private func parseNumberPair(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let comma = text.firstIndex(of: 0x2C) else { return false }
        return Self.number(UnsafeBufferPointer(rebasing: text[0..<comma])) != nil
    }

    private static func isBlank(_ field: UnsafeBufferPointer<UInt8>) -> Bool {
        field.allSatisfy { $0 == 0x20 || $0 == 0x09 }
    }

    /// Exact powers of ten: dividing an integer mantissa below 2^53 by one is correctly rounded.
    private static let powersOfTen: [Double] = (0...22).map { p in (0..<p).reduce(1.0) { r, _ in r * 10 } }

    /// A decimal number: fast path for `-123.456`; anything fancier (exponents,
    /// many digits) goes to the standard library; non-finite values are refused.
    @inline(__always)
    static func number(_ field: UnsafeBufferPointer<UInt8>) -> Double? {
        var lo = 0, hi = field.count
        while lo < hi, field[lo] == 0x20 || field[lo] == 0x09 { lo += 1 }
        while hi > lo, field[hi - 1] == 0x20 || field[hi - 1] == 0x09 { hi -= 1 }
        guard lo < hi else { return nil }
        var i = lo
        var negative = false
        if field[i] == 0x2D || field[i] == 0x2B {
            negative = field[i] == 0x2D
            i += 1
        }
        var mantissa: UInt64 = 0
        var digits = 0
        var fractionDigits = 0
        var seenPoint = false
        while i < hi {
            let c = field[i]
            let d = c &- 48
            if d < 10 {
                mantissa = mantissa &* 10 &+ UInt64(d)
                digits += 1
                if seenPoint { fractionDigits += 1 }
            } else if c == 0x2E, !seenPoint {
                seenPoint = true
            } else {
                break
            }
            i += 1
        }
        if i == hi, digits > 0, digits <= 15, fractionDigits <= 22 {
            let magnitude = Double(mantissa) / powersOfTen[fractionDigits]
            return negative ? -magnitude : magnitude
        }
        // Only a decimal with an exponent from here: Double(_:) would also take
        // hexadecimal (`0x10` as 16) and stop at a NUL byte as C's strtod does.
        let rest = UnsafeBufferPointer(rebasing: field[lo..<hi])
        guard rest.allSatisfy({ $0 &- 48 < 10 || $0 == 0x2E || $0 == 0x2B || $0 == 0x2D || $0 | 0x20 == 0x65 }),
              let value = Double(String(decoding: rest, as: UTF8.self)), value.isFinite
        else { return nil }
        return value
    }

    private static let btsnoopMagic: [UInt8] = Array("btsnoop\0".utf8)

    /// What a file that begins with `bytes` is when it is not text: a capture, a compressed file, or
    /// binary (a NUL, or bytes that are not UTF-8, in its first line); nil for text.
    static func notText(_ bytes: [UInt8]) -> TraceProblem? {
        if bytes.starts(with: btsnoopMagic) { return .btsnoopCapture }
        let compressed: [(String, [UInt8])] = [("gzip", [0x1F, 0x8B]), ("zstd", [0x28, 0xB5, 0x2F, 0xFD]),
                                               ("xz", [0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00]), ("bzip2", [0x42, 0x5A, 0x68]),
                                               ("zip", [0x50, 0x4B, 0x03, 0x04])]
        if let (format, _) = compressed.first(where: { bytes.starts(with: $0.1) }) { return .compressed(format: format) }
        var firstLine = bytes.prefix { $0 != 0x0A && $0 != 0x0D }
        // A line cut at the limit (no end in these bytes) may end in part of a character: up to three bytes of
        // one are not "not UTF-8".
        let cut = firstLine.count == bytes.count
        for _ in 0..<3 where cut && firstLine.last.map({ $0 & 0x80 != 0 }) == true && String(validating: firstLine, as: UTF8.self) == nil {
            firstLine = firstLine.dropLast()
        }
        if bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF]) { return .utf16 }
        if firstLine.contains(0) { return .binary }
        if String(validating: firstLine, as: UTF8.self) == nil { return .invalidUTF8 }
        return nil
    }

    private static func string(_ bytes: UnsafeBufferPointer<UInt8>, line: Int) throws(TraceError) -> String {
        guard let s = String(validating: bytes, as: UTF8.self) else { throw TraceError(line: line, reason: .invalidUTF8) }
        return s
    }

    private static func lossyString(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        String(decoding: bytes, as: UTF8.self)
    }

    /// Keeps quoted input short in messages.
    static func clip(_ s: String) -> String { s.shownSafely(limit: 57) }

    /// A number as the trace format writes one (`-12.5`, `1.25e3`; spaces around it): the
    /// rule for every number a trace, its header, a level curve or a truth file holds, so
    /// that hexadecimal (`0x64` as 100), `nan` and `inf` are refused there as in the rows.
    public static func decimal(_ text: some StringProtocol) -> Double? {
        var text = String(text)
        return text.withUTF8 { number($0) }
    }
}

extension String {
    fileprivate func replacingSpaces() -> String {
        String(filter { $0 != " " && $0 != "\t" }).lowercased()
    }
}

/// Writes trace v1 rows.
public enum TraceWriter {
    /// `t` with millisecond precision, value with up to `decimals` places; nil values as empty cells.
    public static func row(_ reading: Reading, decimals: Int = 2) -> String {
        let t = fixed(reading.t, places: 3)
        guard let value = reading.value else { return "\(t),\n" }
        return "\(t),\(fixed(value, places: decimals))\n"
    }

    /// Formats with exactly `places` decimals, without Foundation.
    public static func fixed(_ value: Double, places: Int) -> String {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        guard scaled < 9e15 else { return String(value) }
        let n = UInt64(scaled)
        let whole = n / UInt64(scale)
        var text = (value < 0 && n != 0 ? "-" : "") + String(whole)
        if places > 0 {
            let frac = String(n % UInt64(scale))
            text += "." + String(repeating: "0", count: places - frac.count) + frac
        }
        return text
    }
}

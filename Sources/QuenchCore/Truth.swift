/// What really happened to a bottle, as written by the simulator and read by
/// `quench evaluate` (documented in docs/trace-format.md, "Truth files").
///
/// ```
/// t_start,t_end,kind,ml
/// 312.400,318.950,sip,23.50
/// 4120.000,4161.300,refill,512.00
/// ```
/// `t_start` is when the bottle left the sensor (the lift or the tilt), `t_end`
/// when it was back (the set-down, or the first reading after a link gap that hid
/// it), both on the trace's clock; `ml` is positive. Lines starting with `#` and
/// blank lines are ignored.
public struct TruthEvent: Sendable, Hashable {
    public var tStart: Double
    public var tEnd: Double
    /// `sip`, `refill` or `pour`; diagnostics have no truth.
    public var kind: EventKind
    public var ml: Double

    public init(tStart: Double, tEnd: Double, kind: EventKind, ml: Double) {
        self.tStart = tStart
        self.tEnd = tEnd
        self.kind = kind
        self.ml = ml
    }
}

public enum TruthFormat {
    public static let columns = "t_start,t_end,kind,ml"
    /// The kinds a truth file may hold.
    public static let kinds: [EventKind] = [.sip, .refill, .pour]
}

/// A problem in a truth file, with the line it was found on.
public typealias TruthError = LineError<TruthProblem>

/// What can be wrong on a line of a truth file.
public enum TruthProblem: Sendable, Hashable, CustomStringConvertible {
    case empty
    case missingColumns(found: String)
    case wrongFieldCount(Int)
    case invalidTime(column: String, found: String)
    case unknownKind(String)
    case invalidML(String)
    case endBeforeStart(start: Double, end: Double)
    case lineTooLong

    public var description: String {
        switch self {
        case .empty: "the truth file is empty; it starts with '\(TruthFormat.columns)'"
        case .missingColumns(let found): "expected the column line '\(TruthFormat.columns)', found '\(found)'"
        case .wrongFieldCount(let n): "expected 4 fields '\(TruthFormat.columns)', found \(n)"
        case .invalidTime(let column, let found): "\(column) '\(found)' is not a finite number of seconds"
        case .unknownKind(let k): "unknown kind '\(k)' (expected sip, refill or pour)"
        case .invalidML(let m): "ml '\(m)' is not a number of mL above 0 and at most 100,000"
        case .endBeforeStart(let start, let end): "t_end \(end.compactDescription) is before t_start \(start.compactDescription)"
        case .lineTooLong: "longer than \(TraceFormat.maximumLineLength) bytes"
        }
    }
}

/// Reads a truth file line by line (so a long file is never held whole).
public struct TruthParser: Sendable {
    private var line = 0
    private var sawColumns = false

    public init() {}

    /// Parses one line (without its newline); returns the event it holds, if any.
    public mutating func parse(line text: Substring) throws(TruthError) -> TruthEvent? {
        line += 1
        guard text.utf8.count <= TraceFormat.maximumLineLength else { throw TruthError(line: line, reason: .lineTooLong) }
        var body = text
        if line == 1, body.first == "\u{FEFF}" { body = body.dropFirst() }
        body = body.trimmingWhitespace
        if body.isEmpty || body.first == "#" { return nil }
        guard sawColumns else {
            guard body.filter({ $0 != " " && $0 != "\t" }).lowercased() == TruthFormat.columns else {
                throw TruthError(line: line, reason: .missingColumns(found: TraceParser.clip(String(body))))
            }
            sawColumns = true
            return nil
        }
        let fields = body.split(separator: ",", omittingEmptySubsequences: false).map(\.trimmingWhitespace)
        guard fields.count == 4 else { throw TruthError(line: line, reason: .wrongFieldCount(fields.count)) }
        guard let start = TraceParser.decimal(fields[0]) else {
            throw TruthError(line: line, reason: .invalidTime(column: "t_start", found: TraceParser.clip(String(fields[0]))))
        }
        guard let end = TraceParser.decimal(fields[1]) else {
            throw TruthError(line: line, reason: .invalidTime(column: "t_end", found: TraceParser.clip(String(fields[1]))))
        }
        guard end >= start else { throw TruthError(line: line, reason: .endBeforeStart(start: start, end: end)) }
        guard let kind = EventKind(rawValue: fields[2].lowercased()), TruthFormat.kinds.contains(kind) else {
            throw TruthError(line: line, reason: .unknownKind(TraceParser.clip(String(fields[2]))))
        }
        guard let ml = TraceParser.decimal(fields[3]), ml > 0, ml <= BottleCalibration.largestML else {
            throw TruthError(line: line, reason: .invalidML(TraceParser.clip(String(fields[3]))))
        }
        return TruthEvent(tStart: start, tEnd: end, kind: kind, ml: ml)
    }

    /// Checks the file had its column line.
    public func finish() throws(TruthError) {
        guard sawColumns else { throw TruthError(line: max(line, 1), reason: .empty) }
    }

    /// Parses a whole truth file held in memory.
    public static func parse(_ text: String) throws(TruthError) -> [TruthEvent] {
        var parser = TruthParser()
        var events: [TruthEvent] = []
        // "\r\n" is one Character in Swift, so CRLF files need it named.
        var lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
        if lines.count > 1, lines.last?.isEmpty == true { lines.removeLast() }  // the final newline ends a line
        for line in lines {
            if let event = try parser.parse(line: line) { events.append(event) }
        }
        try parser.finish()
        return events
    }
}

/// Writes truth files.
public enum TruthWriter {
    /// The column line, with its newline.
    public static let header = TruthFormat.columns + "\n"

    /// One row: times to the millisecond, mL to 0.01 mL.
    public static func row(_ event: TruthEvent) -> String {
        "\(TraceWriter.fixed(event.tStart, places: 3)),\(TraceWriter.fixed(event.tEnd, places: 3)),\(event.kind.rawValue),\(TraceWriter.fixed(event.ml, places: 2))\n"
    }

    /// A whole file.
    public static func file(_ events: [TruthEvent]) -> String {
        header + events.map(row).joined()
    }
}

extension StringProtocol {
    /// Without the spaces, tabs and line ends around it (a CSV field, a line of a /sys file).
    public var trimmingWhitespace: SubSequence {
        var s = self[...]
        while let c = s.first, c == " " || c == "\t" || c == "\r" || c == "\n" { s = s.dropFirst() }
        while let c = s.last, c == " " || c == "\t" || c == "\r" || c == "\n" { s = s.dropLast() }
        return s
    }
}

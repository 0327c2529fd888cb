// `ShortEscape` is QuenchCore's; the fuzz target (`.ci/fuzz-config`) compiles its file beside this one.
#if canImport(QuenchCore)
import QuenchCore
#endif

/// A TOML 1.0 parser that answers every input with a document or an error at
/// a line and column, and cannot stop the process: no force unwrap, no
/// unchecked arithmetic, nesting bounded (`TOMLParser.deepest`), work linear
/// in the text. toml++ 3.4.0 (through TOMLKit) stopped the process with a
/// failed assertion on several malformed inputs (`[[ [`, `x = 2026-11-27 1`,
/// marzer/tomlplusplus#301 and others fixed only after 3.4.0), and a deny-list
/// in front of it did not hold; `.ci/fuzz-config` runs libFuzzer over this
/// file. It imports nothing, so the fuzz target compiles it alone.
///
/// Every key keeps the line it was written on, so an error about a value
/// names its line without looking at the text again.
enum TOMLValue: Equatable {
    case string(String)
    case integer(Int64)
    case float(Double)
    case boolean(Bool)
    case dateTime(TOMLDateKind)
    case array([TOMLValue])
    case table(TOMLTable)

    var string: String? { if case .string(let s) = self { s } else { nil } }
    var int: Int64? { if case .integer(let n) = self { n } else { nil } }
    var double: Double? { if case .float(let n) = self { n } else { nil } }
    var bool: Bool? { if case .boolean(let b) = self { b } else { nil } }
    var array: [TOMLValue]? { if case .array(let a) = self { a } else { nil } }
    var table: TOMLTable? { if case .table(let t) = self { t } else { nil } }
}

/// Which of TOML's four date-time forms; Quench takes none, so their fields are checked and dropped.
enum TOMLDateKind: Equatable {
    case offsetDateTime, localDateTime, localDate, localTime
}

/// A table's keys in the order written, each with the line that named it.
struct TOMLTable: Equatable {
    struct Entry: Equatable {
        var key: String
        var value: TOMLValue
        var line: Int
    }
    var entries: [Entry] = []
}

struct TOMLSyntaxError: Error, Equatable {
    var line: Int
    var column: Int
    var message: String
}

struct TOMLParser {
    /// Arrays and inline tables inside each other, and dotted key parts: deeper is refused, not recursed into.
    static let deepest = 64

    /// The document in `bytes` (UTF-8; invalid sequences inside strings become U+FFFD).
    static func parse(_ bytes: [UInt8]) throws(TOMLSyntaxError) -> TOMLTable {
        var parser = TOMLParser(bytes)
        // A UTF-8 byte-order mark, as Windows editors save one: not part of the document (it was
        // "expected a key, found a non-ASCII character" at 1:1).
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { (parser.i, parser.lineStart) = (3, 3) }
        try parser.document()
        return parser.build(0)
    }

    // MARK: The tree while parsing: nodes by index, so a header can reopen a table.

    private enum Kind {
        /// Made by a `[header]`.
        case headerTable
        /// Made as a parent of a header (`[a.b]` makes `a`); a later `[a]` may still define it.
        case implicitTable
        /// Made by dotted keys (`a.b = 1` makes `a`): later keys may add to it, a header may not.
        case dottedTable
        /// `{ ... }`: closed once written.
        case inlineTable
        /// `[[name]]`: its elements are header tables.
        case tableArray
        case value(TOMLValue)
    }

    private struct Node {
        var kind: Kind
        var line: Int
        var keys: [String] = []
        var children: [String: Int] = [:]
        /// `tableArray`'s elements.
        var elements: [Int] = []
    }

    private let s: [UInt8]
    private var i = 0
    private var line = 1
    private var lineStart = 0
    private var nodes = [Node(kind: .implicitTable, line: 1)]

    private init(_ bytes: [UInt8]) { s = bytes }

    private func build(_ index: Int) -> TOMLTable {
        let node = nodes[index]
        var table = TOMLTable()
        for key in node.keys {
            guard let child = node.children[key] else { continue }
            table.entries.append(TOMLTable.Entry(key: key, value: value(child), line: nodes[child].line))
        }
        return table
    }

    private func value(_ index: Int) -> TOMLValue {
        switch nodes[index].kind {
        case .value(let v): v
        case .tableArray: .array(nodes[index].elements.map { .table(build($0)) })
        default: .table(build(index))
        }
    }

    // MARK: Reading

    private var at: UInt8? { i < s.count ? s[i] : nil }
    private func peek(_ k: Int) -> UInt8? { i + k < s.count ? s[i + k] : nil }

    private func fail(_ message: String, at position: Int? = nil) -> TOMLSyntaxError {
        let p = min(position ?? i, s.count)
        // Columns count characters: a UTF-8 continuation byte is not one.
        let column = s[min(lineStart, p)..<p].reduce(1) { $1 & 0xC0 == 0x80 ? $0 : $0 + 1 }
        return TOMLSyntaxError(line: line, column: column, message: message)
    }

    /// What stands at `i`, for messages: `'x'`, "a newline", "the end of the file".
    private var shownHere: String { Self.shown(at) }

    private static func shown(_ c: UInt8?) -> String {
        guard let c else { return "the end of the file" }
        switch c {
        case 0x0A: return "a newline"
        case 0x0D: return "a carriage return"
        case 0x09: return "a tab"
        case 0x20...0x7E: return "'\(Character(Unicode.Scalar(c)))'"
        default: return c < 0x80 ? "the control character 0x\(String(c, radix: 16, uppercase: true))" : "a non-ASCII character"
        }
    }

    private mutating func skipBlanks() {
        while at == 0x20 || at == 0x09 { i += 1 }
    }

    /// A newline (LF or CRLF) at `i`: consumes it and counts the line.
    private mutating func newline() -> Bool {
        if at == 0x0A {
            i += 1
        } else if at == 0x0D && peek(1) == 0x0A {
            i += 2
        } else {
            return false
        }
        line += 1
        lineStart = i
        return true
    }

    /// `# ...` up to the end of the line: tabs and printable text only.
    private mutating func comment() throws(TOMLSyntaxError) {
        guard at == UInt8(ascii: "#") else { return }
        i += 1
        while let c = at, c != 0x0A {
            if c == 0x0D && peek(1) == 0x0A { break }
            if Self.isControl(c) { throw fail("\(Self.shown(c)) in a comment") }
            i += 1
        }
    }

    private static func isControl(_ c: UInt8) -> Bool { (c < 0x20 && c != 0x09) || c == 0x7F }

    /// After a key/value or a header: blanks, a comment, then the line must end.
    private mutating func endOfLine() throws(TOMLSyntaxError) {
        skipBlanks()
        try comment()
        guard at == nil || newline() else { throw fail("expected the end of the line, found \(shownHere)") }
    }

    private mutating func document() throws(TOMLSyntaxError) {
        var current = 0
        var currentPath: [String] = []
        while at != nil {
            skipBlanks()
            guard let c = at else { break }
            if c == UInt8(ascii: "#") {
                try comment()
            } else if c == 0x0A || c == 0x0D {
                // Below.
            } else if c == UInt8(ascii: "[") {
                (current, currentPath) = try header()
            } else {
                try keyValue(into: current, named: currentPath, depth: 0)
            }
            try endOfLine()
        }
    }

    // MARK: Keys

    private static func isBare(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "_"), UInt8(ascii: "-"): true
        default: false
        }
    }

    /// `a`, `"a b"`, `'a'`, dotted: `a . "b" . c`.
    private mutating func key() throws(TOMLSyntaxError) -> [String] {
        var parts: [String] = []
        while true {
            skipBlanks()
            guard parts.count < Self.deepest else { throw fail("a key of more than \(Self.deepest) dotted parts") }
            if at == UInt8(ascii: "\"") || at == UInt8(ascii: "'") {
                if peek(1) == at && peek(2) == at { throw fail("a key cannot be a multi-line string") }
                parts.append(try string())
            } else {
                let start = i
                while let c = at, Self.isBare(c) { i += 1 }
                guard i > start else { throw fail("expected a key, found \(shownHere)") }
                parts.append(String(decoding: s[start..<i], as: UTF8.self))
            }
            skipBlanks()
            guard at == UInt8(ascii: ".") else { return parts }
            i += 1
        }
    }

    // MARK: Tables

    /// `[a.b]` or `[[a.b]]`: the node keys go into from now on.
    private mutating func header() throws(TOMLSyntaxError) -> (node: Int, path: [String]) {
        let start = i
        let isArray = peek(1) == UInt8(ascii: "[")
        i += isArray ? 2 : 1
        skipBlanks()
        guard let first = at, Self.isBare(first) || first == UInt8(ascii: "\"") || first == UInt8(ascii: "'") else {
            throw fail("expected the table's name after '\(isArray ? "[[" : "[")', found \(shownHere)")
        }
        let path = try key()
        guard at == UInt8(ascii: "]"), !isArray || peek(1) == UInt8(ascii: "]") else {
            throw fail("expected '\(isArray ? "]]" : "]")' after the table's name, found \(shownHere)")
        }
        i += isArray ? 2 : 1
        let name = path.joined(separator: ".")
        var node = 0
        for (index, part) in path.enumerated() {
            let last = index == path.count - 1
            if let child = nodes[node].children[part] {
                switch (nodes[child].kind, last, isArray) {
                case (.implicitTable, true, false):
                    nodes[child].kind = .headerTable
                    nodes[child].line = line
                    node = child
                case (.implicitTable, false, _), (.headerTable, false, _), (.dottedTable, false, _):
                    node = child
                case (.tableArray, true, true):
                    node = appendElement(to: child)
                case (.tableArray, false, _):
                    // The array's latest table.
                    guard let element = nodes[child].elements.last else { throw fail("[\(name)]: no table to add to", at: start) }
                    node = element
                default:
                    throw fail("[\(name)]: \(path.prefix(index + 1).joined(separator: ".")) is already defined", at: start)
                }
            } else if last && isArray {
                let array = add(part, Node(kind: .tableArray, line: line), to: node)
                node = appendElement(to: array)
            } else {
                node = add(part, Node(kind: last ? .headerTable : .implicitTable, line: line), to: node)
            }
        }
        return (node, path)
    }

    private mutating func add(_ key: String, _ child: Node, to parent: Int) -> Int {
        nodes.append(child)
        nodes[parent].keys.append(key)
        nodes[parent].children[key] = nodes.count - 1
        return nodes.count - 1
    }

    private mutating func appendElement(to array: Int) -> Int {
        nodes.append(Node(kind: .headerTable, line: line))
        nodes[array].elements.append(nodes.count - 1)
        return nodes.count - 1
    }

    /// `key = value` into the table `table` (named `tablePath`), making the tables of a dotted key. A refusal
    /// names the key whole (`mqtt.broker is already defined`, not `broker …`; `x = ` said no key at all).
    private mutating func keyValue(into table: Int, named tablePath: [String], depth: Int) throws(TOMLSyntaxError) {
        let start = i
        let keyLine = line
        let path = try key()
        let whole = (tablePath + path).map(Self.shownKey).joined(separator: ".")
        guard depth + path.count <= Self.deepest else { throw fail("nested deeper than \(Self.deepest) levels", at: start) }
        guard at == UInt8(ascii: "=") else { throw fail("expected '=' after the key \(whole), found \(shownHere)") }
        i += 1
        skipBlanks()
        var node = table
        for (index, part) in path.dropLast().enumerated() {
            if let child = nodes[node].children[part] {
                guard case .dottedTable = nodes[child].kind else {
                    throw fail("\(whole): \((tablePath + path.prefix(index + 1)).map(Self.shownKey).joined(separator: ".")) is already defined", at: start)
                }
                node = child
            } else {
                node = add(part, Node(kind: .dottedTable, line: keyLine), to: node)
            }
        }
        guard let last = path.last else { throw fail("expected a key", at: start) }
        if nodes[node].children[last] != nil { throw fail("\(whole) is already defined", at: start) }
        // Reserve the key first, so an inline table's keys go under it.
        let slot = add(last, Node(kind: .value(.boolean(false)), line: keyLine), to: node)
        if at == UInt8(ascii: "{") {
            nodes[slot].kind = .inlineTable
            try inlineTable(slot, named: tablePath + path, depth: depth + path.count)
        } else {
            do {
                nodes[slot].kind = .value(try value(depth: depth + path.count))
            } catch {
                throw TOMLSyntaxError(line: error.line, column: error.column, message: "\(whole): \(error.message)")
            }
        }
    }

    /// A key as a message shows it: as written when bare, else quoted (and its controls escaped).
    static func shownKey(_ part: String) -> String {
        !part.isEmpty && part.utf8.allSatisfy(isBare) ? part : "\"" + part.unicodeScalars.map { $0.properties.generalCategory == .control ? "?" : String($0) }.joined() + "\""
    }

    /// `{ a = 1, b.c = 2 }` on one line, no trailing comma; closed once written.
    private mutating func inlineTable(_ node: Int, named tablePath: [String], depth: Int) throws(TOMLSyntaxError) {
        guard depth <= Self.deepest else { throw fail("nested deeper than \(Self.deepest) levels") }
        i += 1
        skipBlanks()
        if at == UInt8(ascii: "}") {
            i += 1
            return
        }
        // Inline tables are closed: mark the dotted tables made inside as such afterwards.
        let firstNew = nodes.count
        while true {
            try keyValue(into: node, named: tablePath, depth: depth)
            skipBlanks()
            if at == UInt8(ascii: "}") {
                i += 1
                break
            }
            guard at == UInt8(ascii: ",") else { throw fail("expected ',' or '}' in an inline table, found \(shownHere)") }
            i += 1
            skipBlanks()
        }
        for index in firstNew..<nodes.count {
            if case .dottedTable = nodes[index].kind { nodes[index].kind = .inlineTable }
        }
    }

    // MARK: Values

    private mutating func value(depth: Int) throws(TOMLSyntaxError) -> TOMLValue {
        guard depth <= Self.deepest else { throw fail("nested deeper than \(Self.deepest) levels") }
        guard let c = at else { throw fail("expected a value, found the end of the file") }
        switch c {
        case UInt8(ascii: "\""), UInt8(ascii: "'"):
            return .string(try string())
        case UInt8(ascii: "["):
            return .array(try array(depth: depth))
        case UInt8(ascii: "{"):
            // An inline table inside an array: its own little tree, then copied out.
            let holder = nodes.count
            nodes.append(Node(kind: .inlineTable, line: line))
            try inlineTable(holder, named: [], depth: depth)
            let table = build(holder)
            nodes.removeSubrange(holder...)
            return .table(table)
        case UInt8(ascii: "t"), UInt8(ascii: "f"):
            for (word, truth) in [("true", true), ("false", false)] where matches(word) {
                i += word.utf8.count
                return .boolean(truth)
            }
            throw fail("expected a value, found \(shownHere) (a string needs quotes)")
        default:
            return try numberOrDate()
        }
    }

    private func matches(_ word: String) -> Bool {
        var k = i
        for b in word.utf8 {
            guard k < s.count, s[k] == b else { return false }
            k += 1
        }
        // The word ends there: `trueish` is not `true`.
        return k >= s.count || !Self.isBare(s[k])
    }

    /// `[ 1, 2, ]`: across lines, with comments, a trailing comma allowed.
    private mutating func array(depth: Int) throws(TOMLSyntaxError) -> [TOMLValue] {
        i += 1
        var elements: [TOMLValue] = []
        while true {
            try blanksNewlinesComments()
            if at == UInt8(ascii: "]") {
                i += 1
                return elements
            }
            if at == UInt8(ascii: ",") || at == UInt8(ascii: "}") { throw fail("expected a value or ']' in an array, found \(shownHere)") }
            elements.append(try value(depth: depth + 1))
            try blanksNewlinesComments()
            if at == UInt8(ascii: ",") {
                i += 1
            } else if at == UInt8(ascii: "]") {
                i += 1
                return elements
            } else {
                throw fail("expected ',' or ']' in an array, found \(shownHere)")
            }
        }
    }

    private mutating func blanksNewlinesComments() throws(TOMLSyntaxError) {
        while true {
            skipBlanks()
            try comment()
            if !newline() { return }
        }
    }

    // MARK: Strings

    /// A basic or literal string, on one line or (tripled quotes) several.
    private mutating func string() throws(TOMLSyntaxError) -> String {
        guard let quote = at else { throw fail("expected a string") }
        let literal = quote == UInt8(ascii: "'")
        let multiLine = peek(1) == quote && peek(2) == quote
        let opening = (line: line, column: fail("").column)
        i += multiLine ? 3 : 1
        // A newline right after the opening quotes is not part of the text.
        if multiLine { _ = newline() }
        var out: [UInt8] = []
        while true {
            guard let c = at else {
                throw TOMLSyntaxError(line: opening.line, column: opening.column, message: "a string that is never closed")
            }
            if c == quote {
                if !multiLine {
                    i += 1
                    break
                }
                if peek(1) == quote && peek(2) == quote {
                    i += 3
                    // Up to two more quotes belong to the text: `""""` ends with one `"` inside.
                    var extra = 0
                    while at == quote && extra < 2 {
                        out.append(quote)
                        i += 1
                        extra += 1
                    }
                    break
                }
                out.append(c)
                i += 1
            } else if c == 0x0A || (c == 0x0D && peek(1) == 0x0A) {
                guard multiLine else { throw fail("a newline inside a one-line string (\"\"\" or ''' start a multi-line one)") }
                out.append(0x0A)
                _ = newline()
            } else if c == UInt8(ascii: "\\") && !literal {
                try escape(into: &out, multiLine: multiLine)
            } else if Self.isControl(c) {
                throw fail("\(Self.shown(c)) inside a string (write it as an escape, \\u0001)")
            } else {
                out.append(c)
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private mutating func escape(into out: inout [UInt8], multiLine: Bool) throws(TOMLSyntaxError) {
        let start = i
        i += 1
        guard let c = at else { throw fail("a string that is never closed") }
        i += 1
        if let byte = ShortEscape.byte(for: c) {
            out.append(byte)
            return
        }
        switch c {
        case UInt8(ascii: "u"), UInt8(ascii: "U"):
            let count = c == UInt8(ascii: "u") ? 4 : 8
            var scalar: UInt32 = 0
            for _ in 0..<count {
                guard let d = at, let digit = Self.hexDigit(d) else {
                    throw fail("\\\(Character(Unicode.Scalar(c))) needs \(count) hexadecimal digits", at: start)
                }
                scalar = scalar << 4 | UInt32(digit)
                i += 1
            }
            guard let unicode = Unicode.Scalar(scalar) else {
                throw fail("\\\(Character(Unicode.Scalar(c)))\(String(scalar, radix: 16, uppercase: true)) is not a Unicode scalar value", at: start)
            }
            out.append(contentsOf: Array(String(Character(unicode)).utf8))
        default:
            // A backslash at the end of a line in """: the newline and the blanks after it go.
            if multiLine, c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D {
                i -= 1
                skipBlanks()
                guard newline() else { throw fail("only blanks may follow a line-ending backslash", at: start) }
                while true {
                    skipBlanks()
                    if !newline() { break }
                }
                return
            }
            throw fail("\(Self.escapeShown(c)) is not an escape TOML knows (\\\\ for a backslash)", at: start)
        }
    }

    private static func escapeShown(_ c: UInt8) -> String {
        (0x21...0x7E).contains(c) ? "\\\(Character(Unicode.Scalar(c)))" : "a backslash before \(shown(c))"
    }

    private static func hexDigit(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    // MARK: Numbers and dates

    private static func isDigit(_ c: UInt8?) -> Bool { c.map { (0x30...0x39).contains($0) } ?? false }

    /// Everything a number or a date-time can hold, up to what ends a value.
    private mutating func numberOrDate() throws(TOMLSyntaxError) -> TOMLValue {
        let start = i
        // A date-time: `dddd-` or `dd:` at the start.
        if (0..<4).allSatisfy({ Self.isDigit(peek($0)) }) && peek(4) == UInt8(ascii: "-") {
            return .dateTime(try dateTime())
        }
        if Self.isDigit(at) && Self.isDigit(peek(1)) && peek(2) == UInt8(ascii: ":") {
            try time()
            return .dateTime(.localTime)
        }
        while let c = at, Self.isBare(c) || c == UInt8(ascii: "+") || c == UInt8(ascii: ".") { i += 1 }
        let token = Array(s[start..<i])
        guard !token.isEmpty else { throw fail("expected a value, found \(shownHere)") }
        let text = String(decoding: token, as: UTF8.self)
        if let n = Self.integer(token) { return .integer(n) }
        if let x = Self.float(token) { return .float(x) }
        if Self.isIntegerShaped(token) { throw fail("\(text) does not fit in a 64-bit integer", at: start) }
        throw fail("\(text) is not a value TOML knows (a string needs quotes)", at: start)
    }

    /// Digits with single underscores between them, none leading or trailing.
    private static func digits(_ t: ArraySlice<UInt8>, _ isDigit: (UInt8) -> Bool) -> [UInt8]? {
        guard let first = t.first, let last = t.last, isDigit(first), isDigit(last) else { return nil }
        var out: [UInt8] = []
        var previousUnderscore = false
        for c in t {
            if c == UInt8(ascii: "_") {
                if previousUnderscore { return nil }
                previousUnderscore = true
            } else if isDigit(c) {
                previousUnderscore = false
                out.append(c)
            } else {
                return nil
            }
        }
        return out
    }

    private static func isIntegerShaped(_ t: [UInt8]) -> Bool {
        let body = t.first == UInt8(ascii: "+") || t.first == UInt8(ascii: "-") ? t.dropFirst() : t[...]
        guard let ds = digits(body, { isDigit($0) }) else { return false }
        return ds.first != UInt8(ascii: "0")
    }

    private static func integer(_ t: [UInt8]) -> Int64? {
        if t.count > 2, t[0] == UInt8(ascii: "0"), let radix = [UInt8(ascii: "x"): 16, UInt8(ascii: "o"): 8, UInt8(ascii: "b"): 2][t[1]] {
            guard let ds = digits(t.dropFirst(2), { hexDigit($0).map { Int($0) < radix } ?? false }) else { return nil }
            return Int64(String(decoding: ds, as: UTF8.self), radix: radix)
        }
        let negative = t.first == UInt8(ascii: "-")
        let body = t.first == UInt8(ascii: "+") || negative ? t.dropFirst() : t[...]
        guard let ds = digits(body, { isDigit($0) }), ds.count == 1 || ds.first != UInt8(ascii: "0") else { return nil }
        return Int64((negative ? "-" : "") + String(decoding: ds, as: UTF8.self), radix: 10)
    }

    private static func float(_ t: [UInt8]) -> Double? {
        let negative = t.first == UInt8(ascii: "-")
        let body = t.first == UInt8(ascii: "+") || negative ? Array(t.dropFirst()) : t
        let sign: Double = negative ? -1 : 1
        if body == Array("inf".utf8) { return sign * .infinity }
        if body == Array("nan".utf8) { return .nan }
        // int [frac] [exp], with at least one of them.
        let exponentAt = body.firstIndex { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }
        let mantissa = body[..<(exponentAt ?? body.endIndex)]
        let dot = mantissa.firstIndex(of: UInt8(ascii: "."))
        guard dot != nil || exponentAt != nil else { return nil }
        guard let whole = digits(mantissa[..<(dot ?? mantissa.endIndex)], { isDigit($0) }),
              whole.count == 1 || whole.first != UInt8(ascii: "0") else { return nil }
        var text = String(decoding: whole, as: UTF8.self)
        if let dot {
            guard let fraction = digits(mantissa[(dot + 1)...], { isDigit($0) }) else { return nil }
            text += "." + String(decoding: fraction, as: UTF8.self)
        }
        if let exponentAt {
            var exponent = body[(exponentAt + 1)...]
            var exponentSign = ""
            if let first = exponent.first, first == UInt8(ascii: "+") || first == UInt8(ascii: "-") {
                exponentSign = first == UInt8(ascii: "-") ? "-" : ""
                exponent = exponent.dropFirst()
            }
            guard let e = digits(exponent, { isDigit($0) }) else { return nil }
            text += "e" + exponentSign + String(decoding: e, as: UTF8.self)
        }
        return Double(text).map { sign * $0 }
    }

    /// `n` digits as a number; nil when they are not all digits.
    private mutating func fixedDigits(_ n: Int) -> Int? {
        var value = 0
        for _ in 0..<n {
            guard let c = at, Self.isDigit(c) else { return nil }
            value = value * 10 + Int(c - 0x30)
            i += 1
        }
        return value
    }

    private mutating func expect(_ c: Character, _ what: String) throws(TOMLSyntaxError) {
        guard let ascii = c.asciiValue, at == ascii else { throw fail("expected \(what), found \(shownHere)") }
        i += 1
    }

    /// `1979-05-27`, then `T07:32:00`, then `Z` or `-07:00`: RFC 3339 as TOML allows it.
    private mutating func dateTime() throws(TOMLSyntaxError) -> TOMLDateKind {
        let start = i
        guard let year = fixedDigits(4) else { throw fail("expected a four-digit year") }
        try expect("-", "'-' after the year")
        guard let month = fixedDigits(2), (1...12).contains(month) else { throw fail("expected a month from 01 to 12", at: start + 5) }
        try expect("-", "'-' after the month")
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        guard let day = fixedDigits(2), (1...days).contains(day) else { throw fail("expected a day from 01 to \(days)", at: start + 8) }
        // A time follows after `T`, `t`, or one space and a digit.
        if at == UInt8(ascii: "T") || at == UInt8(ascii: "t") {
            i += 1
        } else if at == 0x20 && Self.isDigit(peek(1)) {
            i += 1
        } else {
            return .localDate
        }
        try time()
        if at == UInt8(ascii: "Z") || at == UInt8(ascii: "z") {
            i += 1
            return .offsetDateTime
        }
        if at == UInt8(ascii: "+") || at == UInt8(ascii: "-") {
            i += 1
            var field = i
            guard let hours = fixedDigits(2), hours <= 23 else { throw fail("expected an offset's hours from 00 to 23", at: field) }
            try expect(":", "':' in the offset")
            field = i
            guard let minutes = fixedDigits(2), minutes <= 59 else { throw fail("expected an offset's minutes from 00 to 59", at: field) }
            return .offsetDateTime
        }
        return .localDateTime
    }

    /// `07:32:00` or `07:32:00.999`.
    private mutating func time() throws(TOMLSyntaxError) {
        var field = i
        guard let hour = fixedDigits(2), hour <= 23 else { throw fail("expected an hour from 00 to 23", at: field) }
        try expect(":", "':' after the hour")
        field = i
        guard let minute = fixedDigits(2), minute <= 59 else { throw fail("expected minutes from 00 to 59", at: field) }
        try expect(":", "':' after the minutes")
        field = i
        guard let second = fixedDigits(2), second <= 60 else { throw fail("expected seconds from 00 to 60", at: field) }
        if at == UInt8(ascii: ".") {
            i += 1
            guard Self.isDigit(at) else { throw fail("expected digits after the seconds' '.'") }
            while Self.isDigit(at) { i += 1 }
        }
    }
}

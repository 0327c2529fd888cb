/// toml++ 3.4.0 (inside TOMLKit 0.6.0) stops the process with a failed
/// assertion, release builds too, on three kinds of malformed text instead of
/// throwing a parse error; fuzzing this module found them, and the first is
/// marzer/tomlplusplus#301, fixed upstream after 3.4.0:
/// - a table header whose name starts with what no key can: `[` then a newline, `[#`, `[[[`;
/// - a `}` inside an array: `x = [1, }`;
/// - a date-time whose time does not start with a digit: `x = 1979-05-27T:`, `1979-05-27T/07:32`.
/// Anyone half-way through an edit can write one, and quenchd must say where
/// rather than abort, so they are refused before toml++ sees the text. This
/// follows strings, comments and brackets, enough to know where those can
/// stand; whether the rest is TOML is toml++'s to say.
enum TOMLPreflight {
    struct Trap: Equatable {
        var line: Int
        var column: Int
        var message: String
    }

    static func check(_ text: String) -> Trap? {
        let s = Array(text.unicodeScalars)
        var (i, line, lineStart) = (0, 1, 0)
        // Only blanks so far on this line.
        var lineBegins = true
        // Open arrays and inline tables, innermost last.
        var open: [Unicode.Scalar] = []

        func at(_ k: Int) -> Unicode.Scalar? { k < s.count ? s[k] : nil }
        func blanks(from k: Int) -> Int {
            var k = k
            while at(k) == " " || at(k) == "\t" { k += 1 }
            return k
        }
        func newLine(at k: Int) { (line, lineStart) = (line + 1, k + 1) }
        func trap(_ k: Int, _ message: String) -> Trap { Trap(line: line, column: k - lineStart + 1, message: message) }

        while let c = at(i) {
            switch c {
            case "\n":
                newLine(at: i)
                lineBegins = true
                i += 1
                continue
            case " ", "\t":
                i += 1
                continue
            case "#":
                while let d = at(i), d != "\n" { i += 1 }
            case "\"", "'":
                let length = at(i + 1) == c && at(i + 2) == c ? 3 : 1
                i += length
                while let d = at(i) {
                    if d == c && (length == 1 || (at(i + 1) == c && at(i + 2) == c)) {
                        i += length
                        // `""""`: up to two quotes belong to the text.
                        while length == 3, at(i) == c, i < s.count { i += 1 }
                        break
                    }
                    if d == "\n" {
                        // A single-line string left open: toml++ says so.
                        guard length == 3 else { break }
                        newLine(at: i)
                    }
                    if c == "\"" && d == "\\" {
                        i += 1
                        if at(i) == "\n" { newLine(at: i) }
                    }
                    i += 1
                }
            case "[" where lineBegins && open.isEmpty:
                // A table header: its name must start the way a key does.
                var k = blanks(from: i + 1)
                if at(k) == "[" && k == i + 1 { k = blanks(from: k + 1) }
                if let next = at(k), !Self.startsKey(next), next != "]", !(next == "[" && at(k - 1) != "[") {
                    return trap(k, "expected the table's name after '['")
                }
                while let d = at(i), d != "\n" { i += 1 }
            case "[", "{":
                open.append(c)
                i += 1
            case "]", "}":
                if c == "}" && open.last == "[" { return trap(i, "'}' inside an array, where a value or ']' belongs") }
                // Unbalanced: toml++ refuses the text here or before.
                guard open.last == (c == "]" ? "[" : "{") else { return nil }
                open.removeLast()
                i += 1
            case "0"..."9":
                if Self.isDateTimeWithoutTime(s[i...]) { return trap(i + 11, "expected a time after '\(s[i + 10])'") }
                i += 1
            default:
                i += 1
            }
            lineBegins = false
        }
        return nil
    }

    /// A bare key's characters, or a quote.
    private static func startsKey(_ c: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(c) || ("A"..."Z").contains(c) || ("0"..."9").contains(c) || "_-\"'".unicodeScalars.contains(c)
    }

    /// `YYYY-MM-DDT` (or `t`), not a digit, then a `:` before the value ends
    /// (toml++'s value terminators): toml++ takes it for a date-time, and its
    /// time parser asserts on the non-digit.
    private static func isDateTimeWithoutTime(_ s: ArraySlice<Unicode.Scalar>) -> Bool {
        let shape = Array("0000-00-00T".unicodeScalars)
        guard s.count > shape.count else { return false }
        let matches = zip(shape, s).allSatisfy { want, got in
            switch want {
            case "0": ("0"..."9").contains(got)
            case "T": got == "T" || got == "t"
            default: got == want
            }
        }
        let rest = s.dropFirst(shape.count)
        guard matches, let first = rest.first, !("0"..."9").contains(first) else { return false }
        return rest.prefix { !" \t\r\n,]}#".unicodeScalars.contains($0) }.contains(":")
    }
}

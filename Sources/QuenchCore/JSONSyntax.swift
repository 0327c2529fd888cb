/// Where a JSON text (RFC 8259) first goes wrong, by line and column, before a
/// decoder reads it: Foundation's decoder says only "The given data was not
/// valid JSON", and takes the last of two equal keys without a word. For files
/// people write by hand (device profiles): each problem names its place.
public enum JSONSyntax {
    /// A place in the text and what is wrong there.
    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        /// 1-based, counting `\n`.
        public let line: Int
        /// 1-based, in bytes from the line's start.
        public let column: Int
        public let byteOffset: Int
        public let reason: String
        public var description: String { "line \(line), column \(column): \(reason)" }
    }

    /// Objects and arrays nested deeper are refused: the checker recurses.
    public static let deepestNesting = 256

    /// The first problem in `bytes`, or nil when it is one JSON value with no key twice in an object.
    public static func firstProblem(in bytes: [UInt8]) -> Problem? {
        var scanner = Scanner(bytes: bytes)
        do throws(Problem) {
            scanner.skipSpace()
            try scanner.value(depth: 0)
            scanner.skipSpace()
            if scanner.at < bytes.count { throw scanner.problem("more after the end of the JSON value") }
            return nil
        } catch {
            return error
        }
    }

    private struct Scanner {
        let bytes: [UInt8]
        var at = 0

        func problem(_ reason: String, at offset: Int? = nil) -> Problem {
            let end = min(offset ?? at, bytes.count)
            var line = 1, lineStart = 0
            for i in 0..<end where bytes[i] == UInt8(ascii: "\n") {
                line += 1
                lineStart = i + 1
            }
            return Problem(line: line, column: end - lineStart + 1, byteOffset: end, reason: reason)
        }

        var current: UInt8? { at < bytes.count ? bytes[at] : nil }

        mutating func skipSpace() {
            while let c = current, c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D { at += 1 }
        }

        mutating func expect(_ c: UInt8, _ what: String) throws(Problem) {
            guard current == c else { throw problem(current == nil ? "the text ends where \(what) should be" : "expected \(what)") }
            at += 1
        }

        mutating func value(depth: Int) throws(Problem) {
            guard let c = current else { throw problem("the text ends where a value should be") }
            switch c {
            case UInt8(ascii: "{"):
                guard depth < JSONSyntax.deepestNesting else { throw problem("nested more than \(JSONSyntax.deepestNesting) deep") }
                try object(depth: depth + 1)
            case UInt8(ascii: "["):
                guard depth < JSONSyntax.deepestNesting else { throw problem("nested more than \(JSONSyntax.deepestNesting) deep") }
                try array(depth: depth + 1)
            case UInt8(ascii: "\""): _ = try string()
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number()
            case UInt8(ascii: "t"): try literal("true")
            case UInt8(ascii: "f"): try literal("false")
            case UInt8(ascii: "n"): try literal("null")
            default: throw problem("expected a value (an object, a list, text in double quotes, a number, true, false or null)")
            }
        }

        /// Past an opening `{` or `[`: true when `closing` follows at once (an empty one, read).
        mutating func isEmpty(closing: UInt8) -> Bool {
            at += 1
            skipSpace()
            guard current == closing else { return false }
            at += 1
            return true
        }

        /// After a member or an element: true when a comma brings another, false once `closing` is read.
        mutating func another(closing: UInt8) throws(Problem) -> Bool {
            skipSpace()
            let name = closing == UInt8(ascii: "}") ? "`}`" : "`]`"
            guard current == UInt8(ascii: ",") else {
                try expect(closing, "`,` or \(name)")
                return false
            }
            at += 1
            skipSpace()
            if current == closing { throw problem("a comma before \(name)") }
            return true
        }

        mutating func object(depth: Int) throws(Problem) {
            if isEmpty(closing: UInt8(ascii: "}")) { return }
            var seen: [[UInt8]: Int] = [:]
            repeat {
                skipSpace()
                let keyAt = at
                guard current == UInt8(ascii: "\"") else { throw problem("expected a key in double quotes") }
                let key = Self.unescaped(try string())
                if let first = seen[key] {
                    let earlier = problem("", at: first)
                    throw problem("`\(String(decoding: key, as: UTF8.self).shownSafely(limit: 40))` is given twice in one object (first at line \(earlier.line), column \(earlier.column))", at: keyAt)
                }
                seen[key] = keyAt
                skipSpace()
                try expect(UInt8(ascii: ":"), "`:` after the key")
                skipSpace()
                try value(depth: depth)
            } while try another(closing: UInt8(ascii: "}"))
        }

        mutating func array(depth: Int) throws(Problem) {
            if isEmpty(closing: UInt8(ascii: "]")) { return }
            repeat {
                skipSpace()
                try value(depth: depth)
            } while try another(closing: UInt8(ascii: "]"))
        }

        /// A string's text as a decoder reads it, from its bytes as written (checked by `string()`): two keys
        /// equal once unescaped are one key given twice (`{"\u0069d":4,"id":5}` deleted drink 4 where most JSON
        /// readers take 5: a LAN trial). A lone surrogate stays as written (no decoder agrees on one).
        static func unescaped(_ raw: [UInt8]) -> [UInt8] {
            guard raw.contains(UInt8(ascii: "\\")) else { return raw }
            var out: [UInt8] = [], i = 0
            func hex(_ at: Int) -> UInt32? {
                guard at + 4 <= raw.count else { return nil }
                return UInt32(String(decoding: raw[at..<(at + 4)], as: UTF8.self), radix: 16)
            }
            while i < raw.count {
                guard raw[i] == UInt8(ascii: "\\"), i + 1 < raw.count else { out.append(raw[i]); i += 1; continue }
                let e = raw[i + 1]
                switch e {
                case UInt8(ascii: "u"):
                    guard let unit = hex(i + 2) else { return raw }
                    var scalar = unit
                    var length = 6
                    if (0xD800...0xDBFF).contains(unit), raw.count >= i + 12, raw[i + 6] == UInt8(ascii: "\\"),
                       raw[i + 7] == UInt8(ascii: "u"), let low = hex(i + 8), (0xDC00...0xDFFF).contains(low) {
                        scalar = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                        length = 12
                    }
                    guard let s = Unicode.Scalar(scalar) else { return raw }
                    out += Array(String(Character(s)).utf8)
                    i += length
                    continue
                default: out.append(ShortEscape.byte(for: e) ?? e)  // and `/`, itself
                }
                i += 2
            }
            return out
        }

        /// The string's bytes as written (escapes kept; `unescaped` reads them).
        mutating func string() throws(Problem) -> [UInt8] {
            let start = at
            at += 1
            while let c = current {
                switch c {
                case UInt8(ascii: "\""):
                    at += 1
                    return Array(bytes[(start + 1)..<(at - 1)])
                case UInt8(ascii: "\\"):
                    at += 1
                    guard let e = current else { break }
                    if e == UInt8(ascii: "u") {
                        for _ in 0..<4 {
                            at += 1
                            guard let h = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(h) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(h | 0x20)
                            else { throw problem("\\u takes four hexadecimal digits") }
                        }
                    } else if !"\"\\/bfnrt".utf8.contains(e) {
                        throw problem("an escape that JSON does not have")
                    }
                    at += 1
                case 0..<0x20:
                    throw problem("a control character inside text (a line break must be written \\n)")
                default:
                    at += 1
                }
            }
            throw problem("text that is never closed (its `\"` is at line \(problem("", at: start).line), column \(problem("", at: start).column))")
        }

        mutating func number() throws(Problem) {
            if current == UInt8(ascii: "-") { at += 1 }
            func digits() -> Int {
                var n = 0
                while let c = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) { at += 1; n += 1 }
                return n
            }
            let integerStart = at
            guard digits() > 0 else { throw problem("a number needs a digit here") }
            if bytes[integerStart] == UInt8(ascii: "0"), at - integerStart > 1 { throw problem("a number does not start with 0", at: integerStart) }
            let integerEnd = at
            var whole = true
            if current == UInt8(ascii: ".") {
                at += 1
                whole = false
                guard digits() > 0 else { throw problem("a number needs a digit after its point") }
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                at += 1
                whole = false
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { at += 1 }
                guard digits() > 0 else { throw problem("a number needs a digit in its exponent") }
            }
            // A whole number past 2^53 − 1 is read differently by each reader (RFC 8259 §6): Foundation's decoder
            // refused `{"id":99999999999999999999}` as "not valid JSON", which named neither the number nor its place.
            if whole, integerEnd - integerStart >= 16,
               integerEnd - integerStart > 16 || UInt64(String(decoding: bytes[integerStart..<integerEnd], as: UTF8.self)) ?? .max > Self.largestWholeNumber {
                throw problem("the whole number \(String(decoding: bytes[integerStart..<min(integerEnd, integerStart + 40)], as: UTF8.self)) is larger "
                              + "than JSON readers agree on (2^53 − 1, RFC 8259 §6)", at: integerStart)
            }
        }

        static let largestWholeNumber: UInt64 = 9_007_199_254_740_991

        mutating func literal(_ word: String) throws(Problem) {
            for c in word.utf8 {
                guard current == c else { throw problem("expected \(word)") }
                at += 1
            }
        }
    }
}

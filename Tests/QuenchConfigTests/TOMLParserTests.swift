@testable import QuenchConfig
import Testing

/// QuenchConfig's TOML parser: TOML 1.0's values and tables, and an error with
/// its line and column for what is not TOML (never a trap: `.ci/fuzz-config`).
@Suite struct TOMLParserTests {
    func parse(_ text: String) throws(TOMLSyntaxError) -> TOMLTable { try TOMLParser.parse(Array(text.utf8)) }

    func error(_ text: String) -> String? {
        do {
            _ = try parse(text)
            return nil
        } catch {
            return "\(error.line):\(error.column): \(error.message)"
        }
    }

    func value(_ text: String) throws -> TOMLValue? { try parse("x = " + text).entries.first?.value }

    @Test func valuesOfEveryKind() throws {
        #expect(try value("\"a\\tb\\u00E9\\U0001F600\\\\\\\"\"") == .string("a\tbé😀\\\""))
        #expect(try value("'C:\\\\x'") == .string("C:\\\\x"))
        #expect(try value("\"\"\"\nline one\n  line two\"\"\"") == .string("line one\n  line two"))
        #expect(try value("\"\"\"a \\\n    b\"\"\"") == .string("a b"), "a line-ending backslash eats the newline and the blanks")
        #expect(try value("'''\n'x'\n'''") == .string("'x'\n"))
        #expect(try value("\"\"\"q\"\"\"\"\"") == .string("q\"\""), "up to two quotes before the closing three")
        #expect(try value("+1_000") == .integer(1000))
        #expect(try value("-9223372036854775808") == .integer(.min))
        #expect(try value("0xDEAD_beef") == .integer(0xDEADBEEF))
        #expect(try value("0o755") == .integer(0o755))
        #expect(try value("0b1010") == .integer(10))
        #expect(try value("6.02e+23") == .float(6.02e23))
        #expect(try value("-1E-2") == .float(-0.01))
        #expect(try value("-inf") == .float(-.infinity))
        #expect(try value("nan")?.double?.isNaN == true)
        #expect(try value("true") == .boolean(true))
        #expect(try value("1979-05-27T07:32:00.999-07:00") == .dateTime(.offsetDateTime))
        #expect(try value("1979-05-27 07:32:00Z") == .dateTime(.offsetDateTime))
        #expect(try value("1979-05-27T07:32:00") == .dateTime(.localDateTime))
        #expect(try value("2024-02-29") == .dateTime(.localDate))
        #expect(try value("07:32:00") == .dateTime(.localTime))
        #expect(try value("[ 1, [\"a\"], { b = 2 }, ]") == .array([.integer(1), .array([.string("a")]),
                                                                     .table(TOMLTable(entries: [.init(key: "b", value: .integer(2), line: 1)]))]))
        #expect(try value("[\n  1, # one\n  2\n]") == .array([.integer(1), .integer(2)]))
    }

    @Test func tablesKeepTheirKeysInOrderWithTheirLines() throws {
        let doc = try parse("top = 1\n\n[gateway]\n\"connect timeout\" = 2\ndevices.kitchen = 'a'\n[a.b]\nc = 3\n[[t]]\nn = 1\n[[t]]\nn = 2\n")
        #expect(doc.entries.map(\.key) == ["top", "gateway", "a", "t"])
        #expect(doc.entries.map(\.line) == [1, 3, 6, 8])
        let gateway = try #require(doc.entries[1].value.table)
        #expect(gateway.entries.map(\.key) == ["connect timeout", "devices"] && gateway.entries.map(\.line) == [4, 5])
        #expect(gateway.entries[1].value.table?.entries.first?.value == .string("a"))
        let t = try #require(doc.entries[3].value.array)
        #expect(t.count == 2 && t[1].table?.entries.first?.value == .integer(2))
        #expect(try parse("[a.b]\nx = 1\n[a]\ny = 2").entries.first?.value.table?.entries.map(\.key) == ["b", "y"],
                "a table made as a header's parent may be defined later")
        #expect(try parse("a = 1\r\n# c\r\nb = 2\r\n").entries.map(\.line) == [1, 3])
    }

    @Test func whatTOMLForbidsIsAnErrorWithItsPlace() {
        #expect(error("a = 1\na = 2") == "2:1: a is already defined")
        #expect(error("[a]\n[a]") == "2:1: [a]: a is already defined")
        #expect(error("a.b = 1\n[a.b]") == "2:1: [a.b]: a.b is already defined")
        #expect(error("a = {}\n[a]") == "2:1: [a]: a is already defined")
        #expect(error("a = {b = 1}\na.c = 2") == "2:1: a.c: a is already defined")
        // The key whole, its table's name included (a trial's `mqtt.broker` read `broker is already defined`).
        #expect(error("[mqtt]\nbroker = \"a\"\nbroker = \"b\"") == "3:1: mqtt.broker is already defined")
        #expect(error("[mqtt]\nport = ") == "2:8: mqtt.port: expected a value, found the end of the file")
        #expect(error("[a]\nb = {c = 1, c = 2}") == "2:13: a.b.c is already defined")
        #expect(error("[\"odd key\"]\nx = ") == "2:5: \"odd key\".x: expected a value, found the end of the file")
        #expect(error("[[a]]\n[a]") == "2:1: [a]: a is already defined")
        #expect(error("[a]\n[[a]]") == "2:1: [a]: a is already defined")
        #expect(error("x = \"a\nb\"")?.hasPrefix("1:7: x: a newline inside a one-line string") == true)
        #expect(error("x = \"\"\"never closed") == "1:5: x: a string that is never closed")
        #expect(error("x = \"\\q\"") == "1:6: x: \\q is not an escape TOML knows (\\\\ for a backslash)")
        #expect(error("x = \"\\uD800\"") == "1:6: x: \\uD800 is not a Unicode scalar value")
        #expect(error("x = \"a\u{01}\"") == "1:7: x: the control character 0x1 inside a string (write it as an escape, \\u0001)")
        #expect(error("x = 0123") == "1:5: x: 0123 is not a value TOML knows (a string needs quotes)")
        #expect(error("x = 1__0") == "1:5: x: 1__0 is not a value TOML knows (a string needs quotes)")
        #expect(error("x = 9223372036854775808") == "1:5: x: 9223372036854775808 does not fit in a 64-bit integer")
        #expect(error("x = 1.") == "1:5: x: 1. is not a value TOML knows (a string needs quotes)")
        #expect(error("x = kitchen") == "1:5: x: kitchen is not a value TOML knows (a string needs quotes)")
        #expect(error("x = tru") == "1:5: x: expected a value, found 't' (a string needs quotes)")
        #expect(error("x = 1 2") == "1:7: expected the end of the line, found '2'")
        #expect(error("x = {a = 1,}") == "1:12: expected a key, found '}'")
        #expect(error("x = {a = 1\n}") == "1:11: expected ',' or '}' in an inline table, found a newline")
        #expect(error("x = [1 2]") == "1:8: x: expected ',' or ']' in an array, found '2'")
        #expect(error("x") == "1:2: expected '=' after the key x, found the end of the file")
        #expect(error("x =") == "1:4: x: expected a value, found the end of the file")
        #expect(error("[a") == "1:3: expected ']' after the table's name, found the end of the file")
        #expect(error("é = 1") == "1:1: expected a key, found a non-ASCII character")
        #expect(error("x = 1 # a\u{7F}") == "1:10: the control character 0x7F in a comment")
        #expect(error("x = 1\r") == "1:6: expected the end of the line, found a carriage return")
        // A byte-order mark, as Windows editors save one, is not part of the document; anywhere else it is a character.
        #expect((try? parse("\u{FEFF}[gateway]\nconnect_timeout = 10\n"))?.entries.first?.key == "gateway")
        #expect(error("\u{FEFF}x = 1 2") == "1:7: expected the end of the line, found '2'", "columns count from after the mark")
        #expect(error("x = 1\n\u{FEFF}y = 2") == "2:1: expected a key, found a non-ASCII character")
    }

    /// Nesting is bounded, not recursed into without end: the stack is the limit otherwise.
    @Test func deepNestingIsRefusedNotRecursed() {
        let depth = 100_000
        #expect(error("x = " + String(repeating: "[", count: depth))?.contains("nested deeper than 64 levels") == true)
        #expect(error("x = " + String(repeating: "{a = ", count: depth))?.contains("nested deeper than 64 levels") == true)
        #expect(error(String(repeating: "a.", count: depth) + "b = 1")?.contains("more than 64 dotted parts") == true)
        #expect((try? parse("x = " + String(repeating: "[", count: 60) + String(repeating: "]", count: 60))) != nil)
    }
}

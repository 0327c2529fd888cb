import QuenchCore
import Testing

/// JSONSyntax names the line and column of the first problem in hand-written JSON (a device
/// profile), and refuses a key given twice, which Foundation's decoder takes in silence.
struct JSONSyntaxTests {
    func problem(_ text: String) -> String? { JSONSyntax.firstProblem(in: Array(text.utf8))?.description }

    @Test func validJSONHasNoProblem() {
        #expect(problem(#"{"a": [1, -2.5e3, 0, 0.5, 1E+2, true, false, null, "x\n\u00e9\"\\"], "b": {}, "c": []}"#) == nil)
        #expect(problem(" \n\t 42 \r\n") == nil)
        // The largest whole number readers agree on, either sign; larger ones as decimals or with an exponent.
        #expect(problem("[9007199254740991, -9007199254740991, 1e300, 99999999999999999999.5, 0000.5e1]") != nil)
        #expect(problem("[9007199254740991, -9007199254740991, 1e300, 99999999999999999999.5]") == nil)
        #expect(problem(#"{"outer": {"name": 1}, "name": 2}"#) == nil, "the same key in two objects is not twice in one")
        #expect(problem(#"{"\u0041": 1, "a": 2, "\ud83d": 3, "\ud83d\u0041": 4, "\\n": 5, "\n": 6}"#) == nil, "keys that differ once unescaped")
    }

    @Test(arguments: [
        ("{\"name\": \"x\",\n  \"name\": \"y\"}", "line 2, column 3: `name` is given twice in one object (first at line 1, column 2)"),
        // Equal once unescaped: one key (`{"\u0069d":4,"id":5}` deleted drink 4 where most readers take 5).
        (#"{"\u0069d":4,"id":5}"#, "line 1, column 14: `id` is given twice in one object (first at line 1, column 2)"),
        (#"{"\ud83d\ude00":1,"😀":2}"#, "line 1, column 19: `😀` is given twice in one object (first at line 1, column 2)"),
        (#"{"a\/b":3,"a/b":4}"#, "line 1, column 11: `a/b` is given twice in one object (first at line 1, column 2)"),
        (#"{"a": 1,}"#, "line 1, column 9: a comma before `}`"),
        ("[1,\n 2,\n]", "line 3, column 1: a comma before `]`"),
        ("[1 2]", "line 1, column 4: expected `,` or `]`"),
        ("{", "line 1, column 2: expected a key in double quotes"),
        (#"{"a" 1}"#, "line 1, column 6: expected `:` after the key"),
        (#"{"a": }"#, "line 1, column 7: expected a value (an object, a list, text in double quotes, a number, true, false or null)"),
        ("\"abc", "line 1, column 5: text that is never closed (its `\"` is at line 1, column 1)"),
        ("\"a\nb\"", "line 1, column 3: a control character inside text (a line break must be written \\n)"),
        (#""\x""#, "line 1, column 3: an escape that JSON does not have"),
        (#""\u12g4""#, "line 1, column 6: \\u takes four hexadecimal digits"),
        ("01", "line 1, column 1: a number does not start with 0"),
        ("1.", "line 1, column 3: a number needs a digit after its point"),
        ("-", "line 1, column 2: a number needs a digit here"),
        ("1e", "line 1, column 3: a number needs a digit in its exponent"),
        ("{\"id\": 99999999999999999999}", "line 1, column 8: the whole number 99999999999999999999 is larger than JSON readers agree on (2^53 − 1, RFC 8259 §6)"),
        ("[-9007199254740992]", "line 1, column 3: the whole number 9007199254740992 is larger than JSON readers agree on (2^53 − 1, RFC 8259 §6)"),
        ("tru", "line 1, column 4: expected true"),
        (#"{"a": 1} x"#, "line 1, column 10: more after the end of the JSON value"),
        ("", "line 1, column 1: the text ends where a value should be"),
    ] as [(String, String)])
    func eachProblemIsNamedByItsPlace(_ text: String, _ said: String) {
        #expect(problem(text) == said, "\(text)")
    }

    @Test func nestingIsBounded() {
        let deep = String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000)
        #expect(problem(deep) == "line 1, column 257: nested more than 256 deep")
        let fine = String(repeating: "[", count: 256) + String(repeating: "]", count: 256)
        #expect(problem(fine) == nil)
    }

    /// Random bytes and cut-off texts end in an answer, never a trap (the checker indexes bytes by hand).
    @Test func anyBytesGetAnAnswer() {
        var random = SystemRandomNumberGenerator()
        let seed = Array(#"{"name": "x", "value": {"type": "u16", "scale": 0.1}, "list": [1, "\u00e9", null]}"#.utf8)
        for _ in 0..<20_000 {
            var bytes = seed
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                case 1: bytes.removeSubrange(Int.random(in: 0..<bytes.count, using: &random)...)
                default: bytes.insert(UInt8.random(in: 0...255, using: &random), at: Int.random(in: 0...bytes.count, using: &random))
                }
                if bytes.isEmpty { bytes = [0x7B] }
            }
            if let p = JSONSyntax.firstProblem(in: bytes) {
                #expect(p.byteOffset <= bytes.count && p.line >= 1 && p.column >= 1)
            }
        }
    }
}

import Testing
import QuenchCore
import QuenchSimulator
import QuenchTestSupport

@Suite struct TraceParserTests {
    static let valid = """
        # quench trace v1
        # sensor: weight
        # unit: g
        # started: 2026-03-02T07:30:00Z
        # device: F0:F1:F2:F3:F4:F5
        t,value
        0.000,1050.2
        0.100,1049.8

        0.200,
        0.300,-3.5
        """

    @Test func parsesHeaderAndRows() throws {
        let (header, readings) = try TraceParser.parse(Self.valid)
        #expect(header.sensor == .weight)
        #expect(header.unit == .g)
        #expect(header.started == Timestamp(iso8601: "2026-03-02T07:30:00Z"))
        #expect(header["device"] == "F0:F1:F2:F3:F4:F5")
        #expect(readings == [
            Reading(t: 0, value: 1050.2), Reading(t: 0.1, value: 1049.8),
            Reading(t: 0.2, value: nil), Reading(t: 0.3, value: -3.5),
        ])
    }

    /// A recording cut off mid-line: its last reading is read as written, and the header says which line
    /// had no line end, for the replay to say so. A file that ends with its line end, or on a header line, has none.
    @Test func aLastReadingWithoutItsLineEndIsNoted() throws {
        let (header, readings) = try TraceParser.parse(Self.valid)
        #expect(header.unterminatedReadingLine == 11 && readings.last == Reading(t: 0.3, value: -3.5), "\(header)")
        #expect(try TraceParser.parse(Self.valid + "\n").0.unterminatedReadingLine == nil)
        #expect(try TraceParser.parse("# quench trace v1\n# unit: g\nt,value").0.unterminatedReadingLine == nil)
    }

    @Test func documentationHintsAndCRLFAreAccepted() throws {
        let text = "\u{FEFF}# quench trace v1\r\n# sensor: level   (weight | level)\r\n# unit: mm  (g | kg)\r\nt,value\r\n1,2\r\n"
        let (header, readings) = try TraceParser.parse(text)
        #expect(header.sensor == .level)
        #expect(header.unit == .mm)
        #expect(readings == [Reading(t: 1, value: 2)])
    }

    @Test func exponentAndSignedNumbers() throws {
        let (_, readings) = try TraceParser.parse("# quench trace v1\nt,value\n1e2,+5\n100.5,-1.25e1\n")
        #expect(readings == [Reading(t: 100, value: 5), Reading(t: 100.5, value: -12.5)])
    }

    @Test func decimalParsingIsExact() throws {
        let (_, readings) = try TraceParser.parse("# quench trace v1\nt,value\n0.1,1049.8\n0.3,0.7\n")
        #expect(readings[0].t == 0.1 && readings[0].value == 1049.8)
        #expect(readings[1].t == 0.3 && readings[1].value == 0.7)
    }

    /// Every kind of malformed file gives an error with the line it is on.
    @Test(arguments: [
        ("", 1, "empty"),
        ("\n\n", 2, "empty"),
        ("t,value\n1,2\n", 1, "expected '# quench trace v1'"),
        ("# quench trace v2\nt,value\n", 1, "expected '# quench trace v1'"),
        ("# quench trace v1\n# unit: furlong\nt,value\n", 2, "unknown unit 'furlong'"),
        ("# quench trace v1\n# sensor: sonar\nt,value\n", 2, "unknown sensor 'sonar'"),
        // At the second of the two, where the mismatch shows; either way round.
        ("# quench trace v1\n# sensor: level\n# unit: g\nt,value\n", 3, "unit g is not a unit of a level sensor"),
        ("# quench trace v1\n# unit: mm\n# device: x\n# sensor: weight\nt,value\n", 4, "unit mm is not a unit of a weight sensor"),
        ("# quench trace v1\n# unit: g\n# unit: kg\nt,value\n", 3, "'unit' is given twice"),
        ("# quench trace v1\n# started: yesterday\nt,value\n", 2, "started 'yesterday'"),
        ("# quench trace v1\n# started: 2026-02-30T00:00:00Z\nt,value\n", 2, "started"),
        ("# quench trace v1\n# started: 2026-03-02T07:30:00\nt,value\n", 2, "with a zone"),
        ("# quench trace v1\n# no colon here\nt,value\n", 2, "is not '# key: value'"),
        ("# quench trace v1\n0,1\n", 2, "no 't,value' line"),
        ("# quench trace v1\ntime,weight\n", 2, "expected the column line 't,value'"),
        ("# quench trace v1\n", 1, "no 't,value' line"),
        ("# quench trace v1\nt,value\n1\n", 3, "expected 2 fields"),
        ("# quench trace v1\nt,value\n1,2,3\n", 3, "found 3"),
        ("# quench trace v1\nt,value\nabc,2\n", 3, "t 'abc' is not"),
        ("# quench trace v1\nt,value\n,2\n", 3, "t '' is not"),
        ("# quench trace v1\nt,value\n1,heavy\n", 3, "value 'heavy' is not"),
        ("# quench trace v1\nt,value\n1,nan\n", 3, "value 'nan'"),
        ("# quench trace v1\nt,value\n1,inf\n", 3, "value 'inf'"),
        ("# quench trace v1\nt,value\ninf,1\n", 3, "t 'inf'"),
        ("# quench trace v1\nt,value\n1,1.2.3\n", 3, "value '1.2.3'"),
        ("# quench trace v1\nt,value\n2,1\n1,1\n", 4, "before the previous row's 2"),
        ("# quench trace v1\nt,value\n1,1 2\n", 3, "value '1 2'"),
        // Double(_:) alone took hexadecimal (0x10 as 16) and stopped at a NUL, as strtod does.
        ("# quench trace v1\nt,value\n0x10,1050\n", 3, "t '0x10'"),
        ("# quench trace v1\nt,value\n0,1\n1e300,1\n", 4, "t 1e+300 is beyond ±10000000000 s (317 years)"),
        ("# quench trace v1\nt,value\n0,1\n10000000001,1\n", 4, "is beyond ±"),
        ("# quench trace v1\nt,value\n-10000000001,1\n", 3, "is beyond ±"),
        ("# quench trace v1\nt,value\n1,0x1p3\n", 3, "value '0x1p3'"),
        ("# quench trace v1\nt,value\n0.1,1050\u{0}\n", 3, "value '1050"),
        ("# quench trace v1\nt,value\n0.1,12345678901234567\u{0}9\n", 3, "value '12345678901234567"),
        // The bottle's calibration in the header is replay's: a value it cannot use was ignored
        // ('lots', '100 mL'), hexadecimal read (0x64 as 100), a second one taken over the first.
        ("# quench trace v1\n# unit: g\n# capacity-ml: lots\nt,value\n", 3, "capacity-ml 'lots' is not a number of mL from 1 to 100,000"),
        ("# quench trace v1\n# capacity-ml: 100 mL\nt,value\n", 2, "capacity-ml '100 mL'"),
        ("# quench trace v1\n# capacity-ml: 0x64\nt,value\n", 2, "capacity-ml '0x64'"),
        ("# quench trace v1\n# capacity-ml: -5\nt,value\n", 2, "capacity-ml '-5'"),
        ("# quench trace v1\n# empty-weight-g: heavy\nt,value\n", 2, "empty-weight-g 'heavy' is not a number of grams from 0 to 100,000"),
        ("# quench trace v1\n# empty-weight-g: nan\nt,value\n", 2, "empty-weight-g 'nan'"),
        ("# quench trace v1\n# capacity-ml: 750\n# capacity-ml: 300\nt,value\n", 3, "'capacity-ml' is given twice"),
        ("# quench trace v1\n# unit: mm\n# level-curve: 0x1p7:420,200:750\nt,value\n", 3, "level-curve: level curve point 1: '0x1p7:420' is not LEVEL:ML"),
        ("# quench trace v1\n# level-curve: garbage\nt,value\n", 2, "level-curve: level curve point 1"),
        // From a developer's trial: a curve in a scale's trace was said with no line; lines ended by CR alone
        // quoted a run of them as one; a btsnoop capture was "not valid UTF-8 text".
        ("# quench trace v1\n# unit: g\n# level-curve: 0:0,100:500\nt,value\n", 3, "level-curve: a level curve is for a level sensor, and unit g is a scale's"),
        ("# quench trace v1\n# level-curve: 0:0,100:500\n# unit: lb\nt,value\n", 3, "level-curve: a level curve is for a level sensor, and unit lb"),
        ("# quench trace v1\r\n# sensor: weight\r\n# unit: g\rt,value\r0.0,1050.2\r", 3, "a line ends in a carriage return alone"),
        ("# quench trace v1\r# unit: g\rt,value\r", 1, "a line ends in a carriage return alone"),
        ("# quench trace v1\r# unit: g\rt,value\r" + String(repeating: "0.0,1050.2\r", count: 600), 1, "a line ends in a carriage return alone"),
        ("btsnoop\u{0}\u{0}\u{0}\u{0}\u{1}\u{0}\u{0}\u{3}é\n", 1, "a btsnoop capture, not a trace"),
        ("btsnoop\u{0}" + String(repeating: "A", count: 5000), 1, "a btsnoop capture, not a trace"),
        ("# quench trace v1\n# level-curve: 0:0,100:420\n# level-curve: 0:0,100:420\nt,value\n", 3, "'level-curve' is given twice"),
        // A spreadsheet's decimal commas and semicolons are named as such (a developer's trial).
        ("# quench trace v1\n# unit: g\nt,value\n0,5,1050,2\n", 4, "found 4 (a decimal comma? numbers take a point"),
        ("# quench trace v1\n# unit: g\nt,value\n0.5,1050.2,7\n", 4, "found 3"),
        ("# quench trace v1\n# unit: g\nt;value\n", 3, "found 't;value' (fields are separated by a comma, not a semicolon or a tab)"),
        ("# quench trace v1\n# unit: g\nt\tvalue\n", 3, "found 't\\u{9}value' (fields are separated by a comma, not a semicolon or a tab)"),
    ] as [(String, Int, String)])
    func malformed(text: String, line: Int, message: String) {
        #expect {
            _ = try TraceParser.parse(text)
        } throws: { error in
            guard let error = error as? TraceError else { return false }
            return error.line == line && error.description.contains(message)
        }
    }

    /// Files that are not text said what they are: a gzip'd trace and random bytes were both "a line
    /// ends in a carriage return alone", which sent a developer to fix line endings (their trial).
    @Test(arguments: [
        ([0x1F, 0x8B, 0x08, 0x00, 0x0D, 0x0A], "gzip-compressed, not a trace as text: decompress it first"),
        ([0x28, 0xB5, 0x2F, 0xFD, 0x0D], "zstd-compressed"),
        ([0x50, 0x4B, 0x03, 0x04] + Array(repeating: 0x0D, count: 5000), "zip-compressed"),
        ([0x9C, 0x0D, 0x41, 0x0A], "not valid UTF-8 text"),
        ([0x23, 0x20, 0x71, 0x00, 0x0D, 0x0A], "a NUL byte: a binary file, not a trace as text"),
        (Array(repeating: 0, count: 100), "a NUL byte: a binary file, not a trace as text"),
        // A Windows "Unicode" save is text in UTF-16, not binary (a review).
        ([0xFF, 0xFE, 0x23, 0x00, 0x20, 0x00, 0x71, 0x00], "UTF-16 text (a Windows \"Unicode\" save): save it as UTF-8"),
        (Array(repeating: 0xFF, count: 5000), "not valid UTF-8 text"),
        // A first line over the limit, cut inside a character (é), is too long, not "not UTF-8" (the review).
        (Array("# quench trace v1 ".utf8) + Array(repeating: Array("é".utf8), count: 2100).flatMap { $0 } + [0xC3], "longer than 4096 bytes"),
    ] as [([UInt8], String)])
    func notText(bytes: [UInt8], message: String) {
        var parser = TraceParser()
        var caught: TraceError?
        bytes.withUnsafeBytes { chunk in
            do throws(TraceError) {
                try parser.parse(chunk) { _ in }
                try parser.finish { _ in }
            } catch {
                caught = error
            }
        }
        #expect(caught?.line == 1 && caught?.description.contains(message) == true, "\(String(describing: caught))")
    }

    @Test func overlongLineIsRefusedWithoutBuffering() {
        let text = "# quench trace v1\nt,value\n1," + String(repeating: "9", count: 10_000) + "\n"
        #expect(throws: TraceError(line: 3, reason: .lineTooLong)) { _ = try TraceParser.parse(text) }
        // The limit is the line's content: a CRLF's \r does not count (4096 bytes passed with \n, not with \r\n).
        let longest = "# note: " + String(repeating: "x", count: TraceFormat.maximumLineLength - 8)
        for ending in ["\n", "\r\n"] {
            #expect(throws: Never.self) { _ = try TraceParser.parse("# quench trace v1\(ending)\(longest)\(ending)t,value\(ending)1,2\(ending)") }
            #expect(throws: TraceError(line: 2, reason: .lineTooLong)) {
                _ = try TraceParser.parse("# quench trace v1\(ending)\(longest)x\(ending)t,value\(ending)")
            }
        }
    }

    @Test func invalidUTF8InHeader() {
        var bytes = Array("# quench trace v1\n# note: ".utf8)
        bytes += [0xFF, 0xFE, 0x0A]
        var parser = TraceParser()
        #expect(throws: TraceError(line: 2, reason: .invalidUTF8)) {
            try bytes.withUnsafeBytes { try parser.parse($0) { _ in } }
        }
    }

    /// Splitting the bytes anywhere gives the same readings (lines cut across chunks).
    @Test func chunkBoundariesDoNotMatter() throws {
        let bytes = Array(Self.valid.utf8)
        let (_, expected) = try TraceParser.parse(Self.valid)
        for chunkSize in [1, 2, 3, 7, 16, 64, bytes.count] {
            var parser = TraceParser()
            var readings: [Reading] = []
            var offset = 0
            while offset < bytes.count {
                let end = min(offset + chunkSize, bytes.count)
                try bytes[offset..<end].withUnsafeBytes { try parser.parse($0) { readings.append($0) } }
                offset = end
            }
            try parser.finish { readings.append($0) }
            #expect(readings == expected, "chunk size \(chunkSize)")
        }
    }

    @Test func headerRoundTrip() throws {
        let header = TraceHeader(sensor: .level, unit: .mm, started: Timestamp(iso8601: "2026-03-02T07:30:00.5Z"),
                                 metadata: [.init(key: "device", value: "AA:BB:CC:DD:EE:FF"), .init(key: "profile", value: "level-bottle")])
        let text = header.formatted() + TraceWriter.row(Reading(t: 1.5, value: 20.25)) + TraceWriter.row(Reading(t: 2, value: nil))
        let (parsed, readings) = try TraceParser.parse(text)
        #expect(parsed == header)
        #expect(readings == [Reading(t: 1.5, value: 20.25), Reading(t: 2, value: nil)])
    }

    /// Random bytes and mutated valid files never crash the parser; they parse or throw TraceError.
    @Test func fuzz() {
        var rng = SeededRandom(seed: 42)
        let base = Array(Self.valid.utf8)
        let alphabet = Array("0123456789.,-+e#:\n\r tvalue".utf8)
        for round in 0..<5000 {
            var bytes = base
            let edits = Int(rng.next() % 8) + 1
            for _ in 0..<edits {
                let i = Int(rng.next() % UInt64(bytes.count))
                switch rng.next() % 3 {
                case 0: bytes[i] = round % 2 == 0 ? alphabet[Int(rng.next() % UInt64(alphabet.count))] : UInt8(truncatingIfNeeded: rng.next())
                case 1: bytes.remove(at: i)
                default: bytes.insert(alphabet[Int(rng.next() % UInt64(alphabet.count))], at: i)
                }
            }
            var parser = TraceParser()
            do {
                try bytes.withUnsafeBytes { try parser.parse($0) { _ in } }
                try parser.finish { _ in }
            } catch let error as TraceError {
                #expect(error.line >= 1)
            } catch {
                Issue.record("unexpected error type \(error)")
            }
        }
    }
}

/// Fuzz target for the truth file parser, and its regression file.
@Suite struct TruthParserFuzzTests {
    static let valid = "# truth\nt_start,t_end,kind,ml\n1.5,3.0,sip,20.5\n10,12,refill,480\n20,21,pour,100\n"

    @Test func mutatedTruthFilesParseOrNameTheLine() {
        var rng = FuzzRandom(seed: 11)
        let base = Array(Self.valid.utf8)
        let alphabet = Array("0123456789.,-+eE#\n\r sipourefillnaif".utf8) + [0, 0xFF]
        var parsed = 0
        for _ in 0..<20_000 {
            let bytes = rng.mutate(base, alphabet: alphabet)
            do {
                let events = try TruthParser.parse(String(decoding: bytes, as: UTF8.self))
                #expect(events.allSatisfy { $0.tStart.isFinite && $0.tEnd >= $0.tStart && $0.ml.isFinite && $0.ml >= 0 })
                parsed += 1
            } catch {
                #expect(error.line >= 1)
            }
        }
        #expect(parsed > 100, "parsed \(parsed)")
    }

    @Test func hugeTimesAreNumbersNotTraps() throws {
        let text = String(decoding: try TestPackage.fixture("regressions/truth-huge-times.csv"), as: UTF8.self)
        // Times of 1e19 and 1e308 s are numbers, not traps; 1e300 mL is no amount, refused by its line.
        #expect(throws: TruthError(line: 3, reason: .invalidML("1e300"))) { try TruthParser.parse(text) }
        let first = try TruthParser.parse(text.split(separator: "\n").prefix(2).joined(separator: "\n"))
        #expect(first.count == 1 && first[0].tEnd == 1e308)
    }
}

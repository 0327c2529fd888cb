import Foundation
import QuenchCore
import QuenchStore
import QuenchTestSupport
import Testing
@testable import QuenchHistory

/// The streamed import: CSV rows and the JSON export's pieces read a chunk at
/// a time, every refusal named by line or byte offset, and the database left
/// as it was whenever anything is refused.
@Suite struct ImportStreamTests {
    static let now = Timestamp(secondsSince1970: 1_790_000_000)

    func rows(_ text: String) throws(HistoryError) -> [(line: Int, fields: [String])] {
        var reader = CSVRowReader(ByteSource(bytes: Array(text.utf8)), file: "t.csv")
        var rows: [(line: Int, fields: [String])] = []
        while let row = try reader.next() { rows.append(row) }
        return rows
    }

    func message(_ body: () throws -> Void) -> String {
        do { try body(); return "" } catch { return "\(error)" }
    }

    @Test func csvRowsQuotingAndLines() throws {
        let parsed = try rows("\u{FEFF}kind,note\r\nsip,\"a, \"\"quoted\"\"\nnote\"\n\nsip,\n")
        #expect(parsed.map(\.line) == [1, 2, 5])
        #expect(parsed[0].fields == ["kind", "note"])  // the byte order mark is not part of the first name
        #expect(parsed[1].fields == ["sip", "a, \"quoted\"\nnote"])
        #expect(parsed[2].fields == ["sip", ""])
        #expect(try rows("kind\nsip").map(\.fields) == [["kind"], ["sip"]])  // no final line break
    }

    @Test func csvRefusalsNameTheLineAndByte() {
        #expect(message { _ = try rows("kind,ml\nsip,\"open\n") }.contains("line 2 (byte offset 8): a quoted field is never closed"))
        #expect(message { _ = try rows("kind,ml\nsip,\"a\"b\n") }.contains("line 2 (byte offset 15): text after a closing quote"))
        #expect(message { _ = try rows("kind,ml\nsip,1\u{0}0\n") }.contains("line 2 (byte offset 13): a NUL byte"))
        var bytes = Array("kind,note\nsip,caf".utf8) + [0xC3, 0x28] + Array("\n".utf8)
        #expect(message { var r = CSVRowReader(ByteSource(bytes: bytes), file: "t"); while try r.next() != nil {} }
            .contains("line 2 (byte offset 17): not valid UTF-8 text"))
        bytes = [UInt8](repeating: UInt8(ascii: "x"), count: CSVRowReader.maxRowBytes + 10)
        #expect(message { var r = CSVRowReader(ByteSource(bytes: bytes), file: "t"); while try r.next() != nil {} }
            .contains("line 1 (byte offset 0): a row longer than 1024 KB"))
    }

    func split(_ json: String) throws(HistoryError) -> (members: [String: String], events: [String]) {
        var reader = JSONExportReader(ByteSource(bytes: Array(json.utf8)), file: "t.json")
        var members: [String: String] = [:], events: [String] = []
        try reader.read(member: { key, bytes, _ in members[key] = String(decoding: bytes, as: UTF8.self) },
                        event: { index, bytes, _ in #expect(index == events.count); events.append(String(decoding: bytes, as: UTF8.self)) })
        return (members, events)
    }

    @Test func jsonExportIsSplitIntoMembersAndEvents() throws {
        let (members, events) = try split("""
            { "format" : "quench-export", "version": 1, "settings": {"units": "ml", "x": [1, {"y": "}]\\\\\\""}]},
              "events": [ {"kind": "sip", "note": "a ] } \\" ,"}, {"kind":"pour"} ] }
            """)
        #expect(members["format"] == "\"quench-export\"")
        #expect(members["version"] == "1")
        #expect(members["settings"] == #"{"units": "ml", "x": [1, {"y": "}]\\\""}]}"#)
        #expect(events == [#"{"kind": "sip", "note": "a ] } \" ,"}"#, #"{"kind":"pour"}"#])
        #expect(try split("{}").events.isEmpty)
        #expect(try split(#"{"events": []}"#).events.isEmpty)
    }

    @Test func jsonStructureRefusalsNameTheByte() {
        #expect(message { _ = try split(#"{"events": [{"kind": "sip"}"#) }.contains("byte offset 27: the file ends inside the events"))
        #expect(message { _ = try split(#"{"events": [{"kind": "sip"]]}"#) }.contains("byte offset 26: a ']' that closes nothing in event 1"))
        #expect(message { _ = try split(#"{"a": 1, "a": 2}"#) }.contains("byte offset 9: the key \"a\" appears twice"))
        #expect(message { _ = try split(#"{"a": 1} x"#) }.contains("byte offset 9: text after the end of the JSON object"))
        #expect(message { _ = try split("[1]") }.contains("byte offset 0: expected a JSON object"))
        // A trailing comma is named as one (it was "event 2: not valid JSON", of an event that is not there).
        #expect(message { _ = try split(#"{"events": [{"kind": "sip"}, ]}"#) }
                    .contains("byte offset 27: a ',' after event 1, where ']' ends the events: JSON allows no comma there"))
        #expect(message { _ = try split(#"{"version": 2,}"#) }
                    .contains("byte offset 13: a ',' after the value of \"version\", where '}' ends the JSON object: JSON allows no comma there"))
        let deep = "{\"events\": [" + String(repeating: "[", count: 100) + String(repeating: "]", count: 100) + "]}"
        #expect(message { _ = try split(deep) }.contains("nests deeper than 64 levels"))
    }

    /// What importing `text` into `store`, as the file `t`, said: "" when it imported.
    func importing(_ text: String, into store: IntakeStore) -> String {
        message { _ = try History.importStream(ByteSource(bytes: Array(text.utf8)), file: "t", into: store, now: Self.now) }
    }

    /// A store with one event, and what it exports, to compare after a refused import.
    func store() throws -> (IntakeStore, TemporaryFolder) {
        let folder = try TemporaryFolder()
        let store = try IntakeStore(path: folder.path + "/h.sqlite")
        _ = try store.addManual(ml: 250, at: Self.now, note: nil, identity: "before")
        return (store, folder)
    }

    @Test("an export's header is strict JSON: a trailing comma or a key given twice is refused where it is, and nothing is imported")
    func aHeaderIsStrictJSON() throws {
        let (store, _) = try store()
        let event = #"{"kind":"sip","ml":100,"at":"2026-03-04T09:00:00Z"}"#
        #expect(importing(#"{"format":"quench-export","version":2,"settings":{"units":"oz",},"events":["# + event + "]}", into: store)
                    == "cannot import t: settings (byte offset 63): not valid JSON: a comma before `}`; nothing was imported")
        #expect(importing(#"{"format":"quench-export","version":2,"settings":{"units":"oz","units":"ml"},"events":["# + event + "]}", into: store)
                    .contains("settings (byte offset 63): not valid JSON: `units` is given twice in one object"))
        // A value a field does not take is said as the value, not in the decoder's words about a type of the source.
        let gallon = importing(#"{"format":"quench-export","version":2,"settings":{"units":"gallon"},"events":["# + event + "]}", into: store)
        #expect(gallon.contains("settings (byte offset 49): field `units`: 'gallon' is not one of the values it takes"), "\(gallon)")
        #expect(!gallon.contains("Cannot initialize"))
        #expect(try store.events().count == 1, "nothing imported")
    }

    @Test func importedEventsArriveInBatchesAndTwiceIsOnce() throws {
        let (store, folder) = try store()
        _ = folder
        var csv = "kind,ml,time\n"
        for i in 0..<2500 { csv += "sip,\(10 + i % 7),\(1_700_000_000 + i * 60)\n" }
        let first = try History.importStream(ByteSource(bytes: Array(csv.utf8)), file: "t.csv", into: store, now: Self.now)
        #expect(first.events == 2500 && first.inserted == 2500 && first.duplicates == 0)
        let again = try History.importStream(ByteSource(bytes: Array(csv.utf8)), file: "t.csv", into: store, now: Self.now)
        #expect(again.inserted == 0 && again.duplicates == 2500)
        #expect(try store.events(EventQuery(includeDeleted: true)).count == 2501)
    }

    @Test func aRefusalInALaterBatchLeavesNothingOfTheEarlierOnes() throws {
        let (store, folder) = try store()
        _ = folder
        var csv = "kind,ml,time\n"
        for i in 0..<2500 { csv += "sip,10,\(1_700_000_000 + i * 60)\n" }
        csv += "sip,nan,1700000000\n"
        let error = message { _ = try History.importStream(ByteSource(bytes: Array(csv.utf8)), file: "t.csv", into: store, now: Self.now) }
        #expect(error.contains("line 2502"), "\(error)")
        #expect(try store.events(EventQuery(includeDeleted: true)).map(\.identity) == ["before"])
    }

    /// A sip no one could drink, refused as `add` refuses it; a refill that big is a refill.
    @Test func aSipOverFiveLitresIsRefusedAsAddRefusesIt() throws {
        let (store, folder) = try store()
        _ = folder
        let error = message {
            _ = try History.importStream(ByteSource(bytes: Array("kind,ml,time\nsip,250,1790000000\nsip,99999,1789999900\n".utf8)),
                                         file: "t.csv", into: store, now: Self.now)
        }
        #expect(error == "cannot import t.csv line 3: ml 99999.0: a sip of more than 5000 mL in one drink; nothing was imported", "\(error)")
        #expect(try store.events(EventQuery(includeDeleted: true)).map(\.identity) == ["before"])
        let refill = try History.importStream(ByteSource(bytes: Array("kind,ml,time\nsip,5000,1790000000\nrefill,20000,1789999900\n".utf8)),
                                              file: "t.csv", into: store, now: Self.now)
        #expect(refill.inserted == 2)
    }

    /// A spreadsheet's file (a trial's): semicolons and decimal commas, `Sip`, and local times read on
    /// this machine's clock; the hour the clocks went back or skipped is refused, naming what to write.
    @Test func aSpreadsheetsSemicolonsDecimalCommasAndLocalTimes() throws {
        let (store, folder) = try store()
        _ = folder
        let london = DayCalendar(timeZone: LocalZone(identifier: "Europe/London")!, dayStartHour: 0)
        func importing(_ csv: String, clock: DayCalendar? = london) throws(HistoryError) -> History.ImportReport {
            try History.importStream(ByteSource(bytes: Array(csv.utf8)), file: "t.csv", into: store, now: Self.now, localClock: clock)
        }
        func imported() throws -> [String] {
            try store.events().filter { $0.identity != "before" }.sorted { $0.time < $1.time }.map { "\($0.kind.rawValue) \($0.ml) \($0.time.iso8601)" }
        }
        #expect(try importing("Kind;ML;At\nSip;250,5;2026-07-01 09:30\n REFILL ;500;2026-07-01T10:00:00\n").inserted == 2)
        let got = try imported(); #expect(got == ["sip 250.5 2026-07-01T08:30:00Z", "refill 500.0 2026-07-01T09:00:00Z"], "\(got)")
        #expect(try importing("kind\tml\ttime\nsip\t200\t2026-01-10 08:00\n").inserted == 1, "tabs, and a time column of local times")
        #expect(try imported().first == "sip 200.0 2026-01-10T08:00:00Z")

        #expect(message { _ = try importing("kind,ml,at\nsip,200,2026-01-10 08:05\n", clock: nil) }
                    == "cannot import t.csv line 2: at '2026-01-10 08:05' is not a time: expected ISO 8601 such as 2026-03-02T07:30:00Z; nothing was imported")
        #expect(message { _ = try importing("kind,ml,at\nsip,200,2025-10-26 01:30\n") }
                    == "cannot import t.csv line 2: at '2025-10-26 01:30' came twice on the clocks of Europe/London (they went back): "
                    + "write 2025-10-26T01:30:00+01:00 or 2025-10-26T01:30:00+00:00; nothing was imported")
        #expect(message { _ = try importing("kind,ml,at\nsip,200,2026-03-29 01:30\n") }
                    == "cannot import t.csv line 2: at '2026-03-29 01:30' never came on the clocks of Europe/London (they went forward): "
                    + "give its zone, as in ISO 8601; nothing was imported")
        #expect(message { _ = try importing("kind|ml|at\nsip|200|2026-01-10 08:05\n") }
                    == "cannot import t.csv line 1: the header needs kind, ml and time or at columns, separated by commas (it has 'kind|ml|at'); nothing was imported")
        #expect(message { _ = try importing("kind;ml;at\nsip;1.500;2026-01-10 08:05\n") }
                    == "cannot import t.csv line 2: ml '1.500': in a file separated by ';' decimals take a comma (250,5), so a '.' may be "
                    + "a thousands separator (1.500 is 1,500 or 1.5?): write the number without it; nothing was imported")
        #expect(try imported().count == 3, "nothing of the refused files")
    }

    /// A person's name however its accents are encoded is one person, and a row one event: "Zoë" written
    /// e + U+0308 made another identity, and the drink was counted twice (a black-box trial).
    @Test func aNameIsOneWhateverItsAccentsEncoding() throws {
        let (store, folder) = try store()
        _ = folder
        for name in ["Zo\u{EB}", "ZO\u{CB}", "Zoe\u{308}", "ZOE\u{308}"] {
            _ = try History.importStream(ByteSource(bytes: Array("kind,ml,at,person\nsip,250,2026-09-19T09:00:00Z,\(name)\n".utf8)),
                                         file: "t.csv", into: store, now: Self.now)
        }
        let imported = try store.events().filter { $0.identity != "before" }
        #expect(imported.count == 1, "\(imported.map(\.identity))")
        #expect(Array(Person.nameKey("Zoe\u{308}").utf8) == Array("zo\u{EB}".utf8), "one text, composed")
    }

    /// What `add` refuses, an import refuses too (a black-box trial): a sip under a millilitre, and a drink
    /// that would count for a day before 1970 (in `stats`' total, on no day any view shows); JSON too.
    @Test func whatAddRefusesAnImportRefuses() throws {
        let (store, folder) = try store()
        _ = folder
        let days = DayCalendar(timeZone: LocalZone(identifier: "UTC")!, dayStartHour: 4)
        func importing(_ text: String) -> String {
            message { _ = try History.importStream(ByteSource(bytes: Array(text.utf8)), file: "t", into: store, now: Self.now, localClock: days) }
        }
        #expect(importing("kind,ml,time\nsip,250,1789000000\nsip,0.5,1789000600\n")
                    == "cannot import t line 3: ml 0.5: less than 1 mL, too little to be a drink; nothing was imported")
        #expect(importing("kind,ml,time\nsip,250,7200\n")
                    == "cannot import t line 2: 1970-01-01T02:00:00Z would count for 1969-12-31, before 1970 (days start at 04:00): "
                    + "a history starts on 1970-01-01 at the earliest; nothing was imported")
        let json = #"{"format":"quench-export","version":2,"events":[{"kind":"sip","ml":250,"at":"1970-01-01T03:59:00Z"}]}"#
        #expect(importing(json).hasPrefix("cannot import t: event 1 (byte offset "), "\(importing(json))")
        #expect(importing(json).contains("would count for 1969-12-31, before 1970"))
        // Columns that contradict each other: named twice, or a time and an `at` that disagree (an `at` mended in a spreadsheet).
        #expect(importing("kind,ml,at,ml\nsip,250,2026-09-10T10:00:00Z,300\n") == "cannot import t line 1: the column 'ml' is named twice; nothing was imported")
        #expect(importing("kind,ml,at,time\nsip,250,2026-09-10T10:00:00Z,1789000000\n")
                    == "cannot import t line 2: time 1789000000.0 (2026-09-10T00:26:40Z) and at '2026-09-10T10:00:00Z' disagree: mend both, or leave one empty; nothing was imported")
        #expect(try store.events().count == 1, "nothing of the refused files")
        #expect(importing("kind,ml,at,time\nsip,250,2026-09-10T00:26:40Z,1789000000\n") == "", "an export's two agree")
        #expect(importing("kind,ml,time,note\r\nsip,260,1789000100,\"line1\r\nline2\"\r\n") == "", "a note's lines ended CR LF")
        #expect(try store.events().contains { $0.note == "line1\nline2" })
        #expect(try store.events().count == 3)
        // A refill under a millilitre is no drink to refuse, and 04:00 on 1 January 1970 is that day's.
        #expect(importing("kind,ml,time\nrefill,0.5,1789000000\nsip,250,14400\n") == "")
        #expect(try store.events().count == 5)
    }

    static let validExport = """
        {"format": "quench-export", "version": 1,
         "settings": {"units": "ml", "day_start_hour": 4, "time_zone": "Europe/London"},
         "goals": [{"start_day": "2026-01-01", "ml": 2000, "set_at": {"seconds_since1970": 1790000000}}],
         "devices": [],
         "events": [
          {"kind": "sip", "ml": 20, "time": 1789999100, "identity": "a", "note": "first"},
          {"kind": "refill", "ml": 500, "time": 1789999200, "remaining_ml": 600, "source": "sensor", "device": "AA"},
          {"kind": "pour", "ml": 30, "at": "2026-09-21T10:00:00Z", "deleted": true}
         ]}
        """

    @Test func aValidExportImports() throws {
        let (store, folder) = try store()
        _ = folder
        let report = try History.importStream(ByteSource(bytes: Array(Self.validExport.utf8)), file: "e.json", into: store, now: Self.now)
        #expect(report.format == "json" && report.events == 3 && report.inserted == 3 && report.goals == 1)
        #expect(try store.settings().timeZone == "Europe/London")
    }

    /// An export spells the capacity `capacity_ml`; read back, it must still be the capacity.
    @Test func aDevicesCapacitySurvivesExportAndImport() throws {
        let (store, folder) = try store()
        _ = folder
        let json = """
            {"format": "quench-export", "version": 1, "events": [], "devices": [{"address": "F0:F1:F2:F3:F4:F5", "profile": "weight-scale",
             "added_at": {"seconds_since1970": 1790000000}, "calibration": {"unit": "g", "density": 1, "capacity_ml": 750, "empty_weight_g": 180}}]}
            """
        _ = try History.importStream(ByteSource(bytes: Array(json.utf8)), file: "d.json", into: store, now: Self.now)
        let calibration = try #require(try store.device(address: "F0:F1:F2:F3:F4:F5")?.calibration)
        #expect(calibration.capacityML == 750 && calibration.emptyWeightG == 180)
    }

    /// Fuzz target: thousands of mutations of a valid CSV and JSON export go
    /// through the streamed import into a real store. Each imports or is
    /// refused with a message naming where; a refusal changes nothing.
    @Test func mutatedImportsImportOrAreRefusedAndChangeNothing() throws {
        let (store, folder) = try store()
        _ = folder
        let csv = Array("id,identity,time,at,kind,ml,remaining_ml,source,device,trace_time,note,deleted,recorded_at\n1,x,1790000000,,sip,20,400,sensor,AA,12.5,\"a, b\",0,1790000001\n,,,2026-09-21T10:00:00Z,refill,500,,,,,,1,\n".utf8)
        let json = Array(Self.validExport.utf8)
        let alphabet = Array("0123456789.,-+eE{}[]\":nulltrue \n\\".utf8) + [0, 0xFF, 0xC3]
        var rng = FuzzRandom(seed: 13)
        var imported = 0, refused = 0
        for round in 0..<3000 {
            let bytes = rng.mutate(round % 2 == 0 ? csv : json, alphabet: alphabet, cutting: true)
            let before = try store.events(EventQuery(includeDeleted: true)).count
            do {
                _ = try History.importStream(ByteSource(bytes: bytes), file: "f", into: store, now: Self.now)
                imported += 1
            } catch {
                refused += 1
                let text = "\(error)"
                #expect(text.contains("byte offset") || text.contains("line") || text.contains("event") || text.contains("not a Quench JSON export")
                        || text.contains("format") || text.contains("settings") || text.contains("goal") || text.contains("empty"),
                        "a refusal that names no place: \(text)")
                #expect(try store.events(EventQuery(includeDeleted: true)).count == before, "a refused import changed the history")
            }
        }
        // Both outcomes occur: the mutations reach past the first check.
        #expect(imported > 100 && refused > 100, "imported \(imported), refused \(refused)")
    }

    /// A time in the future is refused as `add` refuses it, naming the row: times written in local
    /// time with a `Z`, or by a machine whose clock ran ahead, would wait unseen until their day.
    /// A minute of slack for clocks, as `add` allows.
    @Test func eventsAfterTheClockAreRefusedWithTheirPlace() throws {
        let (store, folder) = try store()
        _ = folder
        #expect(importing("kind,ml,at\nsip,200,2026-09-21T13:00:00Z\nsip,300,2026-09-21T16:00:00Z\n", into: store)
            == "cannot import t line 3: 2026-09-21T16:00:00Z is in the future (now 2026-09-21T14:13:20Z): check the zone of its times, "
               + "or the clock that wrote them; nothing was imported")
        let json = #"{"format": "quench-export", "version": 2, "events": [{"kind": "sip", "ml": 5, "time": 1790003600}]}"#
        #expect(importing(json, into: store).contains("event 1 (byte offset 53): 2026-09-21T15:13:20Z is in the future"), "\(importing(json, into: store))")
        #expect(try store.events(EventQuery(includeDeleted: true)).map(\.identity) == ["before"], "nothing imported")
        #expect(importing("kind,ml,time\nsip,200,1790000059\n", into: store) == "", "within the minute clocks may disagree by")
        #expect(try store.events().count == 2)
        // A history's own export, with when each was recorded: taken as it was stored, ahead or not.
        #expect(importing("kind,ml,time,recorded_at\nsip,300,1790007200,1790007200\n", into: store) == "", "an export re-imports")
        #expect(try store.events().count == 3)
        // A spreadsheet's ISO 8601 times under `time` are read as `at` ("is not a number" before); any other text still is not.
        #expect(importing("kind,ml,time\nsip,150,2026-09-21T12:00:00Z\n", into: store) == "")
        #expect(try store.events().contains { $0.ml == 150 && $0.time.iso8601 == "2026-09-21T12:00:00Z" })
        #expect(importing("kind,ml,time\nsip,150,noon\n", into: store).contains("time 'noon' is not a number"))
    }

    /// Issue 19: the importer's bounds on one event (JSON) and one row (CSV)
    /// hold the longest event the store can hold, so every export re-imports.
    @Test func theImportersBoundsHoldTheLongestStorableEvent() throws {
        #expect(TextField.longestEventBytes <= JSONExportReader.maxEventBytes)
        #expect(TextField.longestEventBytes <= CSVRowReader.maxRowBytes)
        // And for real: an event with every text field at its limit, escaped as the export escapes it.
        let event = IntakeEvent(identity: StrangeText.line(TextField.identity.maxCharacters), kind: .sip, ml: 1, time: Self.now,
                                remainingML: 1, source: .imported, device: StrangeText.line(TextField.eventDevice.maxCharacters),
                                traceTime: 1, note: StrangeText.longestNote, recordedAt: Self.now, person: StrangeText.longestName)
        #expect(event.textProblem == nil)
        #expect(JSONOutput.encode(EventRecord(event)).utf8.count <= TextField.longestEventBytes)
        #expect(CSV.line(EventRecord(event).csvFields).utf8.count <= TextField.longestEventBytes)
    }

    /// Issue 19: text the store refuses, the import refuses first, naming the
    /// line or event and the field; the refusal is itself safe to print.
    @Test func textBeyondTheRulesIsRefusedWithItsPlace() throws {
        let (store, folder) = try store()
        _ = folder
        #expect(importing("kind,ml,time,note\nsip,1,1790000000,ok\nsip,1,1790000001,\"\u{1B}[31mred\"\n", into: store)
            == "cannot import t line 3: note holds the control character U+001B; nothing was imported")
        #expect(importing("kind,ml,time,note\nsip,1,1790000000,\(CSV.line([StrangeText.line(1001)]))\n", into: store).contains("line 2: note has 1001 characters, at most 1000"))
        #expect(importing("kind,ml,time,device\nsip,1,1790000000,\(String(repeating: "d", count: 65))\n", into: store).contains("line 2: device has 65 characters"))
        let device = { (address: String) in
            #"{"format": "quench-export", "version": 2, "devices": [{"address": "\#(address)", "added_at": {"seconds_since1970": 1}}], "events": []}"#
        }
        #expect(importing(device("ZZ"), into: store) == "cannot import t: device 1 (byte offset 53): address: 'ZZ' is not a Bluetooth address "
                + "(six hex pairs: AA:BB:CC:DD:EE:FF); nothing was imported")
        let escaped = importing(device(#"\u001b[31mAA:BB:CC:DD:EE:FF"#), into: store)
        #expect(escaped.contains("'\\u{1B}[31mAA:BB:CC:DD:EE:FF' is not a Bluetooth address") && !escaped.contains("\u{1B}"), "\(escaped)")
        #expect(importing(#"{"format": "quench-export", "version": 2, "devices": [{"address": "AA:BB:CC:DD:EE:FF", "name": "a\u0007", "added_at": {"seconds_since1970": 1}}]}"#, into: store)
            .contains("device 1 (byte offset 53): device name holds the control character U+0007"))
        #expect(try store.events(EventQuery(includeDeleted: true)).map(\.identity) == ["before"] && store.listDevices().isEmpty)
        // An address in another case or with dashes is stored as Quench writes it.
        _ = try History.importStream(ByteSource(bytes: Array(device("f0-f1-f2-f3-f4-0a").utf8)), file: "t", into: store, now: Self.now)
        #expect(try store.listDevices().map(\.address) == ["F0:F1:F2:F3:F4:0A"])
    }
}

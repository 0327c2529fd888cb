import Foundation
import QuenchCore
import QuenchTestSupport
import Testing
@testable import QuenchStore

/// The one definition of stored text (issue 19): each field's limit and
/// characters, refused by the store whichever door a value comes through.
@Suite("stored text")
struct StoredTextTests {
    static let longestNote = StrangeText.longestNote

    @Test func eachFieldHasItsLimitAndRefusesControlCharacters() {
        #expect(Self.longestNote.unicodeScalars.count == 1000 && Self.longestNote.utf8.count > 1000)
        #expect(TextField.note.problem(Self.longestNote) == nil)
        #expect(TextField.note.problem(Self.longestNote + "x") == "note has 1001 characters, at most 1000")
        #expect(TextField.note.problem("red \u{1B}[31m") == "note holds the control character U+001B")
        #expect(TextField.note.problem("a\r\nb") == "note holds the control character U+000D")
        #expect(TextField.note.problem("a\u{85}b") == "note holds the control character U+0085")
        #expect(TextField.note.problem("a\u{7F}") == "note holds the control character U+007F")
        // A bidirectional override shows the text in another order than it is (Trojan Source).
        #expect(TextField.note.problem("tea \u{202E}lm 052") == "note holds the control character U+202E")
        #expect(TextField.note.problem("\u{2066}x\u{2069}") == "note holds the control character U+2066")
        #expect(TextField.note.problem("شاي مع سارة") == nil, "right-to-left text itself is fine")
        #expect(Person.problem(withName: "Ann\u{202E}") != nil && Person.problem(withName: "سارة") == nil)
        #expect(TextField.eventDevice.problem("tab\there") == "device holds the control character U+0009", "only a note runs over lines")
        #expect(TextField.deviceName.problem(String(repeating: "é", count: 65)) == "device name has 65 characters, at most 64")
        #expect(TextField.identity.problem("") == "identity is empty")
        #expect(TextField.note.stored("") == nil && TextField.note.stored("x") == "x")
        #expect(Person.problem(withName: String(repeating: "ש", count: 40)) == nil)
        #expect(Person.problem(withName: "bad\u{1B}name") != nil)
        // The longest event, as the importer reads it, stays far under its 1 MB bound on one event or row.
        #expect(TextField.longestEventBytes < 1 << 16)
    }

    @Test func deviceAddressesAreBluetoothAddresses() throws {
        #expect(try DeviceAddress.canonical("aa-bb-cc-dd-ee-0f").get() == "AA:BB:CC:DD:EE:0F")
        for bad in ["ZZ", "", "AA:BB:CC:DD:EE", "AA:BB:CC:DD:EE:GG", "\u{1B}[31mAA:BB:CC:DD:EE:FF", "AA:BB:CC:DD:EE:FF:00"] {
            guard case .failure(let error) = DeviceAddress.canonical(bad) else { Issue.record("\(bad) taken"); continue }
            #expect(error.description.contains("is not a Bluetooth address"), "\(error)")
            #expect(!error.description.contains("\u{1B}"), "the refusal itself is safe to print")
        }
        #expect(Device(address: "aa:bb:cc:dd:ee:ff", addedAt: t0).textProblem == "the address 'aa:bb:cc:dd:ee:ff' is written AA:BB:CC:DD:EE:FF here")
        #expect(Device(address: "AA:BB:CC:DD:EE:FF", name: "Bottle \u{7}", addedAt: t0).textProblem == "device name holds the control character U+0007")
    }

    /// Every store door refuses what the definition refuses, and writes nothing.
    @Test func everyStoreDoorRefusesTextBeyondTheRules() throws {
        let folder = TemporaryDirectory()
        let store = try IntakeStore(path: folder.path + "/t.sqlite")
        func refused(_ body: () throws -> Void) -> String {
            do { try body(); return "" } catch let error as StoreError { #expect(error.code == .invalidValue); return error.message } catch { return "\(error)" }
        }
        #expect(refused { _ = try store.addManual(ml: 100, at: t0, note: Self.longestNote + "!", identity: "m1") }.contains("note has 1001 characters"))
        #expect(refused { _ = try store.addManual(ml: 100, at: t0, note: "\u{1B}]0;owned\u{7}", identity: "m2") }.contains("U+001B"))
        #expect(refused { try store.ingest(sips(2), device: "label\u{1B}[2J", started: t0) }.contains("device holds the control character"))
        #expect(refused { try store.ingest(sips(2), device: String(repeating: "d", count: 65), started: t0) }.contains("device has 65 characters"))
        let long = IntakeEvent(identity: String(repeating: "i", count: 257), kind: .sip, ml: 10, time: t0, source: .imported, recordedAt: t0)
        #expect(refused { try store.insert([long]) }.contains("identity has 257 characters"))
        for address in ["ZZ", "\u{1B}[31mAA:BB:CC:DD:EE:FF", "aa:bb:cc:dd:ee:ff"] {
            #expect(!refused { try store.saveDevice(Device(address: address, addedAt: t0)) }.isEmpty, "\(address)")
        }
        let definition = "{\"name\": \"" + String(repeating: "x", count: Device.largestProfileDefinition) + "\"}"
        #expect(refused { try store.saveDevice(Device(address: "AA:BB:CC:DD:EE:FF", addedAt: t0, profileDefinition: definition)) }
            .contains("profile definition"))
        #expect(try count(store) == 0 && store.listDevices().isEmpty)

        // At the limits, everything is taken, and an empty note is no note.
        let event = try store.addManual(ml: 100, at: t0, note: Self.longestNote, identity: "m3")
        #expect(try store.event(id: event.id ?? 0)?.note == Self.longestNote)
        let empty = try store.addManual(ml: 100, at: t0, note: "", identity: "m4")
        #expect(try store.event(id: empty.id ?? 0)?.note == nil)
        try store.ingest(sips(1), device: String(repeating: "ד", count: 64), started: t0)
        try store.saveDevice(Device(address: "AA:BB:CC:DD:EE:FF", name: String(repeating: "🚰", count: 64), addedAt: t0))
        #expect(try count(store) == 3 && store.listDevices().first?.name?.unicodeScalars.count == 64)
    }

    /// An import is staged without the lock and written in one transaction of
    /// at most its bound: past it, rolled back whole (here a bound of 0 s
    /// stops it after its first 1000 rows).
    @Test func anImportPastItsBoundIsRolledBackWhole() throws {
        let folder = TemporaryDirectory()
        let path = folder.path + "/t.sqlite"
        _ = try IntakeStore(path: path).addManual(ml: 300, at: t0, note: nil, identity: "before")
        let store = try IntakeStore(path: path, importBound: 0)
        let rows = (0..<2500).map { i in
            IntakeEvent(identity: "imported|\(i)", kind: .sip, ml: 10, time: t0.adding(Double(i)), source: .imported, recordedAt: t0)
        }
        do {
            _ = try store.importing(wrap: { $0 }) { (session) throws(StoreError) in
                try session.addPerson(named: "newcomer")
                try session.insert(Array(rows[..<1000]))
                try session.insert(Array(rows[1000...]))
            }
            Issue.record("an import past its bound was written")
        } catch {
            #expect(error.code == .tooLong && error.message.contains("nothing was imported"), "\(error)")
        }
        #expect(try count(store) == 1 && store.people().map(\.name) == ["me"])
        // Within its bound the same import lands whole, and the staging table is gone.
        let normal = try IntakeStore(path: path)
        let outcome = try normal.importing(wrap: { $0 }) { (session) throws(StoreError) in try session.insert(rows) }
        #expect(outcome.inserted == 2500 && outcome.duplicates == 0)
        #expect(try count(store) == 2501)
        #expect(try normal.read("looking for the staging table") { db in
            try db.first("SELECT COUNT(*) FROM temp.sqlite_master WHERE name = 'import_event'") { row -> Int in row[0] }
        } == 0)
    }
}

import BluetoothWire
import Foundation
import QuenchCore
import QuenchProfiles
import QuenchTestSupport
import Testing

@Suite struct ProfileCustomFileTests {
    /// docs/profiles/diy-level-bottle.json, the documented example.
    static var exampleURL: URL {
        TestPackage.root.appendingPathComponent("docs/profiles/diy-level-bottle.json")
    }
    static var exampleText: String { (try? String(contentsOf: exampleURL, encoding: .utf8)) ?? "missing example file" }

    @Test func shippedExampleIsTheDIYLevelBottle() throws {
        let p = try CustomProfile(json: Array(Self.exampleText.utf8))
        let service = BluetoothUUID("6e0a0000-51a5-4c5b-9f1d-7e57b0771e00")!
        let characteristic = BluetoothUUID("6e0a0001-51a5-4c5b-9f1d-7e57b0771e00")!
        #expect(p.name == "DIY level bottle")
        #expect(p.sensor == .level && p.unit == .mm)
        #expect(p.source == .characteristic(service: service, characteristic: characteristic, delivery: .notify))
        #expect(p.value == .init(offset: 0, type: .u16, bigEndian: false, scale: 0.1, add: 0))
        #expect(DeviceProfile.custom(p).transport == .gatt(service: service, characteristic: characteristic, delivery: .notify))
        // ble-vm level-bottle: u16 LE level in 0.1 mm; 0x012C = 300 → 30.0 mm.
        let r = try DeviceProfile.custom(p).decode([0x2C, 0x01])
        #expect(r.count == 1 && abs(r[0].value! - 30.0) < 1e-9 && r[0].unit == .mm)
        #expect(throws: DecodeError(context: "DIY level bottle payload", field: "value (u16)", offset: 0,
                                    reason: .truncated(needed: 2, available: 1))) { try p.decode([0x2C]) }
        // Saved by an editor that writes a byte order mark (Notepad): the same profile.
        #expect(try CustomProfile(json: [0xEF, 0xBB, 0xBF] + Array(Self.exampleText.utf8)) == p)
    }

    @Test func everyTypeEndiannessAndScale() throws {
        func profile(_ type: String, endian: String = "little", offset: Int = 1, scale: Double = 1, add: Double = 0, missing: String = "") throws -> CustomProfile {
            try CustomProfile(json: Array("""
            {"name": "t", "sensor": "weight", "unit": "g",
             "source": {"kind": "manufacturer-data", "company": "0x0157"},
             "value": {"offset": \(offset), "type": "\(type)", "endian": "\(endian)", "scale": \(scale), "add": \(add) \(missing)}}
            """.utf8))
        }
        let payload: [UInt8] = [0xEE, 0xFE, 0xFF, 0xFF, 0x7F]
        let expected: [(String, String, Double)] = [
            ("u8", "little", 254), ("i8", "little", -2), ("u16", "little", 65534), ("i16", "little", -2),
            ("u16", "big", 65279), ("i16", "big", -257), ("u24", "little", 16_777_214), ("i24", "little", -2),
            ("u32", "little", 2_147_483_646), ("i32", "big", -16_777_345),
        ]
        for (type, endian, value) in expected {
            let p = try profile(type, endian: endian)
            #expect(try p.decode(payload)[0].value == value, "\(type) \(endian)")
            // And the encoder writes it back.
            let bytes = try p.encode(value)
            #expect(Array(bytes[1...]) == Array(payload[1..<(1 + p.value.type.width)]), "\(type) \(endian)")
        }
        // A payload that ends before the value's offset: said where the profile puts it, with its type
        // (a developer's u16 at byte 5 of a 3-byte payload was "value at byte 3: needs 7 bytes, 3 left").
        #expect(throws: DecodeError(context: "t payload", field: "value (u16)", offset: 5,
                                    reason: .invalidValue("the payload ends before it, at 3 bytes"))) { try profile("u16", offset: 5).decode([1, 2, 3]) }
        let f = try profile("f32", offset: 0)
        #expect(try f.decode(Array(Float(12.5).bitPattern.littleEndianBytes))[0].value == 12.5)
        let scaled = try profile("u16", offset: 0, scale: 0.5, add: -10)
        #expect(try scaled.decode([0x64, 0x00])[0].value == 40)
        #expect(try scaled.encode(40) == [0x64, 0x00])
        let missing = try profile("u16", offset: 0, missing: #", "missing": 65535"#)
        #expect(try missing.decode([0xFF, 0xFF]) == [ProfileReading(value: nil, unit: .g, flags: .unsuccessful)])
        #expect(try missing.encode(nil) == [0xFF, 0xFF])
        #expect(throws: ProfileEncodingError.self) { try profile("u8", offset: 0).encode(256) }
        #expect(throws: ProfileEncodingError.self) { try profile("u8", offset: 0).encode(nil) }
        #expect(try profile("u16", offset: 0).encode(1, unit: .kg) == [0xE8, 0x03])
    }

    @Test func sourcesAndMatching() throws {
        let sd = try CustomProfile(json: Array("""
        {"name": "s", "sensor": "level", "unit": "percent",
         "source": {"kind": "service-data", "uuid": "FCD2"}, "value": {"type": "u8"}, "match": {"namePrefix": "Bot"}}
        """.utf8))
        #expect(sd.source == .serviceData(BluetoothUUID(uuid16: 0xFCD2)))
        let p = DeviceProfile.custom(sd)
        #expect(p.transport.isBroadcast)
        let good = AdvertisingData([.localName("Bottle", complete: true), .serviceData16(0xFCD2, [42])])
        #expect(p.matches(advertisement: good))
        #expect(!p.matches(advertisement: AdvertisingData([.localName("Other", complete: true), .serviceData16(0xFCD2, [42])])))
        #expect(try p.decode(advertisement: good) == [ProfileReading(value: 42, unit: .percent)])
        let poll = try CustomProfile(json: Array("""
        {"name": "p", "sensor": "weight", "unit": "oz",
         "source": {"kind": "characteristic", "service": "FFE0", "characteristic": "FFE1", "mode": "read-poll", "pollInterval": 2},
         "value": {"type": "i16", "endian": "big"}}
        """.utf8))
        #expect(poll.source == .characteristic(service: BluetoothUUID(uuid16: 0xFFE0), characteristic: BluetoothUUID(uuid16: 0xFFE1),
                                               delivery: .readPoll(interval: 2)))
        #expect(DeviceProfile.custom(poll).matches(advertisement: AdvertisingData([.uuids16([0xFFE0], complete: true)])))
        #expect(!DeviceProfile.custom(poll).matches(advertisement: AdvertisingData([.uuids16([0xFFE1], complete: true)])))
    }

    /// A GATT profile file (a kitchen scale's weight) with `fields` added at the top level.
    static func withReminder(_ fields: String) -> String {
        #"{"name": "k", "sensor": "weight", "unit": "g", "source": {"kind": "characteristic", "service": "FFF0", "characteristic": "FFF4"}, "value": {"type": "i16", "endian": "big", "offset": 2, "scale": 0.1}, "#
            + fields + "}"
    }

    /// A kitchen scale's display blinking for a reminder, as a profile file declares it.
    static let reminderExample = withReminder(
        #""reminder": {"service": "fff0", "characteristic": "36f5", "writes": ["030a0000000009", "030a0101000009"], "pauseSeconds": 0.6, "withResponse": false}"#)

    @Test func aProfileFileDeclaresAReminderSignal() throws {
        let p = try CustomProfile(json: Array(Self.reminderExample.utf8))
        let signal = try #require(p.reminder)
        #expect(signal == ReminderSignal(service: BluetoothUUID(uuid16: 0xFFF0), characteristic: BluetoothUUID(uuid16: 0x36F5),
                                         writes: [[0x03, 0x0A, 0, 0, 0, 0, 0x09], [0x03, 0x0A, 1, 1, 0, 0, 0x09]],
                                         pause: 0.6, withResponse: false))
        #expect(signal.problem == nil)
        #expect(DeviceProfile.custom(p).reminderSignal == signal)
        // The service defaults to the source's; spaces and colons in the hex are fine; the pause defaults to 0.5 s.
        let short = try CustomProfile(json: Array(Self.withReminder(
            #""reminder": {"characteristic": "fff5", "writes": ["01 02", "0A:0b"], "withResponse": true}"#).utf8))
        #expect(short.reminder == ReminderSignal(service: BluetoothUUID(uuid16: 0xFFF0), characteristic: BluetoothUUID(uuid16: 0xFFF5),
                                                 writes: [[1, 2], [0x0A, 0x0B]], pause: 0.5, withResponse: true))
        // Without one, nothing: most profiles have no light Quench can drive.
        #expect(try CustomProfile(json: Array(Self.exampleText.utf8)).reminder == nil)
    }

    @Test func theBuiltInSignalIsTheKitchenScaleDisplayOnly() {
        // decentespresso.com/decentscale_api, quick start step 4: LED OFF "030A0000000009"; LED ON
        // "030A0101000108" asks a Half Decent Scale for heartbeats (byte 5), so ON is sent with 00 there.
        #expect(DecentScaleFrame.display(on: false) == [UInt8](hexString: "030A0000000009"))
        #expect(DecentScaleFrame.display(on: true) == [UInt8](hexString: "030A0101000009"))
        let blink = DeviceProfile.decentScale.reminderSignal
        #expect(blink?.characteristic == BluetoothUUID(uuid16: 0x36F5) && blink?.service == BluetoothUUID(uuid16: 0xFFF0))
        #expect(blink?.writes.count == 4 && blink?.withResponse == false && blink?.problem == nil)
        // Every write is a well-formed frame: model 03, the XOR of bytes 0-5 last.
        for w in blink?.writes ?? [] { #expect((try? DecentScaleFrame(decoding: w)) != nil) }
        // HidrateSpark's glow command is not public: nothing is invented.
        for p in DeviceProfile.builtIn where p != .decentScale { #expect(p.reminderSignal == nil, "\(p.identifier)") }
        #expect(DeviceProfile.custom(ProfileRegistry.levelBottle).reminderSignal == nil)
    }

    /// Each broken file and the field its error must name.
    @Test(arguments: [
        ("", ""),
        ("{", ""),
        ("[]", ""),
        (#"{"sensor": "level", "unit": "mm", "source": {"kind": "service-data", "uuid": "181D"}, "value": {"type": "u8"}}"#, "name"),
        (#"{"name": 5, "sensor": "level", "unit": "mm", "source": {"kind": "service-data", "uuid": "181D"}, "value": {"type": "u8"}}"#, "name"),
        (#"{"name": "x", "sensor": "volume", "unit": "mm", "source": {"kind": "service-data", "uuid": "181D"}, "value": {"type": "u8"}}"#, "sensor"),
        (#"{"name": "x", "sensor": "level", "unit": "ml", "source": {"kind": "service-data", "uuid": "181D"}, "value": {"type": "u8"}}"#, "unit"),
        (#"{"name": "x", "sensor": "level", "unit": "kg", "source": {"kind": "service-data", "uuid": "181D"}, "value": {"type": "u8"}}"#, "unit"),
        (#"{"name": "x", "sensor": "level", "unit": "mm", "value": {"type": "u8"}}"#, "source"),
        (#"{"name": "x", "sensor": "level", "unit": "mm", "source": {"kind": "gatt"}, "value": {"type": "u8"}}"#, "source.kind"),
        (#"{"name": "x", "sensor": "level", "unit": "mm", "source": {"kind": "service-data", "uuid": "18"}, "value": {"type": "u8"}}"#, "source.uuid"),
        (#"{"name": "x", "sensor": "level", "unit": "mm", "source": {"kind": "characteristic", "service": "181D"}, "value": {"type": "u8"}}"#, "source.characteristic"),
        (#"{"name": "x", "sensor": "level", "unit": "mm", "source": {"kind": "characteristic", "service": "181D", "characteristic": "2A9D", "mode": "push"}, "value": {"type": "u8"}}"#, "source.mode"),
        (#"{"name": "x", "sensor": "level", "unit": "mm", "source": {"kind": "characteristic", "service": "181D", "characteristic": "2A9D", "pollInterval": 1}, "value": {"type": "u8"}}"#, "source.pollInterval"),
        (#"{"name": "x", "sensor": "level", "unit": "mm", "source": {"kind": "characteristic", "service": "181D", "characteristic": "2A9D", "mode": "read-poll", "pollInterval": 0}, "value": {"type": "u8"}}"#, "source.pollInterval"),
        (#"{"name": "x", "sensor": "level", "unit": "mm", "source": {"kind": "manufacturer-data", "company": 70000}, "value": {"type": "u8"}}"#, "source.company"),
        (#"{"name": "x", "sensor": "level", "unit": "mm", "source": {"kind": "manufacturer-data", "company": "0xZZ"}, "value": {"type": "u8"}}"#, "source.company"),
        (#"{"name": "x", "sensor": "level", "unit": "mm", "source": {"kind": "service-data", "uuid": "181D", "extra": 1}, "value": {"type": "u8"}}"#, "source.extra"),
        (#"{"name": "x", "sensor": "level", "unit": "mm", "source": {"kind": "service-data", "uuid": "181D"}}"#, "value"),
        (#"{"name": "x", "sensor": "level", "unit": "mm", "source": {"kind": "service-data", "uuid": "181D"}, "value": {"type": "u17"}}"#, "value.type"),
        (#"{"name": "x", "sensor": "level", "unit": "mm", "source": {"kind": "service-data", "uuid": "181D"}, "value": {"type": "u8", "offset": -1}}"#, "value.offset"),
        (#"{"name": "x", "sensor": "level", "unit": "mm", "source": {"kind": "service-data", "uuid": "181D"}, "value": {"type": "u8", "offset": 1.5}}"#, "value.offset"),
        // Where the source can never hold it (a developer's offset 300 of manufacturer data was taken).
        (#"{"name": "x", "sensor": "level", "unit": "mm", "source": {"kind": "manufacturer-data", "company": 1}, "value": {"type": "u32", "offset": 300}}"#, "value.offset"),
        (#"{"name": "x", "sensor": "level", "unit": "mm", "source": {"kind": "service-data", "uuid": "181D"}, "value": {"type": "u16", "offset": 251}}"#, "value.offset"),
        (#"{"name": "x", "sensor": "level", "unit": "mm", "source": {"kind": "characteristic", "service": "181D", "characteristic": "2A9D"}, "value": {"type": "u8", "offset": 512}}"#, "value.offset"),
        (#"{"name": "x", "sensor": "level", "unit": "mm", "source": {"kind": "service-data", "uuid": "181D"}, "value": {"type": "u8", "endian": "middle"}}"#, "value.endian"),
        (#"{"name": "x", "sensor": "level", "unit": "mm", "source": {"kind": "service-data", "uuid": "181D"}, "value": {"type": "u8", "scale": 0}}"#, "value.scale"),
        (#"{"name": "x", "sensor": "level", "unit": "mm", "source": {"kind": "service-data", "uuid": "181D"}, "value": {"type": "u8", "scale": "1"}}"#, "value.scale"),
        (#"{"name": "x", "sensor": "level", "unit": "mm", "source": {"kind": "service-data", "uuid": "181D"}, "value": {"type": "u8", "missing": 256}}"#, "value.missing"),
        // Every reading infinite, and the replay said "0 sips" (new-user trial).
        (#"{"name": "x", "sensor": "level", "unit": "mm", "source": {"kind": "service-data", "uuid": "181D"}, "value": {"type": "u8", "scale": 1e308, "add": 1}}"#, "value.scale"),
        (#"{"name": "x", "sensor": "level", "unit": "mm", "source": {"kind": "service-data", "uuid": "181D"}, "value": {"type": "u8", "add": -1e308}}"#, "value.add"),
        // Shown in listings and errors: at most 64 characters, none a terminal obeys.
        (#"{"name": "\#(String(repeating: "x", count: 65))", "sensor": "level", "unit": "mm", "source": {"kind": "service-data", "uuid": "181D"}, "value": {"type": "u8"}}"#, "name"),
        (#"{"name": "a\u001b[2Jb", "sensor": "level", "unit": "mm", "source": {"kind": "service-data", "uuid": "181D"}, "value": {"type": "u8"}}"#, "name"),
        (#"{"name": "scale\u202Eelacs", "sensor": "level", "unit": "mm", "source": {"kind": "service-data", "uuid": "181D"}, "value": {"type": "u8"}}"#, "name"),
        (#"{"name": "x", "sensor": "level", "unit": "mm", "source": {"kind": "service-data", "uuid": "181D"}, "value": {"type": "f32", "missing": 0}}"#, "value.missing"),
        (#"{"name": "x", "sensor": "level", "unit": "mm", "source": {"kind": "service-data", "uuid": "181D"}, "value": {"type": "u8"}, "match": {"service": "nope"}}"#, "match.service"),
        (#"{"name": "x", "sensor": "level", "unit": "mm", "source": {"kind": "service-data", "uuid": "181D"}, "value": {"type": "u8"}, "matches": {}}"#, "matches"),
        // The reminder signal: each error names the key, and a write by its position.
        (#"{"name": "x", "sensor": "level", "unit": "mm", "source": {"kind": "service-data", "uuid": "181D"}, "value": {"type": "u8"}, "reminder": {"characteristic": "36f5", "writes": ["00"]}}"#, "reminder"),
        (Self.withReminder(#""reminder": 5"#), "reminder"),
        (Self.withReminder(#""reminder": {"writes": ["030a0000000009"]}"#), "reminder.characteristic"),
        (Self.withReminder(#""reminder": {"characteristic": "36g5", "writes": ["00"]}"#), "reminder.characteristic"),
        (Self.withReminder(#""reminder": {"service": "", "characteristic": "36f5", "writes": ["00"]}"#), "reminder.service"),
        (Self.withReminder(#""reminder": {"characteristic": "36f5"}"#), "reminder.writes"),
        (Self.withReminder(#""reminder": {"characteristic": "36f5", "writes": "030a0000000009"}"#), "reminder.writes"),
        (Self.withReminder(#""reminder": {"characteristic": "36f5", "writes": []}"#), "reminder.writes"),
        (Self.withReminder(#""reminder": {"characteristic": "36f5", "writes": ["00","00","00","00","00","00","00","00","00","00","00","00","00","00","00","00","00"]}"#), "reminder.writes"),
        (Self.withReminder(#""reminder": {"characteristic": "36f5", "writes": [1]}"#), "reminder.writes[0]"),
        (Self.withReminder(#""reminder": {"characteristic": "36f5", "writes": ["030a0000000009", "030a01zz000009"]}"#), "reminder.writes[1]"),
        (Self.withReminder(#""reminder": {"characteristic": "36f5", "writes": ["030a0000000009", "030"]}"#), "reminder.writes[1]"),
        (Self.withReminder(#""reminder": {"characteristic": "36f5", "writes": ["00", "00", ""]}"#), "reminder.writes[2]"),
        (Self.withReminder(#""reminder": {"characteristic": "36f5", "writes": ["000102030405060708090a0b0c0d0e0f1011121314"]}"#), "reminder.writes[0]"),
        (Self.withReminder(#""reminder": {"characteristic": "36f5", "writes": ["00"], "pauseSeconds": 6}"#), "reminder.pauseSeconds"),
        (Self.withReminder(#""reminder": {"characteristic": "36f5", "writes": ["00"], "pauseSeconds": -1}"#), "reminder.pauseSeconds"),
        (Self.withReminder(#""reminder": {"characteristic": "36f5", "writes": ["00"], "pauseSeconds": "1"}"#), "reminder.pauseSeconds"),
        (Self.withReminder(#""reminder": {"characteristic": "36f5", "writes": ["00"], "withResponse": "yes"}"#), "reminder.withResponse"),
        (Self.withReminder(#""reminder": {"characteristic": "36f5", "writes": ["00"], "pause_seconds": 1}"#), "reminder.pause_seconds"),
    ])
    func malformedFilesNameTheField(_ text: String, _ field: String) {
        do {
            let p = try CustomProfile(json: Array(text.utf8))
            Issue.record("accepted: \(p)")
        } catch {
            #expect(error.field == field, "\(error)")
            #expect(error.description.contains(field.isEmpty ? "profile file:" : "`\(field)`"))
        }
    }
}

private extension UInt32 {
    var littleEndianBytes: [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: self >> (8 * $0)) } }
}

/// Fuzz target for the profile file parser: mutations of the shipped example
/// parse or fail with a ProfileFileError naming a field or a byte; never a trap.
@Suite struct ProfileFileFuzzTests {
    @Test func mutatedProfileFilesParseOrNameTheProblem() {
        let base = Array(ProfileCustomFileTests.exampleText.utf8)
        let alphabet = Array("0123456789.,-+eE{}[]\":nulltrue \n\\xmodesourcekindtype".utf8) + [0, 0xFF, 0xC3, 0x80]
        var rng = FuzzRandom(seed: 7)
        var parsed = 0, refused = 0
        for _ in 0..<6_000 {
            let bytes = rng.mutate(base, alphabet: alphabet, edits: 1...5)
            do {
                _ = try CustomProfile(json: bytes)
                parsed += 1
            } catch {
                refused += 1
                #expect(error.description.hasPrefix("profile file: "), "\(error)")
            }
        }
        #expect(parsed > 30 && refused > 300, "parsed \(parsed), refused \(refused)")
    }

    func refusal(_ bytes: [UInt8]) -> String {
        do { _ = try CustomProfile(json: bytes); return "parsed" } catch { return error.description }
    }

    @Test func invalidUTF8IsNamedByItsByteAndAFieldOfAnotherSourceKindDoesNotApply() throws {
        #expect(refusal(try TestPackage.fixture("regressions/profile-invalid-utf8.json"))
                == "profile file: byte offset 13 is not valid UTF-8 text")
        #expect(refusal(try TestPackage.fixture("regressions/profile-field-not-applying.json"))
                == "profile file: field `source.characteristic`: does not apply when source.kind is \"service-data\"")
        let typo = ProfileCustomFileTests.exampleText.replacingOccurrences(of: "\"mode\"", with: "\"mdoe\"")
        #expect(refusal(Array(typo.utf8)) == "profile file: field `source.mdoe`: unknown field (check the spelling)")
        // A required key misspelt was "required field is missing", naming a key the person believed they wrote.
        let units = ProfileCustomFileTests.exampleText.replacingOccurrences(of: "\"unit\"", with: "\"units\"")
        #expect(refusal(Array(units.utf8)) == "profile file: field `units`: unknown field; did you mean `unit`? (it is required)")
        let sensor = ProfileCustomFileTests.exampleText.replacingOccurrences(of: "\"sensor\"", with: "\"Sensor\"")
        #expect(refusal(Array(sensor.utf8)) == "profile file: field `Sensor`: unknown field; did you mean `sensor`? (it is required)")
        let gone = ProfileCustomFileTests.exampleText.replacingOccurrences(of: "\"unit\": \"mm\",", with: "")
        #expect(refusal(Array(gone.utf8)) == "profile file: field `unit`: required field is missing")
        let badWrite = ProfileCustomFileTests.reminderExample.replacingOccurrences(of: "030a0101000009", with: "030a01010000zz")
        #expect(refusal(Array(badWrite.utf8))
                == #"profile file: field `reminder.writes[1]`: "030a01010000zz" is not hex bytes (e.g. "030a0000000009")"#)
    }

    /// The reminder block mutated: parsed (and then a signal that can be given), or refused naming a field; never a trap.
    @Test func mutatedReminderSignalsParseOrNameTheProblem() {
        let base = Array(ProfileCustomFileTests.reminderExample.utf8)
        let alphabet = Array("0123456789abcdefxz.,-+eE{}[]\":nulltrue \n\\writespause".utf8) + [0, 0xFF, 0xC3, 0x80]
        var rng = FuzzRandom(seed: 11)
        var parsed = 0, refused = 0
        for _ in 0..<6_000 {
            let bytes = rng.mutate(base, alphabet: alphabet, edits: 1...5)
            do {
                let p = try CustomProfile(json: bytes)
                parsed += 1
                if let r = p.reminder { #expect(r.problem == nil, "\(r)") }
            } catch {
                refused += 1
                #expect(error.description.hasPrefix("profile file: "), "\(error)")
            }
        }
        #expect(parsed > 30 && refused > 300, "parsed \(parsed), refused \(refused)")
    }
}

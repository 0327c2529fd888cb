import BluetoothWire
import QuenchProfiles
import QuenchTestSupport
import Testing

/// The HidrateSpark frames, against bytes built the way ../shared/ble-vm's
/// emulator builds them (struct.pack(">BBHIH") / (">BBHBI"), padded to 20).
@Suite struct HidrateSparkTests {
    @Test func legacyFrameDecodes() throws {
        // N=3, type 01, total 0x0190 = 400 mL, time 0x67A1B2C3, sip 0x0032 = 50 mL.
        let bytes = [UInt8](hexString: "030101906" + "7a1b2c30032" + String(repeating: "00", count: 10))!
        #expect(bytes.count == 20)
        let frame = try HidrateSparkFrame(decoding: bytes, layout: .legacy)
        #expect(frame.pending == 3)
        #expect(frame.totalML == 400)
        #expect(frame.record == .legacy(type: .sip, bottleTime: 0x67A1_B2C3, ml: 50))
        #expect(frame.sipML(capacityML: 591) == 50)
        #expect(frame.encoded() == bytes)
    }

    @Test func modernFrameDecodesPercentOfTheBottle() throws {
        // N=1, 12 %, total 71 mL, reserved 00, 3600 s ago.
        let bytes = [UInt8](hexString: "010c00470000000e10" + String(repeating: "00", count: 11))!
        let frame = try HidrateSparkFrame(decoding: bytes, layout: .modern)
        #expect(frame.pending == 1)
        #expect(frame.totalML == 71)
        #expect(frame.record == .modern(percent: 12, secondsAgo: 3600))
        #expect(try #require(frame.sipML(capacityML: 591)) == 0.12 * 591)
        #expect(frame.encoded() == bytes)
    }

    @Test func allZeroFrameMeansNothingPending() throws {
        for layout in HidrateSparkLayout.allCases {
            let frame = try HidrateSparkFrame(decoding: [UInt8](repeating: 0, count: 20), layout: layout)
            #expect(frame.pending == 0)
            #expect(frame.record == nil)
            #expect(frame.sipML(capacityML: 591) == nil)
        }
    }

    @Test func unknownRecordTypeStillDecodes() throws {
        let bytes = [UInt8](hexString: "0207000a000000010005")! + [UInt8](repeating: 0, count: 10)
        let frame = try HidrateSparkFrame(decoding: bytes, layout: .legacy)
        #expect(frame.record == .legacy(type: HidrateSparkRecordType(rawValue: 7), bottleTime: 1, ml: 5))
        #expect(frame.sipML(capacityML: 591) == nil)
        #expect(HidrateSparkRecordType(rawValue: 7).description == "record type 0x07")
    }

    @Test func shortFrameNamesTheField() {
        #expect {
            try HidrateSparkFrame(decoding: [0x01, 0x01, 0x00, 0x10, 0x00], layout: .legacy)
        } throws: { error in
            let e = error as? DecodeError
            return e?.field == "bottle time" && e?.offset == 4
        }
    }

    @Test func handshakeIsTheThirteenWritesTheEmulatorExpects() {
        #expect(HidrateSpark.handshake.count == 13)
        #expect(HidrateSpark.handshake.first == .init(target: .debug, bytes: [0x21, 0x00, 0xD1]))
        #expect(HidrateSpark.handshake[1] == .init(target: .setPoint, bytes: [0x92]))
        #expect(HidrateSpark.handshake.last?.bytes == [0x09, 0x34, 0, 0, 0, 0, 0, 0])
    }

    @Test func recognisedByNameOrService() {
        #expect(HidrateSpark.matches(name: "h2o-3F2A", services: []))
        #expect(HidrateSpark.matches(name: "H2O-0001", services: []))
        #expect(HidrateSpark.matches(name: nil, services: [HidrateSpark.referenceService]))
        #expect(!HidrateSpark.matches(name: "WeightScale", services: [BluetoothUUID(uuid16: 0x181D)]))
    }

    @Test func debugMessages() {
        #expect(HidrateSparkDebugMessage([0x81, 0x02, 0, 0]).capOpen == true)
        #expect(HidrateSparkDebugMessage([0x80, 0x02, 0, 0]).capOpen == false)
        #expect(HidrateSparkDebugMessage([0x42]).capOpen == nil)
        #expect(HidrateSparkDebugMessage([0x42]).description == "debug message 42")
    }

    /// Random and mutated frames: every one decodes or throws a DecodeError
    /// inside the frame; decoded frames re-encode to the same fields.
    @Test func framesNeverCrash() throws {
        var rng = FuzzRandom(seed: 0x4832_4F)
        var decoded = 0
        for i in 0..<50_000 {
            let layout: HidrateSparkLayout = i % 2 == 0 ? .legacy : .modern
            var bytes = rng.bytes(maxCount: 24)
            if i % 3 == 0 { bytes = (0..<20).map { _ in UInt8.random(in: 0...255, using: &rng) } }
            do {
                let frame = try HidrateSparkFrame(decoding: bytes, layout: layout)
                decoded += 1
                let again = try HidrateSparkFrame(decoding: frame.encoded(), layout: layout)
                #expect(again == frame)
            } catch {
                #expect(error.offset <= bytes.count)
            }
        }
        #expect(decoded > 10_000)
    }
}

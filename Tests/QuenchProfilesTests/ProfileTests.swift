import BluetoothWire
import QuenchCore
import QuenchProfiles
import QuenchTestSupport
import Testing

private let feb14 = DeviceDateTime(year: 2022, month: 2, day: 14, hours: 16, minutes: 41, seconds: 58)

@Suite struct ProfileWeightScaleTests {
    /// ble-vm weight-scale frame for 3.15 kg (README worked example prints "WEIGHT 3.15 kg"):
    /// flags 0x00 (SI), weight 630 × 0.005 kg.
    @Test func emulatorFrame() throws {
        let m = try WeightMeasurement(decoding: [0x00, 0x76, 0x02])
        #expect(m.weight == 3.15)
        #expect(m.unit == .kg)
        #expect(try DeviceProfile.weightScale.decode([0x00, 0x76, 0x02]) == [ProfileReading(value: 3.15, unit: .kg)])
        #expect(try DeviceProfile.weightScale.decode([0x01, 0x3B, 0x1B]) == [ProfileReading(value: 69.71, unit: .lb)])
    }

    /// GSS 3.252 field by field: flags 0x0E = SI, time stamp, user id, BMI and height.
    @Test func everyFieldSI() throws {
        let bytes = hex("0e6037e607020e10293a01f500b606")
        let m = try WeightMeasurement(decoding: bytes)
        #expect(m.weight! == 14176 * 0.005)
        #expect(m.timeStamp == feb14)
        #expect(m.userID == 1)
        #expect(abs(m.bmi! - 24.5) < 1e-9)
        #expect(abs(m.height! - 1.718) < 1e-9)
        #expect(m.encoded() == bytes)
        let r = m.reading
        #expect(r.deviceTime == feb14 && r.userID == 1 && r.flags == [])
    }

    /// Imperial: weight in 0.01 lb, height in 0.1 inch.
    @Test func everyFieldImperial() throws {
        let m = try WeightMeasurement(decoding: hex("0f4c36e607020e10293aff1801ae02"))
        #expect(m.unit == .lb)
        #expect(abs(m.weight! - 139.0) < 1e-9)   // 0x364C = 13900
        #expect(m.userID == 0xFF)                   // unknown user
        #expect(abs(m.bmi! - 28.0) < 1e-9)
        #expect(abs(m.height! - 68.6) < 1e-9)
    }

    @Test func unsuccessfulMeasurement() throws {
        let r = try DeviceProfile.weightScale.decode([0x00, 0xFF, 0xFF])
        #expect(r == [ProfileReading(value: nil, unit: .kg, flags: .unsuccessful)])
        #expect(try DeviceProfile.weightScale.encode(r[0]) == [0x00, 0xFF, 0xFF])
    }

    @Test func allFlagCombinationsRoundTrip() throws {
        for flags in UInt8(0)...15 {
            let m = WeightMeasurement(imperial: flags & 1 != 0, rawWeight: 12345,
                                      timeStamp: flags & 2 != 0 ? feb14 : nil,
                                      userID: flags & 4 != 0 ? 3 : nil,
                                      bmiAndHeight: flags & 8 != 0 ? .init(rawBMI: 231, rawHeight: 1805) : nil)
            let bytes = m.encoded()
            #expect(bytes[0] == flags)
            #expect(bytes.count == 3 + (flags & 2 != 0 ? 7 : 0) + (flags & 4 != 0 ? 1 : 0) + (flags & 8 != 0 ? 4 : 0))
            #expect(try WeightMeasurement(decoding: bytes) == m)
            // Every shorter prefix fails, naming a byte inside the payload.
            for n in 0..<bytes.count {
                do {
                    _ = try WeightMeasurement(decoding: Array(bytes.prefix(n)))
                    Issue.record("prefix \(n) of flags \(flags) decoded")
                } catch {
                    #expect(error.offset <= n)
                }
            }
        }
    }

    @Test func truncatedTimeStampNamesTheField() {
        #expect(throws: DecodeError(context: "Weight Measurement", field: "year", offset: 3,
                                    reason: .truncated(needed: 2, available: 1))) {
            try WeightMeasurement(decoding: [0x02, 0x76, 0x02, 0xE6])
        }
    }

    @Test func trailingBytesOnlyWithReservedFlags() throws {
        #expect(throws: DecodeError(context: "Weight Measurement", field: "end of payload", offset: 3, reason: .trailingBytes(2))) {
            try WeightMeasurement(decoding: [0x00, 0x76, 0x02, 0xAA, 0xBB])
        }
        let future = try WeightMeasurement(decoding: [0x10, 0x76, 0x02, 0xAA, 0xBB])
        #expect(future.weight == 3.15)
        #expect(future.reservedFlags == 0x10)
    }

    @Test func encoderQuantisesToTheFieldUnit() throws {
        #expect(try WeightMeasurement(weight: 3.152, unit: .kg).rawWeight == 630)
        #expect(try WeightMeasurement(weight: 1000, unit: .g).rawWeight == 200)
        #expect(try WeightMeasurement(weight: 69.71, unit: .lb).encoded() == [0x01, 0x3B, 0x1B])
        #expect(throws: ProfileEncodingError.self) { try WeightMeasurement(weight: -1, unit: .kg) }
        #expect(throws: ProfileEncodingError.self) { try WeightMeasurement(weight: 400, unit: .kg) }  // 80000 > 0xFFFE
        #expect(throws: ProfileEncodingError.self) { try WeightMeasurement(weight: 3, unit: .mm) }
    }

    /// ble-vm's Weight Scale Feature 0x00000038: resolution 7 = 0.005 kg / 0.01 lb, nothing else.
    @Test func featureBits() throws {
        let f = try WeightScaleFeature(decoding: [0x38, 0x00, 0x00, 0x00])
        #expect(!f.timeStampSupported && !f.multipleUsersSupported && !f.bmiSupported)
        #expect(f.weightResolution == .finest)
        #expect(f.weightStep(imperial: false) == 0.005 && f.weightStep(imperial: true) == 0.01)
        #expect(f.heightResolution == .notSpecified && f.heightResolution.metres == nil)

        let g = WeightScaleFeature(timeStampSupported: true, multipleUsersSupported: true, bmiSupported: true,
                                   weightResolution: .init(rawValue: 4), heightResolution: .init(rawValue: 3))
        #expect(g.encoded() == [0xA7, 0x01, 0x00, 0x00])
        #expect(try WeightScaleFeature(decoding: g.encoded()) == g)
        #expect(g.weightStep(imperial: false) == 0.05 && g.weightStep(imperial: true) == 0.1)
        #expect(g.heightResolution.metres == 0.001 && g.heightResolution.inches == 0.1)
        #expect(WeightScaleFeature(rawValue: 0x0F << 3).weightResolution.kilograms == nil)   // reserved
        #expect(throws: DecodeError.self) { try WeightScaleFeature(decoding: [0x38, 0x00, 0x00]) }
    }
}

@Suite struct ProfileMiScaleTests {
    /// theengs/decoder tests/BLE/test_ble.cpp "Mi Smart Scale" service data 0x181d and its expected output.
    @Test func theengsVectors() throws {
        let vectors: [(String, Double, MeasurementUnit, ReadingFlags)] = [
        ("223e30e607020e10293a", 61.75, MeasurementUnit.kg, ReadingFlags.stable),
        ("627607e607020e10293a", 9.55, .kg, .stable),
        ("a23e30e607020e10293a", 61.75, .kg, [.stable, .removed]),
        ("e27607e607020e10293a", 9.55, .kg, [.stable, .removed]),
        ("237233e607020e10293a", 131.7, .lb, .stable),
        ("637607e607020e10293a", 19.1, .lb, .stable),
        ("a37233e607020e10293a", 131.7, .lb, [.stable, .removed]),
        ("e37607e607020e10293a", 19.1, .lb, [.stable, .removed]),
        ]
        for (payload, weight, unit, flags) in vectors {
        let r = try DeviceProfile.miScale.decode(hex(payload))
        #expect(r.count == 1)
        #expect(abs(r[0].value! - weight) < 1e-9)
        #expect(r[0].unit == unit && r[0].flags == flags && r[0].deviceTime == feb14)
        let p = try MiScalePayload(decoding: hex(payload))
        #expect(p.encoded() == hex(payload))
        }
    }

    /// The emulator's frames (README): 0x22 stabilized kg, 0x82 before the first reading, 0x23 pounds.
    @Test func emulatorFrames() throws {
        let t = DeviceDateTime(unixTime: 1_772_436_600)
        #expect(t == DeviceDateTime(year: 2026, month: 3, day: 2, hours: 7, minutes: 30, seconds: 0))
        #expect(t.unixTime == 1_772_436_600)
        let first = try DeviceProfile.miScale.encode(ProfileReading(value: 0, unit: .kg, flags: .removed, deviceTime: t))
        #expect(first == hex("820000ea07030207 1e00".replacingOccurrences(of: " ", with: "")))
        let stable = try DeviceProfile.miScale.encode(ProfileReading(value: 61.75, unit: .kg, flags: .stable, deviceTime: t))
        #expect(stable[0] == 0x22 && stable[1...2] == [0x3E, 0x30])
        let lb = try DeviceProfile.miScale.encode(ProfileReading(value: 131.7, unit: .lb, flags: .stable, deviceTime: t))
        #expect(lb[0] == 0x23 && lb[1...2] == [0x72, 0x33])
        // Grams are sent as kg.
        let g = try DeviceProfile.miScale.encode(ProfileReading(value: 500, unit: .g, deviceTime: t))
        #expect(try DeviceProfile.miScale.decode(g) == [ProfileReading(value: 0.5, unit: .kg, deviceTime: t)])
    }

    /// Jin frames (control bit 4, 0x12 as openScale and lolouk44's decoder read it): raw / 100 jin = raw / 200 kg.
    @Test func jinIsReportedInKilograms() throws {
        let r = try DeviceProfile.miScale.decode(hex("323e30e607020e10293a"))
        #expect(r[0].unit == .kg && abs(r[0].value! - 61.75) < 1e-9)
    }

    @Test func wrongLengthsNameTheByte() {
        #expect(throws: DecodeError(context: "Mi Scale service data", field: "end of payload", offset: 10, reason: .trailingBytes(1))) {
            try DeviceProfile.miScale.decode(hex("223e30e607020e10293a00"))
        }
        #expect(throws: DecodeError(context: "Mi Scale service data", field: "seconds", offset: 9, reason: .truncated(needed: 1, available: 0))) {
            try DeviceProfile.miScale.decode(hex("223e30e607020e1029"))
        }
    }
}

@Suite struct ProfileMiBodyScaleTests {
    /// theengs/decoder tests/BLE/test_ble.cpp "Mi_Body_Scale_2" service data 0x181b and expected output.
    @Test func theengsVectors() throws {
        let vectors: [(String, Double, MeasurementUnit, Double?, ReadingFlags)] = [
        ("0226e607020e10293af7019a38", 72.45, MeasurementUnit.kg, 503.0 as Double?, ReadingFlags.stable),
        ("0224e607020e10293a00009a38", 72.45, .kg, nil, .stable),
        ("0624e607020e10293a0000fc03", 5.1, .kg, nil, .stable),
        ("0326e607020e10293af701f136", 140.65, .lb, 503, .stable),
        ("0324e607020e10293a0000f136", 140.65, .lb, nil, .stable),
        ("0724e607020e10293a0000ce04", 12.3, .lb, nil, .stable),
        ("02a6e607020e10293af7019a38", 72.45, .kg, 503, [.stable, .removed]),
        ("07a4e607020e10293a0000ce04", 12.3, .lb, nil, [.stable, .removed]),
        ]
        for (payload, weight, unit, impedance, flags) in vectors {
        let r = try DeviceProfile.miBodyScale.decode(hex(payload))
        #expect(r.count == 1)
        #expect(abs(r[0].value! - weight) < 1e-9)
        #expect(r[0].unit == unit && r[0].impedance == impedance && r[0].flags == flags && r[0].deviceTime == feb14)
        #expect(try MiBodyScalePayload(decoding: hex(payload)).encoded() == hex(payload))
        }
    }

    /// A real MIBFS advertisement posted with theengs' output (weight 14.45 kg; year 1970 from an unset clock,
    /// impedance 0xFFFD without the impedance bit) and an unstable frame (10.2 kg).
    @Test func publicCaptures() throws {
        let r = try DeviceProfile.miBodyScale.decode(hex("0224b2070113100c08fdff4a0b"))
        #expect(r == [ProfileReading(value: 14.45, unit: .kg, flags: .stable,
                                     deviceTime: DeviceDateTime(year: 1970, month: 1, day: 19, hours: 16, minutes: 12, seconds: 8))])
        let u = try DeviceProfile.miBodyScale.decode(hex("0204b207011e041b0d0000f807"))
        #expect(u[0].flags == [] && abs(u[0].value! - 10.2) < 1e-9)
    }

    @Test func encoderRoundTrip() throws {
        let reading = ProfileReading(value: 72.45, unit: .kg, flags: .stable, deviceTime: feb14, impedance: 503)
        let bytes = try DeviceProfile.miBodyScale.encode(reading)
        #expect(bytes == hex("0226e607020e10293af7019a38"))
        #expect(try DeviceProfile.miBodyScale.decode(bytes) == [reading])
    }
}

@Suite struct ProfileDecentScaleTests {
    @Test func weightFrames() throws {
        // 100.0 g stable: 1000 = 0x03E8 big-endian; XOR 03^CE^03^E8^00^00 = 0x26.
        #expect(try DeviceProfile.decentScale.decode(hex("03ce03e8000026")) == [ProfileReading(value: 100, unit: .g, flags: .stable)])
        // -5.0 g changing: -50 = 0xFFCE; XOR = 0xF8.
        #expect(try DeviceProfile.decentScale.decode(hex("03caffce0000f8")) == [ProfileReading(value: -5, unit: .g)])
        #expect(try DecentScaleFrame(weight: 100, stable: true).encoded() == hex("03ce03e8000026"))
        #expect(try DecentScaleFrame(weight: -0.005, unit: .kg, stable: false).encoded() == hex("03caffce0000f8"))
        #expect(throws: ProfileEncodingError.self) { try DecentScaleFrame(weight: 3276.8, stable: true) }
    }

    @Test func otherMessagesGiveNoReading() throws {
        let button = DecentScaleFrame(type: .init(rawValue: 0xAA), data: [0x01, 0x01])
        #expect(try DeviceProfile.decentScale.decode(button.encoded()).isEmpty)
    }

    @Test func checksumMismatchNamesByte6() {
        #expect(throws: DecodeError(context: "Decent scale frame", field: "checksum", offset: 6,
                                    reason: .invalidValue("0x27, XOR of bytes 0-5 is 0x26"))) {
            try DeviceProfile.decentScale.decode(hex("03ce03e8000027"))
        }
        #expect(throws: DecodeError(context: "Decent scale frame", field: "model", offset: 0, reason: .invalidValue("0x04, expected 0x03"))) {
            try DeviceProfile.decentScale.decode(hex("04ce03e8000021"))
        }
        #expect(throws: DecodeError.self) { try DeviceProfile.decentScale.decode(hex("03ce03e80000")) }
        #expect(throws: DecodeError.self) { try DeviceProfile.decentScale.decode(hex("03ce03e800002600")) }
    }
}

@Suite struct ProfileMatchingTests {
    func ad(_ elements: [ADElement]) -> AdvertisingData { AdvertisingData(elements) }

    /// The advertisements of ble-vm's four emulated devices (README "Wire formats").
    @Test func emulatorAdvertisements() throws {
        let weight = ad([.flags([.leGeneralDiscoverable, .brEdrNotSupported]), .uuids16([0x181D], complete: true), .localName("WeightScale", complete: true)])
        let mi = ad([.flags([.leGeneralDiscoverable, .brEdrNotSupported]), .serviceData16(0x181D, hex("82000000000000000000")), .localName("MI_SCALE", complete: true)])
        let decent = ad([.flags([.leGeneralDiscoverable]), .uuids16([0xFFF0], complete: true), .localName("Decent Scale", complete: true)])
        let level = ad([.uuids128([BluetoothUUID("6e0a0000-51a5-4c5b-9f1d-7e57b0771e00")!], complete: true), .localName("QLevel", complete: true)])
        let custom = try CustomProfile(json: Array(ProfileCustomFileTests.exampleText.utf8))
        let all = DeviceProfile.builtIn + [.custom(custom)]
        #expect(DeviceProfile.matching(weight, among: all) == [.weightScale])
        #expect(DeviceProfile.matching(mi, among: all) == [.miScale])
        #expect(DeviceProfile.matching(decent, among: all) == [.decentScale])
        #expect(DeviceProfile.matching(level, among: all) == [.custom(custom)])
        #expect(try DeviceProfile.miScale.decode(advertisement: mi) == [ProfileReading(
            value: 0, unit: .kg, flags: .removed, deviceTime: DeviceDateTime(year: 0, month: 0, day: 0, hours: 0, minutes: 0, seconds: 0))])
        #expect(try DeviceProfile.miScale.decode(advertisement: weight) == nil)
        #expect(DeviceProfile.miScale.payloadIdentity(hex("2201")) == PayloadIdentity(hex("2201")))
        #expect(DeviceProfile.weightScale.payloadIdentity(hex("2201")) == nil)
    }

    /// A burst of one frame is one reading; the same frame a second later is the weight said
    /// again (a scale with no clock in its frame is read while its weight stands).
    @Test func aRepeatedFrameIsAReadingAgainAfterItsBurst() {
        var repeats = BroadcastRepeats()
        let a = PayloadIdentity(hex("2201")), b = PayloadIdentity(hex("2202"))
        let heard: [(PayloadIdentity?, Double)] = [(a, 0), (a, 0.1), (a, 0.5), (a, 0.95), (a, 1.2), (b, 1.25), (a, 1.3), (nil, 1.31), (nil, 1.32)]
        #expect(heard.map { repeats.isReading($0.0, at: $0.1) } == [true, false, false, true, false, true, true, true, true])
    }

    @Test func identifiersAndTransports() {
        for p in DeviceProfile.builtIn { #expect(DeviceProfile(identifier: p.identifier) == p) }
        #expect(DeviceProfile(identifier: "custom") == nil)
        #expect(DeviceProfile.weightScale.transport == .gatt(service: BluetoothUUID(uuid16: 0x181D), characteristic: BluetoothUUID(uuid16: 0x2A9D), delivery: .indicate))
        #expect(DeviceProfile.decentScale.transport == .gatt(service: BluetoothUUID(uuid16: 0xFFF0), characteristic: BluetoothUUID(uuid16: 0xFFF4), delivery: .notify))
        #expect(DeviceProfile.miBodyScale.transport == .serviceData(BluetoothUUID(uuid16: 0x181B)))
        #expect(DeviceProfile.miScale.transport.isBroadcast && !DeviceProfile.weightScale.transport.isBroadcast)
        #expect(DeviceProfile.decentScale.sensor == .weight && DeviceProfile.decentScale.unit == .g)
    }

    /// decode(encode(r)) gives r back (to the format's resolution) for every profile.
    @Test func encodeDecodeRoundTrips() throws {
        let t = DeviceDateTime(unixTime: 1_772_436_600)
        let level = try CustomProfile(json: Array(ProfileCustomFileTests.exampleText.utf8))
        let cases: [(DeviceProfile, ProfileReading)] = [
            (.weightScale, ProfileReading(value: 3.15, unit: .kg)),
            (.weightScale, ProfileReading(value: 69.71, unit: .lb, deviceTime: t, userID: 2)),
            (.miScale, ProfileReading(value: 61.75, unit: .kg, flags: [.stable], deviceTime: t)),
            (.miScale, ProfileReading(value: 19.1, unit: .lb, flags: [.stable, .removed], deviceTime: t)),
            (.miBodyScale, ProfileReading(value: 12.3, unit: .lb, flags: [.removed], deviceTime: t)),
            (.decentScale, ProfileReading(value: 512.3, unit: .g, flags: .stable)),
            (.decentScale, ProfileReading(value: -1.5, unit: .g)),
            (.custom(level), ProfileReading(value: 123.4, unit: .mm)),
        ]
        for (profile, reading) in cases {
            let bytes = try profile.encode(reading)
            let back = try profile.decode(bytes)
            #expect(back.count == 1)
            #expect(abs(back[0].value! - reading.value!) < 1e-9, "\(profile.identifier)")
            var expected = reading
            expected.value = back[0].value
            #expect(back[0] == expected, "\(profile.identifier)")
        }
        #expect(throws: ProfileEncodingError.self) { try DeviceProfile.decentScale.encode(ProfileReading(value: 5, unit: .mm)) }
        #expect(throws: ProfileEncodingError.self) { try DeviceProfile.miScale.encode(ProfileReading(value: nil, unit: .kg)) }
    }
}

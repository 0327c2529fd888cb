import BluetoothWire
import QuenchCore
import QuenchProfiles
import Testing

/// SplitMix64: a fixed-seed generator so every run fuzzes the same inputs.
struct FuzzRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func bytes(maxCount: Int) -> [UInt8] {
        (0..<Int.random(in: 0...maxCount, using: &self)).map { _ in UInt8.random(in: 0...255, using: &self) }
    }
}

/// Random payloads through every decoder: each must return or throw a
/// DecodeError naming an offset inside (or just past) the payload, never crash.
@Suite struct ProfileFuzzTests {
    static let iterations = 100_000

    @Test func profileDecodersNeverCrash() throws {
        let level = try CustomProfile(json: Array(ProfileCustomFileTests.exampleText.utf8))
        let profiles = DeviceProfile.builtIn + [.custom(level)]
        var rng = FuzzRandom(seed: 0x5157_4E43_48)
        var decoded = [Int](repeating: 0, count: profiles.count)
        for i in 0..<Self.iterations {
            // Half the inputs are valid-length frames with random content, so deep paths run too.
            let lengths = [3, 10, 13, 7, 2]
            let k = i % profiles.count
            var payload = rng.bytes(maxCount: 24)
            if i % 2 == 0 {
                payload = (0..<lengths[k]).map { _ in UInt8.random(in: 0...255, using: &rng) }
                if k == 2 { payload[0] &= 0x0F }   // weight scale: no reserved flags, so length rules apply
                if k == 3 && i % 4 == 0 {           // decent: right model byte and checksum
                    payload[0] = 0x03
                    payload[6] = payload[0..<6].reduce(0, ^)
                }
            }
            do {
                let readings = try profiles[k].decode(payload)
                decoded[k] += 1
                for r in readings where r.value != nil { #expect(r.value!.isFinite) }
            } catch {
                #expect(error.offset >= 0 && error.offset <= payload.count, "\(profiles[k].identifier) \(payload.hexString)")
            }
        }
        // Each decoder accepted some inputs: the fuzz reached past the length checks.
        for (k, n) in decoded.enumerated() { #expect(n > 0, "\(profiles[k].identifier)") }
    }

    @Test func advertisingDataParserNeverCrashes() throws {
        var rng = FuzzRandom(seed: 31)
        var ok = 0
        for _ in 0..<Self.iterations {
            let bytes = rng.bytes(maxCount: 40)
            let ad: AdvertisingData
            do {
                ad = try AdvertisingData(decoding: bytes)
            } catch {
                #expect(error.offset >= 0 && error.offset <= bytes.count)
                continue
            }
            ok += 1
            // Whatever decodes re-encodes to the same structures.
            #expect(try AdvertisingData(decoding: ad.encoded()) == ad)
            _ = (ad.name, ad.serviceUUIDs, ad.serviceData, ad.manufacturerData)
        }
        #expect(ok > 0)
    }

    @Test func btsnoopReaderNeverCrashes() throws {
        var rng = FuzzRandom(seed: 2001)
        let valid = [SnoopFixture.monitorCapture(), SnoopFixture.h4Capture()]
        for i in 0..<(Self.iterations / 10) {
            var bytes = valid[i % 2]
            // Flip a few bytes, sometimes in the header, mostly in records; sometimes cut the file.
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                let at = i % 7 == 0 ? Int.random(in: 0..<16, using: &rng) : Int.random(in: 16..<bytes.count, using: &rng)
                bytes[at] = UInt8.random(in: 0...255, using: &rng)
            }
            if i % 3 == 0 { bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &rng))) }
            if i % 5 == 0 { bytes += rng.bytes(maxCount: 64) }
            var reader = SnoopCaptureReader()
            reader.append(bytes)
            do {
                while try reader.next() != nil {}
                try reader.finish()
            } catch {
                #expect(error.offset >= 0 && error.offset <= bytes.count, "\(error)")
            }
        }
    }
}

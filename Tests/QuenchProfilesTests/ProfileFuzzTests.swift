import BluetoothWire
import QuenchCore
import QuenchProfiles
import QuenchTestSupport
import Testing

/// Random payloads through every decoder: each must return or throw a
/// DecodeError naming an offset inside (or just past) the payload, never crash.
@Suite struct ProfileFuzzTests {
    static let iterations = 100_000

    @Test func profileDecodersNeverCrash() throws {
        let level = try CustomProfile(json: Array(ProfileCustomFileTests.exampleText.utf8))
        // Readings decoders; a bottle that reports sips has its own frame fuzz (HidrateSparkTests).
        let profiles = DeviceProfile.builtIn.filter { !$0.reportsSips } + [.custom(level)]
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
}

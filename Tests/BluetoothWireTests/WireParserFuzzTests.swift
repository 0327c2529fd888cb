import BluetoothWire
import QuenchTestSupport
import Testing

/// Random and mutated bytes through the wire parsers: each returns or throws
/// a DecodeError naming an offset inside (or just past) the input, never crashes.
@Suite struct WireParserFuzzTests {
    static let iterations = 100_000

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

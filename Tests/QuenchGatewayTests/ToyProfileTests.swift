#if os(Linux)
import BluetoothWire
import Foundation
import GATT
import QuenchCore
import QuenchProfiles
import QuenchSimulatedDevices
import QuenchSimulator
import QuenchStore
import QuenchTestSupport
import Testing
@testable import QuenchGateway

/// A profile defined entirely in this file: a coaster scale that notifies its
/// weight in grams as an IEEE 11073-20601 SFLOAT (the 16-bit medical float many
/// Bluetooth SIG characteristics use: GATT Specification Supplement 2.2.2,
/// "medfloat16"; a 4-bit signed exponent over a 12-bit signed mantissa,
/// little-endian). Nothing outside this file knows it.
struct ToyCoasterProfile: ProfileDefinition {
    static let service = BluetoothUUID("7a0e0000-c0a5-7e55-a11e-5f10a7000000")!
    static let weight = BluetoothUUID("7a0e0001-c0a5-7e55-a11e-5f10a7000000")!

    var identifier: String { "toy-coaster" }
    var displayName: String { "Toy SFLOAT coaster" }
    var transport: ProfileTransport { .gatt(service: Self.service, characteristic: Self.weight, delivery: .notify) }
    var unit: MeasurementUnit { .g }

    func matches(advertisement ad: AdvertisingData) -> Bool { ad.serviceUUIDs.contains(Self.service) }

    /// SFLOAT's special values (NaN 0x07FF, NRes 0x0800, ±INFINITY 0x07FE/0x0802, reserved 0x0801) are no reading.
    func decode(_ payload: [UInt8]) throws(DecodeError) -> [ProfileReading] {
        var r = ByteReader(payload, context: "toy coaster weight")
        let raw = try r.uint16("weight (SFLOAT)")
        try r.expectEnd()
        let mantissa12 = Int(raw & 0x0FFF)
        guard !(0x07FE...0x0802).contains(mantissa12) else { return [ProfileReading(value: nil, unit: .g, flags: .unsuccessful)] }
        let mantissa = mantissa12 >= 0x0800 ? mantissa12 - 0x1000 : mantissa12
        let exponent4 = Int(raw >> 12)
        let exponent = exponent4 >= 8 ? exponent4 - 16 : exponent4
        return [ProfileReading(value: Double(mantissa) * pow(10, Double(exponent)), unit: .g)]
    }

    /// The finest exponent from -1 (0.1 g) whose mantissa fits.
    func encode(_ reading: ProfileReading) throws(ProfileEncodingError) -> [UInt8] {
        guard let v = reading.value else { return [0xFF, 0x07] }  // NaN
        guard let perUnit = reading.unit.gramsPerUnit else {
            throw ProfileEncodingError(context: "toy coaster", field: "weight", reason: .unsupportedUnit(reading.unit))
        }
        let grams = v * perUnit
        for exponent in -1...7 {
            let mantissa = (grams / pow(10, Double(exponent))).rounded()
            guard abs(mantissa) <= 2045 else { continue }
            let raw = UInt16(exponent & 0xF) << 12 | UInt16(Int(mantissa) & 0x0FFF)
            return [UInt8(raw & 0xFF), UInt8(raw >> 8)]
        }
        throw ProfileEncodingError(context: "toy coaster", field: "weight", reason: .outOfRange(value: grams, range: -2045e7...2045e7))
    }
}

@Suite("a profile defined in one test file")
struct ToyProfileTests {
    typealias F = LiveFixture
    static let toy = DeviceProfile(ToyCoasterProfile())
    static let address = BluetoothAddress("C0:A5:7E:00:00:01")!

    @Test("SFLOAT round trip and special values")
    func codec() throws {
        // 0xF172: exponent -1, mantissa 0x172 = 370 → 37.0 g; 0x0FFB: exponent 0, mantissa -5 → -5 g.
        #expect(abs(try #require(try Self.toy.decode([0x72, 0xF1]).first?.value) - 37.0) < 1e-9)
        #expect(try Self.toy.decode([0xFB, 0x0F]) == [ProfileReading(value: -5, unit: .g)])
        #expect(try Self.toy.decode([0xFF, 0x07]) == [ProfileReading(value: nil, unit: .g, flags: .unsuccessful)])
        for grams in [0.0, 12.3, -5.5, 204.5, 612.0, 1234.0, 25_000.0] {
            let back = try Self.toy.decode(try Self.toy.encode(ProfileReading(value: grams, unit: .g)))
            #expect(back.count == 1 && abs(back[0].value! - grams) <= max(abs(grams) * 1e-3, 0.05), "\(grams) g → \(back)")
        }
        #expect(throws: DecodeError.self) { try Self.toy.decode([0x01]) }
    }

    @Test("the registry takes it: by name, in a scan, and a profile file still resolves beside it")
    func registry() throws {
        let registry = ProfileRegistry.standard.adding([Self.toy])
        #expect(registry.named("toy-coaster") == Self.toy)
        #expect(registry.identifiers == ProfileRegistry.identifiers + ["toy-coaster"])
        #expect(try registry.resolve("toy-coaster").profile == Self.toy)
        let ad = AdvertisingData([.uuids128([ToyCoasterProfile.service], complete: true), .localName("coaster", complete: true)])
        #expect(registry.matching(ad) == [Self.toy])
        #expect(ProfileRegistry.standard.matching(ad).isEmpty, "the standard registry does not know it")
        #expect(ProfileRegistry.named("toy-coaster") == nil)
    }

    @Test("through the in-process gateway: its simulated peripheral, its readings, sips stored")
    func gateway() throws {
        let store = try F.temporaryStore()
        let scenario = F.weightScenario(seed: 17)
        let (readings, truth) = scenario.run()
        let p = SimulatedPeripheral(address: Self.address, profile: Self.toy, readings: readings, unit: scenario.configuration.unit,
                                    streaming: SimulatedStreaming(speed: F.speed))
        let calibration = try Self.toy.defaultCalibration(levelCurve: nil, capacityML: scenario.configuration.capacityML,
                                                          tareG: scenario.configuration.emptyWeightG)
        #expect(calibration.unit == .g)
        var options = Gateway.Options()
        options.clockRate = F.speed
        options.connectTimeout = 2
        options.backoff = Backoff(initial: 0.05, factor: 2, maximum: 0.4)
        let gateway = Gateway(devices: [LiveDevice(address: Self.address, profile: Self.toy, calibration: calibration)], store: store,
                              options: options, logger: F.logger, connector: SimulatedRadio([p]),
                              advertisements: { _ throws(LiveError) in throw .stopped })
        gateway.start()
        #expect(p.waitUntilFinished(timeout: 30), "the toy coaster did not finish streaming")
        gateway.stop()
        gateway.wait()
        p.shutdown()
        #expect(p.sent > 100)
        #expect(gateway.gattSessions[0].counts.connections == 1)
        F.expectMatches(try F.sips(store, Self.address), truth, tolerance: 3)
    }
}
#endif

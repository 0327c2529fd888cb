import BluetoothWire
import QuenchTestSupport
import Testing

@Suite struct AdvertisingDataTests {
    /// What ble-vm's `weight-scale` advertises (README "Wire formats"): Flags
    /// 0x06, complete 16-bit UUID list [0x181D], complete name "WeightScale".
    static let weightScaleAd: [UInt8] = [0x02, 0x01, 0x06, 0x03, 0x03, 0x1D, 0x18, 0x0C, 0x09] + Array("WeightScale".utf8)

    @Test func decodesEmulatedWeightScale() throws {
        let ad = try AdvertisingData(decoding: Self.weightScaleAd)
        #expect(ad.elements == [.flags([.leGeneralDiscoverable, .brEdrNotSupported]), .uuids16([0x181D], complete: true),
                                .localName("WeightScale", complete: true)])
        #expect(ad.name == "WeightScale")
        #expect(ad.serviceUUIDs == [BluetoothUUID(uuid16: 0x181D)])
        #expect(ad.flags == ADFlags(rawValue: 0x06))
        #expect(try ad.encoded() == Self.weightScaleAd)
    }

    /// A Mi Body Composition Scale frame as captured (theengs/decoder
    /// tests/BLE/test_ble.cpp, "Mi_Body_Scale_2" 0224e607020e10293a00009a38)
    /// wrapped in its Service Data structure, after a shortened name.
    @Test func serviceDataAndManufacturerData() throws {
        let frame: [UInt8] = [0x02, 0x24, 0xE6, 0x07, 0x02, 0x0E, 0x10, 0x29, 0x3A, 0x00, 0x00, 0x9A, 0x38]
        let bytes: [UInt8] = [0x04, 0x08] + Array("MIB".utf8) + [0x10, 0x16, 0x1B, 0x18] + frame
            + [0x06, 0xFF, 0x57, 0x01, 0x38, 0x1E, 0xC7]
        let ad = try AdvertisingData(decoding: bytes)
        #expect(ad.name == "MIB")
        #expect(ad.serviceData(for: BluetoothUUID(uuid16: 0x181B)) == frame)
        #expect(ad.serviceData(for: BluetoothUUID(uuid16: 0x181D)) == nil)
        #expect(ad.manufacturerData?.companyID == 0x0157)
        #expect(ad.manufacturerData?.data == [0x38, 0x1E, 0xC7])
        #expect(ad.manufacturerData(companyID: 0x0157) == [0x38, 0x1E, 0xC7])
        #expect(try ad.encoded() == bytes)
    }

    @Test func everyTypedElementRoundTrips() throws {
        let custom = BluetoothUUID("6e0a0000-51a5-4c5b-9f1d-7e57b0771e00")!
        let ad = AdvertisingData([
            .flags([.leLimitedDiscoverable, .brEdrNotSupported]),
            .uuids16([0x181D, 0xFFF0], complete: false),
            .uuids32([0x0000_181B], complete: true),
            .uuids32([0x1234_5678], complete: false),
            .uuids128([custom], complete: true),
            .uuids128([], complete: false),
            .localName("QLev", complete: false),
            .txPowerLevel(-12),
            .appearance(0x0C80),
            .serviceData16(0x181D, [1, 2]),
            .serviceData32(0x1234_5678, []),
            .serviceData128(custom, [9]),
            .manufacturerData(companyID: 0xFFFF, data: []),
            .raw(ADStructure(type: ADType(rawValue: 0x2A), data: [0xAB])),
        ])
        let bytes = try ad.encoded()
        let back = try AdvertisingData(decoding: bytes)
        #expect(back == ad)
        // The 128-bit UUID goes little-endian on the air.
        #expect(bytes.starts(with: [0x02, 0x01, 0x05, 0x05, 0x02, 0x1D, 0x18, 0xF0, 0xFF]))
        #expect(back.serviceUUIDs == [BluetoothUUID(uuid16: 0x181D), BluetoothUUID(uuid16: 0xFFF0), BluetoothUUID(uuid16: 0x181B),
                                      BluetoothUUID(uuid32: 0x1234_5678), custom])
        #expect(back.name == "QLev")
        #expect(back.txPowerLevel == -12)
        #expect(back.appearance == 0x0C80)
        #expect(back.serviceData(for: custom) == [9])
        #expect(back.serviceData.count == 3)
    }

    @Test func completeNameWinsOverShortened() throws {
        let ad = AdvertisingData([.localName("Q", complete: false), .localName("QLevel", complete: true)])
        #expect(ad.name == "QLevel")
        #expect(AdvertisingData([.localName("Q", complete: false)]).name == "Q")
    }

    @Test func zeroLengthTerminatesAndPaddingIsIgnored() throws {
        let bytes = Self.weightScaleAd + [0x00, 0x00, 0x00, 0x07, 0xFF]
        let ad = try AdvertisingData(decoding: bytes)
        #expect(ad.elements.count == 3)
        #expect(try AdvertisingData(decoding: []).elements.isEmpty)
        #expect(try AdvertisingData(decoding: [0]).elements.isEmpty)
    }

    @Test func structureRunningPastTheEndNamesItsOffset() {
        // Third structure at offset 7 claims 12 bytes but only 5 follow.
        let bytes: [UInt8] = [0x02, 0x01, 0x06, 0x03, 0x03, 0x1D, 0x18, 0x0C, 0x09, 0x41, 0x42, 0x43, 0x44]
        #expect(throws: DecodeError(context: "Advertising data", field: "AD structure length", offset: 7,
                                    reason: .truncated(needed: 12, available: 5))) {
            try AdvertisingData(decoding: bytes)
        }
    }

    @Test func malformedKnownTypesNameTheStructure() {
        let cases: [([UInt8], Int, String)] = [
            ([0x02, 0x01, 0x06, 0x04, 0x03, 0x1D, 0x18, 0x00], 3, "16-bit UUID list"),
            ([0x03, 0x01, 0x06, 0x00], 0, "Flags"),
            ([0x02, 0x16, 0x1D], 0, "Service Data 16-bit UUID"),
            ([0x02, 0x01, 0x06, 0x02, 0xFF, 0x57], 3, "Manufacturer Specific Data company identifier"),
            ([0x02, 0x19, 0x00], 0, "Appearance"),
            ([0x0A, 0x07] + [UInt8](repeating: 0, count: 9), 0, "128-bit UUID list"),
        ]
        for (bytes, offset, field) in cases {
            do {
                _ = try AdvertisingData(decoding: bytes)
                Issue.record("\(bytes.hexString) decoded")
            } catch {
                #expect(error.offset == offset, "\(bytes.hexString)")
                #expect(error.field == field, "\(bytes.hexString)")
            }
        }
    }

    @Test func nonUTF8NameStaysRaw() throws {
        let bytes: [UInt8] = [0x03, 0x09, 0xC3, 0x28]
        let ad = try AdvertisingData(decoding: bytes)
        #expect(ad.elements == [.raw(ADStructure(type: .completeLocalName, data: [0xC3, 0x28]))])
        #expect(ad.name == nil)
        #expect(try ad.encoded() == bytes)
    }

    @Test func oversizedElementCannotBeEncoded() {
        let ad = AdvertisingData([.flags([]), .manufacturerData(companyID: 1, data: [UInt8](repeating: 0, count: 253))])
        #expect(throws: ADEncodingError(elementIndex: 1, dataLength: 255)) { try ad.encoded() }
    }
}

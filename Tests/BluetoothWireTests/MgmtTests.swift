import QuenchTestSupport
import Testing
import BluetoothWire

// Fixtures follow BlueZ doc/mgmt-api.txt field by field; the Device Found
// data is what the Linux 6.1 guest of ../shared/ble-vm delivered for the
// emulated weight scale (advertising data and the identical scan response,
// concatenated by the kernel).

let scaleAD: [UInt8] = [UInt8](hexString: "02010603031d180c095765696768745363616c65")!

@Suite struct MgmtCommandTests {
    @Test func readVersionIsAHeaderForTheNonIndex() {
        // opcode 0x0001, index 0xFFFF, no parameters
        #expect(MgmtCommand.readVersion.encoded == [0x01, 0x00, 0xFF, 0xFF, 0x00, 0x00])
        #expect(MgmtCommand.readIndexList.encoded == [0x03, 0x00, 0xFF, 0xFF, 0x00, 0x00])
    }

    @Test func commandsEncodeOpcodeIndexLengthAndParameters() {
        #expect(MgmtCommand.readInfo(MgmtIndex(0)).encoded == [0x04, 0x00, 0x00, 0x00, 0x00, 0x00])
        #expect(MgmtCommand.setPowered(MgmtIndex(1), true).encoded == [0x05, 0x00, 0x01, 0x00, 0x01, 0x00, 0x01])
        // Start Discovery, LE public + random = 0x06
        #expect(MgmtCommand.startDiscovery(MgmtIndex(0)).encoded == [0x23, 0x00, 0x00, 0x00, 0x01, 0x00, 0x06])
        #expect(MgmtCommand.stopDiscovery(MgmtIndex(0)).encoded == [0x24, 0x00, 0x00, 0x00, 0x01, 0x00, 0x06])
        #expect(MgmtCommand.setBondable(MgmtIndex(0), false).encoded == [0x09, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00])
    }

    @Test func commandsRoundTrip() throws {
        for c in [MgmtCommand.readVersion, .readIndexList, .readInfo(MgmtIndex(2)), .setPowered(MgmtIndex(0), false),
                  .startDiscovery(MgmtIndex(0), .interleaved), .stopDiscovery(MgmtIndex(3), .le)] {
            #expect(try MgmtCommand(decoding: c.encoded) == c)
        }
    }

    @Test func lengthMismatchNamesTheField() {
        #expect(throws: DecodeError(context: "mgmt command", field: "parameters", offset: 6, reason: .truncated(needed: 1, available: 0))) {
            try MgmtCommand(decoding: [0x05, 0x00, 0x00, 0x00, 0x01, 0x00])
        }
        #expect(throws: DecodeError(context: "mgmt command", field: "end of payload", offset: 6, reason: .trailingBytes(1))) {
            try MgmtCommand(decoding: [0x01, 0x00, 0xFF, 0xFF, 0x00, 0x00, 0x99])
        }
    }
}

@Suite struct MgmtReplyTests {
    @Test func versionReply() throws {
        // version 1, revision 22 (what the 6.1 guest answered: "mgmt version 1.22")
        let v = try MgmtVersion(decoding: [0x01, 0x16, 0x00])
        #expect(v == MgmtVersion(version: 1, revision: 22))
        #expect(v.encoded == [0x01, 0x16, 0x00])
    }

    @Test func indexListReply() throws {
        let l = try MgmtIndexList(decoding: [0x02, 0x00, 0x00, 0x00, 0x01, 0x00])
        #expect(l.indexes == [0, 1])
        #expect(l.encoded == [0x02, 0x00, 0x00, 0x00, 0x01, 0x00])
        #expect(throws: DecodeError.self) { try MgmtIndexList(decoding: [0x02, 0x00, 0x00, 0x00]) }
    }

    @Test func controllerInfoIs280BytesAndRoundTrips() throws {
        let info = MgmtControllerInfo(
            address: BluetoothAddress("00:AA:01:00:00:01")!, bluetoothVersion: 0x09, manufacturer: 0x05F1,
            supportedSettings: [.powered, .connectable, .bondable, .lowEnergy, .secureConnections],
            currentSettings: [.powered, .lowEnergy], classOfDevice: 0x000000, name: "quench-vm", shortName: "")
        let bytes = info.encoded
        #expect(bytes.count == 280)
        #expect(Array(bytes[0..<6]) == [0x01, 0x00, 0x00, 0x01, 0xAA, 0x00])  // address little-endian
        #expect(Array(bytes[13..<17]) == [0x01, 0x02, 0x00, 0x00])  // current settings: powered | LE (bit 9)
        let back = try MgmtControllerInfo(decoding: bytes)
        #expect(back == info)
        #expect(back.currentSettings.contains(.powered))
    }
}

@Suite struct MgmtEventTests {
    @Test func deviceFoundFromTheGuest() throws {
        let data = scaleAD + scaleAD
        let bytes: [UInt8] = [0x12, 0x00, 0x00, 0x00, UInt8(14 + data.count), 0x00,
                              0xF5, 0xF4, 0xF3, 0xF2, 0xF1, 0xF0,  // F0:F1:F2:F3:F4:F5
                              0x01,                                // LE public
                              0xCE,                                // RSSI -50
                              0x00, 0x00, 0x00, 0x00,              // flags
                              UInt8(data.count), 0x00] + data
        let packet = try MgmtEventPacket(decoding: bytes)
        #expect(packet.index == MgmtIndex(0))
        guard case .deviceFound(let found) = packet.event else { Issue.record("\(packet.event)"); return }
        #expect(found.address == BluetoothAddress("F0:F1:F2:F3:F4:F5"))
        #expect(found.addressType == .lePublic)
        #expect(found.rssi == -50)
        #expect(found.flags == [])
        #expect(found.data == data)
        #expect(packet.encoded == bytes)

        let report = try #require(AdvertisingReport(found))
        #expect(report.addressType == .lePublic && report.rssi == -50 && report.isConnectable && !report.isScanResponse)
        #expect(report.source == .management([]))
    }

    @Test func deviceFoundFlagsAndTypes() throws {
        let found = MgmtDeviceFound(address: BluetoothAddress("C0:11:22:33:44:55")!, addressType: .leRandom, rssi: 127,
                                    flags: [.notConnectable, .scanResponse], data: [])
        let packet = MgmtEventPacket(index: MgmtIndex(0), event: .deviceFound(found))
        #expect(try MgmtEventPacket(decoding: packet.encoded) == packet)
        let report = try #require(AdvertisingReport(found))
        #expect(report.addressType == .leRandom && report.rssi == nil && !report.isConnectable && report.isScanResponse)
        var bredr = found
        bredr.addressType = .bredr
        #expect(AdvertisingReport(bredr) == nil)
    }

    @Test func commandCompleteAndStatus() throws {
        // Command Complete for Set Powered on hci0: opcode 0x0005, success, settings powered|LE
        let complete = try MgmtEventPacket(decoding: [0x01, 0x00, 0x00, 0x00, 0x07, 0x00, 0x05, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00])
        #expect(complete.event == .commandComplete(MgmtCommandComplete(opcode: .setPowered, status: .success, returnParameters: [0x01, 0x02, 0x00, 0x00])))
        // Command Status for Start Discovery: Busy
        let status = try MgmtEventPacket(decoding: [0x02, 0x00, 0x00, 0x00, 0x03, 0x00, 0x23, 0x00, 0x0A])
        #expect(status.event == .commandStatus(MgmtCommandStatus(opcode: .startDiscovery, status: .busy)))
        #expect(MgmtStatus.busy.description == "Busy (0x0a)")
        #expect(MgmtStatus(rawValue: 0x99).description == "mgmt status 0x99")
    }

    @Test func discoveringAndIndexEvents() throws {
        let on = try MgmtEventPacket(decoding: [0x13, 0x00, 0x00, 0x00, 0x02, 0x00, 0x06, 0x01])
        #expect(on.event == .discovering(MgmtDiscovering(type: .le, isDiscovering: true)))
        let added = try MgmtEventPacket(decoding: [0x04, 0x00, 0x01, 0x00, 0x00, 0x00])
        #expect(added == MgmtEventPacket(index: MgmtIndex(1), event: .indexAdded))
        let removed = try MgmtEventPacket(decoding: [0x05, 0x00, 0x01, 0x00, 0x00, 0x00])
        #expect(removed.event == .indexRemoved)
        // Unknown events keep their code and parameters.
        let other = try MgmtEventPacket(decoding: [0x25, 0x00, 0x00, 0x00, 0x01, 0x00, 0x07])
        #expect(other.event == .other(MgmtEventCode(rawValue: 0x25), [0x07]))
        for p in [on, added, removed, other] { #expect(try MgmtEventPacket(decoding: p.encoded) == p) }
    }

    @Test func discoveringRefusesANonBoolean() {
        #expect(throws: DecodeError(context: "mgmt event 0x0013", field: "discovering", offset: 1, reason: .invalidValue("0x02 is not 0x00 or 0x01"))) {
            try MgmtEventPacket(decoding: [0x13, 0x00, 0x00, 0x00, 0x02, 0x00, 0x06, 0x02])
        }
    }

    @Test func truncatedDeviceFoundNamesTheField() {
        // header says 14 bytes, but the EIR length claims 5 more than present
        let bytes: [UInt8] = [0x12, 0x00, 0x00, 0x00, 0x0E, 0x00, 1, 2, 3, 4, 5, 6, 1, 0xCE, 0, 0, 0, 0, 5, 0]
        #expect(throws: DecodeError(context: "mgmt event 0x0012", field: "EIR data", offset: 14, reason: .truncated(needed: 5, available: 0))) {
            try MgmtEventPacket(decoding: bytes)
        }
    }
}

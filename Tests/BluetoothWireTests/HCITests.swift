import QuenchTestSupport
import Testing
import BluetoothWire

// Byte fixtures captured with ../shared/ble-vm (`run.sh --keep-logs`, btmon's
// btsnoop of hci0: Linux 6.1 with Bumble 0.0.236's emulated controller and the
// weight-scale peripheral at F0:F1:F2:F3:F4:F5), without the H4 indicator.
enum Captured {
    /// LE Advertising Report, one ADV_IND report, RSSI -50.
    static let advInd = [UInt8](hexString: "3e2002010000f5f4f3f2f1f01402010603031d180c095765696768745363616c65ce")!
    /// The same as SCAN_RSP (event type 0x04).
    static let scanRsp = [UInt8](hexString: "3e2002010400f5f4f3f2f1f01402010603031d180c095765696768745363616c65ce")!
    /// LE Extended Advertising Report from `--controller bt5`, event type 0x0001.
    static let extReport = [UInt8](hexString: "3e2e0d01010000f5f4f3f2f1f001010000ce0000000000000000001402010603031d180c095765696768745363616c65")!
    /// Command Complete for HCI_Reset (0x0C03), status success.
    static let resetComplete = [UInt8](hexString: "0e0401030c00")!
    /// Command Status for LE Create Connection (0x200D), success.
    static let createConnectionStatus = [UInt8](hexString: "0f0400010d20")!
    /// Disconnection Complete, handle 0x0001, reason Remote User Terminated.
    static let disconnection = [UInt8](hexString: "050400010013")!
    /// LE Set Scan Parameters as the kernel sent it for discovery (active, 11.25 ms, own random).
    static let kernelScanParameters = [UInt8](hexString: "0b200701120012000100")!
    /// LE Set Scan Enable (enable, filter duplicates) as the kernel sent it.
    static let kernelScanEnable = [UInt8](hexString: "0c20020101")!
}

@Suite struct HCICommandTests {
    @Test func scanParametersMatchTheKernelsBytes() throws {
        let packet = try HCICommandPacket(decoding: Captured.kernelScanParameters, withIndicator: false)
        #expect(packet.opcode == .leSetScanParameters)
        #expect(packet.opcode.ogf == 0x08 && packet.opcode.ocf == 0x000B)
        let p = try LESetScanParameters(decoding: packet.parameters)
        #expect(p == LESetScanParameters(scanType: .active, interval: 0x12, window: 0x12, ownAddressType: .leRandom))
        #expect(p.command.encoded(withIndicator: false) == Captured.kernelScanParameters)
        #expect(p.command.encoded(withIndicator: true) == [0x01] + Captured.kernelScanParameters)
    }

    @Test func scanEnableMatchesTheKernelsBytes() throws {
        let packet = try HCICommandPacket(decoding: Captured.kernelScanEnable, withIndicator: false)
        let e = try LESetScanEnable(decoding: packet.parameters)
        #expect(e == LESetScanEnable(enable: true, filterDuplicates: true))
        #expect(e.command.encoded(withIndicator: false) == Captured.kernelScanEnable)
        // What the raw scanner sends: duplicates not filtered.
        #expect(LESetScanEnable(enable: true, filterDuplicates: false).command.encoded(withIndicator: true) == [0x01, 0x0C, 0x20, 0x02, 0x01, 0x00])
    }

    @Test func extendedScanCommandsRoundTrip() throws {
        // Bytes the raw scanner sent with extendedCommands in the VM (btsnoop).
        let params = LESetExtendedScanParameters(le1M: .init(scanType: .passive))
        #expect(params.command.encoded(withIndicator: false) == [UInt8](hexString: "4120080000010010001000")!)
        #expect(try LESetExtendedScanParameters(decoding: params.command.parameters) == params)
        let enable = LESetExtendedScanEnable(enable: true, filterDuplicates: false)
        #expect(enable.command.encoded(withIndicator: false) == [UInt8](hexString: "422006010000000000")!)
        #expect(try LESetExtendedScanEnable(decoding: enable.command.parameters) == enable)
        // Two PHYs (1M and Coded): two parameter blocks.
        let two = try LESetExtendedScanParameters(decoding: [0x00, 0x00, 0x05, 0x01, 0x10, 0x00, 0x10, 0x00, 0x00, 0x20, 0x00, 0x20, 0x00])
        #expect(two.phys.count == 2 && two.phys[1].interval == 0x20)
        #expect(two.command.parameters == [0x00, 0x00, 0x05, 0x01, 0x10, 0x00, 0x10, 0x00, 0x00, 0x20, 0x00, 0x20, 0x00])
    }

    @Test func commandPacketErrorsNameTheField() {
        #expect(throws: DecodeError(context: "HCI command", field: "packet indicator", offset: 0, reason: .invalidValue("0x04 is not a command"))) {
            try HCICommandPacket(decoding: [0x04, 0x0C, 0x20, 0x00], withIndicator: true)
        }
        #expect(throws: DecodeError(context: "HCI command", field: "parameters", offset: 3, reason: .truncated(needed: 2, available: 1))) {
            try HCICommandPacket(decoding: [0x0C, 0x20, 0x02, 0x01], withIndicator: false)
        }
    }
}

@Suite struct HCIEventTests {
    @Test func legacyAdvertisingReport() throws {
        let event = try HCIEvent(decoding: Captured.advInd, withIndicator: false)
        guard case .leAdvertisingReport(let e) = event else { Issue.record("\(event)"); return }
        #expect(e.reports.count == 1)
        let r = e.reports[0]
        #expect(r.eventType == .advInd && r.addressType == .lePublic && r.rssi == -50)
        #expect(r.address == BluetoothAddress("F0:F1:F2:F3:F4:F5"))
        #expect(r.data == scaleAD)
        #expect(event.packet.encoded(withIndicator: false) == Captured.advInd)
        #expect(try HCIEvent(decoding: [0x04] + Captured.advInd, withIndicator: true) == event)

        let reports = AdvertisingReport.reports(in: event)
        #expect(reports == [AdvertisingReport(address: r.address, addressType: .lePublic, rssi: -50, source: .legacy(.advInd),
                                              isConnectable: true, isScanResponse: false, data: scaleAD)])
        let rsp = AdvertisingReport.reports(in: try HCIEvent(decoding: Captured.scanRsp, withIndicator: false))
        #expect(rsp.count == 1 && rsp[0].isScanResponse && !rsp[0].isConnectable)
    }

    @Test func severalReportsInOneEvent() throws {
        let a = HCILEAdvertisingReport.Report(eventType: .advNonconnInd, addressType: .leRandom,
                                              address: BluetoothAddress("C1:02:03:04:05:06")!, data: [0x02, 0x01, 0x06], rssi: -70)
        let b = HCILEAdvertisingReport.Report(eventType: .advInd, addressType: .lePublic,
                                              address: BluetoothAddress("F0:F1:F2:F3:F4:F5")!, data: scaleAD, rssi: 127)
        let event = HCIEvent.leAdvertisingReport(HCILEAdvertisingReport(reports: [a, b]))
        let bytes = event.packet.encoded(withIndicator: true)
        #expect(try HCIEvent(decoding: bytes, withIndicator: true) == event)
        let reports = AdvertisingReport.reports(in: event)
        #expect(reports.map(\.address) == [a.address, b.address])
        #expect(reports[0].isConnectable == false && reports[0].addressType == .leRandom)
        #expect(reports[1].rssi == nil)  // 127: not available
    }

    @Test func extendedAdvertisingReport() throws {
        let event = try HCIEvent(decoding: Captured.extReport, withIndicator: false)
        guard case .leExtendedAdvertisingReport(let e) = event else { Issue.record("\(event)"); return }
        let r = try #require(e.reports.first)
        #expect(e.reports.count == 1)
        #expect(r.eventType.rawValue == 0x0001 && r.eventType.isConnectable && !r.eventType.isLegacy)
        #expect(r.address == BluetoothAddress("F0:F1:F2:F3:F4:F5") && r.addressType == .lePublic)
        #expect(r.primaryPHY == 1 && r.rssi == -50)
        #expect(r.data == scaleAD)
        // Data starts 24 bytes into the report: after subevent (1) and Num_Reports (1).
        #expect(Array(Captured.extReport[(2 + 2 + 24)...]) == scaleAD)
        #expect(event.packet.encoded(withIndicator: false) == Captured.extReport)
        let report = try #require(AdvertisingReport.reports(in: event).first)
        #expect(report.isExtended && report.isConnectable && !report.isScanResponse)
    }

    @Test func extendedReportEventTypeBits() {
        // Legacy ADV_IND through extended reporting: connectable, scannable, legacy (0x0013).
        let legacyInd = LEExtendedAdvertisingEventType(rawValue: 0x0013)
        #expect(legacyInd.isConnectable && legacyInd.isScannable && legacyInd.isLegacy && !legacyInd.isScanResponse)
        // Incomplete data, more to come (bits 5-6 = 01).
        #expect(LEExtendedAdvertisingEventType(rawValue: 0x0020).dataStatus == 1)
        let scanResponse = LEExtendedAdvertisingEventType(rawValue: 0x001B)
        #expect(scanResponse.isScanResponse)
    }

    @Test func commandCompleteStatusAndDisconnection() throws {
        #expect(try HCIEvent(decoding: Captured.resetComplete, withIndicator: false)
                == .commandComplete(HCICommandComplete(opcode: HCIOpcode(rawValue: 0x0C03), returnParameters: [0x00])))
        let status = try HCIEvent(decoding: Captured.createConnectionStatus, withIndicator: false)
        #expect(status == .commandStatus(HCICommandStatus(status: .success, opcode: HCIOpcode(ogf: 0x08, ocf: 0x000D))))
        let disc = try HCIEvent(decoding: Captured.disconnection, withIndicator: false)
        #expect(disc == .disconnectionComplete(HCIDisconnectionComplete(status: .success, connectionHandle: 1, reason: .remoteUserTerminated)))
        for (e, bytes) in [(status, Captured.createConnectionStatus), (disc, Captured.disconnection)] {
            #expect(e.packet.encoded(withIndicator: false) == bytes)
        }
        // Command Disallowed, as the controller answers a second scanner.
        let disallowed = HCICommandComplete(opcode: .leSetScanParameters, returnParameters: [0x0C])
        #expect(disallowed.status == .commandDisallowed)
        #expect(try HCIEvent(disallowed.event) == .commandComplete(disallowed))
    }

    @Test func otherEventsKeepTheirBytes() throws {
        let meta = try HCIEvent(decoding: [0x3E, 0x03, 0x01, 0xAA, 0xBB], withIndicator: false)
        #expect(meta == .leMeta(HCILESubevent(rawValue: 0x01), [0xAA, 0xBB]))
        #expect(meta.packet.encoded(withIndicator: false) == [0x3E, 0x03, 0x01, 0xAA, 0xBB])
        #expect(AdvertisingReport.reports(in: meta).isEmpty)
        let other = try HCIEvent(decoding: [0x13, 0x01, 0x00], withIndicator: false)
        #expect(other == .other(HCIEventCode(rawValue: 0x13), [0x00]))
    }

    @Test func truncatedReportsNameFieldAndOffset() {
        // Two reports announced, one present.
        var bytes = Captured.advInd
        bytes[3] = 2
        #expect(throws: DecodeError(context: "LE Advertising Report", field: "Event_Type[1]", offset: 31, reason: .truncated(needed: 1, available: 0))) {
            try HCIEvent(decoding: bytes, withIndicator: false)
        }
        // Every cut of the extended report fails with a DecodeError, never a crash.
        for cut in 0..<Captured.extReport.count {
            #expect(throws: DecodeError.self) { try HCIEvent(decoding: Array(Captured.extReport.prefix(cut)), withIndicator: false) }
        }
        #expect(throws: DecodeError(context: "HCI LE Meta event", field: "Subevent_Code", offset: 0, reason: .truncated(needed: 1, available: 0))) {
            try HCIEvent(decoding: [0x3E, 0x00], withIndicator: false)
        }
    }
}

/// Random bytes never crash a decoder (seeded, so a failure reproduces).
@Suite struct WireFuzzTests {
    func inputs(seed: UInt64, count: Int, around seeds: [[UInt8]]) -> [[UInt8]] {
        var rng = FuzzRandom(seed: seed)
        var out: [[UInt8]] = []
        for i in 0..<count {
            if i % 2 == 0 || seeds.isEmpty {
                let n = Int.random(in: 0..<80, using: &rng)
                out.append((0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) })
            } else {
                // Mutate a real packet: flip bytes and cut it, to reach deep fields.
                var b = seeds[Int.random(in: 0..<seeds.count, using: &rng)]
                for _ in 0..<Int.random(in: 1...4, using: &rng) where !b.isEmpty {
                    b[Int.random(in: 0..<b.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
                }
                out.append(Array(b.prefix(Int.random(in: 0...b.count, using: &rng))))
            }
        }
        return out
    }

    @Test func hciDecodersNeverCrash() {
        let seeds = [Captured.advInd, Captured.extReport, Captured.resetComplete, Captured.disconnection, Captured.createConnectionStatus]
        var decoded = 0
        for bytes in inputs(seed: 0x5EED_4C1, count: 20_000, around: seeds) {
            if let e = try? HCIEvent(decoding: bytes, withIndicator: false) {
                decoded += 1
                // Whatever decodes re-encodes to the same bytes.
                #expect(e.packet.encoded(withIndicator: false) == bytes)
                _ = AdvertisingReport.reports(in: e)
            }
            _ = try? HCICommandPacket(decoding: bytes, withIndicator: true)
            _ = try? LESetScanParameters(decoding: bytes)
            _ = try? LESetExtendedScanParameters(decoding: bytes)
            _ = try? LESetExtendedScanEnable(decoding: bytes)
        }
        #expect(decoded > 100)
    }

    @Test func mgmtDecodersNeverCrash() {
        let found = MgmtEventPacket(index: MgmtIndex(0), event: .deviceFound(MgmtDeviceFound(
            address: BluetoothAddress("F0:F1:F2:F3:F4:F5")!, addressType: .lePublic, rssi: -50, flags: [], data: scaleAD))).encoded
        let seeds = [found, [0x13, 0x00, 0x00, 0x00, 0x02, 0x00, 0x06, 0x01], [0x01, 0x00, 0x00, 0x00, 0x07, 0x00, 0x05, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00]]
        var decoded = 0
        for bytes in inputs(seed: 0x3E6_7, count: 20_000, around: seeds) {
            if let e = try? MgmtEventPacket(decoding: bytes) {
                decoded += 1
                #expect(e.encoded == bytes)
                if case .deviceFound(let f) = e.event { _ = AdvertisingReport(f) }
            }
            _ = try? MgmtCommand(decoding: bytes)
            _ = try? MgmtControllerInfo(decoding: bytes)
            _ = try? MgmtIndexList(decoding: bytes)
            _ = try? MgmtVersion(decoding: bytes)
        }
        #expect(decoded > 100)
    }
}

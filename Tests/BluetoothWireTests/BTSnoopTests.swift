import BluetoothWire
import QuenchTestSupport
import Testing

/// Builds byte-exact btsnoop captures (format: 16-byte file header
/// `"btsnoop\0" version(u32 BE)=1 datalink(u32 BE)`, then records of
/// `orig len, incl len, flags, drops (u32 BE each), timestamp (i64 BE, µs since 0 AD)`
/// followed by the packet).
enum SnoopFixture {
    static let epochDelta: Int64 = 0x00DC_DDB3_0F2F_8000
    /// 2026-03-02T07:30:00Z.
    static let t0: Int64 = 1_772_436_600_000_000

    static func be(_ v: UInt64, _ width: Int) -> [UInt8] { (0..<width).map { UInt8(truncatingIfNeeded: v >> (8 * UInt64(width - 1 - $0))) } }

    static func header(datalink: UInt32, version: UInt32 = 1) -> [UInt8] {
        Array("btsnoop".utf8) + [0] + be(UInt64(version), 4) + be(UInt64(datalink), 4)
    }

    static func record(_ data: [UInt8], flags: UInt32, micros: Int64, original: Int? = nil) -> [UInt8] {
        be(UInt64(original ?? data.count), 4) + be(UInt64(data.count), 4) + be(UInt64(flags), 4) + be(0, 4)
            + be(UInt64(bitPattern: micros + epochDelta), 8) + data
    }

    static let scale: [UInt8] = [0xF0, 0xF1, 0xF2, 0xF3, 0xF4, 0xF5]            // F0:F1:F2:F3:F4:F5 printed
    static var scaleLE: [UInt8] { scale.reversed() }
    static let bottle: [UInt8] = [0xC6, 0x11, 0x22, 0x33, 0x44, 0x55]           // random static
    static let adData: [UInt8] = [0x02, 0x01, 0x06, 0x03, 0x03, 0x1D, 0x18]

    // HCI events without the H4 type byte (Vol 4, Part E, 7.7).
    static let legacyReport: [UInt8] = {
        let body: [UInt8] = [0x02, 0x01, 0x00, 0x00] + scaleLE + [UInt8(adData.count)] + adData + [0xCE]
        return [0x3E, UInt8(body.count)] + body
    }()
    static let extendedReport: [UInt8] = {
        let body: [UInt8] = [0x0D, 0x01, 0x13, 0x00, 0x01] + bottle.reversed()
            + [0x01, 0x00, 0xFF, 0x7F, 0xC4, 0x00, 0x00, 0x00] + [UInt8](repeating: 0, count: 6)
            + [UInt8(adData.count)] + adData
        return [0x3E, UInt8(body.count)] + body
    }()
    static func connectionComplete(handle: UInt8, peer: [UInt8], type: UInt8, enhanced: Bool = false) -> [UInt8] {
        var body: [UInt8] = [enhanced ? 0x0A : 0x01, 0x00, handle, 0x00, 0x00, type] + peer.reversed()
        if enhanced { body += [UInt8](repeating: 0, count: 12) }
        body += [0x18, 0x00, 0x00, 0x00, 0x48, 0x00, 0x00]
        return [0x3E, UInt8(body.count)] + body
    }
    static func disconnection(handle: UInt8) -> [UInt8] { [0x05, 0x04, 0x00, handle, 0x00, 0x08] }

    /// ACL fragments of one L2CAP basic frame on CID 4, at most `mtu` payload bytes each
    /// (PB 0b10 first, 0b01 continuing).
    static func acl(handle: UInt8, att: [UInt8], mtu: Int = 27) -> [[UInt8]] {
        let l2cap: [UInt8] = [UInt8(att.count & 0xFF), UInt8(att.count >> 8), 0x04, 0x00] + att
        return stride(from: 0, to: l2cap.count, by: mtu).map { start in
            let part = Array(l2cap[start..<min(start + mtu, l2cap.count)])
            let pb: UInt8 = start == 0 ? 0x20 : 0x10
            return [handle, pb, UInt8(part.count), 0x00] + part
        }
    }

    /// Weight Measurement with every field: flags 0x0E, 70.88 kg, 2022-02-14 16:41:58, user 1, BMI 24.5, 1.718 m.
    static let measurement: [UInt8] = [0x0E, 0x60, 0x37, 0xE6, 0x07, 0x02, 0x0E, 0x10, 0x29, 0x3A, 0x01, 0xF5, 0x00, 0xB6, 0x06]
    static let longValue: [UInt8] = (0..<40).map { UInt8($0) }

    /// A monitor (2001) capture, in record order:
    ///  0 New Index hci0            5 ACL rx  Read By Type Rsp: decl 0x0002 → value 0x0003 = 0x2A9D
    ///  1 LE Advertising Report     6 ACL rx  Indication 0x0003 (measurement), 1 fragment
    ///  2 LE Ext Advertising Report 7-8 ACL rx Notification 0x0010, 40-byte value, 2 fragments
    ///  3 LE Connection Complete    9 Disconnection Complete
    ///  4 ACL tx  Read By Type Req 0x0001-0xFFFF type 0x2803
    ///                             10 ACL rx  Notification 0x0003 on the dead handle (no peer)
    static func monitorCapture() -> [UInt8] {
        var out = header(datalink: 2001)
        var t = t0
        func add(_ opcode: UInt32, _ data: [UInt8]) { out += record(data, flags: opcode, micros: t); t += 100_000 }
        add(0, [0x00, 0x00] + [UInt8](repeating: 0, count: 6) + Array("hci0".utf8) + [0, 0, 0, 0])
        add(3, legacyReport)
        add(3, extendedReport)
        add(3, connectionComplete(handle: 0x40, peer: scale, type: 0x00))
        for f in acl(handle: 0x40, att: [0x08, 0x01, 0x00, 0xFF, 0xFF, 0x03, 0x28]) { add(4, f) }
        for f in acl(handle: 0x40, att: [0x09, 0x07, 0x02, 0x00, 0x20, 0x03, 0x00, 0x9D, 0x2A]) { add(5, f) }
        for f in acl(handle: 0x40, att: [0x1D, 0x03, 0x00] + measurement) { add(5, f) }
        for f in acl(handle: 0x40, att: [0x1B, 0x10, 0x00] + longValue) { add(5, f) }
        add(3, disconnection(handle: 0x40))
        for f in acl(handle: 0x40, att: [0x1B, 0x03, 0x00, 0x01]) { add(5, f) }
        return out
    }

    /// The same traffic as an Android-style H4 (1002) log: a type byte first;
    /// flags bit 0 = received, bit 1 = command/event. Uses the Enhanced
    /// Connection Complete event and a random peer.
    static func h4Capture() -> [UInt8] {
        var out = header(datalink: 1002)
        var t = t0
        func add(_ flags: UInt32, _ type: UInt8, _ data: [UInt8]) { out += record([type] + data, flags: flags, micros: t); t += 1_000 }
        add(0x02, 0x01, [0x0C, 0x20, 0x02, 0x01, 0x00])   // LE Set Scan Enable command: ignored
        add(0x03, 0x04, legacyReport)
        add(0x03, 0x04, connectionComplete(handle: 0x01, peer: bottle, type: 0x01, enhanced: true))
        for f in acl(handle: 0x01, att: [0x1B, 0x10, 0x00] + longValue) { add(0x01, 0x02, f) }
        return out
    }
}

@Suite struct BTSnoopTests {
    func readAll(_ bytes: [UInt8], chunk: Int = .max) throws(DecodeError) -> [SnoopRecord] {
        var reader = SnoopCaptureReader()
        var out: [SnoopRecord] = []
        var i = 0
        repeat {
            let end = min(bytes.count, i + max(1, min(chunk, bytes.count)))
            reader.append(bytes[i..<end])
            i = end
            while let r = try reader.next() { out.append(r) }
        } while i < bytes.count
        try reader.finish()
        return out
    }

    @Test func headerAndRecords() throws {
        var reader = BTSnoopReader()
        reader.append(SnoopFixture.monitorCapture())
        var records: [BTSnoopRecord] = []
        while let r = try reader.next() { records.append(r) }
        try reader.finish()
        #expect(reader.datalink == .monitor)
        #expect(reader.version == 1)
        #expect(records.count == 11)
        #expect(records[0].fileOffset == 16)
        #expect(records[0].unixTime == 1_772_436_600)
        #expect(records[1].flags == 3)
        #expect(records[1].data == SnoopFixture.legacyReport)
        #expect(records[1].dataOffset == records[1].fileOffset + 24)
    }

    @Test func monitorCaptureYieldsAdvertisementsAndATTValues() throws {
        let records = try readAll(SnoopFixture.monitorCapture())
        let scale = BluetoothAddress("F0:F1:F2:F3:F4:F5")!
        try #require(records.count == 5)
        #expect(records[0] == SnoopRecord(time: 1_772_436_600.1, controllerIndex: 0, kind: .advertisement(SnoopAdvertisement(
            address: scale, addressType: .lePublic, eventType: 0, isExtended: false, rssi: -50, data: SnoopFixture.adData))))
        #expect(records[1].kind == .advertisement(SnoopAdvertisement(
            address: BluetoothAddress("C6:11:22:33:44:55")!, addressType: .leRandom, eventType: 0x13, isExtended: true,
            rssi: -60, data: SnoopFixture.adData)))
        #expect(records[2].kind == .attValue(SnoopATTValue(
            peer: scale, peerType: .lePublic, connectionHandle: 0x40, attributeHandle: 0x0003,
            characteristic: BluetoothUUID(uuid16: 0x2A9D), value: SnoopFixture.measurement, isIndication: true)))
        #expect(records[3].kind == .attValue(SnoopATTValue(
            peer: scale, peerType: .lePublic, connectionHandle: 0x40, attributeHandle: 0x0010,
            characteristic: nil, value: SnoopFixture.longValue, isIndication: false)))
        // The second fragment carries the record time.
        #expect(abs(records[3].time - (1_772_436_600 + 0.8)) < 1e-6)
        #expect(records[4].kind == .attValue(SnoopATTValue(
            peer: nil, peerType: nil, connectionHandle: 0x40, attributeHandle: 0x0003,
            characteristic: nil, value: [0x01], isIndication: false)))
        // AD bytes decode.
        if case .advertisement(let a) = records[0].kind {
            #expect(try AdvertisingData(decoding: a.data).serviceUUIDs == [BluetoothUUID(uuid16: 0x181D)])
        }
    }

    @Test func fragmentsWereReallySplit() {
        #expect(SnoopFixture.acl(handle: 0x40, att: [0x1B, 0x10, 0x00] + SnoopFixture.longValue).count == 2)
    }

    @Test func h4CaptureWithEnhancedConnectionComplete() throws {
        let records = try readAll(SnoopFixture.h4Capture())
        #expect(records.count == 2)
        #expect(records.last?.kind == .attValue(SnoopATTValue(
            peer: BluetoothAddress("C6:11:22:33:44:55")!, peerType: .leRandom, connectionHandle: 0x01, attributeHandle: 0x10,
            characteristic: nil, value: SnoopFixture.longValue, isIndication: false)))
    }

    @Test func chunkingDoesNotChangeTheResult() throws {
        for capture in [SnoopFixture.monitorCapture(), SnoopFixture.h4Capture()] {
            let whole = try readAll(capture)
            for chunk in [1, 2, 7, 24, 25, 100] {
                #expect(try readAll(capture, chunk: chunk) == whole, "chunk \(chunk)")
            }
        }
    }

    @Test func continuationWithoutStartIsSkipped() throws {
        var bytes = SnoopFixture.header(datalink: 2001)
        let frags = SnoopFixture.acl(handle: 0x40, att: [0x1B, 0x10, 0x00] + SnoopFixture.longValue)
        bytes += SnoopFixture.record(frags[1], flags: 5, micros: SnoopFixture.t0)
        #expect(try readAll(bytes).isEmpty)
    }

    @Test func truncatedRecordNamesItsOffset() {
        let capture = SnoopFixture.monitorCapture()
        // Cut 3 bytes into the second record's header (first record: 16 + 24 + 16 bytes).
        let cut = Array(capture.prefix(16 + 24 + 16 + 3))
        #expect(throws: DecodeError(context: "btsnoop record 1", field: "record header", offset: 56,
                                    reason: .truncated(needed: 24, available: 3))) { try readAll(cut) }
        let cutData = Array(capture.prefix(16 + 24 + 16 + 24 + 5))
        #expect(throws: DecodeError(context: "btsnoop record 1", field: "packet data", offset: 56,
                                    reason: .truncated(needed: 24 + SnoopFixture.legacyReport.count, available: 29))) { try readAll(cutData) }
        #expect(throws: DecodeError(context: "btsnoop file header", field: "file header", offset: 0,
                                    reason: .truncated(needed: 16, available: 10))) { try readAll(Array(capture.prefix(10))) }
    }

    @Test func badHeaderIsRefused() {
        var notSnoop = SnoopFixture.monitorCapture()
        notSnoop[3] = 0x41
        #expect(throws: DecodeError.self) { try readAll(notSnoop) }
        do { _ = try readAll(notSnoop) } catch { #expect(error.offset == 3) }
        do { _ = try readAll(SnoopFixture.header(datalink: 2001, version: 2)) } catch {
            #expect(error.offset == 8 && error.field == "version")
        }
        do { _ = try readAll(SnoopFixture.header(datalink: 1003) + SnoopFixture.record([0], flags: 0, micros: 0)) } catch {
            #expect(error.offset == 12 && error.field == "datalink type")
        }
    }

    @Test func corruptEventNamesTheByte() {
        var bytes = SnoopFixture.header(datalink: 2001)
        var event = SnoopFixture.legacyReport
        event[1] += 1   // parameter total length no longer matches
        bytes += SnoopFixture.record(event, flags: 3, micros: SnoopFixture.t0)
        #expect(throws: DecodeError(context: "btsnoop record 0 HCI event", field: "parameter total length", offset: 16 + 24 + 1,
                                    reason: .invalidValue("says \(event[1]), packet holds \(event.count - 2)"))) { try readAll(bytes) }
    }

    @Test func includedLongerThanOriginalIsCorrupt() {
        var bytes = SnoopFixture.header(datalink: 1002)
        bytes += SnoopFixture.record([0x04, 0x0E, 0x00], flags: 3, micros: 0, original: 2)
        do { _ = try readAll(bytes); Issue.record("accepted") } catch {
            #expect(error.offset == 20 && error.field == "included length")
        }
    }

    @Test func recordsCutByTheCaptureAreSkipped() throws {
        var bytes = SnoopFixture.header(datalink: 2001)
        bytes += SnoopFixture.record(Array(SnoopFixture.legacyReport.prefix(10)), flags: 3, micros: 0,
                                     original: SnoopFixture.legacyReport.count)
        #expect(try readAll(bytes).isEmpty)
    }
}

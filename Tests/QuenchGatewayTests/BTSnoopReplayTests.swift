import Foundation
import QuenchCore
import QuenchGateway
import QuenchTestSupport
import Testing

/// Builds btsnoop captures byte by byte, as `btmon -w` writes them (datalink
/// 2001, Linux monitor): a 16-byte file header, then records of
/// `original length, included length, flags (index << 16 | opcode), drops`
/// (u32 BE each) and a timestamp (i64 BE, µs since 0 AD), then the packet.
/// Payloads are written out by hand from the specifications, not with the
/// project's encoders, so the test checks the decoders against the wire.
struct CaptureBuilder {
    static let epochDelta: Int64 = 0x00DC_DDB3_0F2F_8000
    /// 2026-03-02T07:30:00Z in µs since 1970.
    static let start: Int64 = 1_772_436_600_000_000
    static let scale: [UInt8] = [0xF0, 0xF1, 0xF2, 0xF3, 0xF4, 0xF5]   // printed F0:F1:F2:F3:F4:F5
    static let other: [UInt8] = [0xD0, 0x11, 0x22, 0x33, 0x44, 0x55]   // a random static address

    var bytes: [UInt8] = Array("btsnoop".utf8) + [0] + be(1, 4) + be(2001, 4)

    static func be(_ v: UInt64, _ width: Int) -> [UInt8] {
        (0..<width).map { UInt8(truncatingIfNeeded: v >> (8 * UInt64(width - 1 - $0))) }
    }

    /// One monitor record at `micros` after `start`: opcode 3 event, 4 ACL tx, 5 ACL rx.
    mutating func record(opcode: UInt32, _ packet: [UInt8], micros: Int64) {
        bytes += Self.be(UInt64(packet.count), 4) + Self.be(UInt64(packet.count), 4) + Self.be(UInt64(opcode), 4) + Self.be(0, 4)
            + Self.be(UInt64(Self.start + micros + Self.epochDelta), 8) + packet
    }

    /// HCI LE Advertising Report (Vol 4, Part E, 7.7.65.2), one ADV_IND.
    mutating func advertisement(from address: [UInt8], random: Bool = false, data: [UInt8], micros: Int64) {
        let body: [UInt8] = [0x02, 0x01, 0x00, random ? 0x01 : 0x00] + address.reversed() + [UInt8(data.count)] + data + [0xC4]
        record(opcode: 3, [0x3E, UInt8(body.count)] + body, micros: micros)
    }

    /// HCI LE Connection Complete (7.7.65.1) with a public peer.
    mutating func connection(handle: UInt8, peer: [UInt8], micros: Int64) {
        let body: [UInt8] = [0x01, 0x00, handle, 0x00, 0x00, 0x00] + peer.reversed() + [0x18, 0x00, 0x00, 0x00, 0x48, 0x00, 0x00]
        record(opcode: 3, [0x3E, UInt8(body.count)] + body, micros: micros)
    }

    /// An ATT PDU in one ACL packet (L2CAP basic frame on CID 4).
    mutating func att(handle: UInt8, _ pdu: [UInt8], received: Bool, micros: Int64) {
        let l2cap: [UInt8] = [UInt8(pdu.count), 0x00, 0x04, 0x00] + pdu
        record(opcode: received ? 5 : 4, [handle, 0x20, UInt8(l2cap.count), 0x00] + l2cap, micros: micros)
    }

    /// Characteristic discovery (ATT Read By Type 0x2803): value handle 0x0012 is Weight Measurement 0x2A9D.
    mutating func discovery(handle: UInt8, micros: Int64) {
        att(handle: handle, [0x08, 0x01, 0x00, 0xFF, 0xFF, 0x03, 0x28], received: false, micros: micros)
        att(handle: handle, [0x09, 0x07, 0x11, 0x00, 0x20, 0x12, 0x00, 0x9D, 0x2A], received: true, micros: micros + 1000)
    }

    /// Weight Measurement (GSS 3.252) indication on 0x0012: flags 0x00 (SI), weight u16 LE in 0.005 kg.
    mutating func weight(grams: Int, handle: UInt8, micros: Int64) {
        let raw = UInt16(grams / 5)
        att(handle: handle, [0x1D, 0x12, 0x00, 0x00, UInt8(raw & 0xFF), UInt8(raw >> 8)], received: true, micros: micros)
    }

    /// Weight Scale advertising data: flags, 16-bit UUIDs 0x181D, name "WS".
    static let weightScaleAD: [UInt8] = [0x02, 0x01, 0x06, 0x03, 0x03, 0x1D, 0x18, 0x03, 0x09, 0x57, 0x53]

    /// Mi Scale Service Data 0x181D: control, weight u16 LE in kg × 200, year u16 LE, month, day, h, m, s
    /// (2026-03-02 07:mm:ss, one second per `index`).
    static func miScaleAD(control: UInt8, kg: Double, index: Int) -> [UInt8] {
        let raw = UInt16((kg * 200).rounded())
        let payload: [UInt8] = [control, UInt8(raw & 0xFF), UInt8(raw >> 8), 0xEA, 0x07, 3, 2, 7, UInt8(index / 60), UInt8(index % 60)]
        return [0x02, 0x01, 0x06, UInt8(3 + payload.count), 0x16, 0x1D, 0x18] + payload
    }
}

@Suite struct BTSnoopReplayTests {
    /// The bottle on the scale: 800 g, lifted (0 g) for 4 s, put back at 775 g: one 25 mL sip.
    static let grams: [Int] = Array(repeating: 800, count: 60) + Array(repeating: 0, count: 16) + Array(repeating: 775, count: 80)
    static let interval: Int64 = 250_000

    /// A capture as `btmon -w` would write it while a gateway scans, connects
    /// and subscribes: an unrelated advertiser first, the scale's
    /// advertisement, the connection, discovery, then one indication every 0.25 s.
    static func sipCapture(withDiscovery: Bool = true) -> [UInt8] {
        var c = CaptureBuilder()
        c.advertisement(from: CaptureBuilder.other, random: true, data: [0x02, 0x01, 0x06, 0x03, 0x09, 0x41, 0x42], micros: 0)
        c.advertisement(from: CaptureBuilder.scale, data: CaptureBuilder.weightScaleAD, micros: 100_000)
        c.connection(handle: 0x40, peer: CaptureBuilder.scale, micros: 200_000)
        if withDiscovery { c.discovery(handle: 0x40, micros: 300_000) }
        for (i, g) in grams.enumerated() { c.weight(grams: g, handle: 0x40, micros: 500_000 + Int64(i) * interval) }
        return c.bytes
    }

    static func folder() throws -> String {
        try TemporaryFolder.create("quench-btsnoop")
    }

    static func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    static func replay(_ path: String, device: String? = nil, profile: String? = nil, chunkSize: Int = 1 << 16)
        throws -> (BTSnoopReplayResult, [DetectedEvent], TraceHeader?) {
        var capture = try BTSnoopReplayOptions(parsingDevice: device, profile: profile)
        capture.chunkSize = chunkSize
        var events: [DetectedEvent] = []
        var header: TraceHeader?
        let result = try BTSnoopReplay.run(.file(path), capture: capture, options: ReplayOptions(),
                                           onStart: { h, _ in header = h }, onEvent: { events.append($0) })
        return (result, events, header)
    }

    @Test func weightScaleIndicationsGiveTheSip() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.write(Self.sipCapture(), to: dir + "/scale.btsnoop")

        let (result, events, header) = try Self.replay(dir + "/scale.btsnoop")
        #expect(result.device?.description == "F0:F1:F2:F3:F4:F5")
        #expect(result.profile.identifier == "weight-scale")
        #expect(result.undecodable == 0)
        #expect(result.summary.readings == Self.grams.count)
        // t = 0 at the capture's first record (the unrelated advertisement); started is its time.
        #expect(header?.started == Timestamp(iso8601: "2026-03-02T07:30:00Z"))
        #expect(header?.unit == .kg)
        #expect(header?["device"] == "F0:F1:F2:F3:F4:F5")
        #expect(header?["profile"] == "weight-scale")

        let sips = events.filter { $0.kind == .sip }
        try #require(sips.count == 1, "events: \(events)")
        #expect(abs(sips[0].ml - 25) <= 1)
        // Lifted at reading 60 (t = 0.5 + 60 × 0.25 = 15.5 s).
        #expect(abs(sips[0].start - 15.5) <= 0.5)
        #expect(events.filter { $0.kind != .sip }.isEmpty)
    }

    /// The same readings written as a trace v1 file replay to the same output,
    /// line for line: the btsnoop path is the trace path with another source.
    @Test func sameOutputAsTheEquivalentTrace() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.write(Self.sipCapture(), to: dir + "/scale.btsnoop")
        var trace = "# quench trace v1\n# sensor: weight\n# unit: kg\n# started: 2026-03-02T07:30:00Z\nt,value\n"
        for (i, g) in Self.grams.enumerated() {
            trace += "\(0.5 + Double(i) * 0.25),\(Double(g / 5) * 0.005)\n"
        }
        try trace.write(toFile: dir + "/scale.csv", atomically: true, encoding: .utf8)

        let (result, fromCapture, header) = try Self.replay(dir + "/scale.btsnoop")
        var fromTrace: [DetectedEvent] = []
        let summary = try Replay.run(.file(dir + "/scale.csv"), options: ReplayOptions()) { fromTrace.append($0) }
        #expect(!fromTrace.isEmpty)
        let started = header?.started
        #expect(fromCapture.map { EventFormat.jsonLine($0, started: started) } == fromTrace.map { EventFormat.jsonLine($0, started: started) })
        #expect(fromCapture.map { EventFormat.tableRow($0, started: started) } == fromTrace.map { EventFormat.tableRow($0, started: started) })
        #expect(EventFormat.summary(result.summary) == EventFormat.summary(summary))
    }

    /// Reading the file one byte, 7 bytes or 4 KiB at a time changes nothing.
    @Test func chunkingInvariance() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.write(Self.sipCapture(), to: dir + "/scale.btsnoop")
        let (_, whole, _) = try Self.replay(dir + "/scale.btsnoop")
        #expect(!whole.isEmpty)
        for size in [1, 7, 4096] {
            let (_, events, _) = try Self.replay(dir + "/scale.btsnoop", chunkSize: size)
            #expect(events == whole, "chunk size \(size)")
        }
    }

    /// A capture begun after discovery has no characteristic UUIDs: the
    /// scale is known from its advertisement and its indications are used.
    @Test func withoutDiscoveryTheAdvertisementTells() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.write(Self.sipCapture(withDiscovery: false), to: dir + "/scale.btsnoop")
        let (result, events, _) = try Self.replay(dir + "/scale.btsnoop")
        #expect(result.profile.identifier == "weight-scale")
        #expect(events.filter { $0.kind == .sip }.count == 1)
    }

    @Test func deviceFilter() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.write(Self.sipCapture(), to: dir + "/scale.btsnoop")
        let (chosen, _, _) = try Self.replay(dir + "/scale.btsnoop", device: "F0:F1:F2:F3:F4:F5", profile: "weight-scale")
        #expect(chosen.summary.readings == Self.grams.count)

        #expect {
            _ = try Self.replay(dir + "/scale.btsnoop", device: "D0:11:22:33:44:55")
        } throws: { error in
            guard case .noReadings(_, let device, _, let ads, let values, _, _) = error as? BTSnoopReplayError else { return false }
            return device?.description == "D0:11:22:33:44:55" && ads == 2 && values == Self.grams.count
        }
        #expect(throws: ProfileArgumentError.self) { _ = try BTSnoopReplayOptions(parsingDevice: "F0:F1", profile: nil) }
        #expect(throws: ProfileArgumentError.self) { _ = try BTSnoopReplayOptions(parsingDevice: nil, profile: "weight-scal") }
    }

    /// Through the command line, a capture of a device no profile knows says what it holds: the
    /// command read it again as a sip-keeping bottle and then said "0 advertising reports".
    @Test func aCaptureOfNoKnownDeviceSaysWhatItHolds() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var capture = CaptureBuilder()
        for i in 0..<3 { capture.advertisement(from: CaptureBuilder.other, random: true, data: [0x02, 0x01, 0x06], micros: Int64(i) * 100_000) }
        try Self.write(capture.bytes, to: dir + "/unknown.btsnoop")
        let run = try runQuench(["replay", "--btsnoop", dir + "/unknown.btsnoop"])
        #expect(run.status == 1 && run.stderr.contains("no readings from any device of a known profile (the capture holds 3 advertising reports"),
                "\(run.status) \(run.stderr)")
    }

    /// A developer's trial: a bad --device exited 1 without naming the option; a level curve given to a
    /// scale's capture was told to say `--unit`, which a capture refuses.
    @Test func aCapturesOptionsAreSaidAsACapturesOptions() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.write(Self.sipCapture(), to: dir + "/scale.btsnoop")
        let device = try runQuench(["replay", "--btsnoop", dir + "/scale.btsnoop", "--device", "nonsense"])
        #expect(device.status == 64 && device.stderr.hasPrefix("quench: error: --device \"nonsense\" is not a Bluetooth address"), "\(device.status) \(device.stderr)")
        let curve = try runQuench(["replay", "--btsnoop", dir + "/scale.btsnoop", "--level-curve", "0:0,100:500"])
        #expect(curve.status == 1 && curve.stderr.hasSuffix(": leave out --level-curve: the capture's profile reads a weight\n")
                && !curve.stderr.contains("--unit"), "\(curve.status) \(curve.stderr)")
    }

    /// A profile whose value lies past every payload's end read nothing, and the
    /// error said only "no readings": it now gives the first payload's decode error.
    @Test func aProfileThatDecodesNothingSaysWhy() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.write(Self.sipCapture(), to: dir + "/scale.btsnoop")
        let profile = #"{"name": "far", "sensor": "weight", "unit": "g", "source": {"kind": "characteristic", "service": "181D", "characteristic": "2A9D"}, "value": {"type": "u16", "offset": 30}}"#
        try profile.write(toFile: dir + "/far.json", atomically: true, encoding: .utf8)
        let error = #expect(throws: BTSnoopReplayError.self) { _ = try Self.replay(dir + "/scale.btsnoop", profile: dir + "/far.json") }
        guard case .noReadings(_, _, _, _, _, let undecodable, let first)? = error else {
            Issue.record("not noReadings: \(String(describing: error))")
            return
        }
        #expect(undecodable == Self.grams.count && first != nil, "each indication was tried")
        let text = error?.description ?? ""
        #expect(text.contains("payloads did not decode, the first: ") && text.contains("far payload"), "\(text)")
    }

    /// A scale whose frame carries no clock or counter (a custom profile's may not) sends one
    /// frame for as long as its weight stands: each burst of repeats is one reading, but the frame
    /// said again a second later is another. Taken once per change, the 20 s at 0.8 kg and the
    /// 25 s at 0.775 kg were one reading each, no level held, and the 25 mL sip was not reported.
    @Test func aFrameWithoutAClockIsReadWhileTheWeightStands() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var c = CaptureBuilder()
        // Two bursts a second, each frame three times in 100 ms; the scale's clock field never moves.
        let frames = Array(repeating: (UInt8(0x22), 0.8), count: 40) + Array(repeating: (UInt8(0xA2), 0.8), count: 10)
            + Array(repeating: (UInt8(0x22), 0.775), count: 50)
        for (i, (control, kg)) in frames.enumerated() {
            for repeatIndex in 0..<3 {
                c.advertisement(from: CaptureBuilder.other, random: true, data: CaptureBuilder.miScaleAD(control: control, kg: kg, index: 0),
                                micros: Int64(i) * 500_000 + Int64(repeatIndex) * 50_000)
            }
        }
        try Self.write(c.bytes, to: dir + "/still.btsnoop")
        let capture = try BTSnoopReplayOptions(parsingDevice: nil, profile: nil)
        var events: [DetectedEvent] = []
        let result = try BTSnoopReplay.run(.file(dir + "/still.btsnoop"), capture: capture, options: ReplayOptions()) { events.append($0) }
        // A burst is one reading; the same frame a second later is read again (every other burst).
        #expect((frames.count / 2 - 2...frames.count / 2 + 2).contains(result.summary.readings), "\(result.summary.readings) readings")
        #expect(events.map(\.kind) == [.sip], "events: \(events)")
        #expect(abs((events.first?.ml ?? 0) - 25) <= 1, "events: \(events)")
    }

    /// Broadcast scales repeat each frame: repeats are one reading. While the
    /// bottle is off, the Mi scale says "load removed" and repeats the last
    /// weight; that must read as an empty scale, or the lift would not show.
    @Test func miScaleBroadcastsAreDeduplicated() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var c = CaptureBuilder()
        // One reading a second: 20 s at 0.8 kg, 5 s removed, 25 s at 0.775 kg.
        // 0x22 = bit 1 (always set) | bit 5 stabilized; 0xA2 adds bit 7 load removed.
        let frames = Array(repeating: (UInt8(0x22), 0.8), count: 20) + Array(repeating: (UInt8(0xA2), 0.8), count: 5)
            + Array(repeating: (UInt8(0x22), 0.775), count: 25)
        for (i, (control, kg)) in frames.enumerated() {
            for repeatIndex in 0..<3 {
                c.advertisement(from: CaptureBuilder.other, random: true, data: CaptureBuilder.miScaleAD(control: control, kg: kg, index: i),
                                micros: Int64(i) * 1_000_000 + Int64(repeatIndex) * 100_000)
            }
        }
        try Self.write(c.bytes, to: dir + "/mi.btsnoop")
        var capture = try BTSnoopReplayOptions(parsingDevice: nil, profile: nil)
        capture.chunkSize = 5
        var options = ReplayOptions()
        options.detector.emitDiagnostics = true
        var events: [DetectedEvent] = []
        let result = try BTSnoopReplay.run(.file(dir + "/mi.btsnoop"), capture: capture, options: options) { events.append($0) }
        #expect(result.profile.identifier == "mi-scale")
        #expect(result.device?.description == "D0:11:22:33:44:55")
        #expect(result.summary.readings == frames.count)
        #expect(Set(events.map(\.kind)) == [.lifted, .placed, .sip], "events: \(events)")
        let sip = try #require(events.first { $0.kind == .sip })
        #expect(abs(sip.ml - 25) <= 1)
        #expect(abs(sip.start - 20) <= 1)
    }

    /// A capture stopped while it was being written (btmon's Ctrl-C) ends inside its last record:
    /// replayed up to it, and where it ends is said. A file that is not one, or cut in its header, is refused.
    @Test func aCaptureCutShortIsReplayedToItsLastWholeRecordAndSaysWhere() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let whole = Self.sipCapture()
        // Cut in the middle of the 11th indication: 16-byte header, then records of
        // 24 + packet bytes; the advertisements, connection and discovery come first.
        let cut = whole.count - (Self.grams.count - 10) * (24 + 4 + 4 + 6) + 30
        try Self.write(Array(whole[..<cut]), to: dir + "/cut.btsnoop")
        let recordStart = cut - 30
        let (result, _, _) = try Self.replay(dir + "/cut.btsnoop")
        #expect(result.summary.readings == 10, "the ten indications before the cut")
        #expect(result.cutShort?.offset == recordStart)
        let notes = BTSnoopReplay.notes(result, source: "cut.btsnoop")
        #expect(notes.contains { $0.hasPrefix("cut.btsnoop: the capture ends inside its last record (") && $0.contains("at byte \(recordStart)") },
                "\(notes)")

        try Self.write(Array(whole[..<10]), to: dir + "/header.btsnoop")
        #expect {
            _ = try Self.replay(dir + "/header.btsnoop")
        } throws: { error in
            guard case .malformedCapture(_, let decode) = error as? BTSnoopReplayError else { return false }
            return decode.context == "btsnoop file header"
        }

        try Self.write(Array("not a capture".utf8), to: dir + "/text.btsnoop")
        #expect {
            _ = try Self.replay(dir + "/text.btsnoop")
        } throws: { error in
            guard case .malformedCapture(_, let decode) = error as? BTSnoopReplayError else { return false }
            return decode.offset == 0 && decode.field == "identification pattern"
        }
    }

    @Test func missingFileIsACleanError() throws {
        #expect(throws: ReplayError.self) { _ = try Self.replay("/nonexistent/quench.btsnoop") }
    }
}

/// A real `btmon -w` capture of hci0 from ../shared/ble-vm (kernel 6.1, 11,726 bytes, in
/// Tests/Fixtures/vm-decent-scale-sip.btsnoop): `run.sh
/// --keep-logs DIR --peripheral '--profile decent-scale --trace sip.csv --speed 4' -- gatt_probe -n 200
/// -t 15 -m notify F0:F1:F2:F3:F4:F5 public FFF0 FFF4`, where sip.csv is 812 g for 15 s, 0.4 g for
/// 4 s, 787 g for 20 s at 5 Hz: the kernel's setup, gatt_probe's connection and discovery, then 195
/// Decent frames (`03 CE|CA WW WW 00 00 XX`) notified on 0xFFF4.
@Suite struct BTSnoopRealCaptureTests {
    static let capture: [UInt8] = (try? TestPackage.fixture("vm-decent-scale-sip.btsnoop")) ?? []

    @Test func decentScaleNotificationsFromTheVMGiveTheSip() throws {
        let dir = try BTSnoopReplayTests.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(Self.capture.count == 11_726)
        try BTSnoopReplayTests.write(Self.capture, to: dir + "/vm.btsnoop")
        let (result, events, header) = try BTSnoopReplayTests.replay(dir + "/vm.btsnoop", chunkSize: 1000)
        #expect(result.device?.description == "F0:F1:F2:F3:F4:F5")
        #expect(result.profile.identifier == "decent-scale")
        #expect(result.summary.readings == 195)
        #expect(result.undecodable == 0)
        #expect(header?.unit == .g)
        let sips = events.filter { $0.kind == .sip }
        try #require(sips.count == 1, "events: \(events)")
        #expect(abs(sips[0].ml - 25) <= 1)
        // Nothing else: no refill, pour or phantom sip from the link setup.
        #expect(events.count == 1)
    }
}

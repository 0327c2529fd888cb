import BluetoothWire
import GATT
import QuenchSimulator
import QuenchTestSupport
import Testing

/// The simulated server's replies, byte for byte.
@Suite struct GATTServerTests {
    private func server(_ services: [GATTServiceDefinition], maximumMTU: UInt16 = 517) throws -> (GATTServer, DescriptorBearer) {
        let (c, s) = try DescriptorBearer.makePair()
        return (GATTServer(database: GATTDatabase(services: services), bearer: s, maximumMTU: maximumMTU), c)
    }

    /// BlueZ unit/test-gatt.c SERVICE_DATA_1_PDUS answered by the same
    /// database. BlueZ's scripted peer lists one service per Read By Group
    /// Type Response; a server puts in as many as fit (3.4.4.10), so those two
    /// exchanges are replaced by the single full one.
    @Test func answersBlueZDiscoveryVectors() throws {
        let (server, peer) = try server(serviceData1, maximumMTU: 512)
        var exchanges = serviceData1PDUs
        exchanges.replaceSubrange(1...2, with: [("10 0100 ffff 0028", "11 06 0100 0400 0118 0500 0800 0d18")])
        for (request, response) in exchanges {
            #expect(server.respond(to: hex(request))?.hexString == hex(response).hexString, "reply to \(request)")
        }
        #expect(server.currentMTU == 512)
        peer.close()
    }

    @Test(arguments: [
        // test-gatt.c test_read_1: Device Name value.
        ("0a 0300", "0b 426c75655a"),
        // Read Blob from offset 2, and at the very end (empty part), and past it (Invalid Offset).
        ("0c 0300 0200", "0d 75655a"),
        ("0c 0300 0500", "0d"),
        ("0c 0300 0600", "01 0c 0300 07"),
        // Read Multiple: both names concatenated.
        ("0e 0300 0700", "0f 426c75655a 426c75655a"),
        ("0e 0300 0900", "01 0e 0900 01"),
        // Invalid Handle: handle 0, a handle past the end, a range starting at 0 or running backwards.
        ("0a 0000", "01 0a 0000 01"),
        ("0a 0900", "01 0a 0900 01"),
        ("04 0000 ffff", "01 04 0000 01"),
        ("08 0500 0100 0328", "01 08 0500 01"),
        // Find Information over the whole database: 16-bit format, 5 entries fill 22 of 23 bytes.
        ("04 0100 ffff", "05 01 0100 0028 0200 0328 0300 002a 0400 0129 0500 0028"),
        ("04 0600 ffff", "05 01 0600 0328 0700 292a 0800 0129"),
        // Find By Type Value for the primary service 0x180D.
        ("06 0100 ffff 0028 0d18", "07 0500 0800"),
        ("06 0100 ffff 0028 0f18", "01 06 0100 0a"),
        // Read By Type for Device Name by its own UUID.
        ("08 0100 ffff 002a", "09 07 0300 426c75655a"),
        // Read By Group Type for a non-grouping type.
        ("10 0100 ffff 0328", "01 10 0100 10"),
        // Writes to read-only attributes.
        ("12 0300 00", "01 12 0300 03"),
        ("12 0900 00", "01 12 0900 01"),
        // Unsupported requests (Prepare Write, Execute Write) and a truncated one.
        ("16 0300 0000 aa", "01 16 0000 06"),
        ("18 01", "01 18 0000 06"),
        ("0a 03", "01 0a 0000 04"),
    ])
    func answersRequestsByTheSpec(request: String, response: String) throws {
        let (server, peer) = try server(serviceData1)
        #expect(server.respond(to: hex(request))?.hexString == hex(response).hexString)
        peer.close()
    }

    @Test func commandsAndConfirmationsGetNoReply() throws {
        let (server, peer) = try server(serviceData1)
        #expect(server.respond(to: hex("52 0300 01")) == nil)        // Write Command to a read-only value: dropped silently
        #expect(server.value(handle: 3) == Array("BlueZ".utf8))
        #expect(server.respond(to: hex("d2 0300 01")) == nil)        // unknown command (Signed Write): ignored
        #expect(server.respond(to: hex("1e")) == nil)
        #expect(server.respond(to: hex("1b 0300 01")) == nil)
        peer.close()
    }

    @Test func cccdWritesTakeTwoBytes() throws {
        let (server, peer) = try server([.levelBottle(level: [1, 2])])
        // Level bottle: service 1, declaration 2, value 3, CCCD 4, user description 5.
        #expect(server.respond(to: hex("12 0400 01"))?.hexString == "01120400 0d".replacingSpaces)
        #expect(server.respond(to: hex("12 0400 0100")) == [0x13])
        #expect(server.configuration(valueHandle: 3) == .notifications)
        #expect(server.respond(to: hex("0a 0400")) == hex("0b 0100"))
        peer.close()
    }

    @Test func mtuBoundsResponses() throws {
        let long = [UInt8](repeating: 0x5A, count: 300)
        let service = GATTServiceDefinition(uuid: BluetoothUUID(uuid16: 0x180A), characteristics: [
            GATTCharacteristicDefinition(uuid: BluetoothUUID(uuid16: 0x2A24), properties: .read, value: long),
        ])
        let (server, peer) = try server([service])
        // ATT_MTU 23: Read Response carries 22 bytes; Read By Type 19 (ATT_MTU − 4).
        #expect(server.respond(to: hex("0a 0300")) == [0x0B] + long.prefix(22))
        #expect(server.respond(to: hex("08 0100 ffff 242a")) == [0x09, 21, 0x03, 0x00] + long.prefix(19))
        // After exchanging 100 (the server offers 517): 99 bytes.
        #expect(server.respond(to: hex("02 6400")) == hex("03 0502"))
        #expect(server.respond(to: hex("0a 0300")) == [0x0B] + long.prefix(99))
        peer.close()
    }

    @Test func serviceGroupsOf128BitUUIDs() throws {
        let (server, peer) = try server([.weightScale(feature: [0]), .levelBottle()])
        // 16-bit and 128-bit service UUIDs have different lengths, so they come in separate responses.
        #expect(server.respond(to: hex("10 0100 ffff 0028"))?.hexString == "1106010006001d18")
        #expect(server.respond(to: hex("10 0700 ffff 0028"))?.hexString ==
                "1114" + "0700" + "0b00" + "00 1e 77 b0 57 7e 1d 9f 5b 4c a5 51 00 00 0a 6e".replacingSpaces)
        #expect(server.respond(to: hex("10 0c00 ffff 0028"))?.hexString == "01100c000a")
        peer.close()
    }

    /// Vol 3, Part F, 3.4.7.2: no second indication before the first is confirmed.
    @Test func indicationsWaitForConfirmation() throws {
        let (c, s) = try DescriptorBearer.makePair()
        let server = GATTServer(database: GATTDatabase(services: [.weightScale(feature: [0])]), bearer: s, indicationTimeout: 5)
        let serving = Background { _ = try? server.run() }
        // Weight Scale: feature 2–3, measurement declaration 4, value 5, CCCD 6.
        try c.send(hex("12 0600 0200"))
        #expect(try c.receive(timeout: 2) == [0x13])
        let deliveries = Locked<[GATTServer.Delivery]>([])
        let sender = Background {
            for v in [UInt8(1), 2] {
                let d = try? server.updateValue([v], handle: 5)
                deliveries.withLock { $0.append(d ?? .stored) }
            }
        }
        #expect(try c.receive(timeout: 2) == hex("1d 0500 01"))
        #expect(try c.receive(timeout: 0.2) == nil, "second indication sent before the first was confirmed")
        try c.send([0x1E])
        #expect(try c.receive(timeout: 2) == hex("1d 0500 02"))
        try c.send([0x1E])
        #expect(sender.wait())
        #expect(deliveries.value == [.indicated, .indicated])
        c.close()
        #expect(serving.wait())
        s.close()
    }

    @Test func unconfirmedIndicationTimesOut() throws {
        let (c, s) = try DescriptorBearer.makePair()
        let server = GATTServer(database: GATTDatabase(services: [.weightScale(feature: [0])]), bearer: s, indicationTimeout: 0.2)
        #expect(server.respond(to: hex("12 0600 0200")) == [0x13])
        #expect(throws: GATTError.timeout(request: .handleValueIndication, seconds: 0.2)) { try server.updateValue([1], handle: 5) }
        #expect(try c.receive(timeout: 1) == hex("1d 0500 01"))
        c.close()
        s.close()
    }
}

private extension String {
    var replacingSpaces: String { filter { $0 != " " } }
}

@Suite struct GATTServerFuzzTests {
    /// Random PDUs never crash the server; every reply is a well-formed PDU
    /// and requests (and only requests) get one.
    @Test func randomRequests() throws {
        let (c, s) = try DescriptorBearer.makePair()
        let server = GATTServer(database: GATTDatabase(services: [.weightScale(feature: [1, 0, 0, 0]), .kitchenScale(), .levelBottle()]), bearer: s)
        // A fixed seed, so failures replay.
        var random = SeededRandom(seed: 0xA77)
        func next() -> UInt64 { random.next() }
        let opcodes: [UInt8] = [0x02, 0x04, 0x06, 0x08, 0x0A, 0x0C, 0x0E, 0x10, 0x12, 0x16, 0x18, 0x1E, 0x52, 0xD2, 0x03, 0x7F]
        var replies = 0
        for _ in 0..<5_000 {
            let length = Int(next() % 24)
            var pdu = (0..<length).map { _ in UInt8(truncatingIfNeeded: next()) }
            // Small handles hit real attributes more often.
            if pdu.count > 2 { pdu[2] = 0 }
            if !pdu.isEmpty { pdu[0] = opcodes[Int(next() % UInt64(opcodes.count))] }
            let reply = server.respond(to: pdu)
            let op = ATTOpcode(rawValue: pdu.first ?? 0)
            if let reply {
                replies += 1
                #expect(op.isRequest || !op.isCommand && op.name == nil, "reply to \(pdu.hexString)")
                let decoded = try ATTPDU(decoding: reply)
                #expect(decoded.opcode == .errorResponse || decoded.opcode == op.response, "\(reply.hexString) for \(pdu.hexString)")
                #expect(reply.count <= Int(server.currentMTU))
            } else {
                #expect(!op.isRequest || pdu.isEmpty, "no reply to \(pdu.hexString)")
            }
        }
        #expect(replies > 1_000)
        c.close()
        s.close()
    }
}

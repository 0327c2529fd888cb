import BluetoothWire
import GATT
import QuenchTestSupport
import Testing

/// The client against a peer that expects exact request bytes and replies
/// exact bytes, in the style of BlueZ unit/test-gatt.c.
@Suite struct GATTScriptedClientTests {
    /// test-gatt.c SERVICE_DATA_1_PDUS: the same bytes a conforming client sends.
    @Test func discoveryMatchesBlueZVectors() throws {
        let steps = serviceData1PDUs.flatMap { [ScriptedPeer.Step.expect($0.request), .send($0.response)] }
        let (client, peer) = try scripted(steps)
        #expect(try client.exchangeMTU(clientRxMTU: 512) == 512)
        let services = try client.discoverPrimaryServices()
        #expect(services == [GATTService(uuid: BluetoothUUID(uuid16: 0x1801), startHandle: 1, endHandle: 4),
                             GATTService(uuid: BluetoothUUID(uuid16: 0x180D), startHandle: 5, endHandle: 8)])
        for (service, uuid) in zip(services, [UInt16(0x2A00), 0x2A29]) {
            let characteristics = try client.discoverCharacteristics(of: service)
            #expect(characteristics == [GATTCharacteristic(uuid: BluetoothUUID(uuid16: uuid), declarationHandle: service.startHandle + 1,
                                                           valueHandle: service.startHandle + 2, endHandle: service.endHandle,
                                                           properties: .read)])
            #expect(try client.discoverDescriptors(of: characteristics[0]) == [
                GATTDescriptor(uuid: GATTAttributeType.characteristicUserDescription, handle: service.endHandle),
            ])
        }
        peer.finish()
        client.bearer.close()
    }

    /// test-gatt.c test_read_1 (handle 0x0003 reads 01 02 03).
    @Test func readRequest() throws {
        let (client, peer) = try scripted([.expect("0a 0300"), .send("0b 010203")])
        #expect(try client.read(handle: 3) == [1, 2, 3])
        peer.finish()
        client.bearer.close()
    }

    /// Read Long Characteristic Values (Vol 3, Part G, 4.8.3) at ATT_MTU 23:
    /// a full Read Response (22 bytes) continues with Read Blob at offset 22.
    @Test func longRead() throws {
        let first = (0..<22).map { UInt8($0) }.hexString
        let (client, peer) = try scripted([
            .expect("0a 0300"), .send("0b" + first),
            .expect("0c 0300 1600"), .send("0d" + (22..<44).map { UInt8($0) }.hexString),
            .expect("0c 0300 2c00"), .send("0d aabb"),
        ])
        #expect(try client.read(handle: 3) == (0..<44).map(UInt8.init) + [0xAA, 0xBB])
        peer.finish()
        client.bearer.close()
    }

    /// A value exactly one PDU long: the server may answer the Read Blob with Attribute Not Long.
    @Test func longReadEndsOnAttributeNotLong() throws {
        let (client, peer) = try scripted([
            .expect("0a 0300"), .send("0b" + String(repeating: "11", count: 22)),
            .expect("0c 0300 1600"), .send("01 0c 0300 0b"),
        ])
        #expect(try client.read(handle: 3) == [UInt8](repeating: 0x11, count: 22))
        peer.finish()
        client.bearer.close()
    }

    /// The 128-bit characteristic UUID travels little-endian in the declaration.
    @Test func discovers128BitCharacteristic() throws {
        let (client, peer) = try scripted([
            .expect("08 1000 1400 0328"),
            .send("09 15 1100 12 1200 001e77b0577e1d9f5b4ca55101000a6e"),
            .expect("08 1200 1400 0328"),
            .send("01 08 1200 0a"),
        ])
        let service = GATTService(uuid: GATTServiceDefinition.levelBottleService, startHandle: 0x10, endHandle: 0x14)
        #expect(try client.discoverCharacteristics(of: service) == [
            GATTCharacteristic(uuid: GATTServiceDefinition.levelBottleLevel, declarationHandle: 0x11, valueHandle: 0x12,
                               endHandle: 0x14, properties: [.read, .notify]),
        ])
        peer.finish()
        client.bearer.close()
    }

    /// Discover Primary Service by Service UUID (Vol 3, Part G, 4.4.2).
    @Test func discoverByUUIDBytes() throws {
        let (client, peer) = try scripted([
            .expect("06 0100 ffff 0028 1d18"), .send("07 0400 0900"),
            .expect("06 0a00 ffff 0028 1d18"), .send("01 06 0a00 0a"),
        ])
        #expect(try client.discoverPrimaryServices(uuid: BluetoothUUID(uuid16: 0x181D)) ==
                [GATTService(uuid: BluetoothUUID(uuid16: 0x181D), startHandle: 4, endHandle: 9)])
        peer.finish()
        client.bearer.close()
    }

    /// Subscribing writes the CCCD; an indication is confirmed with 0x1E.
    @Test func subscribeAndConfirmIndication() throws {
        let (client, peer) = try scripted([
            .expect("04 0900 0900"), .send("05 01 0900 0229"),
            .expect("12 0900 0200"), .send("13"),
            .send("1d 0800 0e1027"),
            .expect("1e"),
            .send("1b 0800 0f"),
        ])
        let measurement = GATTCharacteristic(uuid: GATTServiceDefinition.weightMeasurement, declarationHandle: 7, valueHandle: 8,
                                             endHandle: 9, properties: .indicate)
        try client.subscribe(to: measurement)
        #expect(try client.nextValue(timeout: 2) == ValueUpdate(handle: 8, value: [0x0E, 0x10, 0x27], wasIndication: true))
        #expect(try client.nextValue(timeout: 2) == ValueUpdate(handle: 8, value: [0x0F], wasIndication: false))
        peer.finish()
        client.bearer.close()
    }

    /// A notification that arrives while a request is outstanding is queued,
    /// not lost, and an indication then is confirmed at once.
    @Test func valueUpdatesDuringARequestAreKept() throws {
        let (client, peer) = try scripted([
            .expect("0a 0300"),
            .send("1b 1200 0102"),
            .send("1d 0800 03"),
            .expect("1e"),
            .send("0b 2a"),
        ])
        #expect(try client.read(handle: 3) == [0x2A])
        #expect(client.pendingValueCount == 2)
        #expect(try client.nextValue(timeout: 0) == ValueUpdate(handle: 0x12, value: [1, 2], wasIndication: false))
        #expect(try client.nextValue(timeout: 0) == ValueUpdate(handle: 8, value: [3], wasIndication: true))
        #expect(try client.nextValue(timeout: 0) == nil)
        peer.finish()
        client.bearer.close()
    }

    /// Vol 3, Part F, 3.3.3: no response within the timeout fails the
    /// transaction, and nothing more is sent on that bearer.
    @Test func transactionTimeout() throws {
        let (client, peer) = try scripted([.swallow, .silence(0.4)], transactionTimeout: 0.3)
        let start = ContinuousClock.now
        #expect(throws: GATTError.timeout(request: .readRequest, seconds: 0.3)) { try client.read(handle: 3) }
        let elapsed = ContinuousClock.now - start
        #expect(elapsed >= .milliseconds(300) && elapsed < .seconds(2))
        // Later calls fail the same way without touching the link.
        #expect(throws: GATTError.timeout(request: .readRequest, seconds: 0.3)) { try client.write(handle: 3, value: [1]) }
        #expect(throws: GATTError.timeout(request: .readRequest, seconds: 0.3)) { try client.nextValue(timeout: 0) }
        peer.finish()
        client.bearer.close()
    }

    /// Insufficient Encryption once: the bearer is upgraded once and the
    /// request is sent again byte for byte.
    @Test func securityRetryBytes() throws {
        let upgrades = Locked(0)
        let asked = Locked<[ATTErrorCode]>([])
        let (client, peer) = try scripted([
            .expect("0a 0300"), .send("01 0a 0300 0f"),
            .expect("0a 0300"), .send("0b 2c01"),
        ], upgradeSecurity: { code throws(BearerError) in upgrades.withLock { $0 += 1 }; asked.withLock { $0.append(code) } })
        #expect(try client.read(handle: 3) == [0x2C, 0x01])
        #expect(upgrades.value == 1)
        #expect(asked.value == [.insufficientEncryption], "the bearer is told which error asked")
        peer.finish()
        client.bearer.close()
    }

    @Test func insufficientAuthenticationAlsoUpgrades() throws {
        let upgrades = Locked(0)
        let asked = Locked<[ATTErrorCode]>([])
        let (client, peer) = try scripted([
            .expect("12 0900 0100"), .send("01 12 0900 05"),
            .expect("12 0900 0100"), .send("01 12 0900 05"),
        ], upgradeSecurity: { code throws(BearerError) in upgrades.withLock { $0 += 1 }; asked.withLock { $0.append(code) } })
        #expect(throws: GATTError.attribute(ATTErrorResponse(requestOpcode: .writeRequest, handle: 9, errorCode: .insufficientAuthentication))) {
            try client.write(handle: 9, value: [1, 0])
        }
        #expect(upgrades.value == 1)
        #expect(asked.value == [.insufficientAuthentication])
        peer.finish()
        client.bearer.close()
    }

    /// A server that does not support MTU exchange leaves ATT_MTU at 23.
    @Test func mtuExchangeNotSupported() throws {
        let (client, peer) = try scripted([.expect("02 0502"), .send("01 02 0000 06")])
        #expect(try client.exchangeMTU() == 23)
        peer.finish()
        client.bearer.close()
    }

    @Test func malformedResponseIsADecodeError() throws {
        let (client, peer) = try scripted([.expect("0a 0300"), .send("01 0a 03")])
        #expect(throws: GATTError.malformed(DecodeError(context: "ATT Error Response", field: "attribute handle in error", offset: 2,
                                                        reason: .truncated(needed: 2, available: 1)))) {
            try client.read(handle: 3)
        }
        peer.finish()
        client.bearer.close()
    }

    @Test func responseToAnotherRequestIsUnexpected() throws {
        let (client, peer) = try scripted([.expect("0a 0300"), .send("13")])
        #expect(throws: GATTError.unexpectedResponse(request: .readRequest, received: .writeResponse)) { try client.read(handle: 3) }
        peer.finish()
        client.bearer.close()
    }

    /// This client serves no attributes: a request from the peer is refused
    /// (Request Not Supported, handle 0) and a malformed notification surfaces in order.
    @Test func requestsFromThePeerAreRefused() throws {
        let (client, peer) = try scripted([
            .send("0a 0100"), .expect("01 0a 0000 06"),
            .send("1b 12"),
            .send("1b 1200 07"),
        ])
        #expect(throws: GATTError.malformed(DecodeError(context: "ATT Handle Value Notification", field: "attribute handle", offset: 1,
                                                        reason: .truncated(needed: 2, available: 1)))) {
            try client.nextValue(timeout: 2)
        }
        #expect(try client.nextValue(timeout: 2) == ValueUpdate(handle: 0x12, value: [7], wasIndication: false))
        peer.finish()
        client.bearer.close()
    }
}

@Suite struct GATTClientRobustnessTests {
    /// A faulty server listing a declaration before the requested range must
    /// not make the end-handle arithmetic go wrong.
    @Test func outOfRangeDeclarationIsMalformed() throws {
        let (client, peer) = try scripted([
            .expect("08 0500 0800 0328"), .send("09 07 0600 02 0700 292a 0000 02 0300 002a"),
        ])
        let service = GATTService(uuid: BluetoothUUID(uuid16: 0x180D), startHandle: 5, endHandle: 8)
        #expect(throws: GATTError.malformed(DecodeError(context: "ATT Read By Type Response", field: "attribute handle", offset: 9,
                                                        reason: .invalidValue("0 is outside 5–8 or out of order")))) {
            try client.discoverCharacteristics(of: service)
        }
        peer.finish()
        client.bearer.close()
    }

    @Test func findsCharacteristicByServiceAndUUID() throws {
        let pair = try LivePair(GATTClientServerTests.profiles)
        let level = try pair.client.characteristic(GATTServiceDefinition.levelBottleLevel, inService: GATTServiceDefinition.levelBottleService)
        #expect(level?.valueHandle == 18)
        #expect(try pair.client.characteristic(GATTServiceDefinition.levelBottleLevel, inService: GATTServiceDefinition.kitchenScaleService) == nil)
        #expect(try pair.client.characteristic(BluetoothUUID(uuid16: 0x2A19), inService: BluetoothUUID(uuid16: 0x180F)) == nil)
        pair.finish()
    }
}

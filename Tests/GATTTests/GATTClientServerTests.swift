import BluetoothWire
import Dispatch
import GATT
import Synchronization
import QuenchTestSupport
import Testing

/// The client against the simulated server over socketpair(AF_UNIX, SOCK_SEQPACKET).
@Suite struct GATTClientServerTests {
    static let profiles: [GATTServiceDefinition] = [
        .genericAccess(deviceName: "Quench sim"),
        .weightScale(feature: [0x06, 0x00, 0x00, 0x00]),
        .kitchenScale(weight: [0x03, 0xCE, 0x00]),
        .levelBottle(level: [0x10, 0x27]),
    ]

    @Test func mtuExchange() throws {
        let pair = try LivePair(Self.profiles, maximumMTU: 247)
        #expect(pair.client.mtu == 23)
        #expect(try pair.client.exchangeMTU(clientRxMTU: 517) == 247)
        #expect(pair.client.mtu == 247)
        #expect(pair.server.currentMTU == 247)
        pair.finish()
    }

    @Test func discoversEveryServiceWithHandleRanges() throws {
        let pair = try LivePair(Self.profiles)
        let services = try pair.client.discoverPrimaryServices()
        #expect(services.map(\.uuid) == [BluetoothUUID(uuid16: 0x1800), GATTServiceDefinition.weightScaleService,
                                         GATTServiceDefinition.kitchenScaleService, GATTServiceDefinition.levelBottleService])
        // Handles: GAP 1–3; Weight Scale 4–9 (feature 5–6, measurement 7–8 + CCCD 9);
        // kitchen 10–15 (weight 11–12 + CCCD 13, command 14–15); bottle 16–20.
        #expect(services.map(\.startHandle) == [1, 4, 10, 16])
        #expect(services.map(\.endHandle) == [3, 9, 15, 20])
        pair.finish()
    }

    @Test(arguments: [
        (GATTServiceDefinition.weightScaleService, GATTServiceDefinition.weightMeasurement, UInt16(4), UInt16(9)),
        (GATTServiceDefinition.kitchenScaleService, GATTServiceDefinition.kitchenScaleWeight, UInt16(10), UInt16(15)),
        (GATTServiceDefinition.levelBottleService, GATTServiceDefinition.levelBottleLevel, UInt16(16), UInt16(20)),
    ])
    func discoversProfileByUUID(service: BluetoothUUID, characteristic: BluetoothUUID, start: UInt16, end: UInt16) throws {
        let pair = try LivePair(Self.profiles)
        let found = try pair.client.discoverPrimaryServices(uuid: service)
        #expect(found == [GATTService(uuid: service, startHandle: start, endHandle: end)])
        let characteristics = try pair.client.discoverCharacteristics(of: found[0])
        let streaming = try #require(characteristics.first { $0.uuid == characteristic })
        #expect(streaming.valueHandle == pair.server.currentDatabase.valueHandle(service: service, characteristic: characteristic))
        let descriptors = try pair.client.discoverDescriptors(of: streaming)
        #expect(descriptors.first?.uuid == GATTAttributeType.clientCharacteristicConfiguration)
        #expect(descriptors.first?.handle == streaming.valueHandle + 1)
        pair.finish()
    }

    @Test func absentServiceIsEmpty() throws {
        let pair = try LivePair(Self.profiles)
        #expect(try pair.client.discoverPrimaryServices(uuid: BluetoothUUID(uuid16: 0x180F)).isEmpty)
        pair.finish()
    }

    @Test func characteristicsAndDescriptors() throws {
        let pair = try LivePair(Self.profiles)
        let bottle = try #require(try pair.client.discoverPrimaryServices(uuid: GATTServiceDefinition.levelBottleService).first)
        let characteristics = try pair.client.discoverCharacteristics(of: bottle)
        #expect(characteristics == [GATTCharacteristic(uuid: GATTServiceDefinition.levelBottleLevel, declarationHandle: 17,
                                                       valueHandle: 18, endHandle: 20, properties: [.read, .notify])])
        #expect(try pair.client.discoverDescriptors(of: characteristics[0]) == [
            GATTDescriptor(uuid: GATTAttributeType.clientCharacteristicConfiguration, handle: 19),
            GATTDescriptor(uuid: GATTAttributeType.characteristicUserDescription, handle: 20),
        ])
        #expect(try pair.client.read(handle: 20) == Array("Water level".utf8))

        let scale = try #require(try pair.client.discoverPrimaryServices(uuid: GATTServiceDefinition.weightScaleService).first)
        let scaleCharacteristics = try pair.client.discoverCharacteristics(of: scale)
        #expect(scaleCharacteristics.map(\.uuid) == [GATTServiceDefinition.weightScaleFeature, GATTServiceDefinition.weightMeasurement])
        #expect(scaleCharacteristics.map(\.endHandle) == [6, 9])
        #expect(scaleCharacteristics[1].properties == .indicate)
        // A characteristic with nothing after its value has no descriptors, and none are asked for.
        #expect(try pair.client.discoverDescriptors(of: scaleCharacteristics[0]).isEmpty)
        pair.finish()
    }

    @Test func readsAValue() throws {
        let pair = try LivePair(Self.profiles)
        let handle = try #require(pair.server.currentDatabase.valueHandle(service: GATTServiceDefinition.weightScaleService,
                                                                          characteristic: GATTServiceDefinition.weightScaleFeature))
        #expect(try pair.client.read(handle: handle) == [0x06, 0x00, 0x00, 0x00])
        pair.finish()
    }

    @Test(arguments: [0, 1, 21, 22, 23, 44, 100, 512])
    func longReadUsesReadBlob(length: Int) throws {
        let value = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) }
        let service = GATTServiceDefinition(uuid: BluetoothUUID(uuid16: 0x180A), characteristics: [
            GATTCharacteristicDefinition(uuid: BluetoothUUID(uuid16: 0x2A24), properties: .read, value: value),
        ])
        let pair = try LivePair([service])
        #expect(try pair.client.read(handle: 3) == value)
        pair.finish()
    }

    @Test func writesWithAndWithoutResponse() throws {
        let writes = Locked<[[UInt8]]>([])
        let pair = try LivePair(Self.profiles, onWrite: { handle, value in
            writes.withLock { $0.append([UInt8(handle)] + value) }
        })
        let command = try #require(pair.server.currentDatabase.valueHandle(service: GATTServiceDefinition.kitchenScaleService,
                                                                           characteristic: GATTServiceDefinition.kitchenScaleCommand))
        try pair.client.write(handle: command, value: [0x03, 0x0F, 0x00])
        #expect(pair.server.value(handle: command) == [0x03, 0x0F, 0x00])
        try pair.client.writeWithoutResponse(handle: command, value: [0x03, 0x0F, 0x01])
        // The command has no response: a later request proves the server processed it.
        _ = try pair.client.read(handle: 1)
        #expect(pair.server.value(handle: command) == [0x03, 0x0F, 0x01])
        #expect(writes.withLock { $0 } == [[UInt8(command), 0x03, 0x0F, 0x00], [UInt8(command), 0x03, 0x0F, 0x01]])
        #expect(throws: GATTError.valueTooLong(length: 21, maximum: 20)) {
            try pair.client.write(handle: command, value: [UInt8](repeating: 0, count: 21))
        }
        pair.finish()
    }

    @Test func hundredNotificationsInOrder() throws {
        let pair = try LivePair(Self.profiles)
        let bottle = try #require(try pair.client.discoverPrimaryServices(uuid: GATTServiceDefinition.levelBottleService).first)
        let level = try #require(try pair.client.discoverCharacteristics(of: bottle).first)
        try pair.client.subscribe(to: level)
        #expect(pair.server.configuration(valueHandle: level.valueHandle) == .notifications)
        let server = pair.server
        let sender = Background {
            for i in 0..<100 {
                let delivery = try? server.updateValue([UInt8(i), 0x01], handle: level.valueHandle)
                precondition(delivery == .notified)
            }
        }
        var received: [ValueUpdate] = []
        while received.count < 100, let update = try pair.client.nextValue(timeout: 5) { received.append(update) }
        #expect(sender.wait())
        #expect(received == (0..<100).map { ValueUpdate(handle: level.valueHandle, value: [UInt8($0), 0x01], wasIndication: false) })
        #expect(try pair.client.nextValue(timeout: 0.05) == nil)

        try pair.client.unsubscribe(from: level)
        #expect(pair.server.configuration(valueHandle: level.valueHandle) == [])
        #expect(try pair.server.updateValue([9, 9], handle: level.valueHandle) == .stored)
        #expect(try pair.client.nextValue(timeout: 0.05) == nil)
        pair.finish()
    }

    @Test func indicationsAreConfirmed() throws {
        let pair = try LivePair(Self.profiles)
        let scale = try #require(try pair.client.discoverPrimaryServices(uuid: GATTServiceDefinition.weightScaleService).first)
        let measurement = try #require(try pair.client.discoverCharacteristics(of: scale).first { $0.uuid == GATTServiceDefinition.weightMeasurement })
        try pair.client.subscribe(to: measurement)
        #expect(pair.server.configuration(valueHandle: measurement.valueHandle) == .indications)
        let server = pair.server
        let deliveries = Locked<[GATTServer.Delivery]>([])
        let sender = Background {
            for i in 0..<5 {
                // Each call returns only once the client confirmed it.
                let d = try? server.updateValue([0x00, UInt8(i), 0x3A], handle: measurement.valueHandle)
                deliveries.withLock { $0.append(d ?? .stored) }
            }
        }
        var received: [ValueUpdate] = []
        while received.count < 5, let update = try pair.client.nextValue(timeout: 5) { received.append(update) }
        #expect(sender.wait())
        #expect(received.map(\.value) == (0..<5).map { [0x00, UInt8($0), 0x3A] })
        #expect(received.allSatisfy { $0.wasIndication })
        #expect(deliveries.withLock { $0 } == Array(repeating: .indicated, count: 5))
        pair.finish()
    }

    @Test func errorResponsesAreTyped() throws {
        let pair = try LivePair(Self.profiles)
        // Weight Measurement (handle 8) only indicates: reading it is not permitted.
        #expect(throws: GATTError.attribute(ATTErrorResponse(requestOpcode: .readRequest, handle: 8, errorCode: .readNotPermitted))) {
            try pair.client.read(handle: 8)
        }
        #expect(throws: GATTError.attribute(ATTErrorResponse(requestOpcode: .readRequest, handle: 0x00F0, errorCode: .invalidHandle))) {
            try pair.client.read(handle: 0x00F0)
        }
        // Weight Scale Feature (handle 6) is read-only.
        #expect(throws: GATTError.attribute(ATTErrorResponse(requestOpcode: .writeRequest, handle: 6, errorCode: .writeNotPermitted))) {
            try pair.client.write(handle: 6, value: [1])
        }
        // The client is still usable after error responses.
        #expect(try pair.client.read(handle: 6) == [0x06, 0x00, 0x00, 0x00])
        pair.finish()
    }

    @Test func subscribingWithoutCCCDFails() throws {
        let pair = try LivePair(Self.profiles)
        let scale = try #require(try pair.client.discoverPrimaryServices(uuid: GATTServiceDefinition.weightScaleService).first)
        let feature = try #require(try pair.client.discoverCharacteristics(of: scale).first)
        #expect(throws: GATTError.noConfigurationDescriptor(characteristic: GATTServiceDefinition.weightScaleFeature, valueHandle: 6)) {
            try pair.client.subscribe(to: feature)
        }
        pair.finish()
    }

    @Test func linkClosedMidStream() throws {
        let pair = try LivePair(Self.profiles)
        let level = GATTCharacteristic(uuid: GATTServiceDefinition.levelBottleLevel, declarationHandle: 17, valueHandle: 18,
                                       endHandle: 20, properties: [.read, .notify])
        try pair.client.subscribe(to: level)
        for i in 0..<3 { try pair.server.updateValue([UInt8(i)], handle: 18) }
        // The peripheral drops the link (shutdown wakes its own serving thread too).
        pair.serverBearer.interrupt()
        // Updates already received are still delivered, then the closed link is reported, and stays reported.
        for i in 0..<3 { #expect(try pair.client.nextValue(timeout: 2)?.value == [UInt8(i)]) }
        #expect(throws: GATTError.bearer(.closed(errno: nil))) { try pair.client.nextValue(timeout: 2) }
        #expect(throws: GATTError.bearer(.closed(errno: nil))) { try pair.client.read(handle: 1) }
        pair.finish()
    }

    @Test func securityUpgradeThenRetry() throws {
        let secured = GATTServiceDefinition(uuid: GATTServiceDefinition.levelBottleService, characteristics: [
            GATTCharacteristicDefinition(uuid: GATTServiceDefinition.levelBottleLevel, properties: [.read, .notify],
                                         value: [0x2C, 0x01], requiresEncryption: true),
        ])
        let upgrades = Locked(0)
        let server = Locked<GATTServer?>(nil)
        let pair = try LivePair([secured], upgradeSecurity: { _ throws(BearerError) in
            upgrades.withLock { $0 += 1 }
            server.withLock { $0?.isLinkEncrypted = true }
        })
        server.withLock { $0 = pair.server }
        #expect(!pair.server.isLinkEncrypted)
        #expect(try pair.client.read(handle: 3) == [0x2C, 0x01])
        #expect(upgrades.withLock { $0 } == 1)
        #expect(pair.server.isLinkEncrypted)
        // Now encrypted: no further upgrade.
        try pair.client.subscribe(to: GATTCharacteristic(uuid: GATTServiceDefinition.levelBottleLevel, declarationHandle: 2,
                                                         valueHandle: 3, endHandle: 4, properties: [.read, .notify]))
        #expect(upgrades.withLock { $0 } == 1)
        pair.finish()
    }

    @Test func securityUpgradeThatDoesNotHelpIsTriedOnce() throws {
        let secured = GATTServiceDefinition(uuid: BluetoothUUID(uuid16: 0x180A), characteristics: [
            GATTCharacteristicDefinition(uuid: BluetoothUUID(uuid16: 0x2A24), properties: .read, value: [1], requiresEncryption: true),
        ])
        let upgrades = Locked(0)
        let pair = try LivePair([secured], upgradeSecurity: { _ throws(BearerError) in upgrades.withLock { $0 += 1 } })
        #expect(throws: GATTError.attribute(ATTErrorResponse(requestOpcode: .readRequest, handle: 3, errorCode: .insufficientEncryption))) {
            try pair.client.read(handle: 3)
        }
        #expect(upgrades.withLock { $0 } == 1)
        pair.finish()
    }

    @Test func securityUpgradeUnsupportedKeepsBothCauses() throws {
        let secured = GATTServiceDefinition(uuid: BluetoothUUID(uuid16: 0x180A), characteristics: [
            GATTCharacteristicDefinition(uuid: BluetoothUUID(uuid16: 0x2A24), properties: .read, value: [1], requiresEncryption: true),
        ])
        let pair = try LivePair([secured])
        #expect(throws: GATTError.securityUpgradeFailed(
            ATTErrorResponse(requestOpcode: .readRequest, handle: 3, errorCode: .insufficientEncryption),
            .unsupported("security upgrade"))) {
            try pair.client.read(handle: 3)
        }
        pair.finish()
    }

    @Test func serverWaitsForSubscription() throws {
        let pair = try LivePair(Self.profiles)
        #expect(!pair.server.waitForSubscription(valueHandle: 18, timeout: 0.05))
        let server = pair.server
        let waiter = Locked(false)
        let waiting = Background { waiter.withLock { $0 = server.waitForSubscription(valueHandle: 18, timeout: 5) } }
        try pair.client.subscribe(to: GATTCharacteristic(uuid: GATTServiceDefinition.levelBottleLevel, declarationHandle: 17,
                                                         valueHandle: 18, endHandle: 20, properties: [.read, .notify]))
        #expect(waiting.wait())
        #expect(waiter.withLock { $0 })
        pair.finish()
    }
}

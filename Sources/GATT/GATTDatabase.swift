import BluetoothWire

/// Who may read or write an attribute (Vol 3, Part F, 3.2.5).
public struct GATTAttributePermissions: OptionSet, Sendable, Hashable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let read = Self(rawValue: 0x01)
    public static let write = Self(rawValue: 0x02)
}

/// One attribute of a server's database (Vol 3, Part F, 3.2): handle, type,
/// value and permissions. Service declarations also know the last handle of
/// their group.
public struct GATTAttribute: Sendable, Hashable {
    public let handle: UInt16
    public let type: BluetoothUUID
    public internal(set) var value: [UInt8]
    public let permissions: GATTAttributePermissions
    /// Access needs an encrypted link; until then the server answers
    /// Insufficient Encryption (0x0F).
    public let requiresEncryption: Bool
    /// The last handle of the group, for service declarations.
    public let groupEndHandle: UInt16?
}

/// A descriptor to add after a characteristic's value (the CCCD is added by itself).
public struct GATTDescriptorDefinition: Sendable, Hashable {
    public var uuid: BluetoothUUID
    public var value: [UInt8]
    public var permissions: GATTAttributePermissions
    public init(uuid: BluetoothUUID, value: [UInt8], permissions: GATTAttributePermissions = .read) {
        self.uuid = uuid
        self.value = value
        self.permissions = permissions
    }

    /// Characteristic User Description, 0x2901 (Vol 3, Part G, 3.3.3.2).
    public static func userDescription(_ text: String) -> Self {
        Self(uuid: GATTAttributeType.characteristicUserDescription, value: Array(text.utf8))
    }
}

/// A characteristic to serve. Read and write permissions follow the
/// properties; a Client Characteristic Configuration descriptor is added
/// when it can notify or indicate.
public struct GATTCharacteristicDefinition: Sendable, Hashable {
    public var uuid: BluetoothUUID
    public var properties: GATTCharacteristicProperties
    public var value: [UInt8]
    public var requiresEncryption: Bool
    public var descriptors: [GATTDescriptorDefinition]

    public init(uuid: BluetoothUUID, properties: GATTCharacteristicProperties, value: [UInt8] = [],
                requiresEncryption: Bool = false, descriptors: [GATTDescriptorDefinition] = []) {
        self.uuid = uuid
        self.properties = properties
        self.value = value
        self.requiresEncryption = requiresEncryption
        self.descriptors = descriptors
    }
}

/// A service to serve.
public struct GATTServiceDefinition: Sendable, Hashable {
    public var uuid: BluetoothUUID
    public var isPrimary: Bool
    public var characteristics: [GATTCharacteristicDefinition]

    public init(uuid: BluetoothUUID, isPrimary: Bool = true, characteristics: [GATTCharacteristicDefinition]) {
        self.uuid = uuid
        self.isPrimary = isPrimary
        self.characteristics = characteristics
    }
}

/// A server's attribute table, handles assigned in order from 0x0001: for
/// each service its declaration, then per characteristic its declaration,
/// value, CCCD (if it notifies or indicates) and other descriptors
/// (Vol 3, Part G, 3).
public struct GATTDatabase: Sendable, Hashable {
    /// Attribute `h` is at index `h - 1`.
    public internal(set) var attributes: [GATTAttribute] = []
    /// Characteristic value handle → its CCCD handle.
    public private(set) var configurationHandles: [UInt16: UInt16] = [:]
    /// (service, characteristic) → value handle, first occurrence.
    private var valueHandles: [ServiceCharacteristic: UInt16] = [:]

    private struct ServiceCharacteristic: Hashable, Sendable {
        var service: BluetoothUUID
        var characteristic: BluetoothUUID
    }

    public init(services: [GATTServiceDefinition]) {
        for service in services {
            let declaration = append(service.isPrimary ? GATTAttributeType.primaryService : GATTAttributeType.secondaryService,
                                     service.uuid.littleEndianBytes, .read)
            for c in service.characteristics {
                var permissions: GATTAttributePermissions = []
                if c.properties.contains(.read) { permissions.insert(.read) }
                if !c.properties.isDisjoint(with: [.write, .writeWithoutResponse]) { permissions.insert(.write) }
                let valueHandle = nextHandle + 1
                append(GATTAttributeType.characteristic,
                       GATTCharacteristicDeclaration(properties: c.properties, valueHandle: valueHandle, uuid: c.uuid).encode(), .read)
                append(c.uuid, c.value, permissions, requiresEncryption: c.requiresEncryption)
                let key = ServiceCharacteristic(service: service.uuid, characteristic: c.uuid)
                if valueHandles[key] == nil { valueHandles[key] = valueHandle }
                if !c.properties.isDisjoint(with: [.notify, .indicate]) {
                    configurationHandles[valueHandle] = append(GATTAttributeType.clientCharacteristicConfiguration, [0, 0],
                                                               [.read, .write], requiresEncryption: c.requiresEncryption)
                }
                for d in c.descriptors { append(d.uuid, d.value, d.permissions) }
            }
            let end = UInt16(attributes.count)
            let i = Int(declaration) - 1
            attributes[i] = GATTAttribute(handle: declaration, type: attributes[i].type, value: attributes[i].value,
                                          permissions: .read, requiresEncryption: false, groupEndHandle: end)
        }
    }

    private var nextHandle: UInt16 { UInt16(attributes.count + 1) }

    @discardableResult
    private mutating func append(_ type: BluetoothUUID, _ value: [UInt8], _ permissions: GATTAttributePermissions,
                                 requiresEncryption: Bool = false) -> UInt16 {
        let handle = nextHandle
        attributes.append(GATTAttribute(handle: handle, type: type, value: value, permissions: permissions,
                                        requiresEncryption: requiresEncryption, groupEndHandle: nil))
        return handle
    }

    public func attribute(_ handle: UInt16) -> GATTAttribute? {
        guard handle >= 1, Int(handle) <= attributes.count else { return nil }
        return attributes[Int(handle) - 1]
    }

    /// The value handle of a characteristic in a service.
    public func valueHandle(service: BluetoothUUID, characteristic: BluetoothUUID) -> UInt16? {
        valueHandles[ServiceCharacteristic(service: service, characteristic: characteristic)]
    }

    /// Characteristic value handles that can notify or indicate.
    public var configurableValueHandles: [UInt16] { configurationHandles.keys.sorted() }
}

// MARK: - Profiles the gateway simulates

extension GATTServiceDefinition {
    public static let weightScaleService = BluetoothUUID(uuid16: 0x181D)
    public static let weightMeasurement = BluetoothUUID(uuid16: 0x2A9D)
    public static let weightScaleFeature = BluetoothUUID(uuid16: 0x2A9E)
    public static let kitchenScaleService = BluetoothUUID(uuid16: 0xFFF0)
    public static let kitchenScaleWeight = BluetoothUUID(uuid16: 0xFFF4)
    public static let kitchenScaleCommand = BluetoothUUID(uuid16: 0x36F5)
    public static let levelBottleService = BluetoothUUID("6e0a0000-51a5-4c5b-9f1d-7e57b0771e00")!
    public static let levelBottleLevel = BluetoothUUID("6e0a0001-51a5-4c5b-9f1d-7e57b0771e00")!

    /// Generic Access 0x1800 with the Device Name 0x2A00 (Vol 3, Part C, 12).
    public static func genericAccess(deviceName: String) -> Self {
        Self(uuid: BluetoothUUID(uuid16: 0x1800), characteristics: [
            GATTCharacteristicDefinition(uuid: BluetoothUUID(uuid16: 0x2A00), properties: .read, value: Array(deviceName.utf8)),
        ])
    }

    /// Bluetooth SIG Weight Scale Service 0x181D (WSS v1.0, 3): Weight Scale
    /// Feature 0x2A9E (read) and Weight Measurement 0x2A9D (indicate).
    /// Payloads are encoded by the caller (the profile layer).
    public static func weightScale(feature: [UInt8], measurement: [UInt8] = []) -> Self {
        Self(uuid: weightScaleService, characteristics: [
            GATTCharacteristicDefinition(uuid: weightScaleFeature, properties: .read, value: feature),
            GATTCharacteristicDefinition(uuid: weightMeasurement, properties: .indicate, value: measurement),
        ])
    }

    /// A Decent-style kitchen scale: service 0xFFF0, weight notifications on
    /// 0xFFF4, commands (tare, …) written without response to 0x36F5.
    public static func kitchenScale(weight: [UInt8] = []) -> Self {
        Self(uuid: kitchenScaleService, characteristics: [
            GATTCharacteristicDefinition(uuid: kitchenScaleWeight, properties: [.read, .notify], value: weight),
            GATTCharacteristicDefinition(uuid: kitchenScaleCommand, properties: [.write, .writeWithoutResponse]),
        ])
    }

    /// The DIY level bottle: service 6e0a0000-…, level notifications on 6e0a0001-….
    public static func levelBottle(level: [UInt8] = []) -> Self {
        Self(uuid: levelBottleService, characteristics: [
            GATTCharacteristicDefinition(uuid: levelBottleLevel, properties: [.read, .notify], value: level,
                                         descriptors: [.userDescription("Water level")]),
        ])
    }
}

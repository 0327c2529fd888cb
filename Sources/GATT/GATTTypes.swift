import BluetoothWire

/// Attribute types GATT itself defines (Core Spec v5.x Vol 3, Part G, 3 and
/// Assigned Numbers 3.5–3.7).
public enum GATTAttributeType {
    public static let primaryService = BluetoothUUID(uuid16: 0x2800)
    public static let secondaryService = BluetoothUUID(uuid16: 0x2801)
    public static let include = BluetoothUUID(uuid16: 0x2802)
    public static let characteristic = BluetoothUUID(uuid16: 0x2803)
    public static let characteristicExtendedProperties = BluetoothUUID(uuid16: 0x2900)
    public static let characteristicUserDescription = BluetoothUUID(uuid16: 0x2901)
    public static let clientCharacteristicConfiguration = BluetoothUUID(uuid16: 0x2902)
}

/// A service found by discovery (Vol 3, Part G, 3.1): its declaration
/// handle through the last handle of its group.
public struct GATTService: Sendable, Hashable {
    public var uuid: BluetoothUUID
    public var startHandle: UInt16
    public var endHandle: UInt16
    public var isPrimary: Bool
    public init(uuid: BluetoothUUID, startHandle: UInt16, endHandle: UInt16, isPrimary: Bool = true) {
        self.uuid = uuid
        self.startHandle = startHandle
        self.endHandle = endHandle
        self.isPrimary = isPrimary
    }
}

/// Characteristic Properties bit field (Vol 3, Part G, 3.3.1.1).
public struct GATTCharacteristicProperties: OptionSet, Sendable, Hashable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let broadcast = Self(rawValue: 0x01)
    public static let read = Self(rawValue: 0x02)
    public static let writeWithoutResponse = Self(rawValue: 0x04)
    public static let write = Self(rawValue: 0x08)
    public static let notify = Self(rawValue: 0x10)
    public static let indicate = Self(rawValue: 0x20)
    public static let authenticatedSignedWrites = Self(rawValue: 0x40)
    public static let extendedProperties = Self(rawValue: 0x80)
}

/// A characteristic found by discovery (Vol 3, Part G, 3.3): the
/// declaration's handle, properties, value handle and type, plus the last
/// handle of the characteristic (the next declaration's handle − 1, or the
/// service's end), which bounds descriptor discovery.
public struct GATTCharacteristic: Sendable, Hashable {
    public var uuid: BluetoothUUID
    public var declarationHandle: UInt16
    public var valueHandle: UInt16
    public var endHandle: UInt16
    public var properties: GATTCharacteristicProperties
    public init(uuid: BluetoothUUID, declarationHandle: UInt16, valueHandle: UInt16, endHandle: UInt16, properties: GATTCharacteristicProperties) {
        self.uuid = uuid
        self.declarationHandle = declarationHandle
        self.valueHandle = valueHandle
        self.endHandle = endHandle
        self.properties = properties
    }
}

/// A characteristic descriptor found by discovery (Vol 3, Part G, 3.3.3).
public struct GATTDescriptor: Sendable, Hashable {
    public var uuid: BluetoothUUID
    public var handle: UInt16
    public init(uuid: BluetoothUUID, handle: UInt16) {
        self.uuid = uuid
        self.handle = handle
    }
}

/// The Client Characteristic Configuration descriptor's value (Vol 3, Part G, 3.3.3.3).
public struct ClientCharacteristicConfiguration: OptionSet, Sendable, Hashable {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let notifications = Self(rawValue: 0x0001)
    public static let indications = Self(rawValue: 0x0002)

    /// Two bytes, little-endian.
    public var bytes: [UInt8] { [UInt8(truncatingIfNeeded: rawValue), UInt8(rawValue >> 8)] }
}

/// A value the server pushed: a Handle Value Notification or Indication.
public struct ValueUpdate: Sendable, Hashable {
    public var handle: UInt16
    public var value: [UInt8]
    /// True for an indication (already confirmed by the client).
    public var wasIndication: Bool
    public init(handle: UInt16, value: [UInt8], wasIndication: Bool) {
        self.handle = handle
        self.value = value
        self.wasIndication = wasIndication
    }
}

/// Why a GATT procedure failed, with its cause kept.
public enum GATTError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The server answered with an Error Response (opcode, handle and code kept).
    case attribute(ATTErrorResponse)
    /// The bearer failed or the link closed.
    case bearer(BearerError)
    /// The server sent a PDU that does not decode.
    case malformed(DecodeError)
    /// No response within the ATT transaction timeout (Vol 3, Part F, 3.3.3);
    /// the bearer must not be used again and every later call fails with this.
    case timeout(request: ATTOpcode, seconds: Double)
    /// A response that does not answer the outstanding request.
    case unexpectedResponse(request: ATTOpcode, received: ATTOpcode)
    /// The server asked for more security, and raising it failed.
    case securityUpgradeFailed(ATTErrorResponse, BearerError)
    /// The characteristic has no Client Characteristic Configuration descriptor.
    case noConfigurationDescriptor(characteristic: BluetoothUUID, valueHandle: UInt16)
    /// A value longer than one PDU can carry (ATT_MTU − 3); long writes are not supported.
    case valueTooLong(length: Int, maximum: Int)

    public var description: String {
        switch self {
        case .attribute(let e): "ATT error: \(e)"
        case .bearer(let e): "bearer: \(e)"
        case .malformed(let e): "malformed PDU: \(e)"
        case .timeout(let op, let s): "no response to \(op) within \(s) s (ATT transaction timeout)"
        case .unexpectedResponse(let req, let got): "\(got) does not answer \(req)"
        case .securityUpgradeFailed(let e, let b): "\(e); raising security failed: \(b)"
        case .noConfigurationDescriptor(let uuid, let h): "characteristic \(uuid) (value handle \(h)) has no Client Characteristic Configuration descriptor"
        case .valueTooLong(let n, let max): "value of \(n) bytes exceeds \(max) (ATT_MTU − 3)"
        }
    }
}

import BluetoothWire

/// The value of a characteristic declaration (Vol 3, Part G, 3.3.1):
/// properties, value handle, and the characteristic UUID (16 or 128 bits).
public struct GATTCharacteristicDeclaration: Sendable, Hashable {
    public var properties: GATTCharacteristicProperties
    public var valueHandle: UInt16
    public var uuid: BluetoothUUID

    public init(properties: GATTCharacteristicProperties, valueHandle: UInt16, uuid: BluetoothUUID) {
        self.properties = properties
        self.valueHandle = valueHandle
        self.uuid = uuid
    }

    public init(decoding value: [UInt8]) throws(DecodeError) {
        var r = ByteReader(value, context: "Characteristic Declaration")
        properties = GATTCharacteristicProperties(rawValue: try r.uint8("properties"))
        valueHandle = try r.uint16("value handle")
        let start = r.offset
        let raw = r.rest()
        guard raw.count == 2 || raw.count == 16, let uuid = BluetoothUUID(littleEndian: raw) else {
            throw r.error("characteristic UUID", .invalidValue("\(raw.count) bytes, expected 2 or 16"), at: start)
        }
        self.uuid = uuid
    }

    public func encode() -> [UInt8] {
        var w = ByteWriter(capacity: 19)
        w.uint8(properties.rawValue)
        w.uint16(valueHandle)
        w.append(uuid.littleEndianBytes)
        return w.bytes
    }
}

extension BluetoothUUID {
    /// A service declaration's value (Vol 3, Part G, 3.1): the service UUID,
    /// 2 or 16 bytes little-endian.
    init(serviceDeclaration value: [UInt8], handle: UInt16) throws(DecodeError) {
        guard value.count == 2 || value.count == 16, let uuid = BluetoothUUID(littleEndian: value) else {
            throw DecodeError(context: "Service Declaration at handle \(handle)", field: "service UUID", offset: 0,
                              reason: .invalidValue("\(value.count) bytes, expected 2 or 16"))
        }
        self = uuid
    }
}

import BluetoothWire
import GATT
import QuenchCore

/// A Decent-style kitchen scale frame, notified on characteristic 0xFFF4 of
/// service 0xFFF0 (Decent Scale API: 7 bytes `model(0x03) type data(4) xor`):
/// weight frames are `03 TT WW WW 00 00 XX` with TT 0xCE stable / 0xCA
/// changing, WWWW the weight in 0.1 g as int16 big-endian, and XX the XOR of
/// bytes 0-5.
public struct DecentScaleFrame: Sendable, Hashable {
    public static let serviceUUID = BluetoothUUID(uuid16: 0xFFF0)
    public static let notifyUUID = BluetoothUUID(uuid16: 0xFFF4)
    public static let writeUUID = BluetoothUUID(uuid16: 0x36F5)
    public static let model: UInt8 = 0x03
    public static let length = 7

    /// Byte 1 (open-ended: the scale also reports buttons, tare, timers).
    public struct MessageType: RawRepresentable, Sendable, Hashable {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let stableWeight = MessageType(rawValue: 0xCE)
        public static let changingWeight = MessageType(rawValue: 0xCA)
        public var isWeight: Bool { self == .stableWeight || self == .changingWeight }
    }

    public var type: MessageType
    /// Bytes 2-5.
    public var data: [UInt8]

    /// `data` is padded with zeros or cut to the frame's 4 data bytes.
    public init(type: MessageType, data: [UInt8]) {
        self.type = type
        self.data = Array((data + [0, 0, 0, 0]).prefix(4))
    }

    /// A weight frame for `weight` in `unit` (any weight unit; sent in 0.1 g).
    public init(weight: Double, unit: MeasurementUnit = .g, stable: Bool) throws(ProfileEncodingError) {
        guard let grams = unit.gramsPerUnit else {
            throw ProfileEncodingError(context: "Decent scale", field: "weight", reason: .unsupportedUnit(unit))
        }
        let raw = try quantize(weight * grams, resolution: 0.1, range: -32768...32767, context: "Decent scale", field: "weight")
        let bits = UInt16(bitPattern: Int16(raw))
        self.init(type: stable ? .stableWeight : .changingWeight, data: [UInt8(bits >> 8), UInt8(truncatingIfNeeded: bits), 0, 0])
    }

    /// XOR of `bytes` (the frame's bytes 0-5).
    public static func checksum(_ bytes: some Sequence<UInt8>) -> UInt8 { bytes.reduce(0, ^) }

    public init(decoding bytes: [UInt8]) throws(DecodeError) {
        var r = ByteReader(bytes, context: "Decent scale frame")
        let model = try r.uint8("model")
        guard model == Self.model else {
            throw r.error("model", .invalidValue("0x\([model].hexString), expected 0x03"), at: 0)
        }
        type = MessageType(rawValue: try r.uint8("message type"))
        data = try r.bytes(4, "data")
        let xor = try r.uint8("checksum")
        let expected = Self.checksum(bytes[0..<6])
        guard xor == expected else {
            throw r.error("checksum", .invalidValue("0x\([xor].hexString), XOR of bytes 0-5 is 0x\([expected].hexString)"), at: 6)
        }
        try r.expectEnd()
    }

    public func encoded() -> [UInt8] {
        var b = [Self.model, type.rawValue] + data
        b.append(Self.checksum(b))
        return b
    }

    /// Grams, for weight frames.
    public var weight: Double? {
        guard type.isWeight else { return nil }
        return Double(Int16(bitPattern: UInt16(data[0]) << 8 | UInt16(data[1]))) / 10
    }

    /// One reading for weight frames, none for other messages.
    public var readings: [ProfileReading] {
        guard let weight else { return [] }
        return [ProfileReading(value: weight, unit: .g, flags: type == .stableWeight ? .stable : [])]
    }
}

extension DecentScaleFrame {
    /// The Decent Scale API's display ("LED") command, `03 0A LL LL 00 HB XOR`
    /// written to 0x36F5 (decentespresso.com/decentscale_api, quick start step 4:
    /// LED ON `030A0101000108`, LED OFF `030A0000000009`). HB (byte 5) is 00 here:
    /// on the Half Decent Scale 01 there also asks for a heartbeat every 5 s, or it
    /// drops the link ("Programmer's guide to the Half Decent Scale"); Quench sends
    /// no heartbeat, so it never asks for one. The XOR still covers bytes 0-5.
    public static func display(on: Bool) -> [UInt8] {
        DecentScaleFrame(type: MessageType(rawValue: 0x0A), data: on ? [1, 1, 0, 0] : [0, 0, 0, 0]).encoded()
    }

    /// Two blinks of the display: off, on, off, on, 0.6 s apart. Written
    /// without response, as the API's own examples send commands (a dropped
    /// blink costs nothing; v1.0 firmware occasionally drops a command).
    public static let reminderBlink = ReminderSignal(
        service: serviceUUID, characteristic: writeUUID,
        writes: [display(on: false), display(on: true), display(on: false), display(on: true)],
        pause: 0.6, withResponse: false)
}

/// A Decent-style kitchen scale: service 0xFFF0, weight notified on 0xFFF4,
/// commands (tare, the display) written to 0x36F5.
public struct DecentScaleProfile: ProfileDefinition {
    public init() {}
    public var identifier: String { "decent-scale" }
    public var displayName: String { "Decent-style kitchen scale" }
    public var transport: ProfileTransport {
        .gatt(service: DecentScaleFrame.serviceUUID, characteristic: DecentScaleFrame.notifyUUID, delivery: .notify)
    }
    public var unit: MeasurementUnit { .g }

    public func matches(advertisement ad: AdvertisingData) -> Bool {
        ad.serviceUUIDs.contains(DecentScaleFrame.serviceUUID) || (ad.name?.hasPrefix("Decent Scale") ?? false)
    }

    public func decode(_ payload: [UInt8]) throws(DecodeError) -> [ProfileReading] {
        try DecentScaleFrame(decoding: payload).readings
    }

    public func encode(_ reading: ProfileReading) throws(ProfileEncodingError) -> [UInt8] {
        guard let v = reading.value else { throw ProfileEncodingError(context: "Decent scale", field: "weight", reason: .missingValue) }
        return try DecentScaleFrame(weight: v, unit: reading.unit, stable: reading.flags.contains(.stable)).encoded()
    }

    /// ±3276.7 g: what the int16 weight field (0.1 g) holds.
    public func encodable(_ value: Double, unit: MeasurementUnit) -> Double {
        min(max(value, -3276.7 / (unit.gramsPerUnit ?? 1)), 3276.7 / (unit.gramsPerUnit ?? 1))
    }

    public var reminderSignal: ReminderSignal? { DecentScaleFrame.reminderBlink }

    public var gattService: GATTServiceDefinition? { .kitchenScale() }
}

extension DeviceProfile {
    public static let decentScale = DeviceProfile(DecentScaleProfile())
}

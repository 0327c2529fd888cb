import BluetoothWire
import QuenchCore

/// Xiaomi Mi Smart Scale (XMTZC01HM/XMTZC04HM) broadcast: Service Data for
/// UUID 0x181D, 10 bytes, `control(1) weight(u16) year(u16) month day hour
/// minute second` (little-endian; layout as decoded by openScale's
/// BluetoothMiScale and theengs/decoder XMTZC04HM).
///
/// Weight is kg × 200, lb × 100 with the pounds bit, or jin × 100 with the
/// jin bit (1 jin = 0.5 kg, so jin readings are reported in kg as raw / 200).
public struct MiScalePayload: Sendable, Hashable {
    public static let serviceUUID = BluetoothUUID(uuid16: 0x181D)
    public static let length = 10

    public struct Control: OptionSet, Sendable, Hashable {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let pounds = Control(rawValue: 0x01)
        /// Set in every frame real units send (0x22 = kg, stabilized).
        public static let alwaysSet = Control(rawValue: 0x02)
        public static let jin = Control(rawValue: 0x10)
        public static let stabilized = Control(rawValue: 0x20)
        /// theengs/decoder reads this as "object" (not person) weighing mode.
        public static let objectMode = Control(rawValue: 0x40)
        public static let loadRemoved = Control(rawValue: 0x80)
    }

    public var control: Control
    public var rawWeight: UInt16
    public var time: DeviceDateTime

    public init(control: Control, rawWeight: UInt16, time: DeviceDateTime) {
        self.control = control
        self.rawWeight = rawWeight
        self.time = time
    }

    /// A frame like the real scale's: pounds for `.lb`, kg for every other weight unit.
    public init(weight: Double, unit: MeasurementUnit, stabilized: Bool, loadRemoved: Bool, time: DeviceDateTime)
        throws(ProfileEncodingError) {
        guard let grams = unit.gramsPerUnit else {
            throw ProfileEncodingError(context: "Mi Scale", field: "weight", reason: .unsupportedUnit(unit))
        }
        var control: Control = .alwaysSet
        if unit == .lb { control.insert(.pounds) }
        if stabilized { control.insert(.stabilized) }
        if loadRemoved { control.insert(.loadRemoved) }
        let raw = try unit == .lb
            ? quantize(weight, resolution: 0.01, range: 0...0xFFFF, context: "Mi Scale", field: "weight")
            : quantize(weight * grams / 1000, resolution: 0.005, range: 0...0xFFFF, context: "Mi Scale", field: "weight")
        self.init(control: control, rawWeight: UInt16(raw), time: time)
    }

    public init(decoding bytes: [UInt8]) throws(DecodeError) {
        var r = ByteReader(bytes, context: "Mi Scale service data")
        control = Control(rawValue: try r.uint8("control"))
        rawWeight = try r.uint16("weight")
        time = try DeviceDateTime(from: &r)
        try r.expectEnd()
    }

    public func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: Self.length)
        w.uint8(control.rawValue)
        w.uint16(rawWeight)
        time.encode(to: &w)
        return w.bytes
    }

    public var unit: MeasurementUnit { control.contains(.pounds) ? .lb : .kg }

    /// In `unit`.
    public var weight: Double { control.contains(.pounds) ? Double(rawWeight) / 100 : Double(rawWeight) / 200 }

    public var reading: ProfileReading {
        var flags: ReadingFlags = []
        if control.contains(.stabilized) { flags.insert(.stable) }
        if control.contains(.loadRemoved) { flags.insert(.removed) }
        return ProfileReading(value: weight, unit: unit, flags: flags, deviceTime: time)
    }
}

/// Xiaomi Mi Body Composition Scale (XMTZC02HM/XMTZC05HM) broadcast: Service
/// Data for UUID 0x181B, 13 bytes, `control(u16) year(u16) month day hour
/// minute second impedance(u16) weight(u16)` (little-endian; as decoded by
/// openScale's BluetoothMiScale2 and theengs/decoder XMTZC05HM).
public struct MiBodyScalePayload: Sendable, Hashable {
    public static let serviceUUID = BluetoothUUID(uuid16: 0x181B)
    public static let length = 13

    /// The two control bytes as one little-endian u16: byte 0 is bits 0-7, byte 1 bits 8-15.
    public struct Control: OptionSet, Sendable, Hashable {
        public var rawValue: UInt16
        public init(rawValue: UInt16) { self.rawValue = rawValue }
        /// Byte 0 bit 0.
        public static let pounds = Control(rawValue: 0x0001)
        /// Byte 0 bit 1, set in the frames real units send (0x02).
        public static let alwaysSet = Control(rawValue: 0x0002)
        /// Byte 0 bit 2: "object" weighing mode (theengs/decoder).
        public static let objectMode = Control(rawValue: 0x0004)
        /// Byte 1 bit 1: the impedance field holds a measurement.
        public static let impedancePresent = Control(rawValue: 0x0200)
        /// Byte 1 bit 2, set in captured frames (0x24, 0x26, 0xa4).
        public static let measuring = Control(rawValue: 0x0400)
        /// Byte 1 bit 5.
        public static let stabilized = Control(rawValue: 0x2000)
        /// Byte 1 bit 6: catty (jin) unit.
        public static let jin = Control(rawValue: 0x4000)
        /// Byte 1 bit 7.
        public static let loadRemoved = Control(rawValue: 0x8000)
    }

    public var control: Control
    public var time: DeviceDateTime
    /// Ohms, meaningful only with `.impedancePresent`.
    public var rawImpedance: UInt16
    public var rawWeight: UInt16

    public init(control: Control, time: DeviceDateTime, rawImpedance: UInt16, rawWeight: UInt16) {
        self.control = control
        self.time = time
        self.rawImpedance = rawImpedance
        self.rawWeight = rawWeight
    }

    /// A frame like the real scale's: pounds for `.lb`, kg for every other weight unit.
    public init(weight: Double, unit: MeasurementUnit, stabilized: Bool, loadRemoved: Bool, impedance: UInt16? = nil,
                time: DeviceDateTime) throws(ProfileEncodingError) {
        guard let grams = unit.gramsPerUnit else {
            throw ProfileEncodingError(context: "Mi Body Composition Scale", field: "weight", reason: .unsupportedUnit(unit))
        }
        var control: Control = [.alwaysSet, .measuring]
        if unit == .lb { control.insert(.pounds) }
        if stabilized { control.insert(.stabilized) }
        if loadRemoved { control.insert(.loadRemoved) }
        if impedance != nil { control.insert(.impedancePresent) }
        let raw = try unit == .lb
            ? quantize(weight, resolution: 0.01, range: 0...0xFFFF, context: "Mi Body Composition Scale", field: "weight")
            : quantize(weight * grams / 1000, resolution: 0.005, range: 0...0xFFFF, context: "Mi Body Composition Scale", field: "weight")
        self.init(control: control, time: time, rawImpedance: impedance ?? 0, rawWeight: UInt16(raw))
    }

    public init(decoding bytes: [UInt8]) throws(DecodeError) {
        var r = ByteReader(bytes, context: "Mi Body Composition Scale service data")
        control = Control(rawValue: try r.uint16("control"))
        time = try DeviceDateTime(from: &r)
        rawImpedance = try r.uint16("impedance")
        rawWeight = try r.uint16("weight")
        try r.expectEnd()
    }

    public func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: Self.length)
        w.uint16(control.rawValue)
        time.encode(to: &w)
        w.uint16(rawImpedance)
        w.uint16(rawWeight)
        return w.bytes
    }

    public var unit: MeasurementUnit { control.contains(.pounds) ? .lb : .kg }

    /// In `unit` (jin frames are reported in kg: raw / 100 jin = raw / 200 kg).
    public var weight: Double { control.contains(.pounds) ? Double(rawWeight) / 100 : Double(rawWeight) / 200 }

    public var impedance: Double? { control.contains(.impedancePresent) ? Double(rawImpedance) : nil }

    public var reading: ProfileReading {
        var flags: ReadingFlags = []
        if control.contains(.stabilized) { flags.insert(.stable) }
        if control.contains(.loadRemoved) { flags.insert(.removed) }
        return ProfileReading(value: weight, unit: unit, flags: flags, deviceTime: time, impedance: impedance)
    }
}

/// Xiaomi Mi Smart Scale: broadcasts `MiScalePayload` as Service Data 0x181D.
public struct MiScaleProfile: ProfileDefinition {
    public init() {}
    public var identifier: String { "mi-scale" }
    public var displayName: String { "Xiaomi Mi Scale" }
    public var transport: ProfileTransport { .serviceData(MiScalePayload.serviceUUID) }
    /// kg; lb (or jin, reported in kg) when the scale is set so, and each reading says so.
    public var unit: MeasurementUnit { .kg }

    public func matches(advertisement ad: AdvertisingData) -> Bool {
        ad.serviceData(for: MiScalePayload.serviceUUID)?.count == MiScalePayload.length
    }

    public func decode(_ payload: [UInt8]) throws(DecodeError) -> [ProfileReading] {
        [try MiScalePayload(decoding: payload).reading]
    }

    /// The reading's value, unit (lb selects pounds), stable/removed flags and device time (0 = unknown when absent).
    public func encode(_ reading: ProfileReading) throws(ProfileEncodingError) -> [UInt8] {
        guard let v = reading.value else { throw ProfileEncodingError(context: "Mi Scale", field: "weight", reason: .missingValue) }
        return try MiScalePayload(weight: v, unit: reading.unit, stabilized: reading.flags.contains(.stable),
                                  loadRemoved: reading.flags.contains(.removed), time: reading.deviceTime ?? .unknown).encoded()
    }
}

/// Xiaomi Mi Body Composition Scale: broadcasts `MiBodyScalePayload` as Service Data 0x181B.
public struct MiBodyScaleProfile: ProfileDefinition {
    public init() {}
    public var identifier: String { "mi-body-scale" }
    public var displayName: String { "Xiaomi Mi Body Composition Scale" }
    public var transport: ProfileTransport { .serviceData(MiBodyScalePayload.serviceUUID) }
    public var unit: MeasurementUnit { .kg }

    public func matches(advertisement ad: AdvertisingData) -> Bool {
        ad.serviceData(for: MiBodyScalePayload.serviceUUID)?.count == MiBodyScalePayload.length
    }

    public func decode(_ payload: [UInt8]) throws(DecodeError) -> [ProfileReading] {
        [try MiBodyScalePayload(decoding: payload).reading]
    }

    /// As the Mi Scale, plus the impedance.
    public func encode(_ reading: ProfileReading) throws(ProfileEncodingError) -> [UInt8] {
        guard let v = reading.value else {
            throw ProfileEncodingError(context: "Mi Body Composition Scale", field: "weight", reason: .missingValue)
        }
        let impedance = try reading.impedance.map { (z) throws(ProfileEncodingError) -> UInt16 in
            UInt16(try quantize(z, resolution: 1, range: 0...0xFFFF, context: "Mi Body Composition Scale", field: "impedance"))
        }
        return try MiBodyScalePayload(weight: v, unit: reading.unit, stabilized: reading.flags.contains(.stable),
                                      loadRemoved: reading.flags.contains(.removed), impedance: impedance,
                                      time: reading.deviceTime ?? .unknown).encoded()
    }
}

extension DeviceProfile {
    public static let miScale = DeviceProfile(MiScaleProfile())
    public static let miBodyScale = DeviceProfile(MiBodyScaleProfile())
}

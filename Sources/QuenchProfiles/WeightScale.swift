import BluetoothWire
import QuenchCore
import GATT

/// Weight Measurement, characteristic 0x2A9D of the Weight Scale Service 0x181D
/// (WSS v1.0, 3.1; GATT Specification Supplement 3.252):
/// `flags(1) weight(u16) [time stamp(7)] [user id(1)] [BMI(u16) height(u16)]`.
///
/// The weight field is always in units of 0.005 kg (SI) or 0.01 lb
/// (imperial), whatever the scale's actual resolution; Weight Scale Feature's
/// resolution only says how coarsely the scale measures (values are
/// multiples of that step), it never rescales this field.
public struct WeightMeasurement: Sendable, Hashable {
    public static let uuid = BluetoothUUID(uuid16: 0x2A9D)
    /// "Measurement Unsuccessful" (WSS 3.1.1.2).
    public static let unsuccessfulWeight: UInt16 = 0xFFFF
    public static let kilogramsPerUnit = 0.005
    public static let poundsPerUnit = 0.01

    /// The Flags field (GSS 3.252.1).
    public struct Flags: OptionSet, Sendable, Hashable {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// 0 = SI (kg, m), 1 = imperial (lb, inch).
        public static let imperial = Flags(rawValue: 0x01)
        public static let timeStampPresent = Flags(rawValue: 0x02)
        public static let userIDPresent = Flags(rawValue: 0x04)
        public static let bmiAndHeightPresent = Flags(rawValue: 0x08)
        /// Bits 4-7 are reserved for future use.
        public static let reserved = Flags(rawValue: 0xF0)
    }

    /// BMI in 0.1 kg/m², height in 0.001 m (SI) or 0.1 inch (imperial).
    public struct BMIAndHeight: Sendable, Hashable {
        public var rawBMI: UInt16
        public var rawHeight: UInt16
        public init(rawBMI: UInt16, rawHeight: UInt16) {
            self.rawBMI = rawBMI
            self.rawHeight = rawHeight
        }
    }

    public var imperial: Bool
    /// In 0.005 kg or 0.01 lb; 0xFFFF = measurement unsuccessful.
    public var rawWeight: UInt16
    public var timeStamp: DeviceDateTime?
    /// 0xFF = unknown user.
    public var userID: UInt8?
    public var bmiAndHeight: BMIAndHeight?
    /// Reserved flag bits as received, kept so encoding reproduces the input.
    public var reservedFlags: UInt8

    public init(imperial: Bool, rawWeight: UInt16, timeStamp: DeviceDateTime? = nil, userID: UInt8? = nil,
                bmiAndHeight: BMIAndHeight? = nil, reservedFlags: UInt8 = 0) {
        self.imperial = imperial
        self.rawWeight = rawWeight
        self.timeStamp = timeStamp
        self.userID = userID
        self.bmiAndHeight = bmiAndHeight
        self.reservedFlags = reservedFlags & Flags.reserved.rawValue
    }

    /// A measurement of `weight` in `unit`: pounds go out imperial, every other
    /// weight unit as SI kilograms.
    public init(weight: Double, unit: MeasurementUnit, timeStamp: DeviceDateTime? = nil, userID: UInt8? = nil,
                bmiAndHeight: BMIAndHeight? = nil) throws(ProfileEncodingError) {
        guard let grams = unit.gramsPerUnit else {
            throw ProfileEncodingError(context: "Weight Measurement", field: "weight", reason: .unsupportedUnit(unit))
        }
        let imperial = unit == .lb
        let resolution = imperial ? Self.poundsPerUnit : Self.kilogramsPerUnit
        let value = imperial ? weight : weight * grams / 1000
        let raw = try quantize(value, resolution: resolution, range: 0...0xFFFE, context: "Weight Measurement", field: "weight")
        self.init(imperial: imperial, rawWeight: UInt16(raw), timeStamp: timeStamp, userID: userID, bmiAndHeight: bmiAndHeight)
    }

    public var flags: Flags {
        var f = Flags(rawValue: reservedFlags)
        if imperial { f.insert(.imperial) }
        if timeStamp != nil { f.insert(.timeStampPresent) }
        if userID != nil { f.insert(.userIDPresent) }
        if bmiAndHeight != nil { f.insert(.bmiAndHeightPresent) }
        return f
    }

    public var unit: MeasurementUnit { imperial ? .lb : .kg }

    /// In kg or lb (`unit`); nil when the measurement was unsuccessful.
    public var weight: Double? {
        // Divide rather than multiply by 0.005 / 0.01 so 6971 gives exactly 69.71.
        rawWeight == Self.unsuccessfulWeight ? nil : Double(rawWeight) / (imperial ? 100 : 200)
    }

    /// kg/m².
    public var bmi: Double? { bmiAndHeight.map { Double($0.rawBMI) / 10 } }
    /// Metres (SI) or inches (imperial).
    public var height: Double? { bmiAndHeight.map { Double($0.rawHeight) / (imperial ? 10 : 1000) } }

    public init(decoding bytes: [UInt8]) throws(DecodeError) {
        var r = ByteReader(bytes, context: "Weight Measurement")
        let flags = Flags(rawValue: try r.uint8("flags"))
        imperial = flags.contains(.imperial)
        reservedFlags = flags.intersection(.reserved).rawValue
        rawWeight = try r.uint16("weight")
        timeStamp = flags.contains(.timeStampPresent) ? try DeviceDateTime(from: &r) : nil
        userID = flags.contains(.userIDPresent) ? try r.uint8("user id") : nil
        if flags.contains(.bmiAndHeightPresent) {
            let bmi = try r.uint16("BMI")
            bmiAndHeight = BMIAndHeight(rawBMI: bmi, rawHeight: try r.uint16("height"))
        } else {
            bmiAndHeight = nil
        }
        // Fields a future revision adds come with a reserved flag bit set;
        // without one, extra bytes mean the payload is not a Weight Measurement.
        if reservedFlags == 0 { try r.expectEnd() }
    }

    public func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: 15)
        w.uint8(flags.rawValue)
        w.uint16(rawWeight)
        timeStamp?.encode(to: &w)
        if let userID { w.uint8(userID) }
        if let b = bmiAndHeight { w.uint16(b.rawBMI); w.uint16(b.rawHeight) }
        return w.bytes
    }

    public var reading: ProfileReading {
        ProfileReading(value: weight, unit: unit, flags: weight == nil ? .unsuccessful : [],
                       deviceTime: timeStamp, userID: userID)
    }
}

/// Weight Scale Feature, characteristic 0x2A9E (WSS v1.0, 3.2; GATT
/// Specification Supplement 3.251): a u32 bit field.
public struct WeightScaleFeature: Sendable, Hashable {
    public static let uuid = BluetoothUUID(uuid16: 0x2A9E)

    /// Weight Measurement Resolution, bits 3-6 (open-ended: 8-15 are reserved).
    public struct WeightResolution: RawRepresentable, Sendable, Hashable {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue & 0x0F }
        public static let notSpecified = WeightResolution(rawValue: 0)
        /// 0.005 kg / 0.01 lb, the Weight Measurement field's own unit.
        public static let finest = WeightResolution(rawValue: 7)

        private static let steps: [(kg: Double, lb: Double)] = [
            (0.5, 1), (0.2, 0.5), (0.1, 0.2), (0.05, 0.1), (0.02, 0.05), (0.01, 0.02), (0.005, 0.01),
        ]
        /// The measuring step in kg; nil when not specified or reserved.
        public var kilograms: Double? { (1...7).contains(rawValue) ? Self.steps[Int(rawValue) - 1].kg : nil }
        /// The measuring step in lb; nil when not specified or reserved.
        public var pounds: Double? { (1...7).contains(rawValue) ? Self.steps[Int(rawValue) - 1].lb : nil }
    }

    /// Height Measurement Resolution, bits 7-9 (4-7 reserved).
    public struct HeightResolution: RawRepresentable, Sendable, Hashable {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue & 0x07 }
        public static let notSpecified = HeightResolution(rawValue: 0)
        private static let steps: [(m: Double, inch: Double)] = [(0.01, 1), (0.005, 0.5), (0.001, 0.1)]
        public var metres: Double? { (1...3).contains(rawValue) ? Self.steps[Int(rawValue) - 1].m : nil }
        public var inches: Double? { (1...3).contains(rawValue) ? Self.steps[Int(rawValue) - 1].inch : nil }
    }

    public var rawValue: UInt32

    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public init(timeStampSupported: Bool = false, multipleUsersSupported: Bool = false, bmiSupported: Bool = false,
                weightResolution: WeightResolution = .notSpecified, heightResolution: HeightResolution = .notSpecified) {
        var v: UInt32 = 0
        if timeStampSupported { v |= 1 }
        if multipleUsersSupported { v |= 1 << 1 }
        if bmiSupported { v |= 1 << 2 }
        v |= UInt32(weightResolution.rawValue) << 3
        v |= UInt32(heightResolution.rawValue) << 7
        rawValue = v
    }

    public var timeStampSupported: Bool { rawValue & 1 != 0 }
    public var multipleUsersSupported: Bool { rawValue & 2 != 0 }
    public var bmiSupported: Bool { rawValue & 4 != 0 }
    public var weightResolution: WeightResolution { WeightResolution(rawValue: UInt8(truncatingIfNeeded: rawValue >> 3)) }
    public var heightResolution: HeightResolution { HeightResolution(rawValue: UInt8(truncatingIfNeeded: rawValue >> 7)) }

    /// The scale's measuring step in `unit` (kg or lb), from the resolution bits.
    public func weightStep(imperial: Bool) -> Double? {
        imperial ? weightResolution.pounds : weightResolution.kilograms
    }

    public init(decoding bytes: [UInt8]) throws(DecodeError) {
        var r = ByteReader(bytes, context: "Weight Scale Feature")
        rawValue = try r.uint32("feature bits")
        try r.expectEnd()
    }

    public func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: 4)
        w.uint32(rawValue)
        return w.bytes
    }
}

/// Bluetooth SIG Weight Scale Service 0x181D (WSS v1.0): Weight Measurement
/// 0x2A9D, indicated; Weight Scale Feature 0x2A9E in the same service.
public struct WeightScaleProfile: ProfileDefinition {
    public init() {}
    public var identifier: String { "weight-scale" }
    public var displayName: String { "Bluetooth Weight Scale" }
    public var transport: ProfileTransport {
        .gatt(service: BluetoothUUID(uuid16: 0x181D), characteristic: WeightMeasurement.uuid, delivery: .indicate)
    }
    /// kg; the scale switches to lb when set to imperial, and each reading says so.
    public var unit: MeasurementUnit { .kg }

    public func matches(advertisement ad: AdvertisingData) -> Bool {
        // The Mi Scale also uses 0x181D, but for service data, not in its UUID list.
        ad.serviceUUIDs.contains(BluetoothUUID(uuid16: 0x181D)) && ad.serviceData(for: MiScalePayload.serviceUUID) == nil
    }

    public func decode(_ payload: [UInt8]) throws(DecodeError) -> [ProfileReading] {
        [try WeightMeasurement(decoding: payload).reading]
    }

    /// The reading's value and unit (lb selects imperial), device time and user id;
    /// no value is "Measurement Unsuccessful".
    public func encode(_ reading: ProfileReading) throws(ProfileEncodingError) -> [UInt8] {
        guard let v = reading.value else {
            guard reading.unit.gramsPerUnit != nil else {
                throw ProfileEncodingError(context: "Weight Measurement", field: "weight", reason: .unsupportedUnit(reading.unit))
            }
            return WeightMeasurement(imperial: reading.unit == .lb, rawWeight: WeightMeasurement.unsuccessfulWeight,
                                     timeStamp: reading.deviceTime, userID: reading.userID).encoded()
        }
        return try WeightMeasurement(weight: v, unit: reading.unit, timeStamp: reading.deviceTime, userID: reading.userID).encoded()
    }

    /// 0 to 327.67 kg: what the u16 weight field holds.
    public func encodable(_ value: Double, unit: MeasurementUnit) -> Double {
        min(max(value, 0), 327.67 * 1000 / (unit.gramsPerUnit ?? 1000))
    }

    /// With Weight Scale Feature 0x38: weight resolution 7 (bits 3-6), the finest, and nothing optional.
    public var gattService: GATTServiceDefinition? { .weightScale(feature: WeightScaleFeature(rawValue: 0x38).encoded()) }
}

extension DeviceProfile {
    public static let weightScale = DeviceProfile(WeightScaleProfile())
}

import BluetoothWire
import QuenchCore

/// What a device said about a reading besides its value.
public struct ReadingFlags: OptionSet, Sendable, Hashable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// The device says the value has settled (Mi "stabilized", Decent 0xCE).
    public static let stable = ReadingFlags(rawValue: 0x01)
    /// The load was taken off the scale (Mi "load removed"); the value repeats the last weight.
    public static let removed = ReadingFlags(rawValue: 0x02)
    /// The device says the measurement failed (Weight Measurement 0xFFFF); `value` is nil.
    public static let unsuccessful = ReadingFlags(rawValue: 0x04)
}

/// One reading decoded from a device payload: a value in `unit` plus what
/// else the payload carried.
public struct ProfileReading: Sendable, Hashable {
    /// In `unit`; nil when the device reported a failed measurement.
    public var value: Double?
    public var unit: MeasurementUnit
    public var flags: ReadingFlags
    /// The device's own clock, when the payload carries one.
    public var deviceTime: DeviceDateTime?
    /// Weight Measurement user index (0xFF = unknown user).
    public var userID: UInt8?
    /// Bioelectrical impedance in ohms (Mi Body Composition Scale).
    public var impedance: Double?

    public init(value: Double?, unit: MeasurementUnit, flags: ReadingFlags = [], deviceTime: DeviceDateTime? = nil,
                userID: UInt8? = nil, impedance: Double? = nil) {
        self.value = value
        self.unit = unit
        self.flags = flags
        self.deviceTime = deviceTime
        self.userID = userID
        self.impedance = impedance
    }

    public var sensor: SensorKind { unit.sensor }

    /// The value in `target`, for weight units; nil for level units or no value.
    public func value(in target: MeasurementUnit) -> Double? {
        guard let v = value else { return nil }
        if target == unit { return v }
        guard let from = unit.gramsPerUnit, let to = target.gramsPerUnit else { return nil }
        return v * from / to
    }
}

/// Date Time (GATT Specification Supplement 3.70): year 1582-9999 (0 = not
/// known), month 1-12 and day 1-31 (0 = not known), hours, minutes, seconds.
/// Kept as sent: devices' clocks are often unset or wrong.
public struct DeviceDateTime: Sendable, Hashable, CustomStringConvertible {
    public var year: UInt16
    public var month: UInt8
    public var day: UInt8
    public var hours: UInt8
    public var minutes: UInt8
    public var seconds: UInt8

    public init(year: UInt16, month: UInt8, day: UInt8, hours: UInt8, minutes: UInt8, seconds: UInt8) {
        self.year = year
        self.month = month
        self.day = day
        self.hours = hours
        self.minutes = minutes
        self.seconds = seconds
    }

    /// The UTC calendar fields of a Unix time (whole seconds, truncated);
    /// times beyond what the fields hold (or not a number) are clamped into range.
    public init(unixTime: Double) {
        // Years 0-65535 fit the u16 field; 2e12 s is about year 65000.
        let clamped = unixTime.isNaN ? 0 : min(max(unixTime, -6e10), 2e12)
        let secs = Int(clamped.rounded(.down))
        let days = secs >= 0 ? secs / 86400 : (secs - 86399) / 86400
        let rem = secs - days * 86400
        let (y, m, d) = Timestamp.civilFromDays(days)
        self.init(year: UInt16(clamping: y), month: UInt8(m), day: UInt8(d),
                  hours: UInt8(rem / 3600), minutes: UInt8(rem % 3600 / 60), seconds: UInt8(rem % 60))
    }

    /// Seconds since the Unix epoch, reading the fields as UTC; nil when a field is unknown or out of range.
    public var unixTime: Double? {
        guard year >= 1582, (1...12).contains(month), (1...31).contains(day), hours < 24, minutes < 60, seconds < 60
        else { return nil }
        let days = Timestamp.daysFromCivil(year: Int(year), month: Int(month), day: Int(day))
        return Double(days * 86400 + Int(hours) * 3600 + Int(minutes) * 60 + Int(seconds))
    }

    /// 7 bytes: year (u16 LE), month, day, hours, minutes, seconds.
    public init(from r: inout ByteReader) throws(DecodeError) {
        year = try r.uint16("year")
        month = try r.uint8("month")
        day = try r.uint8("day")
        hours = try r.uint8("hours")
        minutes = try r.uint8("minutes")
        seconds = try r.uint8("seconds")
    }

    public func encode(to w: inout ByteWriter) {
        w.uint16(year); w.uint8(month); w.uint8(day); w.uint8(hours); w.uint8(minutes); w.uint8(seconds)
    }

    public var description: String {
        func two(_ v: UInt8) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(year)-\(two(month))-\(two(day)) \(two(hours)):\(two(minutes)):\(two(seconds))"
    }
}

/// Why a reading cannot be put into a device's wire format.
public struct ProfileEncodingError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Reason: Sendable, Hashable {
        /// The value, in the wire field's units, does not fit the field.
        case outOfRange(value: Double, range: ClosedRange<Double>)
        /// The profile cannot carry this unit (e.g. a level in mm to a scale).
        case unsupportedUnit(MeasurementUnit)
        /// The reading has no value and the format cannot say so.
        case missingValue
    }

    public var context: String
    public var field: String
    public var reason: Reason

    public init(context: String, field: String, reason: Reason) {
        self.context = context
        self.field = field
        self.reason = reason
    }

    public var description: String {
        let what: String
        switch reason {
        case .outOfRange(let v, let range): what = "\(v) is outside \(range.lowerBound)...\(range.upperBound)"
        case .unsupportedUnit(let u): what = "cannot carry unit \(u.rawValue)"
        case .missingValue: what = "a missing value cannot be encoded"
        }
        return "\(context): \(field): \(what)"
    }
}

/// Rounds `value / resolution` to the nearest integer that fits `range`, or says why not.
func quantize(_ value: Double, resolution: Double, range: ClosedRange<Double>, context: String, field: String)
    throws(ProfileEncodingError) -> Int64 {
    let raw = (value / resolution).rounded()
    guard raw.isFinite, range.contains(raw) else {
        throw ProfileEncodingError(context: context, field: field, reason: .outOfRange(value: raw, range: range))
    }
    return Int64(raw)
}

import BluetoothWire
import GATT
import QuenchCore

/// Where a profile's payloads come from.
public enum ProfileTransport: Sendable, Hashable {
    /// A characteristic of a connected peripheral.
    case gatt(service: BluetoothUUID, characteristic: BluetoothUUID, delivery: GATTDelivery)
    /// Service Data in advertisements (broadcast, no connection).
    case serviceData(BluetoothUUID)
    /// Manufacturer Specific Data in advertisements, by company identifier.
    case manufacturerData(companyID: UInt16)

    public var isBroadcast: Bool {
        if case .gatt = self { return false }
        return true
    }
}

/// A hashable identity of a broadcast payload: broadcast scales repeat the
/// same frame many times, so equal identities are the same reading.
public struct PayloadIdentity: Sendable, Hashable {
    public var bytes: [UInt8]
    public init(_ bytes: [UInt8]) { self.bytes = bytes }
}

/// Which of one device's broadcast frames are readings. A scale sends each frame several
/// times in a burst (and a scan response beside it): an equal frame within `burstSeconds`
/// of the last one taken is that reading again. Later, it is the scale saying the same
/// weight again, and a reading: a frame with no clock or counter in it (a custom profile's
/// scale) is the same for as long as the weight stands, and taken once it left the
/// detector one reading per change, no level that held, and no sip at all.
public struct BroadcastRepeats: Sendable {
    /// Shorter than any scale's update (a Mi scale's is a second), longer than a burst.
    public static let burstSeconds = 0.9
    private var last: PayloadIdentity?
    private var lastTaken = -Double.infinity

    public init() {}

    /// Whether the frame with `identity` (nil: every frame is new) heard at `t` seconds is a reading.
    public mutating func isReading(_ identity: PayloadIdentity?, at t: Double) -> Bool {
        guard let identity else { return true }
        if identity == last, t - lastTaken < Self.burstSeconds, t >= lastTaken { return false }
        last = identity
        lastTaken = t
        return true
    }
}

/// One kind of scale or bottle: how to recognise it in a scan, where its
/// payloads come from, how to decode them (and, for the simulated
/// counterpart, encode them), what its session needs, how it shows a
/// reminder and how a newly paired one is calibrated. One type per profile,
/// in a file of its own (Bumble's `profiles/`), listed in
/// `ProfileRegistry.builtIn`; the gateway, the tools and the simulated devices
/// ask the profile and never ask which profile it is.
public protocol ProfileDefinition: Sendable, Hashable {
    /// The built-in name (`weight-scale`, …; `custom` for every profile file).
    var identifier: String { get }
    /// The name a device's profile is saved under and traces carry: `identifier`,
    /// or a profile file's own `name`.
    var name: String { get }
    /// A readable name for listings.
    var displayName: String { get }
    var transport: ProfileTransport { get }
    /// The unit readings come in by default (each reading says its own).
    var unit: MeasurementUnit { get }
    /// Whether an advertisement looks like this profile's device.
    func matches(advertisement ad: AdvertisingData) -> Bool
    /// Decodes one payload: a characteristic value (GATT profiles) or the
    /// service/manufacturer data bytes after the UUID or company id (broadcast).
    func decode(_ payload: [UInt8]) throws(DecodeError) -> [ProfileReading]
    /// The payload this profile's device sends for `reading` (the simulated
    /// counterpart speaks the real wire format through this).
    func encode(_ reading: ProfileReading) throws(ProfileEncodingError) -> [UInt8]
    /// `value` (in `unit`) clamped into what the payload's field can hold, as
    /// the device's firmware does; unchanged by default.
    func encodable(_ value: Double, unit: MeasurementUnit) -> Double
    /// How the device shows a reminder; nil (the default) when it cannot or how is not known.
    var reminderSignal: ReminderSignal? { get }
    /// For a device that detects sips itself and keeps them until drained, its
    /// session (the gateway hands it the link); nil (the default) for devices
    /// whose readings go to the detector.
    var sipReporter: (any SipReporter)? { get }
    /// The attribute table of the device's service (the simulated peripheral
    /// serves it); by default the transport's one characteristic.
    var gattService: GATTServiceDefinition? { get }
    /// The calibration a newly paired device starts with; by default weight in
    /// grams (any scale's unit converts), level in the profile's unit with `levelCurve`.
    func defaultCalibration(levelCurve: LevelCurve?, capacityML: Double?, tareG: Double?,
                            density: Double) throws(CalibrationError) -> BottleCalibration
}

extension ProfileDefinition {
    public var name: String { identifier }
    public var sensor: SensorKind { unit.sensor }
    public func encodable(_ value: Double, unit: MeasurementUnit) -> Double { value }
    public var reminderSignal: ReminderSignal? { nil }
    public var sipReporter: (any SipReporter)? { nil }

    public var gattService: GATTServiceDefinition? {
        guard case .gatt(let service, let characteristic, let delivery) = transport else { return nil }
        let properties: GATTCharacteristicProperties = switch delivery {
        case .notify: [.read, .notify]
        case .indicate: [.read, .indicate]
        case .readPoll: [.read]
        }
        return GATTServiceDefinition(uuid: service, characteristics: [GATTCharacteristicDefinition(uuid: characteristic, properties: properties)])
    }

    public func defaultCalibration(levelCurve: LevelCurve?, capacityML: Double?, tareG: Double?,
                                   density: Double) throws(CalibrationError) -> BottleCalibration {
        if sensor == .weight {
            return try BottleCalibration(unit: .g, density: density, capacityML: capacityML, emptyWeightG: tareG)
        }
        return try BottleCalibration(unit: unit, density: density, levelCurve: levelCurve, capacityML: capacityML)
    }
}

/// A device profile as a value: any `ProfileDefinition`, compared by what it
/// is (two profile files with the same content are the same profile). The
/// built-in ones are `DeviceProfile.weightScale`, `.miScale`, … (each
/// declared in its profile's file); profile files are `.custom(_:)`.
public struct DeviceProfile: Sendable, Hashable {
    public let definition: any ProfileDefinition

    public init(_ definition: some ProfileDefinition) { self.definition = definition }

    public static func == (a: Self, b: Self) -> Bool { AnyHashable(a.definition) == AnyHashable(b.definition) }
    public func hash(into hasher: inout Hasher) { AnyHashable(definition).hash(into: &hasher) }

    /// A user-defined profile file.
    public static func custom(_ profile: CustomProfile) -> DeviceProfile { DeviceProfile(profile) }

    /// The built-in profiles, in the order scans should try them (`ProfileRegistry.builtIn`).
    public static var builtIn: [DeviceProfile] { ProfileRegistry.builtIn }

    /// A built-in profile by its identifier (custom profiles come from `CustomProfile(json:)`).
    public init?(identifier: String) {
        guard let p = Self.builtIn.first(where: { $0.identifier == identifier }) else { return nil }
        self = p
    }

    public var identifier: String { definition.identifier }
    public var name: String { definition.name }
    public var displayName: String { definition.displayName }
    public var transport: ProfileTransport { definition.transport }
    public var unit: MeasurementUnit { definition.unit }
    public var sensor: SensorKind { definition.unit.sensor }
    public var reminderSignal: ReminderSignal? { definition.reminderSignal }
    public var sipReporter: (any SipReporter)? { definition.sipReporter }
    public var gattService: GATTServiceDefinition? { definition.gattService }

    /// Whether the device detects sips itself and reports them rather than
    /// streaming readings for the detector.
    public var reportsSips: Bool { sipReporter != nil }

    public func matches(advertisement ad: AdvertisingData) -> Bool { definition.matches(advertisement: ad) }

    /// The profiles among `candidates` that fit an advertisement.
    public static func matching(_ ad: AdvertisingData, among candidates: [DeviceProfile] = builtIn) -> [DeviceProfile] {
        candidates.filter { $0.matches(advertisement: ad) }
    }

    public func decode(_ payload: [UInt8]) throws(DecodeError) -> [ProfileReading] { try definition.decode(payload) }

    public func encode(_ reading: ProfileReading) throws(ProfileEncodingError) -> [UInt8] { try definition.encode(reading) }

    public func encodable(_ value: Double, unit: MeasurementUnit) -> Double { definition.encodable(value, unit: unit) }

    public func defaultCalibration(levelCurve: LevelCurve?, capacityML: Double?, tareG: Double?,
                                   density: Double = 1) throws(CalibrationError) -> BottleCalibration {
        try definition.defaultCalibration(levelCurve: levelCurve, capacityML: capacityML, tareG: tareG, density: density)
    }

    /// A broadcast profile's payload in an advertisement, nil when absent (or for GATT profiles).
    public func payload(in ad: AdvertisingData) -> [UInt8]? {
        switch transport {
        case .gatt: nil
        case .serviceData(let uuid): ad.serviceData(for: uuid)
        case .manufacturerData(let id): ad.manufacturerData(companyID: id)
        }
    }

    /// Decodes a broadcast profile's reading from an advertisement; nil when it carries none.
    public func decode(advertisement ad: AdvertisingData) throws(DecodeError) -> [ProfileReading]? {
        guard let p = payload(in: ad) else { return nil }
        return try decode(p)
    }

    /// For broadcast profiles, the identity to deduplicate repeated frames by
    /// (the whole frame: Mi scales stamp each reading with its time); nil for
    /// GATT profiles, where every notification is a new reading.
    public func payloadIdentity(_ payload: [UInt8]) -> PayloadIdentity? {
        transport.isBroadcast ? PayloadIdentity(payload) : nil
    }
}

extension DeviceDateTime {
    /// "Unknown" in the formats that carry a time (Mi scales): all zeros.
    static let unknown = DeviceDateTime(year: 0, month: 0, day: 0, hours: 0, minutes: 0, seconds: 0)
}

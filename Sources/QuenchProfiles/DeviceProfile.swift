import BluetoothWire
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

/// A device profile: how a kind of scale or bottle sends readings, how to
/// recognise it in a scan, and how to decode (and, for the simulated
/// counterpart, encode) its payloads.
public enum DeviceProfile: Sendable, Hashable {
    /// Bluetooth SIG Weight Scale Service 0x181D, Weight Measurement 0x2A9D (indicate).
    case weightScale
    /// Xiaomi Mi Smart Scale: Service Data 0x181D, 10 bytes.
    case miScale
    /// Xiaomi Mi Body Composition Scale: Service Data 0x181B, 13 bytes.
    case miBodyScale
    /// Decent-style kitchen scale: service 0xFFF0, notify 0xFFF4.
    case decentScale
    /// HidrateSpark smart bottle: it detects sips itself and keeps them until
    /// drained (`HidrateSpark`); it reports sips, not readings.
    case hidrateSpark
    /// A user-defined profile file.
    case custom(CustomProfile)

    /// The built-in profiles, in the order scans should try them.
    public static let builtIn: [DeviceProfile] = [.miScale, .miBodyScale, .weightScale, .decentScale, .hidrateSpark]

    /// `weight-scale`, `mi-scale`, `mi-body-scale`, `decent-scale` or `custom`.
    public var identifier: String {
        switch self {
        case .weightScale: "weight-scale"
        case .miScale: "mi-scale"
        case .miBodyScale: "mi-body-scale"
        case .decentScale: "decent-scale"
        case .hidrateSpark: "hidrate-spark"
        case .custom: "custom"
        }
    }

    /// A built-in profile by its identifier (custom profiles come from `CustomProfile(json:)`).
    public init?(identifier: String) {
        guard let p = Self.builtIn.first(where: { $0.identifier == identifier }) else { return nil }
        self = p
    }

    /// A readable name for listings.
    public var displayName: String {
        switch self {
        case .weightScale: "Bluetooth Weight Scale"
        case .miScale: "Xiaomi Mi Scale"
        case .miBodyScale: "Xiaomi Mi Body Composition Scale"
        case .decentScale: "Decent-style kitchen scale"
        case .hidrateSpark: "HidrateSpark smart bottle"
        case .custom(let c): c.name
        }
    }

    public var transport: ProfileTransport {
        switch self {
        case .weightScale:
            .gatt(service: BluetoothUUID(uuid16: 0x181D), characteristic: WeightMeasurement.uuid, delivery: .indicate)
        case .miScale: .serviceData(MiScalePayload.serviceUUID)
        case .miBodyScale: .serviceData(MiBodyScalePayload.serviceUUID)
        case .decentScale: .gatt(service: DecentScaleFrame.serviceUUID, characteristic: DecentScaleFrame.notifyUUID, delivery: .notify)
        // The legacy sip characteristic; which one a bottle has is found when it connects.
        case .hidrateSpark: .gatt(service: HidrateSpark.referenceService, characteristic: HidrateSpark.dataPointCharacteristic, delivery: .notify)
        case .custom(let c):
            switch c.source {
            case .characteristic(let s, let ch, let d): .gatt(service: s, characteristic: ch, delivery: d)
            case .serviceData(let u): .serviceData(u)
            case .manufacturerData(let id): .manufacturerData(companyID: id)
            }
        }
    }

    public var sensor: SensorKind { unit.sensor }

    /// The unit readings come in by default (Weight Scale and Mi scales switch
    /// to lb when the device is set to imperial; each reading says its unit).
    public var unit: MeasurementUnit {
        switch self {
        case .weightScale, .miScale, .miBodyScale: .kg
        case .decentScale: .g
        // Modern firmware reports sips in percent of the bottle; the calibration's curve maps that to mL.
        case .hidrateSpark: .percent
        case .custom(let c): c.unit
        }
    }

    /// Whether an advertisement looks like this profile's device.
    public func matches(advertisement ad: AdvertisingData) -> Bool {
        switch self {
        case .weightScale:
            // The Mi Scale also uses 0x181D, but for service data, not in its UUID list.
            ad.serviceUUIDs.contains(BluetoothUUID(uuid16: 0x181D)) && ad.serviceData(for: MiScalePayload.serviceUUID) == nil
        case .miScale:
            ad.serviceData(for: MiScalePayload.serviceUUID)?.count == MiScalePayload.length
        case .miBodyScale:
            ad.serviceData(for: MiBodyScalePayload.serviceUUID)?.count == MiBodyScalePayload.length
        case .decentScale:
            ad.serviceUUIDs.contains(DecentScaleFrame.serviceUUID) || (ad.name?.hasPrefix("Decent Scale") ?? false)
        case .hidrateSpark:
            HidrateSpark.matches(name: ad.name, services: ad.serviceUUIDs)
        case .custom(let c):
            customMatches(c, ad)
        }
    }

    private func customMatches(_ c: CustomProfile, _ ad: AdvertisingData) -> Bool {
        if let prefix = c.namePrefix, !(ad.name?.hasPrefix(prefix) ?? false) { return false }
        if let service = c.matchService,
           !(ad.serviceUUIDs.contains(service) || ad.serviceData(for: service) != nil) { return false }
        if c.namePrefix != nil || c.matchService != nil { return true }
        // Without explicit rules, the source itself must show.
        switch c.source {
        case .characteristic(let service, _, _): return ad.serviceUUIDs.contains(service)
        case .serviceData(let uuid): return ad.serviceData(for: uuid) != nil
        case .manufacturerData(let id): return ad.manufacturerData(companyID: id) != nil
        }
    }

    /// The profiles among `candidates` that fit an advertisement.
    public static func matching(_ ad: AdvertisingData, among candidates: [DeviceProfile] = builtIn) -> [DeviceProfile] {
        candidates.filter { $0.matches(advertisement: ad) }
    }

    /// Decodes one payload: a characteristic value (GATT profiles) or the
    /// service/manufacturer data bytes after the UUID or company id (broadcast).
    public func decode(_ payload: [UInt8]) throws(DecodeError) -> [ProfileReading] {
        switch self {
        case .weightScale: [try WeightMeasurement(decoding: payload).reading]
        case .miScale: [try MiScalePayload(decoding: payload).reading]
        case .miBodyScale: [try MiBodyScalePayload(decoding: payload).reading]
        case .decentScale: try DecentScaleFrame(decoding: payload).readings
        case .hidrateSpark: []  // its frames are sips (`HidrateSparkFrame`), not readings
        case .custom(let c): try c.decode(payload)
        }
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

    /// The payload this profile's device sends for `reading`: the simulated
    /// counterpart speaks the real wire format through this. Uses the
    /// reading's value, unit (lb selects imperial/pounds where the format has
    /// it), stable/removed flags and device time (Mi scales; 0 = unknown when absent).
    public func encode(_ reading: ProfileReading) throws(ProfileEncodingError) -> [UInt8] {
        let time = reading.deviceTime ?? DeviceDateTime(year: 0, month: 0, day: 0, hours: 0, minutes: 0, seconds: 0)
        switch self {
        case .weightScale:
            guard let v = reading.value else {
                guard reading.unit.gramsPerUnit != nil else {
                    throw ProfileEncodingError(context: "Weight Measurement", field: "weight", reason: .unsupportedUnit(reading.unit))
                }
                return WeightMeasurement(imperial: reading.unit == .lb, rawWeight: WeightMeasurement.unsuccessfulWeight,
                                         timeStamp: reading.deviceTime, userID: reading.userID).encoded()
            }
            return try WeightMeasurement(weight: v, unit: reading.unit, timeStamp: reading.deviceTime, userID: reading.userID).encoded()
        case .miScale:
            guard let v = reading.value else { throw ProfileEncodingError(context: "Mi Scale", field: "weight", reason: .missingValue) }
            return try MiScalePayload(weight: v, unit: reading.unit, stabilized: reading.flags.contains(.stable),
                                      loadRemoved: reading.flags.contains(.removed), time: time).encoded()
        case .miBodyScale:
            guard let v = reading.value else {
                throw ProfileEncodingError(context: "Mi Body Composition Scale", field: "weight", reason: .missingValue)
            }
            let impedance = try reading.impedance.map { (z) throws(ProfileEncodingError) -> UInt16 in
                UInt16(try quantize(z, resolution: 1, range: 0...0xFFFF, context: "Mi Body Composition Scale", field: "impedance"))
            }
            return try MiBodyScalePayload(weight: v, unit: reading.unit, stabilized: reading.flags.contains(.stable),
                                          loadRemoved: reading.flags.contains(.removed), impedance: impedance, time: time).encoded()
        case .decentScale:
            guard let v = reading.value else { throw ProfileEncodingError(context: "Decent scale", field: "weight", reason: .missingValue) }
            return try DecentScaleFrame(weight: v, unit: reading.unit, stable: reading.flags.contains(.stable)).encoded()
        case .hidrateSpark:
            throw ProfileEncodingError(context: "HidrateSpark", field: "reading", reason: .unsupportedUnit(reading.unit))
        case .custom(let c):
            return try c.encode(reading.value, unit: reading.unit)
        }
    }

    /// Whether the device detects sips itself and reports them (`HidrateSpark`)
    /// rather than streaming readings for the detector.
    public var reportsSips: Bool { self == .hidrateSpark }
}

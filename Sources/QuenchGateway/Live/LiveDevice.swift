import BluetoothWire
import QuenchCore
import QuenchProfiles
import QuenchStore

/// A paired device as the gateway uses it: where it is, how it speaks, how its
/// readings become mL.
public struct LiveDevice: Sendable, Hashable {
    public var address: BluetoothAddress
    public var addressType: AddressType
    public var name: String?
    public var profile: DeviceProfile
    public var calibration: BottleCalibration

    public init(address: BluetoothAddress, addressType: AddressType = .lePublic, name: String? = nil,
                profile: DeviceProfile, calibration: BottleCalibration) {
        self.address = address
        self.addressType = addressType
        self.name = name
        self.profile = profile
        self.calibration = calibration
    }

    /// The label events and logs carry: the address as printed.
    public var label: String { address.description }

    /// A saved device, checked for everything the gateway needs.
    public init(_ record: Device) throws(LiveError) {
        guard let address = BluetoothAddress(record.address) else { throw .badAddress(record.address) }
        let profile = try Self.profile(of: record)
        guard let calibration = record.calibration else {
            throw .notCalibrated(record.address)
        }
        self.init(address: address, addressType: record.addressType.flatMap(AddressType.init) ?? .lePublic,
                  name: record.name, profile: profile, calibration: calibration)
    }

    /// A saved device's profile: the profile file saved with it, else a known profile by name.
    public static func profile(of record: Device) throws(LiveError) -> DeviceProfile {
        guard let profileName = record.profile else { throw .deviceIncomplete(record.address, "no profile") }
        guard let definition = record.profileDefinition else {
            do { return try ProfileRegistry.resolve(profileName).profile } catch { throw .profile(error) }
        }
        do { return .custom(try CustomProfile(json: Array(definition.utf8))) } catch {
            throw .profile(.badFile(path: "profile saved with \(record.address)", error))
        }
    }

    /// What the device reads, in the calibration's unit: weights converted
    /// (a Mi scale's "load removed" is an empty scale), failed measurements and
    /// readings in a unit the calibration cannot take are no reading.
    public func value(of reading: ProfileReading) -> Double? {
        if calibration.sensor == .weight {
            if reading.flags.contains(.removed) { return 0 }
            return reading.value(in: calibration.unit)
        }
        guard reading.unit == calibration.unit else { return nil }
        return reading.value
    }
}

/// The calibration a newly paired device starts with: the profile's (`ProfileDefinition.defaultCalibration`).
public func defaultCalibration(for profile: DeviceProfile, levelCurve: LevelCurve?, capacityML: Double?, tareG: Double?,
                               density: Double = 1) throws(CalibrationError) -> BottleCalibration {
    try profile.defaultCalibration(levelCurve: levelCurve, capacityML: capacityML, tareG: tareG, density: density)
}

/// An address as the store keys it (`aa:bb:…` → `AA:BB:…`); other labels unchanged.
public func normalizedAddress(_ text: String) -> String { BluetoothAddress.normalized(text) }

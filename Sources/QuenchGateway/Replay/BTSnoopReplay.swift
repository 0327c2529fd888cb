import BluetoothWire
import QuenchCore
import QuenchProfiles

/// Which device of a capture to replay, and how to read it.
public struct BTSnoopReplayOptions: Sendable {
    /// The device's address; nil: the first device whose traffic decodes as a profile's readings.
    public var device: BluetoothAddress?
    /// The profile to read it with; nil: the one its advertisements or characteristic show.
    public var profile: DeviceProfile?
    /// Bytes read from the file at a time.
    public var chunkSize = 1 << 16

    public init(device: BluetoothAddress? = nil, profile: DeviceProfile? = nil) {
        self.device = device
        self.profile = profile
    }
}

extension BTSnoopReplayOptions {
    /// From command-line text: `device` an address (`F0:F1:F2:F3:F4:F5`),
    /// `profile` a known profile's name or the path of a profile file.
    public init(parsingDevice device: String?, profile: String?) throws(ProfileArgumentError) {
        self.init()
        if let device {
            guard let address = BluetoothAddress(device) else { throw .badAddress(device) }
            self.device = address
        }
        if let profile {
            do { self.profile = try ProfileRegistry.resolve(profile).profile } catch { throw .profile(error) }
        }
    }
}

/// A `--profile` or `--device` argument that cannot be used.
public enum ProfileArgumentError: Error, Sendable, CustomStringConvertible {
    case badAddress(String)
    case profile(ProfileLookupError)

    public var description: String {
        switch self {
        case .badAddress(let text): "\"\(text)\" is not a Bluetooth address (like F0:F1:F2:F3:F4:F5)"
        case .profile(let e): "\(e)"
        }
    }
}

/// Why a btsnoop replay failed (opening and reading the file fail with `ReplayError`).
public enum BTSnoopReplayError: Error, Sendable, CustomStringConvertible {
    /// The file is not a btsnoop capture, or is truncated or corrupt; the error names the byte offset.
    case malformedCapture(path: String, DecodeError)
    /// Nothing in the capture decoded as readings of the device (or of any known profile).
    /// `undecodable`: payloads the profile was asked to read and could not, with the
    /// first one's error (a value past the payload's end names its byte offset).
    case noReadings(path: String, device: BluetoothAddress?, profile: DeviceProfile?, advertisements: Int, attValues: Int,
                    undecodable: Int = 0, firstUndecodable: DecodeError? = nil)
    /// `--unit`/`--sensor` that the profile's readings cannot be expressed in.
    case unitDoesNotFitProfile(path: String, MeasurementUnit, DeviceProfile)

    public var description: String {
        switch self {
        case .malformedCapture(let path, let e):
            return "\(path): not a usable btsnoop capture: \(e)"
        case .noReadings(let path, let device, let profile, let ads, let values, let undecodable, let first):
            let whom = device.map { "from \($0)" } ?? "from any device"
            let how = profile.map { " as \($0.name.shownSafely(limit: 64))" } ?? " of a known profile"
            let undecoded = first.map { "; \(undecodable) payload\(undecodable == 1 ? "" : "s") did not decode, the first: \($0)" } ?? ""
            return "\(path): no readings \(whom)\(how) (the capture holds \(ads) advertising report\(ads == 1 ? "" : "s")"
                + " and \(values) notification\(values == 1 ? "" : "s")/indication\(values == 1 ? "" : "s")\(undecoded))"
        case .unitDoesNotFitProfile(let path, let unit, let profile):
            return "\(path): \(profile.identifier) readings are in \(profile.unit.rawValue) and cannot be given in \(unit.rawValue)"
        }
    }
}

/// What a btsnoop replay found besides the events.
public struct BTSnoopReplayResult: Sendable {
    public var summary: ReplaySummary
    /// The device replayed; nil when the capture began inside its connection (peer unknown).
    public var device: BluetoothAddress?
    public var profile: DeviceProfile
    /// The device's payloads that did not decode (skipped, not fatal: one bad frame
    /// must not lose a day of readings), and the first one's error.
    public var undecodable = 0
    public var firstUndecodable: DecodeError?
    /// Other devices whose traffic fits a profile (at most `otherDevicesLimit`), to choose with `--device`.
    public var otherDevices: [BluetoothAddress] = []
    public static let otherDevicesLimit = 16
    /// Where the capture ended inside its last record, when it did (that record skipped).
    public var cutShort: DecodeError?
}

extension ProfileReading {
    /// The value the detector takes, in `unit` (a weight unit converts; a level
    /// unit must be the reading's own). A scale with the load taken off reads 0
    /// (Mi "load removed" repeats the last weight, which would hide the lift);
    /// a failed measurement is no reading.
    public func sensorValue(in unit: MeasurementUnit) -> Double? {
        if flags.contains(.removed) { return self.unit.sensor == .weight ? 0 : nil }
        return value(in: unit)
    }
}

/// `quench replay --btsnoop`: the readings of one device in a btsnoop capture
/// (`btmon -w`, Android's HCI snoop log), run through the same pipeline as a trace.
///
/// Streaming: the file is read in chunks and each record is handled as it
/// arrives, so memory stays bounded. The clock: t = 0 at the capture's first
/// advertising report or ATT value, and `started` is that record's time.
public enum BTSnoopReplay {
    /// Devices remembered from advertisements while choosing one; more are ignored.
    static let deviceLimit = 4096

    public static func run(
        _ source: TraceSource,
        capture: BTSnoopReplayOptions = BTSnoopReplayOptions(),
        options: ReplayOptions,
        onStart: (TraceHeader, BottleCalibration) throws -> Void = { _, _ in },
        onEvent: (DetectedEvent) throws -> Void
    ) throws -> BTSnoopReplayResult {
        if let profile = capture.profile { try checkUnit(options, profile, source) }
        var reader = SnoopCaptureReader()
        var selector = DeviceSelector(device: capture.device, profile: capture.profile, unit: options.unit)
        var pipeline: ReplayPipeline?
        var result: BTSnoopReplayResult?
        var firstTime: Double?
        var lastT = 0.0
        var readings: [Reading] = []

        func handle(_ record: SnoopRecord) throws {
            if firstTime == nil { firstTime = record.time }
            readings.removeAll(keepingCapacity: true)
            guard let found = selector.readings(record, into: &readings) else { return }
            if pipeline == nil {
                try checkUnit(options, found.profile, source)
                var header = TraceHeader(sensor: found.profile.sensor, unit: options.unit ?? found.profile.unit,
                                         started: Timestamp(secondsSince1970: firstTime!))
                if let device = found.device { header.metadata.append(.init(key: "device", value: device.description)) }
                header.metadata.append(.init(key: "profile", value: found.profile.identifier))
                header.metadata.append(.init(key: "source", value: "btsnoop"))
                pipeline = try Replay.start(header, source: source, options: options, onStart: onStart)
                result = BTSnoopReplayResult(summary: ReplaySummary(), device: found.device, profile: found.profile)
            }
            for i in readings.indices {
                // Capture clocks can step back a little; the detector needs time in order.
                lastT = max(lastT, record.time - firstTime!)
                readings[i].t = lastT
            }
            try pipeline!.process(readings, onEvent: onEvent)
        }

        try ChunkedInput(source, chunkSize: capture.chunkSize).forEachChunk { chunk in
            reader.append(chunk)
            while true {
                let record: SnoopRecord?
                do throws(DecodeError) {
                    record = try reader.next()
                } catch {
                    throw BTSnoopReplayError.malformedCapture(path: source.description, error)
                }
                guard let record else { break }
                try handle(record)
            }
        }
        // A capture stopped while it was being written (btmon's Ctrl-C, a log copied mid-write) ends
        // inside its last record: that record is skipped and said, the readings before it kept.
        // Anything else wrong with the file refuses it.
        var cutShort: DecodeError?
        do {
            try reader.finish()
        } catch {
            guard case .truncated = error.reason, error.context.hasPrefix("btsnoop record") else {
                throw BTSnoopReplayError.malformedCapture(path: source.description, error)
            }
            cutShort = error
        }
        guard var pipeline, var result else {
            throw BTSnoopReplayError.noReadings(path: source.description, device: capture.device, profile: capture.profile,
                                                advertisements: selector.advertisements, attValues: selector.attValues,
                                                undecodable: selector.undecodableUnchosen, firstUndecodable: selector.firstUndecodableUnchosen)
        }
        result.summary = try pipeline.finish(onEvent: onEvent)
        result.cutShort = cutShort
        result.undecodable = selector.undecodable
        result.firstUndecodable = selector.firstUndecodable
        result.otherDevices = selector.otherDevices.sorted()
        return result
    }

    /// What a person should know about the replay besides its events: the
    /// device and profile chosen, other candidates, frames that did not decode.
    /// `choosing` follows the other candidates: how the caller's front end picks one.
    public static func notes(_ result: BTSnoopReplayResult, source: String, choosing: String = "") -> [String] {
        let device = result.device?.description ?? "an unknown peer (its connection began before the capture)"
        var notes = ["\(source): replaying \(device) as \(result.profile.name.shownSafely(limit: 64))"]
        if !result.otherDevices.isEmpty {
            notes.append("\(source): other devices that fit a profile: "
                         + result.otherDevices.map(\.description).joined(separator: ", ") + choosing)
        }
        if let cut = result.cutShort {
            notes.append("\(source): the capture ends inside its last record (\(cut)): stopped while it was written; that record is skipped")
        }
        if let first = result.firstUndecodable {
            notes.append("\(source): skipped \(result.undecodable) payload\(result.undecodable == 1 ? "" : "s") that did not decode; first: \(first)")
        }
        return notes
    }

    private static func checkUnit(_ options: ReplayOptions, _ profile: DeviceProfile, _ source: TraceSource) throws(BTSnoopReplayError) {
        let unit = options.unit ?? profile.unit
        let fits = unit.sensor == profile.sensor && (unit.sensor == .weight || unit == profile.unit)
            && (options.sensor ?? profile.sensor) == profile.sensor
        guard fits else { throw .unitDoesNotFitProfile(path: source.description, unit, profile) }
    }
}

/// Picks the device to replay from a capture's records and decodes its payloads.
struct DeviceSelector {
    struct Choice: Hashable {
        var device: BluetoothAddress?
        var profile: DeviceProfile
    }

    let wantedDevice: BluetoothAddress?
    let wantedProfile: DeviceProfile?
    /// The unit readings are fed in; nil: the profile's own.
    let unit: MeasurementUnit?
    private(set) var chosen: Choice?
    /// Profiles learned from advertisements, by address (bounded by `BTSnoopReplay.deviceLimit`).
    private var advertised: [BluetoothAddress: DeviceProfile] = [:]
    /// The chosen device's value handle, when the capture does not show its characteristic's discovery.
    private var valueHandle: UInt16?
    /// The chosen broadcast device's last frame: broadcasts repeat it until the next reading.
    private var repeats = BroadcastRepeats()
    private(set) var otherDevices: Set<BluetoothAddress> = []
    private(set) var advertisements = 0
    private(set) var attValues = 0
    private(set) var undecodable = 0
    private(set) var firstUndecodable: DecodeError?
    /// Payloads the named profile could not read before any device was chosen.
    private(set) var undecodableUnchosen = 0
    private(set) var firstUndecodableUnchosen: DecodeError?

    init(device: BluetoothAddress?, profile: DeviceProfile?, unit: MeasurementUnit?) {
        wantedDevice = device
        wantedProfile = profile
        self.unit = unit
    }

    /// Appends the chosen device's readings in `record` (with t unset) and
    /// returns the choice; nil when the record is not the chosen device's.
    mutating func readings(_ record: SnoopRecord, into out: inout [Reading]) -> Choice? {
        let candidate: Choice
        let payload: [UInt8]
        switch record.kind {
        case .advertisement(let ad):
            advertisements += 1
            guard let found = broadcast(ad, at: record.time) else { return nil }
            (candidate, payload) = found
        case .attValue(let value):
            attValues += 1
            guard let found = gattValue(value) else { return nil }
            candidate = found
            payload = value.value
        }
        if let chosen, chosen != candidate { return nil }

        let decoded: [ProfileReading]
        do {
            decoded = try candidate.profile.decode(payload)
        } catch {
            if chosen != nil {
                undecodable += 1
                if firstUndecodable == nil { firstUndecodable = error }
            } else if wantedProfile != nil {
                // Before a device is chosen, "not this one" (another device's payload, perhaps);
                // kept for the error when the named profile reads nothing at all.
                undecodableUnchosen += 1
                if firstUndecodableUnchosen == nil { firstUndecodableUnchosen = error }
            }
            return nil
        }
        let unit = self.unit ?? candidate.profile.unit
        let before = out.count
        for reading in decoded { out.append(Reading(t: 0, value: reading.sensorValue(in: unit))) }
        if chosen == nil {
            // Frames that carry no reading (Decent button events) do not choose a device.
            guard out.count > before else { return nil }
            chosen = candidate
            if case .attValue(let value) = record.kind, value.characteristic == nil { valueHandle = value.attributeHandle }
            if case .advertisement = record.kind { _ = repeats.isReading(candidate.profile.payloadIdentity(payload), at: record.time) }
        }
        return candidate
    }

    private mutating func broadcast(_ report: SnoopAdvertisement, at time: Double) -> (Choice, [UInt8])? {
        if let wantedDevice, report.address != wantedDevice { return nil }
        if let chosen, chosen.device != report.address {
            if noteworthy(report.address), let ad = try? AdvertisingData(decoding: report.data),
               !DeviceProfile.matching(ad, among: wantedProfile.map { [$0] } ?? DeviceProfile.builtIn).isEmpty {
                otherDevices.insert(report.address)
            }
            return nil
        }
        guard let ad = try? AdvertisingData(decoding: report.data) else { return nil }
        let profile: DeviceProfile
        if let p = chosen?.profile ?? wantedProfile {
            profile = p
        } else if let p = DeviceProfile.matching(ad).first {
            profile = p
        } else {
            return nil
        }
        if chosen == nil, advertised[report.address] == nil, advertised.count < BTSnoopReplay.deviceLimit {
            advertised[report.address] = profile
        }
        // GATT profiles' advertisements carry no readings; they only say what the device is.
        guard let payload = profile.payload(in: ad) else { return nil }
        if chosen != nil, !repeats.isReading(profile.payloadIdentity(payload), at: time) { return nil }
        return (Choice(device: report.address, profile: profile), payload)
    }

    private mutating func gattValue(_ value: SnoopATTValue) -> Choice? {
        if let wantedDevice, value.peer != wantedDevice { return nil }
        if let chosen, chosen.device != value.peer {
            if let peer = value.peer, noteworthy(peer), advertised[peer] != nil
                || value.characteristic.map({ uuid in DeviceProfile.builtIn.contains { Self.characteristic(of: $0) == uuid } }) == true {
                otherDevices.insert(peer)
            }
            return nil
        }
        let profile: DeviceProfile
        if let p = chosen?.profile ?? wantedProfile {
            profile = p
        } else if let uuid = value.characteristic,
                  let p = DeviceProfile.builtIn.first(where: { Self.characteristic(of: $0) == uuid }) {
            profile = p
        } else if let peer = value.peer, let p = advertised[peer] {
            profile = p
        } else {
            return nil
        }
        guard case .gatt(_, let characteristic, let delivery) = profile.transport else { return nil }
        if let uuid = value.characteristic {
            guard uuid == characteristic else { return nil }
        } else {
            // The capture began after discovery: the first handle of the right kind that decodes is the one.
            if let valueHandle, chosen != nil {
                guard value.attributeHandle == valueHandle else { return nil }
            } else {
                switch delivery {
                case .indicate: guard value.isIndication else { return nil }
                case .notify: guard !value.isIndication else { return nil }
                case .readPoll: return nil
                }
            }
        }
        return Choice(device: value.peer, profile: profile)
    }

    private static func characteristic(of profile: DeviceProfile) -> BluetoothUUID? {
        if case .gatt(_, let c, _) = profile.transport { return c }
        return nil
    }

    /// Whether another device is worth checking for the list of alternatives.
    private func noteworthy(_ address: BluetoothAddress) -> Bool {
        otherDevices.count < BTSnoopReplayResult.otherDevicesLimit && !otherDevices.contains(address)
    }
}

#if os(Linux)
import BluetoothLinux
import BluetoothWire
import Logging
import QuenchCore
import QuenchGateway
import QuenchProfiles
import QuenchStore
import GATT
import Threading

/// `quench pair`: find the device, confirm readings arrive, save it.
public enum Pairing {
    public struct Request: Sendable {
        public var address: String
        public var profile: String?
        public var name: String?
        public var bond = false
        public var random = false
        public var capacityML: Double?
        public var tareG: Double?
        public var levelCurve: LevelCurve?
        public var density = 1.0
        /// Whose it is; nil keeps a re-paired device's owner (a new one goes to the first person).
        public var person: String?
        /// Seconds for each step: finding it, connecting, the first reading.
        public var timeout = 10.0
        public init(address: String) { self.address = address }
    }

    public struct Outcome: Sendable {
        public var device: Device
        /// What showed the device works: its first reading, or what a bottle that reports sips said.
        public var confirmation: String
        public var how: String
    }

    /// Scans for the device (unless the profile and a random address are
    /// given), so the address type is the advertised one; connects and
    /// subscribes (GATT) or listens (broadcast) until a reading decodes;
    /// then saves device, profile, address type and calibration.
    /// `checkStore` is called once the request is known to be valid, and before
    /// any scan, so a bad database path fails before the wait; `openStore` (which
    /// may create the database) only once the device answered: a bad address or
    /// profile file, or a device that never answered, leaves no database behind.
    public static func pair(
        _ r: Request, checkStore: () throws(StoreError) -> Void, openStore: () throws(StoreError) -> IntakeStore,
        stop: StopSignal, progress: (String) -> Void
    ) throws(ToolError) -> Outcome {
        guard let address = BluetoothAddress(r.address) else { throw .live(.badAddress(r.address)) }
        var profile: DeviceProfile?
        var definition: String?
        if let p = r.profile {
            do { (profile, definition) = try ProfileRegistry.resolve(p) } catch { throw .live(.profile(error)) }
        }
        // What the store will refuse (a name, a profile's name), refused before any wait.
        let planned = Device(address: address.description, name: r.name, profile: profile.map(ProfileRegistry.identifier),
                             addedAt: .wallClockNow, profileDefinition: definition)
        if let problem = planned.textProblem {
            throw .live(.store(StoreError(.invalidValue, path: nil, "cannot pair \(address): \(problem); nothing was saved")))
        }
        do { try checkStore() } catch { throw .live(.store(error)) }
        var type: AddressType = r.random ? .leRandom : .lePublic
        var advertisedName: String?
        if profile == nil || !r.random {
            progress("looking for \(address) (up to \(TraceWriter.fixed(r.timeout, places: 0)) s)...")
            let seen = try LiveScan.run(timeout: r.timeout, all: true, stop: stop) { $0[address] != nil }
            guard let f = seen.first(where: { $0.address == address }) else { throw .notFound(address: address.description, seconds: r.timeout) }
            type = f.addressType
            advertisedName = f.name
            if profile == nil {
                guard let id = f.profiles.first, let fitting = ProfileRegistry.named(id) else {
                    throw .noProfileFits(address: address.description, known: ProfileRegistry.identifiers)
                }
                profile = fitting
            }
            progress("found \(address) (\(type)\(f.name.map { ", \"\($0)\"" } ?? ""), rssi \(f.rssi.map { "\($0)" } ?? "-")): \(ProfileRegistry.identifier(profile!))")
        }
        let chosen = profile!
        let calibration = try? defaultCalibration(for: chosen, levelCurve: r.levelCurve, capacityML: r.capacityML,
                                                  tareG: r.tareG, density: r.density)
        let first: String
        switch (chosen.transport, chosen.sipReporter) {
        case (.gatt, let reporter?):
            first = try confirmSipReporter(reporter, address: address, type: type, profile: chosen, r, stop: stop, progress: progress)
        case (.gatt, nil):
            let bearer = try connect(address, type: type, profile: chosen, r, stop: stop, progress: progress)
            defer { bearer.close() }
            let link: GATTLink
            do { link = try GATTLink.open(bearer, profile: chosen) } catch { throw .live(error) }
            progress("subscribed to \(link.characteristic.uuid) (handle \(link.characteristic.valueHandle), MTU \(link.client.mtu)); waiting for a reading...")
            first = "first reading: " + describe(try firstReading(chosen, address: address, timeout: r.timeout) { t throws(ToolError) in
                do throws(LiveError) { return try link.next(timeout: t, stop: stop) } catch { throw .live(error) }
            })
        case (.serviceData, _), (.manufacturerData, _):
            progress("listening for \(address)'s broadcasts...")
            let scan: KernelScan
            do { scan = try KernelScan(ScanOptions(), stop: stop) } catch { throw .live(error) }
            defer { scan.stop() }
            let end = Deadline(seconds: r.timeout).until
            first = "first reading: " + describe(try firstReading(chosen, address: address, timeout: r.timeout) { _ throws(ToolError) in
                while let report = try { () throws(ToolError) in
                    do throws(LiveError) { return try scan.next(until: end) } catch { throw .live(error) }
                }() {
                    guard report.address == address, let ad = try? AdvertisingData(decoding: report.data),
                          let payload = chosen.payload(in: ad) else { continue }
                    return payload
                }
                return nil
            })
        }
        let how = chosen.transport.isBroadcast ? "broadcast" : (r.bond ? "connected, encrypted" : "connected")
        let now = Timestamp.wallClockNow
        let store: IntakeStore
        do { store = try openStore() } catch { throw .live(.store(error)) }
        let existing = try? store.device(address: address.description)
        // A device's own name is kept only when the store can hold it (a device may advertise anything).
        let advertised = advertisedName.flatMap { TextField.deviceName.problem($0) == nil ? $0 : nil }
        var device = Device(address: address.description, name: r.name ?? existing?.name ?? advertised,
                            profile: ProfileRegistry.identifier(chosen), sensor: chosen.sensor,
                            calibration: calibration ?? existing?.calibration, addedAt: existing?.addedAt ?? now, lastSeenAt: now,
                            addressType: type.isRandom ? "random" : "public", profileDefinition: definition)
        device.person = r.person ?? existing?.person
        do { try store.saveDevice(device) } catch { throw .live(.store(error)) }
        return Outcome(device: device, confirmation: first, how: how)
    }

    /// A bottle that reports its own sips: connects and lets its profile's
    /// session say what the bottle keeps. Nothing is drained here: `quench run`
    /// stores the sips with their times.
    static func confirmSipReporter(_ reporter: any SipReporter, address: BluetoothAddress, type: AddressType, profile: DeviceProfile,
                                   _ r: Request, stop: StopSignal, progress: (String) -> Void) throws(ToolError) -> String {
        let bearer = try connect(address, type: type, profile: profile, r, stop: stop, progress: progress)
        defer { bearer.close() }
        let said: String?
        do { said = try reporter.confirm(bearer, timeout: r.timeout, progress: progress) } catch { throw .live(LiveError(error)) }
        guard let said else { throw .noReadings(address: address.description, seconds: r.timeout) }
        return said
    }

    /// Connects to the device being paired over L2CAP (encrypted with `--bond`).
    static func connect(_ address: BluetoothAddress, type: AddressType, profile: DeviceProfile, _ r: Request,
                        stop: StopSignal, progress: (String) -> Void) throws(ToolError) -> any ATTBearer {
        let probe = LiveDevice(address: address, addressType: type, profile: profile, calibration: try BottleCalibration.placeholder)
        progress("connecting to \(address) (\(type))...")
        do {
            return try L2CAPConnector(security: r.bond ? .medium : nil).connect(to: probe, timeout: r.timeout, stop: stop)
        } catch {
            throw .live(error)
        }
    }

    /// Takes payloads until one decodes to a value.
    static func firstReading(_ profile: DeviceProfile, address: BluetoothAddress, timeout: Double,
                             next: (Double) throws(ToolError) -> [UInt8]?) throws(ToolError) -> ProfileReading {
        let end = Deadline(seconds: timeout).until
        while ContinuousClock.now < end {
            let left = (end - ContinuousClock.now).seconds
            guard let payload = try next(min(left, 1)) else { continue }
            if let reading = try? profile.decode(payload).first(where: { $0.value != nil }) { return reading }
        }
        throw .noReadings(address: address.description, seconds: timeout)
    }

    public static func describe(_ reading: ProfileReading) -> String {
        // Payload scales (0.1 mm, 0.005 kg) are not exact in binary: 149.20000000000002 → 149.2.
        var s = reading.value.map { "\((($0 * 10_000).rounded() / 10_000).compactDescription) \(reading.unit.rawValue)" } ?? "no value"
        var flags: [String] = []
        if reading.flags.contains(.stable) { flags.append("stable") }
        if reading.flags.contains(.removed) { flags.append("load removed") }
        if !flags.isEmpty { s += " (" + flags.joined(separator: ", ") + ")" }
        return s
    }
}

extension BottleCalibration {
    /// For a connection that only confirms readings arrive.
    static var placeholder: BottleCalibration {
        get throws(ToolError) {
            do { return try defaultCalibration(for: .decentScale, levelCurve: nil, capacityML: nil, tareG: nil) } catch { throw .calibration(error) }
        }
    }
}

/// `quench devices`.
public enum DeviceListing {
    public static func table(_ devices: [Device]) -> String {
        guard !devices.isEmpty else { return "no paired devices (pair one with `quench pair ADDRESS`)" }
        var lines = ["address            type    profile        name              calibration               battery, cap         last seen"]
        for d in devices {
            // Stored text from imports and profile files: shown, never obeyed by the terminal.
            lines.append(EventFormat.pad(d.address.shownSafely(limit: 17), 19) + EventFormat.pad(d.addressType ?? "-", 8)
                         + EventFormat.pad((d.profile ?? "-").shownSafely(limit: 13), 15)
                         + EventFormat.pad((d.name ?? "-").shownSafely(limit: 16), 18) + EventFormat.pad(d.calibration.map(summary) ?? "none", 26)
                         + EventFormat.pad(status(d) ?? "-", 21) + (d.lastSeenAt?.iso8601 ?? "-"))
        }
        return lines.joined(separator: "\n")
    }

    /// What a smart bottle last said of itself: `87 %, cap closed`; nil when nothing.
    public static func status(_ d: Device) -> String? {
        let parts = [d.batteryPercent.map { "\($0) %" }, d.capOpen.map { $0 ? "cap open" : "cap closed" }].compactMap { $0 }
        return parts.isEmpty ? nil : parts.joined(separator: ", ")
    }

    /// `g, tare 180 g, 750 mL` / `mm, curve 0:0,100:500`.
    public static func summary(_ c: BottleCalibration) -> String {
        // A bottle that reports its own sips needs only its size.
        if c.unit == .percent, let capacity = c.capacityML { return "\(capacity.compactDescription) mL bottle" }
        var parts = [c.unit.rawValue]
        if let t = c.emptyWeightG { parts.append("tare \(t.compactDescription) g") }
        if let cap = c.capacityML { parts.append("\(cap.compactDescription) mL") }
        if let curve = c.levelCurve { parts.append("curve \(curve.points.count) points") }
        return parts.joined(separator: ", ")
    }

    public static func jsonLine(_ d: Device) -> String {
        var s = "{\"address\":\"\(EventFormat.jsonEscaped(d.address))\""
        if let t = d.addressType { s += ",\"type\":\"\(t)\"" }
        if let p = d.profile { s += ",\"profile\":\"\(EventFormat.jsonEscaped(p))\"" }
        if let n = d.name { s += ",\"name\":\"\(EventFormat.jsonEscaped(n))\"" }
        if let c = d.calibration { s += ",\"calibration\":\"\(EventFormat.jsonEscaped(summary(c)))\"" }
        if let b = d.batteryPercent { s += ",\"battery_percent\":\(b)" }
        if let c = d.capOpen { s += ",\"cap_open\":\(c)" }
        s += ",\"added_at\":\"\(d.addedAt.iso8601)\""
        if let l = d.lastSeenAt { s += ",\"last_seen_at\":\"\(l.iso8601)\"" }
        if let p = d.person { s += ",\"person\":\"\(EventFormat.jsonEscaped(p))\"" }
        return s + "}"
    }
}
#endif

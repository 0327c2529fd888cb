#if canImport(Glibc)
import BluetoothWire
import GATT
import QuenchCore
import QuenchProfiles
import QuenchStore
import QuenchGateway
import Synchronization
import Threading

/// Timing shared by the simulated devices: a trace streamed in real time × `speed`,
/// with its clock starting at the first subscription (GATT) or at once (broadcast).
public struct SimulatedStreaming: Sendable {
    public var speed: Double
    /// Trace times at which the device drops the link and stays silent for a while (trace seconds).
    public var drops: [(at: Double, seconds: Double)]
    /// A device that never answers: every connect times out.
    public var neverAnswers: Bool

    public init(speed: Double = 1, drops: [(at: Double, seconds: Double)] = [], neverAnswers: Bool = false) {
        self.speed = speed
        self.drops = drops
        self.neverAnswers = neverAnswers
    }

    func dropWindow(containing t: Double) -> (at: Double, seconds: Double)? {
        drops.first { t >= $0.at && t < $0.at + $0.seconds }
    }
}

/// A GATT peripheral in the process: a `GATTServer` with the profile's real
/// attribute table, serving each connection over `socketpair(AF_UNIX,
/// SOCK_SEQPACKET)`, and streaming a trace's readings through the profile's
/// encoder (Weight Scale indications, Decent notifications, the DIY level
/// bottle's notifications). As with a real device, what falls due while
/// nobody is subscribed is lost. It is an `ATTConnector`, so the gateway
/// reaches it exactly as it reaches the kernel's L2CAP sockets.
public final class SimulatedPeripheral: ATTConnector, Sendable {
    public let address: BluetoothAddress
    public let profile: DeviceProfile
    public let readings: [Reading]
    /// The unit `readings` are in.
    public let unit: MeasurementUnit
    public let streaming: SimulatedStreaming
    private let database: GATTDatabase
    private let valueHandle: UInt16
    private struct State {
        var link: (server: GATTServer, bearer: DescriptorBearer)?
        var origin: ContinuousClock.Instant?
        var streamer: WorkerThread?
        /// A GATT server's thread for each connection not yet over, joined at shutdown.
        var servers: [WorkerThread] = []
        var shutDown = false
        var done = false
        var sent = 0
        var lost = 0
        var connects = 0
        var written: [(characteristic: BluetoothUUID, value: [UInt8])] = []
    }
    private let state = Condition(State())

    /// Readings delivered to a subscriber / fallen due with nobody subscribed (or dropped).
    public var sent: Int { state.withLock { $0.sent } }
    public var lost: Int { state.withLock { $0.lost } }
    public var connects: Int { state.withLock { $0.connects } }
    /// What a central wrote to the device's characteristics (a scale's tare, a
    /// reminder's blink), in order; descriptor writes (subscriptions) are left out.
    public var written: [(characteristic: BluetoothUUID, value: [UInt8])] { state.withLock { $0.written } }

    /// Blocks until at least `count` values were written, or `timeout` passes; what was written by then.
    public func waitForWrites(_ count: Int, timeout: Double) -> [(characteristic: BluetoothUUID, value: [UInt8])] {
        _ = state.wait(until: Deadline(seconds: timeout)) { $0.written.count >= count ? true : nil }
        return written
    }

    public init(address: BluetoothAddress, profile: DeviceProfile, readings: [Reading], unit: MeasurementUnit,
                streaming: SimulatedStreaming = SimulatedStreaming(), name: String = "Quench simulated") {
        guard case .gatt(let service, let characteristic, _) = profile.transport, let definition = profile.gattService else {
            preconditionFailure("SimulatedPeripheral serves GATT profiles; use SimulatedBroadcaster for \(profile.identifier)")
        }
        self.address = address
        self.profile = profile
        self.readings = readings
        self.unit = unit
        self.streaming = streaming
        var services = [GATTServiceDefinition.genericAccess(deviceName: name), definition]
        // The characteristic a profile file's reminder writes to (the kitchen scale's 0x36F5 is in its table already).
        if let signal = profile.reminderSignal, !services.contains(where: { s in s.characteristics.contains { $0.uuid == signal.characteristic } }) {
            let command = GATTCharacteristicDefinition(uuid: signal.characteristic, properties: [.write, .writeWithoutResponse])
            if let i = services.firstIndex(where: { $0.uuid == signal.service }) {
                services[i].characteristics.append(command)
            } else {
                services.append(GATTServiceDefinition(uuid: signal.service, characteristics: [command]))
            }
        }
        database = GATTDatabase(services: services)
        valueHandle = database.valueHandle(service: service, characteristic: characteristic)!
    }

    /// Trace seconds since streaming began (nil before the first subscription).
    public var traceTime: Double? {
        state.withLock { s in s.origin.map { (ContinuousClock.now - $0).seconds * streaming.speed } }
    }

    /// GATT servers' threads still running (one a connection; `shutdown` waits for them all).
    public var serverThreadsRunning: Int { state.withLock { $0.servers.filter { !$0.hasFinished }.count } }

    /// Whether every reading has fallen due (sent or lost).
    public var isFinished: Bool { state.withLock { $0.done } }

    /// Blocks until the trace has been streamed to its end, or `timeout` passes.
    public func waitUntilFinished(timeout: Double) -> Bool {
        state.wait(until: Deadline(seconds: timeout)) { $0.done ? true : nil } ?? false
    }

    public func connect(to device: LiveDevice, timeout: Double, stop: StopSignal) throws(LiveError) -> any ATTBearer {
        let give = ContinuousClock.now + .milliseconds(Int64(saturating: timeout * 1000))
        if streaming.neverAnswers {
            if stop.wait(seconds: timeout) { throw .stopped }
            throw .connectTimeout(address: address.description, seconds: timeout)
        }
        // While dropped the device does not advertise: a connect waits, as the kernel's does.
        while let t = traceTime, let w = streaming.dropWindow(containing: t) {
            let left = Self.seconds(until: give)
            let wait = min(left, (w.at + w.seconds - t) / streaming.speed + 0.01)
            if stop.wait(seconds: wait) { throw .stopped }
            if left <= wait { throw .connectTimeout(address: address.description, seconds: timeout) }
        }
        let pair: (client: DescriptorBearer, server: DescriptorBearer)
        // The client end wakes when the session stops, as the kernel's L2CAP bearer does.
        do { pair = try DescriptorBearer.makePair(wakeup: stop.bluetooth?.fileDescriptor) } catch {
            throw .gatt(.bearer(error))
        }
        let database = database
        let server = GATTServer(database: database, bearer: pair.server) { [self] handle, value in
            // A value attribute's type is its characteristic's UUID; a CCCD write is a subscription.
            guard let type = database.attribute(handle)?.type, type != GATTAttributeType.clientCharacteristicConfiguration else { return }
            state.changing { $0.written.append((type, value)) }
        }
        state.changing { s in
            if let old = s.link { old.bearer.interrupt() }
            s.link = (server, pair.server)
            s.connects += 1
            if s.streamer == nil { s.streamer = WorkerThread(name: "simulated \(address)") { [self] in stream() } }
        }
        let thread = WorkerThread(name: "gatt server \(address)") { [self] in
            _ = try? server.run()
            pair.server.close()
            // The central went away: the device is free (and advertises) again.
            state.changing { s in if s.link?.server === server { s.link = nil } }
        }
        state.withLock { s in
            s.servers.removeAll { $0.hasFinished }
            s.servers.append(thread)
        }
        return pair.client
    }

    /// Whether a central holds the link now.
    public var isConnected: Bool { state.withLock { $0.link != nil } }

    /// The link drops (the device was carried out of range): what falls due until a central
    /// connects again is lost, as with a real device that keeps no readings.
    public func dropLink() {
        state.withLock { s in
            s.link?.bearer.interrupt()
            s.link = nil
        }
    }

    /// The instant the trace's clock started (its first subscription); nil before.
    public var streamOrigin: ContinuousClock.Instant? { state.withLock { $0.origin } }

    /// Stops streaming and closes the link.
    public func shutdown() {
        let (streamer, servers) = state.changing { s in
            s.shutDown = true
            s.link?.bearer.interrupt()
            return (s.streamer, s.servers)
        }
        streamer?.join()
        // Each server ends when its bearer is interrupted (this link above, earlier ones as they were replaced or dropped).
        for server in servers { server.join() }
    }

    private func stream() {
        // The trace clock starts at the first subscription.
        while !isShutDown {
            guard let l = currentLink() else { pause(0.05); continue }
            if l.server.waitForSubscription(valueHandle: valueHandle, timeout: 0.2) { break }
        }
        let start = ContinuousClock.now
        state.withLock { $0.origin = start }

        var recent: [Reading] = []
        for reading in readings {
            let due = start + .milliseconds(Int64(saturating: reading.t / streaming.speed * 1000))
            while ContinuousClock.now < due {
                if isShutDown { return finish() }
                pause(Self.seconds(until: due))
            }
            if isShutDown { return finish() }
            guard let value = reading.value else { continue }
            recent.append(reading)
            recent.removeAll { $0.t < reading.t - 1 }
            if streaming.dropWindow(containing: reading.t) != nil {
                dropLink()
                count(sent: false)
                continue
            }
            guard let payload = encode(value, stable: isStable(recent)), let l = currentLink() else { count(sent: false); continue }
            do {
                switch try l.server.updateValue(payload, handle: valueHandle) {
                case .stored: count(sent: false)
                case .notified, .indicated: count(sent: true)
                }
            } catch {
                count(sent: false)
            }
        }
        finish()
    }

    private func count(sent: Bool) {
        state.withLock { s in if sent { s.sent += 1 } else { s.lost += 1 } }
    }

    private func finish() { state.changing { $0.done = true } }

    private var isShutDown: Bool { state.withLock { $0.shutDown } }

    private func currentLink() -> (server: GATTServer, bearer: DescriptorBearer)? { state.withLock { $0.link } }

    /// Sleeps up to `seconds`, or until shut down.
    private func pause(_ seconds: Double) {
        _ = state.wait(until: Deadline(seconds: max(0.001, seconds))) { $0.shutDown ? () : nil }
    }

    /// Decent's rule: stable when the last second spans at most 2 g (3+ readings).
    private func isStable(_ recent: [Reading]) -> Bool {
        let values = recent.compactMap(\.value)
        guard values.count >= 3, let lo = values.min(), let hi = values.max() else { return false }
        return (hi - lo) * (unit.gramsPerUnit ?? 1) <= 2
    }

    /// The profile's payload; values a field cannot hold are clamped into it, as real firmware does.
    private func encode(_ value: Double, stable: Bool) -> [UInt8]? {
        try? profile.encode(ProfileReading(value: profile.encodable(value, unit: unit), unit: unit, flags: stable ? .stable : []))
    }

    static func seconds(until instant: ContinuousClock.Instant) -> Double { (instant - ContinuousClock.now).seconds }
}

/// Several simulated peripherals reachable by address; an address nobody
/// answers at behaves like an absent device: the connect times out.
public struct SimulatedRadio: ATTConnector {
    public var peripherals: [BluetoothAddress: SimulatedPeripheral]

    public init(_ peripherals: [SimulatedPeripheral]) {
        self.peripherals = Dictionary(peripherals.map { ($0.address, $0) }, uniquingKeysWith: { a, _ in a })
    }

    public func connect(to device: LiveDevice, timeout: Double, stop: StopSignal) throws(LiveError) -> any ATTBearer {
        if let p = peripherals[device.address] { return try p.connect(to: device, timeout: timeout, stop: stop) }
        if stop.wait(seconds: timeout) { throw .stopped }
        throw .connectTimeout(address: device.address.description, seconds: timeout)
    }
}

/// A broadcast scale in the process (Mi Scale / Mi Body Composition Scale):
/// each reading becomes the real advertisement bytes — Flags, the service
/// data frame with the stabilized and load-removed bits, the name — reported
/// twice, as ADV_IND and as scan response, the way the emulated controller
/// does. An `AdvertisementSource` for the gateway's broadcast listener.
public final class SimulatedBroadcaster: AdvertisementSource, Sendable {
    public let address: BluetoothAddress
    public let profile: DeviceProfile
    public let readings: [Reading]
    public let unit: MeasurementUnit
    public let speed: Double
    public let started: Timestamp

    /// Where the broadcast is: read by one scan thread (`next`), watched by tests.
    private struct Cursor {
        var stopSignal = StopSignal()
        var index = 0
        var pendingRepeat: AdvertisingReport?
        var origin: ContinuousClock.Instant?
        var lastStable: Double = 0
        var recent: [Reading] = []
        var frames = 0
    }
    private let cursor = Mutex(Cursor())

    public init(address: BluetoothAddress, profile: DeviceProfile = .miScale, readings: [Reading], unit: MeasurementUnit,
                speed: Double = 1, started: Timestamp = .wallClockNow) {
        self.address = address
        self.profile = profile
        self.readings = readings
        self.unit = unit
        self.speed = speed
        self.started = started
    }

    /// This broadcaster as a session's scan: waits end when `stop` fires.
    public func source(stoppedBy stop: StopSignal) -> SimulatedBroadcaster {
        cursor.withLock { $0.stopSignal = stop }
        return self
    }

    /// Advertisements made so far (each reported twice).
    public var frames: Int { cursor.withLock { $0.frames } }

    public var isFinished: Bool { cursor.withLock { $0.index >= readings.count && $0.pendingRepeat == nil } }

    /// The instant the trace's clock started (the first scan that asked); nil before.
    public var streamOrigin: ContinuousClock.Instant? { cursor.withLock { $0.origin } }

    public func next(until deadline: ContinuousClock.Instant) throws(LiveError) -> AdvertisingReport? {
        // One scan thread calls this: it works on a copy and puts it back, so no lock is held while it waits.
        var c = cursor.withLock { $0 }
        defer { cursor.withLock { [c] in $0 = c } }
        let stopSignal = c.stopSignal
        if stopSignal.isStopped { throw .stopped }
        if let r = c.pendingRepeat {
            c.pendingRepeat = nil
            return r
        }
        let start = c.origin ?? .now
        c.origin = start
        while c.index < readings.count {
            let reading = readings[c.index]
            let due = start + .milliseconds(Int64(saturating: reading.t / speed * 1000))
            if due > deadline {
                if stopSignal.wait(seconds: SimulatedPeripheral.seconds(until: deadline)) { throw .stopped }
                return nil
            }
            if stopSignal.wait(seconds: SimulatedPeripheral.seconds(until: due)) { throw .stopped }
            c.index += 1
            guard let value = reading.value, let data = advertisement(value, at: reading.t, &c) else { continue }
            c.frames += 1
            let report = AdvertisingReport(address: address, addressType: .lePublic, rssi: -50, source: .legacy(.advInd),
                                           isConnectable: true, isScanResponse: false, data: data)
            var repeated = report
            repeated.isScanResponse = true
            c.pendingRepeat = repeated
            return report
        }
        if stopSignal.wait(seconds: SimulatedPeripheral.seconds(until: deadline)) { throw .stopped }
        return nil
    }

    public func stop() {}

    /// Mi rules (as the emulated scale): stabilized when the last second holds ≥ 3
    /// readings within 0.1 kg; load removed below 0.1 kg, repeating the last stabilized weight.
    private func advertisement(_ value: Double, at t: Double, _ c: inout Cursor) -> [UInt8]? {
        let grams = value * (unit.gramsPerUnit ?? 1)
        c.recent.append(Reading(t: t, value: grams))
        c.recent.removeAll { $0.t < t - 1 }
        let values = c.recent.compactMap(\.value)
        let stable = values.count >= 3 && (values.max()! - values.min()!) <= 100
        let removed = grams < 100
        if stable && !removed { c.lastStable = grams }
        let weightKg = min(max(removed ? c.lastStable : grams, 0), 327_670) / 1000
        let reading = ProfileReading(value: weightKg, unit: .kg, flags: [stable ? .stable : [], removed ? .removed : []],
                                     deviceTime: DeviceDateTime(unixTime: started.secondsSince1970 + t))
        guard let payload = try? profile.encode(reading), case .serviceData(let uuid) = profile.transport,
              let uuid16 = uuid.uuid16 else { return nil }
        let ad = AdvertisingData([.flags([.leGeneralDiscoverable, .brEdrNotSupported]), .serviceData16(uuid16, payload),
                                  .localName("MI_SCALE", complete: true)])
        return try? ad.encoded()
    }
}
#endif

extension AdvertisingReport {
    /// A connectable device heard advertising only its Flags (LE General Discoverable, BR/EDR not
    /// supported; CSS Part A, 1.3): how a room's scan hears a simulated bottle that no central holds.
    public static func connectable(_ address: BluetoothAddress, _ addressType: AddressType = .lePublic, rssi: Int8) -> AdvertisingReport {
        let flags: ADFlags = [.leGeneralDiscoverable, .brEdrNotSupported]
        return AdvertisingReport(address: address, addressType: addressType, rssi: rssi, source: .legacy(.advInd), isConnectable: true,
                                 isScanResponse: false, data: [2, ADType.flags.rawValue, flags.rawValue])
    }
}

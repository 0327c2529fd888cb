#if canImport(Glibc)
import BluetoothWire
import GATT
import QuenchCore
import QuenchProfiles
import QuenchStore
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
public final class SimulatedPeripheral: ATTConnector, @unchecked Sendable {
    public let address: BluetoothAddress
    public let profile: DeviceProfile
    public let readings: [Reading]
    /// The unit `readings` are in.
    public let unit: MeasurementUnit
    public let streaming: SimulatedStreaming
    private let database: GATTDatabase
    private let valueHandle: UInt16
    private let condition = ConditionLock()
    // Guarded by `condition`.
    private var link: (server: GATTServer, bearer: DescriptorBearer)?
    private var origin: ContinuousClock.Instant?
    private var streamer: WorkerThread?
    private var shutDown = false
    private var done = false
    public private(set) var sent = 0
    public private(set) var lost = 0
    public private(set) var connects = 0

    public init(address: BluetoothAddress, profile: DeviceProfile, readings: [Reading], unit: MeasurementUnit,
                streaming: SimulatedStreaming = SimulatedStreaming(), name: String = "Quench simulated") {
        guard case .gatt(let service, let characteristic, let delivery) = profile.transport else {
            preconditionFailure("SimulatedPeripheral serves GATT profiles; use SimulatedBroadcaster for \(profile.identifier)")
        }
        self.address = address
        self.profile = profile
        self.readings = readings
        self.unit = unit
        self.streaming = streaming
        let definition: GATTServiceDefinition
        switch profile {
        case .weightScale:
            definition = .weightScale(feature: WeightScaleFeature(rawValue: 0x38).encoded())
        case .decentScale:
            definition = .kitchenScale()
        default:
            let properties: GATTCharacteristicProperties = switch delivery {
            case .notify: [.read, .notify]
            case .indicate: [.read, .indicate]
            case .readPoll: [.read]
            }
            definition = GATTServiceDefinition(uuid: service, characteristics: [
                GATTCharacteristicDefinition(uuid: characteristic, properties: properties)])
        }
        database = GATTDatabase(services: [.genericAccess(deviceName: name), definition])
        valueHandle = database.valueHandle(service: service, characteristic: characteristic)!
    }

    /// Trace seconds since streaming began (nil before the first subscription).
    public var traceTime: Double? {
        condition.lock()
        defer { condition.unlock() }
        return origin.map { Self.seconds(since: $0) * streaming.speed }
    }

    /// Whether every reading has fallen due (sent or lost).
    public var isFinished: Bool {
        condition.lock()
        defer { condition.unlock() }
        return done
    }

    /// Blocks until the trace has been streamed to its end, or `timeout` passes.
    public func waitUntilFinished(timeout: Double) -> Bool {
        let deadline = Deadline(seconds: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !done { if !condition.wait(until: deadline) { break } }
        return done
    }

    public func connect(to device: LiveDevice, timeout: Double, stop: StopSignal) throws(LiveError) -> any ATTBearer {
        let give = ContinuousClock.now + .milliseconds(Int64(timeout * 1000))
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
        do { pair = try DescriptorBearer.makePair() } catch {
            throw .gatt(.bearer(error))
        }
        let server = GATTServer(database: database, bearer: pair.server)
        condition.lock()
        if let old = link { old.bearer.interrupt() }
        link = (server, pair.server)
        connects += 1
        if streamer == nil { streamer = WorkerThread(name: "simulated \(address)") { [self] in stream() } }
        condition.broadcast()
        condition.unlock()
        _ = WorkerThread(name: "gatt server \(address)") {
            _ = try? server.run()
            pair.server.close()
        }
        return pair.client
    }

    /// Stops streaming and closes the link.
    public func shutdown() {
        condition.lock()
        shutDown = true
        link?.bearer.interrupt()
        condition.broadcast()
        condition.unlock()
        streamer?.join()
    }

    private func stream() {
        // The trace clock starts at the first subscription.
        condition.lock()
        while !shutDown {
            if let l = link, !l.server.configuration(valueHandle: valueHandle).isEmpty { break }
            condition.unlock()
            if let l = currentLink() { _ = l.server.waitForSubscription(valueHandle: valueHandle, timeout: 0.2) } else { pause(0.05) }
            condition.lock()
        }
        let start = ContinuousClock.now
        origin = start
        condition.unlock()

        var recent: [Reading] = []
        for reading in readings {
            let due = start + .milliseconds(Int64(reading.t / streaming.speed * 1000))
            while ContinuousClock.now < due {
                if isShutDown { return finish() }
                pause(Self.seconds(until: due))
            }
            if isShutDown { return finish() }
            guard let value = reading.value else { continue }
            recent.append(reading)
            recent.removeAll { $0.t < reading.t - 1 }
            if let w = streaming.dropWindow(containing: reading.t) {
                dropLink(window: w)
                lost += 1
                continue
            }
            guard let payload = encode(value, stable: isStable(recent)), let l = currentLink() else { lost += 1; continue }
            do {
                switch try l.server.updateValue(payload, handle: valueHandle) {
                case .stored: lost += 1
                case .notified, .indicated: sent += 1
                }
            } catch {
                lost += 1
            }
        }
        finish()
    }

    private func finish() {
        condition.lock()
        done = true
        condition.broadcast()
        condition.unlock()
    }

    private var isShutDown: Bool {
        condition.lock()
        defer { condition.unlock() }
        return shutDown
    }

    private func currentLink() -> (server: GATTServer, bearer: DescriptorBearer)? {
        condition.lock()
        defer { condition.unlock() }
        return link
    }

    private func dropLink(window: (at: Double, seconds: Double)) {
        condition.lock()
        defer { condition.unlock() }
        if let l = link {
            l.bearer.interrupt()
            link = nil
        }
    }

    private func pause(_ seconds: Double) {
        condition.lock()
        if !shutDown { _ = condition.wait(until: Deadline(seconds: max(0.001, seconds))) }
        condition.unlock()
    }

    /// Decent's rule: stable when the last second spans at most 2 g (3+ readings).
    private func isStable(_ recent: [Reading]) -> Bool {
        let values = recent.compactMap(\.value)
        guard values.count >= 3, let lo = values.min(), let hi = values.max() else { return false }
        return (hi - lo) * (unit.gramsPerUnit ?? 1) <= 2
    }

    /// The profile's payload; values a field cannot hold are clamped into it, as real firmware does.
    private func encode(_ value: Double, stable: Bool) -> [UInt8]? {
        var v = value
        switch profile {
        case .weightScale: v = min(max(v, 0), 327.67 * 1000 / (unit.gramsPerUnit ?? 1000))
        case .decentScale: v = min(max(v, -3276.7 / (unit.gramsPerUnit ?? 1)), 3276.7 / (unit.gramsPerUnit ?? 1))
        default: break
        }
        return try? profile.encode(ProfileReading(value: v, unit: unit, flags: stable ? .stable : []))
    }

    static func seconds(since instant: ContinuousClock.Instant) -> Double {
        let (s, atto) = (ContinuousClock.now - instant).components
        return Double(s) + Double(atto) * 1e-18
    }

    static func seconds(until instant: ContinuousClock.Instant) -> Double { -seconds(since: instant) }
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
public final class SimulatedBroadcaster: AdvertisementSource, @unchecked Sendable {
    public let address: BluetoothAddress
    public let profile: DeviceProfile
    public let readings: [Reading]
    public let unit: MeasurementUnit
    public let speed: Double
    public let started: Timestamp
    private var stopSignal = StopSignal()
    private var index = 0
    private var pendingRepeat: AdvertisingReport?
    private var origin: ContinuousClock.Instant?
    private var lastStable: Double = 0
    private var recent: [Reading] = []
    public private(set) var frames = 0

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
        stopSignal = stop
        return self
    }

    public var isFinished: Bool { index >= readings.count && pendingRepeat == nil }

    public func next(until deadline: ContinuousClock.Instant) throws(LiveError) -> AdvertisingReport? {
        if stopSignal.isStopped { throw .stopped }
        if let r = pendingRepeat {
            pendingRepeat = nil
            return r
        }
        let start = origin ?? .now
        origin = start
        while index < readings.count {
            let reading = readings[index]
            let due = start + .milliseconds(Int64(reading.t / speed * 1000))
            if due > deadline {
                if stopSignal.wait(seconds: SimulatedPeripheral.seconds(until: deadline)) { throw .stopped }
                return nil
            }
            if stopSignal.wait(seconds: SimulatedPeripheral.seconds(until: due)) { throw .stopped }
            index += 1
            guard let value = reading.value, let data = advertisement(value, at: reading.t) else { continue }
            frames += 1
            let report = AdvertisingReport(address: address, addressType: .lePublic, rssi: -50, source: .legacy(.advInd),
                                           isConnectable: true, isScanResponse: false, data: data)
            var repeated = report
            repeated.isScanResponse = true
            pendingRepeat = repeated
            return report
        }
        if stopSignal.wait(seconds: SimulatedPeripheral.seconds(until: deadline)) { throw .stopped }
        return nil
    }

    public func stop() {}

    /// Mi rules (as the emulated scale): stabilized when the last second holds ≥ 3
    /// readings within 0.1 kg; load removed below 0.1 kg, repeating the last stabilized weight.
    private func advertisement(_ value: Double, at t: Double) -> [UInt8]? {
        let grams = value * (unit.gramsPerUnit ?? 1)
        recent.append(Reading(t: t, value: grams))
        recent.removeAll { $0.t < t - 1 }
        let values = recent.compactMap(\.value)
        let stable = values.count >= 3 && (values.max()! - values.min()!) <= 100
        let removed = grams < 100
        if stable && !removed { lastStable = grams }
        let weightKg = min(max(removed ? lastStable : grams, 0), 327_670) / 1000
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

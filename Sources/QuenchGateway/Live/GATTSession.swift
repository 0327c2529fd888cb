import BluetoothWire
import GATT
import Logging
import QuenchCore
import QuenchProfiles
#if os(Linux)
import BluetoothLinux
import Threading
#endif
import Synchronization

/// Opens ATT links to devices: the kernel's L2CAP sockets, or a simulated
/// peripheral's socketpair in tests.
public protocol ATTConnector: Sendable {
    /// Connects within `timeout` seconds; gives up early when `stop` fires.
    func connect(to device: LiveDevice, timeout: Double, stop: StopSignal) throws(LiveError) -> any ATTBearer
}

#if os(Linux)
/// ATT over L2CAP (CID 4) with the device's own address type, optionally encrypted.
public struct L2CAPConnector: ATTConnector {
    public var adapter: UInt16?
    public var security: BluetoothSecurityLevel?

    public init(adapter: UInt16? = nil, security: BluetoothSecurityLevel? = nil) {
        self.adapter = adapter
        self.security = security
    }

    public func connect(to device: LiveDevice, timeout: Double, stop: StopSignal) throws(LiveError) -> any ATTBearer {
        do {
            return try L2CAPBearer.connect(to: device.address, type: device.addressType, adapter: adapter, timeout: timeout,
                                           security: security, cancellation: stop.bluetooth)
        } catch .cancelled {
            throw .stopped
        } catch {
            throw .bluetooth(error)
        }
    }
}
#endif

/// An open, subscribed link to a GATT device.
public struct GATTLink {
    public let client: GATTClient
    public let characteristic: GATTCharacteristic
    public let delivery: GATTDelivery

    /// Exchanges the MTU, finds the profile's characteristic and turns on its
    /// notifications or indications (read-poll profiles are read instead).
    public static func open(_ bearer: any ATTBearer, profile: DeviceProfile) throws(LiveError) -> GATTLink {
        guard case .gatt(let service, let uuid, let delivery) = profile.transport else {
            preconditionFailure("\(profile.identifier) is a broadcast profile")
        }
        let client = GATTClient(bearer: bearer)
        let found: GATTCharacteristic?
        do throws(GATTError) {
            try client.exchangeMTU()
            found = try client.characteristic(uuid, inService: service)
        } catch {
            throw .gatt(error)
        }
        guard let ch = found else { throw .characteristicMissing(service: service, characteristic: uuid) }
        do throws(GATTError) {
            switch delivery {
            case .notify: try client.subscribe(to: ch, mode: .notifications)
            case .indicate: try client.subscribe(to: ch, mode: .indications)
            case .readPoll: break
            }
        } catch {
            throw .gatt(error)
        }
        return GATTLink(client: client, characteristic: ch, delivery: delivery)
    }

    /// The next value: a notification or indication, or for read-poll
    /// profiles a read once the interval has passed. nil when nothing came
    /// within `timeout`.
    public func next(timeout: Double, stop: StopSignal) throws(LiveError) -> [UInt8]? {
        do {
            if case .readPoll(let interval) = delivery {
                if stop.wait(seconds: min(interval, timeout)) { return nil }
                return try client.read(handle: characteristic.valueHandle)
            }
            return try client.nextValue(timeout: timeout).map(\.value)
        } catch {
            throw .gatt(error)
        }
    }
}

/// Keeps one GATT device connected and subscribed on its own thread, feeding
/// its pipeline; reconnects with backoff until stopped.
public final class GATTDeviceSession: Sendable {
    public struct Counters: Sendable, Hashable {
        public var connections = 0
        public var failedAttempts = 0
    }

    public let pipeline: DevicePipeline
    private let connector: any ATTConnector
    private let stop: StopSignal
    private let backoff: Backoff
    private let connectTimeout: Double
    private let drainInterval: Double?
    let logger: Logger
    private let supervisor: AdapterSupervisor
    /// With other gateways configured for the same bottle: whether this one may hold its link (nil: always).
    private let handOver: HandOverBoard?
    private let worker = ThreadSlot()
    private let counters = Mutex(Counters())
    /// A reminder to show, and whether the open link can (ReminderSignals.swift).
    let signalState = Mutex(SignalState())

    public init(pipeline: DevicePipeline, connector: any ATTConnector, stop: StopSignal, backoff: Backoff = Backoff(),
                connectTimeout: Double = 10, drainInterval: Double? = nil, supervisor: AdapterSupervisor? = nil, handOver: HandOverBoard? = nil) {
        self.handOver = handOver
        self.supervisor = supervisor ?? AdapterSupervisor(control: nil, stop: stop, logger: pipeline.logger)
        self.pipeline = pipeline
        self.connector = connector
        self.stop = stop
        self.backoff = backoff
        self.connectTimeout = connectTimeout
        self.drainInterval = drainInterval
        logger = pipeline.logger
    }

    public var counts: Counters { counters.withLock { $0 } }

    public func start() {
        worker.start(name: "gatt \(pipeline.device.label)") { [self] in run() }
    }

    /// Waits for the thread to end (after `stop`).
    public func join() { worker.join() }

    private func run() {
        let device = pipeline.device
        var backoff = self.backoff
        var attempt = 0
        // A bottle that reports its own sips runs its profile's session, which keeps what is known of it across connections.
        let sipSession = device.profile.sipReporter.map {
            $0.makeSession(device: device.label, capacityML: device.calibration.capacityML ?? $0.defaultCapacityML,
                           newestStoredIdentity: pipeline.newestStoredIdentity())
        }
        // Asked before each connection and while the link is up: another gateway may have it, or take it.
        let holding = LinkStop(stop: stop, handOver: handOver, device: device.label)
        defer { handOver?.setHolding(device.label, false) }
        while !stop.isStopped {
            if !holding.mayConnect {
                stop.wait(seconds: 1)
                continue
            }
            var bearer: (any ATTBearer)?
            do throws(LiveError) {
                logger.debug("connecting", metadata: ["type": "\(device.addressType)"])
                let b = try connector.connect(to: device, timeout: connectTimeout, stop: stop)
                bearer = b
                if let sipSession {
                    do throws(ProfileSessionError) {
                        try sipSession.run(b, sink: pipeline, stop: holding, leaveWhenDrained: drainInterval != nil) { metadata in
                            connected(metadata)
                            attempt = 0
                        }
                    } catch {
                        throw LiveError(error)
                    }
                    if let drainInterval, !stop.isStopped {
                        // Periodic: drained; the bottle is left free until the next time (and stays this gateway's
                        // to drain, unless another hears it better meanwhile).
                        b.close()
                        pipeline.linkChanged(up: false)
                        logger.info("drained; next in \(TraceWriter.fixed(drainInterval / 60, places: 1)) min")
                        stop.wait(seconds: drainInterval)
                        continue
                    }
                } else {
                    let link = try GATTLink.open(b, profile: device.profile)
                    try openSignal(link.client)
                    connected(["mtu": "\(link.client.mtu)", "handle": "\(link.characteristic.valueHandle)"])
                    attempt = 0
                    // Waits as long as the device is quiet: a stop wakes the bearer (its eventfd), no polling.
                    // Only if the eventfd could not be made does a one-second wait bound the stop. A device
                    // that can show a reminder looks for one each `signalCheckInterval` (ReminderSignals.swift).
                    var quiet = holding.canWakeBearers ? Double.infinity : 1
                    if reminderSignal != nil { quiet = min(quiet, Self.signalCheckInterval) }
                    var showing: SignalInProgress?
                    var nextRead: Deadline?
                    defer { closeSignal(showing: showing) }
                    while !holding.isStopped {
                        if showing == nil { showing = takeSignal() }
                        if let s = showing { showing = try advance(s, link.client) }
                        let wait = min(quiet, showing?.due.remaining ?? .infinity)
                        if let value = try receive(link, within: wait, nextRead: &nextRead) { pipeline.handle(payload: value) }
                    }
                }
                b.close()
                if stop.isStopped { break }
                // Handed over: the other gateway drains what the bottle kept meanwhile.
                linkDown()
                continue
            } catch .stopped {
                bearer?.close()
                break
            } catch {
                bearer?.close()
                if stop.isStopped { break }
                supervisor.report(error, device: device.address.description)
                let connected = counters.withLock { c in c.failedAttempts += 1; return c.connections > 0 }
                if connected, attempt == 0 { linkDown(lost: true) }
                let delay = backoff.delay(attempt: attempt)
                logger.log(level: RepeatedNotice.worthSaying(occurrence: attempt) ? .warning : .debug, "link down; retrying",
                           metadata: ["error": "\(error)", "retry_in_s": "\(TraceWriter.fixed(delay, places: 1))", "attempt": "\(attempt + 1)"])
                attempt += 1
                stop.wait(seconds: delay)
            }
        }
        logger.debug("session ended")
    }

    /// The next value within `wait` seconds. A read-poll link is read only once its
    /// interval has passed since the last read, however often the loop wakes.
    private func receive(_ link: GATTLink, within wait: Double, nextRead: inout Deadline?) throws(LiveError) -> [UInt8]? {
        guard case .readPoll(let interval) = link.delivery else { return try link.next(timeout: wait, stop: stop) }
        let due = nextRead ?? Deadline(seconds: interval)
        nextRead = due
        if due.remaining > wait {
            stop.wait(seconds: wait)
            return nil
        }
        let value = try link.next(timeout: due.remaining, stop: stop)
        nextRead = Deadline(seconds: interval)
        return value
    }

    private func connected(_ metadata: Logger.Metadata) {
        counters.withLock { $0.connections += 1 }
        supervisor.alive()
        logger.info("connected and subscribed", metadata: metadata)
        pipeline.linkChanged(up: true)
        // A bottle that keeps its own sips is drained of them wherever it was: nothing to learn again.
        if handOver?.took(pipeline.device.label) == true, pipeline.device.profile.sipReporter == nil {
            pipeline.startAfresh(because: "another gateway held the bottle since this one last did, and stored what was drunk there")
        }
    }

    private func linkDown(lost: Bool = false) {
        pipeline.linkChanged(up: false)
        handOver?.setHolding(pipeline.device.label, false, lost: lost)
    }
}

/// The session's stop while it holds a link: the gateway's, or the hand-over rule's
/// saying another gateway should have the bottle (then waits are bounded to a second,
/// so a release is seen without a wake-up).
struct LinkStop: SessionStop {
    let stop: StopSignal
    let handOver: HandOverBoard?
    let device: String

    var isStopped: Bool { stop.isStopped || !(handOver?.decision(for: device).connects ?? true) }
    var canWakeBearers: Bool { handOver == nil && stop.canWakeBearers }

    /// Whether to connect now (asked before each attempt). A holder told to release lets the bottle go here.
    var mayConnect: Bool {
        guard let handOver else { return true }
        let decision = handOver.decision(for: device)
        if case .release = decision { handOver.setHolding(device, false) }
        return decision.connects
    }
}

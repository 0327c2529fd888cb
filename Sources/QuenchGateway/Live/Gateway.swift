import BluetoothWire
import Logging
import QuenchCore
import QuenchProfiles
import QuenchService
import QuenchStore
import Synchronization
#if os(Linux)
import BluetoothLinux
import Threading
#endif

/// `quench run`: every device at once. GATT devices each on their own
/// connection thread, broadcast devices from one shared scan; one detector per
/// device; every final event through one `EventWriter` (store, then
/// subscribers). `stop()` (from a signal) ends the threads; `wait()` then
/// judges what is pending and stores it before it returns.
public final class Gateway: Sendable {
    public struct Options: Sendable {
        public var connectTimeout = 10.0
        public var backoff = Backoff()
        public var detector = DetectorConfiguration()
        /// Session clock rate (1 = real time; more for accelerated simulated devices).
        public var clockRate = 1.0
        public var started: Timestamp = .wallClockNow
        /// For bottles that keep their own sips (HidrateSpark): nil stays
        /// connected and takes sips as they happen; a number connects that
        /// often (seconds), drains and disconnects, leaving the bottle free
        /// for its phone app in between (it accepts one central at a time).
        public var drainInterval: Double?
        /// When the adapter counts as stuck, and how often silence may power-cycle it.
        public var recovery = RecoveryLadder.Policy()
        /// The clocks events are stamped from (a scripted one in tests); nil: this
        /// machine's, looked at only at the real-time rate (accelerated sessions
        /// take their wall times from `started`).
        public var systemClock: (any SystemClock)?
        /// How often the main loop looks at the store's reminder rows, when a device
        /// can show a reminder (ReminderSignals.swift); a cheap read.
        public var reminderCheckInterval = 3.0
        /// Connected bottles other gateways are configured for too: which one connects (the
        /// claims on the broker, `HandOverRule`); nil: this gateway connects them all, as alone.
        public var handOver: HandOverRule?
        public init() {}
    }

    public let pipelines: [DevicePipeline]
    public let stopSignal: StopSignal
    /// Where final events go: the store, then the subscribers.
    public let writer: EventWriter
    public let gattSessions: [GATTDeviceSession]
    /// The recovery ladder: what the adapter has been through, and whether the gateway gave up on it.
    public let supervisor: AdapterSupervisor
    /// The session's time line and its anchor on the wall clock.
    public let clock: SessionClock
    private let systemClock: (any SystemClock)?
    /// Set when the clock became synchronised; cleared once no stamp is left to correct.
    private let pendingRestamp = Atomic<Bool>(false)
    private let listener: BroadcastListener?
    private let logger: Logger
    /// Shows on a device the reminders `quench remind --notify` gives; nil when no device can.
    private let reminders: ReminderWatch?
    private let reminderCheckInterval: Double
    private let store: IntakeStore?
    /// With `Options.handOver`: this gateway's and the others' claims on its connected bottles.
    public let handOver: HandOverBoard?

    /// - Parameters:
    ///   - connector: how GATT devices are reached.
    ///   - advertisements: the shared scan for broadcast devices.
    ///   - stop: what ends it (a caller may keep it, to stop from elsewhere).
    public init(devices: [LiveDevice], store: IntakeStore?, options: Options = Options(), observer: LiveObserver = .init(),
                logger: Logger = Logger(label: "quench.gateway"),
                connector: any ATTConnector,
                advertisements: @escaping @Sendable (StopSignal) throws(LiveError) -> any AdvertisementSource,
                adapterControl: (any AdapterControl)? = nil,
                stop: StopSignal = StopSignal()) {
        self.logger = logger
        self.store = store
        stopSignal = stop
        let supervisor = AdapterSupervisor(policy: options.recovery, control: adapterControl, stop: stop, logger: logger)
        self.supervisor = supervisor
        let writer = EventWriter(store: store, logger: logger)
        self.writer = writer
        #if os(Linux)
        systemClock = options.systemClock ?? (options.clockRate == 1 ? KernelClock() : nil)
        #else
        systemClock = options.systemClock
        #endif
        let reading = systemClock?.read()
        let clock = SessionClock(started: reading.map { Timestamp(secondsSince1970: $0.wall) } ?? options.started, rate: options.clockRate,
                                 synchronized: reading?.synchronized ?? true, sinceBoot: reading?.sinceBoot ?? 0,
                                 bootID: systemClock?.bootID ?? "")
        self.clock = clock
        pipelines = devices.map { device in
            DevicePipeline(device: device, clock: clock, writer: writer, detector: options.detector, observer: observer, logger: logger,
                           checkpoint: Self.storedCheckpoint(of: device, in: store, logger: logger))
        }
        let connected = devices.filter { !$0.profile.transport.isBroadcast }.map(\.label)
        let handOver = options.handOver.flatMap { rule in
            store.flatMap { connected.isEmpty ? nil : HandOverBoard(store: $0, devices: connected, rule: rule, logger: logger) }
        }
        self.handOver = handOver
        var broadcast: [DevicePipeline] = []
        var sessions: [GATTDeviceSession] = []
        for (i, p) in pipelines.enumerated() {
            if p.device.profile.transport.isBroadcast {
                broadcast.append(p)
            } else {
                let b = options.backoff
                // Each device its own jitter, so devices that dropped together do not retry in lockstep.
                let backoff = Backoff(initial: b.initial, factor: b.factor, maximum: b.maximum, jitter: b.jitter,
                                      seed: UInt64(i + 1) &* 0x9E37_79B9_7F4A_7C15)
                sessions.append(GATTDeviceSession(pipeline: p, connector: connector, stop: stop, backoff: backoff,
                                                  connectTimeout: options.connectTimeout, drainInterval: options.drainInterval,
                                                  supervisor: supervisor, handOver: handOver))
            }
        }
        gattSessions = sessions
        reminders = ReminderWatch(store: store, sessions: sessions, logger: logger)
        reminderCheckInterval = options.reminderCheckInterval
        // The shared scan also hears the connected bottles' advertising, when it says who should hold them.
        listener = broadcast.isEmpty && handOver == nil ? nil
            : BroadcastListener(pipelines: broadcast, stop: stop, backoff: options.backoff, logger: logger,
                                supervisor: supervisor, handOver: handOver, source: advertisements)
    }

    public convenience init(devices: [LiveDevice], store: IntakeStore?, options: Options = Options(), observer: LiveObserver = .init(),
                            logger: Logger = Logger(label: "quench.gateway"), transport: LiveTransport, stop: StopSignal = StopSignal()) {
        self.init(devices: devices, store: store, options: options, observer: observer, logger: logger,
                  connector: transport.connector, advertisements: transport.advertisements,
                  adapterControl: transport.adapterControl, stop: stop)
    }

    #if os(Linux)
    /// The gateway on this machine's Bluetooth adapter.
    public convenience init(devices: [LiveDevice], store: IntakeStore?, options: Options = Options(), observer: LiveObserver = .init(),
                            logger: Logger = Logger(label: "quench.gateway"), adapter: UInt16? = nil, scan: ScanOptions.Method = .automatic) {
        self.init(devices: devices, store: store, options: options, observer: observer, logger: logger,
                  transport: .kernel(adapter: adapter, scan: scan))
    }
    #endif

    /// The device's detector checkpoint as the store kept it (none when it cannot be read).
    static func storedCheckpoint(of device: LiveDevice, in store: IntakeStore?, logger: Logger) -> StoredCheckpoint {
        guard let store else { return .none }
        do { return try store.checkpoint(device: device.label) } catch {
            logger.warning("cannot read the detector's checkpoint", metadata: ["device": "\(device.label)", "error": "\(error)"])
            return .none
        }
    }

    /// Subscribe before `start`, so no event is missed.
    public func subscribe(_ subscriber: @escaping EventSubscriber) { writer.subscribe(subscriber) }

    public func start() {
        logger.info("gateway starting", metadata: ["devices": "\(pipelines.count)", "started": "\(clock.started.iso8601)"])
        if systemClock != nil {
            if clock.isSynchronized {
                restampUnsynced()
            } else {
                logger.warning("the wall clock is not synchronised yet (no real-time clock, NTP not answered): events are stamped provisionally and re-stamped once it is")
            }
        }
        // No link is up yet, whatever a gateway that crashed left recorded; and this process is the
        // gateway now (the MQTT publisher says `offline` for the bottles once it is gone).
        do {
            try store?.clearLinks(at: .wallClockNow)
            _ = try store?.claimRole("gateway", holder) { _ in false }
        } catch {
            logger.warning("cannot record the gateway's start (links shown as they were)", metadata: ["error": "\(error)"])
        }
        writer.start()
        // The first look is the baseline: a reminder given before this start is never shown.
        reminders?.check()
        // The other gateways' claims as the broker left them, before any session decides whether to connect.
        handOver?.refresh()
        for s in gattSessions { s.start() }
        listener?.start()
    }

    private var holder: ProcessHolder { Self.roleHolder(since: clock.started) }

    /// This process as the holder of the `gateway` role (its devices running, or waiting for a pairing).
    static func roleHolder(since: Timestamp) -> ProcessHolder {
        let process = ProcessIdentity.current
        return ProcessHolder(pid: process.pid, started: process.started, command: "quench gateway", since: since)
    }

    /// Asks every thread to end; `wait()` then finishes the devices.
    public func stop() { stopSignal.stop() }

    /// Blocks the calling thread until stopped, then judges what is pending
    /// and returns once every final event is stored and delivered.
    public func wait() {
        for s in gattSessions { s.join() }
        listener?.join()
        for p in pipelines { p.finish() }
        // Stopped: no link is held any more (what is published about the devices says so).
        for p in pipelines where p.isLinkUp { p.linkChanged(up: false) }
        writer.drain()
        try? store?.releaseRole("gateway", holder)
        let c = writer.counts
        logger.info("gateway stopped", metadata: ["readings": "\(pipelines.reduce(0) { $0 + $1.readingCount })",
                                                  "stored": "\(c.stored)", "already_stored": "\(c.alreadyStored)",
                                                  "quarantined": "\(c.quarantined)"])
    }

    /// Runs until `seconds` pass (nil: until `stop()`), then stops and waits.
    /// The calling thread is the main loop: under systemd (`notifier`) it says
    /// READY=1 once started, STATUS= as it goes, and STOPPING=1 at the end; a
    /// thread of its own says WATCHDOG=1 only while the store writer and the main
    /// loop show life, or the database is locked by another process (waited for,
    /// not stuck: an import holding the write lock for minutes had systemd kill a
    /// healthy gateway after 60 s). A stuck writer or loop stops the pings, and
    /// systemd restarts the service.
    ///
    /// `endWhen`, asked every `endCheckInterval` seconds on this thread, ends the
    /// run as a stop would, but without STOPPING=1: quenchd then starts again with
    /// another set of devices (a pairing, `PairingWatch`). Returns whether it did.
    @discardableResult
    public func run(seconds: Double?, notifier: ServiceNotifier = ServiceNotifier(socketPath: nil, watchdogInterval: nil),
                    endWhen: (() -> Bool)? = nil, endCheckInterval: Double = 2) -> Bool {
        start()
        notifier.ready(status: statusLine())
        let end = Deadline(seconds: seconds ?? .infinity)
        // Twice per watchdog period, as sd_watchdog_enabled(3) advises; else a status line now and then.
        // While the wall clock is not synchronised, often enough to re-stamp soon after it is.
        let regularTick = notifier.watchdogInterval.map { $0 / 2 } ?? 30
        let stuckAfter = max(notifier.watchdogInterval ?? 60, 4 * EventWriter.heartbeatInterval)
        // The main loop's last sign of life (each turn), and the end of the pings.
        let loopLife = Condition(ContinuousClock.now)
        let pingsEnd = Condition(false)
        let pinger = ThreadSlot()
        if notifier.watchdogInterval != nil {
            pinger.start(name: "watchdog") { [self] in
                var stuck = false
                repeat {
                    let loopAlive = loopLife.withLock { ContinuousClock.now - $0 < .seconds(stuckAfter) }
                    if LockWaits.waited(within: 2 * EventWriter.heartbeatInterval) || (loopAlive && writer.isResponsive(within: stuckAfter)) {
                        notifier.watchdog()
                        stuck = false
                    } else if !stuck {
                        stuck = true
                        logger.critical("the \(loopAlive ? "store writer" : "main loop") has shown no life for \(Int(stuckAfter)) s; watchdog pings stopped")
                    }
                } while pingsEnd.wait(until: Deadline(seconds: regularTick), { $0 ? () : nil }) == nil
            }
        }
        defer {
            pingsEnd.changing { $0 = true }
            pinger.join()
        }
        var ended = false
        var nextTick = Deadline(seconds: 0)
        while !stopSignal.isStopped, !end.hasPassed {
            loopLife.withLock { $0 = .now }
            if nextTick.hasPassed { nextTick = Deadline(seconds: clock.isSynchronized ? regularTick : min(regularTick, 2)) }
            // Reminders are looked for more often than the rest is done.
            var wait = reminders == nil ? nextTick.remaining : min(nextTick.remaining, reminderCheckInterval)
            // The other gateways' claims are read, and this one's said, every second.
            if handOver != nil { wait = min(wait, 1) }
            if endWhen != nil { wait = min(wait, endCheckInterval) }
            if stopSignal.wait(seconds: min(wait, end.remaining)) { break }
            reminders?.check()
            handOver?.refresh()
            if let endWhen, endWhen() {
                ended = true
                break
            }
            guard nextTick.hasPassed else { continue }
            checkClock()
            notifier.status(statusLine())
        }
        if !ended { notifier.stopping() }
        stop()
        wait()
        return ended
    }

    /// Looks at the wall clock (the main loop does, each tick): a jump is
    /// logged and changes no event already stamped; the first sight of a
    /// synchronised clock re-stamps what was stamped before it.
    public func checkClock() {
        guard let systemClock else { return }
        switch clock.observe(systemClock.read()) {
        case .steady:
            // An event made final just before the clock was set may be committed after the re-stamp:
            // once synchronised, re-stamp each tick until nothing is left.
            if clock.isSynchronized, pendingRestamp.load(ordering: .relaxed), restampUnsynced() == 0 {
                pendingRestamp.store(false, ordering: .relaxed)
            }
        case .jumped(let by):
            logger.warning("the wall clock jumped by \(TraceWriter.fixed(by, places: 1)) s; events keep their places on the monotonic clock")
        case .synchronized(let correction):
            pendingRestamp.store(true, ordering: .relaxed)
            let n = restampUnsynced()
            logger.notice("the wall clock is synchronised (it was \(TraceWriter.fixed(correction, places: 1)) s off): \(n) event\(n == 1 ? "" : "s") re-stamped")
        }
    }

    @discardableResult
    private func restampUnsynced() -> Int {
        let (moved, forgotten) = writer.restampUnsynced(clock)
        if forgotten > 0 {
            logger.warning("\(forgotten) event\(forgotten == 1 ? " was" : "s were") stamped before the clock was set in an earlier boot and cannot be corrected; \(forgotten == 1 ? "it keeps its" : "they keep their") provisional time\(forgotten == 1 ? "" : "s")")
        }
        return moved
    }

    /// `STATUS=`: devices connected, events stored this run.
    public func statusLine() -> String {
        let gatt = pipelines.filter { !$0.device.profile.transport.isBroadcast }
        let c = writer.counts
        let recovery = supervisor.summary
        return "\(gatt.filter(\.isLinkUp).count) of \(gatt.count) connected" + (listener == nil ? "" : ", broadcasts heard by scan")
            + "; \(c.stored) event\(c.stored == 1 ? "" : "s") stored since start" + (c.quarantined > 0 ? ", \(c.quarantined) refused" : "")
            + (recovery.isEmpty ? "" : "; " + recovery)
    }
}

/// How a session reaches its devices: GATT connections and the shared scan
/// for broadcasters. The kernel's in use; simulated peripherals in tests.
public struct LiveTransport: Sendable {
    public var connector: any ATTConnector
    public var advertisements: @Sendable (StopSignal) throws(LiveError) -> any AdvertisementSource
    /// How the recovery ladder power-cycles the adapter (nil: it cannot).
    public var adapterControl: (any AdapterControl)?

    public init(connector: any ATTConnector,
                advertisements: @escaping @Sendable (StopSignal) throws(LiveError) -> any AdvertisementSource,
                adapterControl: (any AdapterControl)? = nil) {
        self.connector = connector
        self.advertisements = advertisements
        self.adapterControl = adapterControl
    }

    #if os(Linux)
    /// This machine's Bluetooth adapter.
    public static func kernel(adapter: UInt16? = nil, scan: ScanOptions.Method = .automatic) -> LiveTransport {
        LiveTransport(connector: L2CAPConnector(adapter: adapter),
                      advertisements: { stop throws(LiveError) in try KernelScan(ScanOptions(adapter: adapter, method: scan), stop: stop) },
                      adapterControl: KernelAdapterControl(adapter: adapter))
    }
    #endif
}

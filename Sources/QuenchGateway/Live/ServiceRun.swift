#if os(Linux)
import Logging
import QuenchService
import QuenchStore
import Synchronization
import Threading

/// The devices the gateway can run, and why each other one cannot (`Gateway.usable`).
public struct DeviceSelection: Sendable, Equatable {
    public struct Problem: Sendable, Equatable {
        public var address: String
        public var error: LiveError
        public static func == (a: Problem, b: Problem) -> Bool { a.address == b.address && "\(a.error)" == "\(b.error)" }
    }

    public var devices: [LiveDevice] = []
    public var problems: [Problem] = []
    public init() {}
}

/// What `quench pair` saves, watched: the store's `devices` table, read again
/// whenever the count of changes shown moves (`shownChanges`, which a device
/// saved moves; one cheap read a second: a bounded poll, as the web page's change
/// watch does; inotify would wake for every write of the gateway's own WAL as well).
/// Used by one thread, the service's main loop.
public final class PairingWatch {
    public let store: IntakeStore
    /// `gateway.devices` / `--device`: only these (empty: every paired device).
    public let only: [String]
    public private(set) var selection: DeviceSelection
    private var version: Int64?

    public init(store: IntakeStore, only: [String]) throws(LiveError) {
        self.store = store
        self.only = only
        selection = DeviceSelection()
        // The version before the read: a pairing committed between the two is read again at the next look.
        version = try? store.shownChanges()
        selection = try read()
    }

    private func read() throws(LiveError) -> DeviceSelection {
        do { return Gateway.usable(try store.listDevices(), only: only) } catch { throw .store(error) }
    }

    /// Whether the usable devices (or the reasons others are not) changed since
    /// the last look; a store that cannot be read now counts as no change (the
    /// gateway's writer says what is wrong with it).
    public func hasChanged() -> Bool {
        guard let now = try? store.shownChanges(), now != version else { return false }
        version = now
        guard let fresh = try? read(), fresh != selection else { return false }
        selection = fresh
        return true
    }
}

extension Gateway {
    /// How often quenchd looks for a pairing: while it waits for its first device, and while it runs.
    public static let pairingPollInterval = 1.0

    /// What `quenchd` does: `runUntilStopped`, but as a service that is never
    /// restarted for want of a device. With nothing paired (or none of the configured
    /// devices), it says so (STATUS=, the journal) and waits; a device paired
    /// meanwhile is started at once, and a pairing while it runs restarts the
    /// devices in this process (pending events are judged and stored first).
    /// A configured device that is not paired, or a record that cannot be used, is
    /// a warning for that device. It returns at SIGINT/SIGTERM, `shutdown`, or
    /// after `seconds`; it throws for a store it cannot open and an adapter that gave up.
    /// - Parameter explain: an error in the words of the program (its commands), for STATUS= and the journal.
    public static func serve(_ request: RunRequest, notifier: ServiceNotifier = .fromEnvironment(), transport: LiveTransport? = nil,
                             shutdown: StopSignal = StopSignal(), explain: @escaping @Sendable (LiveError) -> String = { "\($0)" },
                             onEvent: @escaping EventSubscriber) throws(LiveError) {
        let logger = LiveLogging.bootstrap(level: request.logLevel)
        let store: IntakeStore
        do { store = try IntakeStore(path: request.databasePath, mode: .create) } catch where error.code == .readOnly {
            // What only writes cannot start on a database it cannot write: 78, not a restart every 5 s.
            throw .store(StoreError(.notWritable, path: error.path, error.message, cause: error.cause))
        } catch { throw .store(error) }
        // In the journal, with where the copy as it was went (quenchd said nothing of it: the service trial).
        if let upgrade = store.upgradeNotice { logger.notice("\(upgrade)") }
        // A newer Quench's database is not one to log into: said now (exit 78), not at the first sip.
        if let refusal = store.newerSchemaRefusal(doing: "logging") { throw .store(refusal) }
        // Nor one it cannot write: it ran "active", each sip failing to be stored (the service trial).
        if let refusal = IntakeStore.writeRefusal(request.databasePath, doing: "logging") { throw .store(refusal) }
        let watch = try PairingWatch(store: store, only: request.devices)
        let running = RunningGateway()
        let signals = StopSignals.handle { signal in
            logger.notice("signal \(signal): stopping")
            shutdown.stop()
            running.stop()
        }
        defer { signals.cancel() }
        let end = Deadline(seconds: request.seconds ?? .infinity)
        // The gateway runs while it waits for a pairing too: Home Assistant's "Bluetooth gateway"
        // (the `gateway` role, published by the MQTT publisher) said offline until a bottle was paired.
        let holder = roleHolder(since: .wallClockNow)
        defer { try? store.releaseRole("gateway", holder) }
        var warned: [DeviceSelection.Problem] = []
        while !shutdown.isStopped, !end.hasPassed {
            let selection = watch.selection
            for p in selection.problems where !warned.contains(p) {
                logger.warning("device \(p.address) is not started: \(explain(p.error))")
            }
            warned = selection.problems
            guard !selection.devices.isEmpty else {
                let status = waitingStatus(selection, explain: explain)
                logger.notice("\(status)")
                notifier.ready(status: status)
                do { _ = try store.claimRole("gateway", holder) { ProcessIdentity.isRunning(pid: $0.pid, started: $0.started) } } catch {
                    logger.warning("cannot record that the gateway runs", metadata: ["error": "\(error)"])
                }
                waitForPairing(watch, notifier: notifier, shutdown: shutdown, end: end)
                continue
            }
            let gateway = Gateway(devices: selection.devices, store: store, options: request.options, logger: logger,
                                  transport: transport ?? .kernel(adapter: request.adapter))
            gateway.subscribe(onEvent)
            running.set(gateway)
            if shutdown.isStopped { gateway.stop() }
            let changed = gateway.run(seconds: end.remaining.isFinite ? end.remaining : nil, notifier: notifier,
                                      endWhen: { shutdown.isStopped || watch.hasChanged() }, endCheckInterval: pairingPollInterval)
            running.set(nil)
            if let fault = gateway.supervisor.gaveUp { throw .adapterGaveUp(fault) }
            guard changed else { return }
            if shutdown.isStopped { break }
            let before = Set(selection.devices.map(\.label)), after = Set(watch.selection.devices.map(\.label))
            logger.notice("the paired devices changed: restarting the gateway's devices in this process",
                          metadata: ["added": "\(after.subtracting(before).sorted())", "removed": "\(before.subtracting(after).sorted())"])
        }
        notifier.stopping()
    }

    /// STATUS= while no device can be started: why, and what starts one.
    static func waitingStatus(_ selection: DeviceSelection, explain: (LiveError) -> String) -> String {
        guard let first = selection.problems.first else { return "waiting for a pairing: " + explain(.noDevices) }
        let more = selection.problems.count > 1 ? " (and \(selection.problems.count - 1) more)" : ""
        return "waiting for a usable device: \(explain(first.error))\(more)"
    }

    /// Until the watch sees a change, a stop, or `end`; WATCHDOG=1 meanwhile (nothing can be stuck while nothing runs).
    static func waitForPairing(_ watch: PairingWatch, notifier: ServiceNotifier, shutdown: StopSignal, end: Deadline) {
        let ping = notifier.watchdogInterval.map { $0 / 2 } ?? .infinity
        var nextPing = Deadline(seconds: 0)
        while !end.hasPassed {
            if nextPing.hasPassed {
                notifier.watchdog()
                nextPing = Deadline(seconds: ping)
            }
            if shutdown.wait(seconds: min(pairingPollInterval, end.remaining, nextPing.remaining)) { return }
            if watch.hasChanged() { return }
        }
    }
}

/// The gateway quenchd runs now, for the signal thread to stop.
final class RunningGateway: Sendable {
    private let current = Mutex<Gateway?>(nil)

    func set(_ gateway: Gateway?) { current.withLock { $0 = gateway } }
    func stop() { current.withLock { $0?.stop() } }
}
#endif

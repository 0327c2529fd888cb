#if os(Linux)
import BluetoothLinux
import Glibc
import BluetoothWire
import Logging
import QuenchCore
import QuenchProfiles
import QuenchService
import QuenchStore
import Threading
import Synchronization

extension Gateway {
    /// Every paired device (or those named), from the store.
    /// With no addresses, a device that cannot be used (no calibration, an
    /// unknown profile) is passed to `skipped` and the others are returned, so
    /// one bad record never stops the service; an error only when none is usable.
    public static func devices(in store: IntakeStore, only addresses: [String],
                               skipped: ((String, LiveError) -> Void)? = nil) throws(LiveError) -> [LiveDevice] {
        let records: [Device]
        do { records = try store.listDevices() } catch { throw .store(error) }
        let chosen = usable(records, only: addresses)
        // Asked for by name: say why it cannot be used. Otherwise the others still run.
        if !addresses.isEmpty || skipped == nil, let first = chosen.problems.first { throw first.error }
        guard !records.isEmpty else { throw .noDevices }
        for p in chosen.problems { skipped?(p.address, p.error) }
        if chosen.devices.isEmpty { throw chosen.problems.last?.error ?? .noDevices }
        return chosen.devices
    }

    /// The devices the gateway can run among `records` (those named in `addresses`
    /// when there are any), and for each other one why not: a named address that is
    /// not paired, a record without a calibration or with an unknown profile.
    public static func usable(_ records: [Device], only addresses: [String]) -> DeviceSelection {
        var chosen = records
        var out = DeviceSelection()
        if !addresses.isEmpty {
            chosen = []
            for a in addresses {
                let wanted = normalizedAddress(a)
                guard let r = records.first(where: { $0.address == wanted }) else {
                    out.problems.append(.init(address: a, error: .unknownDevice(a)))
                    continue
                }
                chosen.append(r)
            }
        }
        for r in chosen {
            do throws(LiveError) { out.devices.append(try LiveDevice(r)) } catch {
                out.problems.append(.init(address: r.address, error: error))
            }
        }
        return out
    }

    /// What `quench run` (and `quenchd`) does: every chosen device from the
    /// store, each committed event handed to `onEvent` (the caller prints it),
    /// until `seconds` pass or SIGINT/SIGTERM; then pending events are judged
    /// and stored before it returns.
    public struct RunRequest: Sendable {
        public var databasePath: String
        public var devices: [String] = []
        public var seconds: Double?
        public var logLevel: String?
        public var options = Gateway.Options()
        /// The Bluetooth adapter's index (`hci1` is 1); nil: the first.
        public var adapter: UInt16?
        /// Whether a missing database is made (the service's, in its own folder); else
        /// it means nothing is paired, and `quench run` says so without leaving an empty file.
        public var createsDatabase = true

        public init(databasePath: String) { self.databasePath = databasePath }
    }

    public static func runUntilStopped(_ request: RunRequest, onEvent: @escaping EventSubscriber) throws(LiveError) {
        let logger = LiveLogging.bootstrap(level: request.logLevel)
        let store: IntakeStore
        do { store = try IntakeStore(path: request.databasePath, mode: request.createsDatabase ? .create : .existing) } catch {
            // No database yet means nothing was paired: said as such, and no empty file left behind.
            guard error.code == .notFound else { throw .store(error) }
            throw request.devices.first.map { .unknownDevice($0) } ?? .noDevices
        }
        if let refusal = store.newerSchemaRefusal(doing: "logging") { throw .store(refusal) }
        if let upgrade = store.upgradeNotice { logger.notice("\(upgrade)") }
        let devices = try Gateway.devices(in: store, only: request.devices) { address, error in
            logger.error("device skipped: it cannot be used", metadata: ["device": "\(address)", "error": "\(error)"])
        }
        let gateway = Gateway(devices: devices, store: store, options: request.options, logger: logger, transport: .kernel(adapter: request.adapter))
        gateway.subscribe(onEvent)
        let signals = StopSignals.handle { signal in
            logger.notice("signal \(signal): stopping")
            gateway.stop()
        }
        gateway.run(seconds: request.seconds, notifier: .fromEnvironment())
        signals.cancel()
        if let fault = gateway.supervisor.gaveUp { throw .adapterGaveUp(fault) }
    }
}
#endif

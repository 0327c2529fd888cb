import BluetoothWire
import GATT
import Logging
import Synchronization
#if os(Linux)
import Glibc
import BluetoothLinux
#endif

/// Powers the adapter off and on: the recovery ladder's second rung. The
/// kernel's management socket, or a simulated adapter in tests.
public protocol AdapterControl: Sendable {
    func powerCycle() throws(LiveError)
}

#if os(Linux)
/// This machine's adapter (nil: the first the kernel lists), through mgmt Set Powered.
public struct KernelAdapterControl: AdapterControl {
    public var adapter: UInt16?
    public init(adapter: UInt16?) { self.adapter = adapter }

    public func powerCycle() throws(LiveError) {
        do { try BluetoothAdapter.powerCycle(adapter) } catch { throw .bluetooth(error) }
    }
}
#endif

/// One per gateway: hears from the scan and the links what the adapter is
/// doing, keeps the `RecoveryLadder`, and carries out its rungs. The scan
/// restarts itself when `discoveryGeneration` moves; a power cycle happens
/// here; giving up stops the gateway, which then exits with
/// `LiveError.adapterGaveUp` (a status of its own) for systemd to restart it.
public final class AdapterSupervisor: Sendable {
    private let ladder: Mutex<RecoveryLadder>
    private let control: (any AdapterControl)?
    private let stop: StopSignal
    private let logger: Logger
    private let origin = ContinuousClock.now
    private let generation = Atomic<Int>(0)
    private let failure = Mutex<AdapterFault?>(nil)

    public init(policy: RecoveryLadder.Policy = .init(), control: (any AdapterControl)?, stop: StopSignal, logger: Logger) {
        ladder = Mutex(RecoveryLadder(policy: policy, now: 0))
        self.control = control
        self.stop = stop
        self.logger = logger
    }

    public var policy: RecoveryLadder.Policy { ladder.withLock { $0.policy } }
    public var counters: RecoveryLadder.Counters { ladder.withLock { $0.counters } }
    public var rung: RecoveryLadder.Rung { ladder.withLock { $0.rung } }
    public var isWaitingForAdapter: Bool { ladder.withLock { $0.adapterMissing } }
    /// Why the gateway gave up, once it has.
    public var gaveUp: AdapterFault? { failure.withLock { $0 } }
    /// Moves each time the scan must be restarted (a rung, or after a power cycle).
    public var discoveryGeneration: Int { generation.load(ordering: .acquiring) }

    private var now: Double {
        let d = ContinuousClock.now - origin
        return Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
    }

    /// Something was heard, or a link came up.
    public func alive() {
        let now = now
        if ladder.withLock({ $0.alive(at: now) }) {
            logger.notice("Bluetooth adapter is back; resuming")
        }
    }

    /// Called by the scan while it hears nothing.
    public func checkSilence() {
        let now = now
        let action = ladder.withLock { $0.checkSilence(at: now) }
        perform(action, because: "nothing heard for \(Int(policy.quietLimit)) s")
    }

    /// An error from the scan or a link: climbs the ladder when it is the
    /// adapter's fault, waits when the adapter is gone, explains a lost bond.
    /// Returns what it made of the error.
    @discardableResult
    public func report(_ error: LiveError, device: String? = nil) -> AdapterFault? {
        if error.isStaleBond {
            let first = ladder.withLock { l -> Bool in l.staleBond(); return l.counters.staleBonds == 1 }
            // Said once in full; the retries that follow are in the link's own log lines.
            logger.log(level: first ? .error : .debug, "\(LiveError.staleBondAdvice(device: device))", metadata: ["error": "\(error)"])
            return nil
        }
        guard let fault = AdapterFault(error) else { return nil }
        let now = now
        let (action, newlyMissing) = ladder.withLock { l -> (RecoveryLadder.Action, Bool) in
            let wasMissing = l.adapterMissing
            return (l.fault(fault, at: now), !wasMissing && l.adapterMissing)
        }
        if newlyMissing {
            logger.warning("\(fault); waiting for it (or another adapter) to come back", metadata: ["error": "\(error)"])
        }
        perform(action, because: "\(fault): \(error)")
        return fault
    }

    private func perform(_ action: RecoveryLadder.Action, because reason: String) {
        switch action {
        case .none:
            return
        case .restartDiscovery:
            logger.warning("restarting discovery", metadata: ["reason": "\(reason)", "restarts": "\(counters.discoveryRestarts)"])
            generation.add(1, ordering: .releasing)
        case .powerCycleAdapter:
            logger.warning("power-cycling the Bluetooth adapter", metadata: ["reason": "\(reason)", "power_cycles": "\(counters.powerCycles)"])
            do throws(LiveError) {
                try control?.powerCycle()
            } catch {
                logger.error("power cycle failed", metadata: ["error": "\(error)"])
            }
            generation.add(1, ordering: .releasing)
        case .giveUp(let fault):
            failure.withLock { if $0 == nil { $0 = fault } }
            logger.critical("the Bluetooth adapter did not recover (discovery restarted, adapter power-cycled); stopping so the service is restarted",
                            metadata: ["reason": "\(reason)"])
            stop.stop()
        }
    }

    /// For STATUS= and the log: empty while nothing has happened.
    public var summary: String {
        let (c, missing) = ladder.withLock { ($0.counters, $0.adapterMissing) }
        var parts: [String] = []
        if missing { parts.append("waiting for the Bluetooth adapter") }
        if c.discoveryRestarts > 0 { parts.append("discovery restarted \(c.discoveryRestarts)×") }
        if c.powerCycles > 0 { parts.append("adapter power-cycled \(c.powerCycles)×") }
        if c.adapterLosses > 0 { parts.append("adapter lost \(c.adapterLosses)×") }
        if c.staleBonds > 0 { parts.append("\(c.staleBonds) refused for a lost bond") }
        return parts.joined(separator: ", ")
    }
}

extension AdapterFault {
    /// The adapter's part in a failure, if it had one. A device that does not
    /// answer (connect timeouts, link loss) is the device's business, not the adapter's.
    public init?(_ error: LiveError) {
        #if os(Linux)
        guard case .bluetooth(let e) = error, let fault = Self(e) else { return nil }
        self = fault
        #else
        return nil
        #endif
    }

    #if os(Linux)
    init?(_ error: BluetoothLinuxError) {
        switch error {
        case .noAdapter: self = .missing
        case .controllerTimeout: self = .notAnswering
        case .adapterDown(_, let attempts):
            self = attempts.lazy.compactMap { Self($0) }.first { $0.isWaitedFor } ?? .wontPower
        case .management(let op, _, let status):
            switch status {
            case .invalidIndex: self = .missing
            case .rfkilled: self = .blocked
            default:
                guard op == .startDiscovery else { return nil }
                self = .discoveryRefused
            }
        case .hci(let op, _):
            guard [.leSetScanEnable, .leSetExtendedScanEnable, .leSetScanParameters, .leSetExtendedScanParameters].contains(op) else { return nil }
            self = .discoveryRefused
        case .scanUnavailable(let management, let raw):
            // Raw HCI was the fallback: the management socket's reason is the one that counts.
            guard let fault = Self(management) ?? Self(raw) else { return nil }
            self = fault
        case .system(let e):
            // The adapter went away under an open socket or before one was bound.
            guard e.errno == ENODEV else { return nil }
            self = .missing
        case .timeout, .malformed, .cancelled:
            return nil
        }
    }
    #endif
}

extension LiveError {
    /// The device refused the link's encryption because it no longer has the
    /// key made at pairing (it was reset, or paired with another phone): HCI
    /// "PIN or Key Missing" (0x06, EBADE) or "Authentication Failure" (0x05,
    /// EACCES) on the L2CAP link (Core 5.3 Vol 1 Part F).
    public var isStaleBond: Bool {
        let code: Int32?
        switch self {
        #if os(Linux)
        case .bluetooth(.system(let e)) where e.operation.hasPrefix("connect(") || e.operation.hasPrefix("BT_SECURITY"):
            code = e.errno
        #endif
        case .gatt(.bearer(.closed(let e))), .gatt(.securityUpgradeFailed(_, .closed(let e))):
            code = e
        case .gatt(.bearer(.system(_, let e))), .gatt(.securityUpgradeFailed(_, .system(_, let e))):
            code = e
        default:
            code = nil
        }
        #if os(Linux)
        return code == EBADE || code == EACCES
        #else
        return false
        #endif
    }

    /// What to do about a lost bond.
    public static func staleBondAdvice(device: String?) -> String {
        let address = device ?? "ADDRESS"
        return "\(device ?? "the device") refused encryption: it no longer has the key from pairing (reset, or paired elsewhere). "
            + "Forget the old bond and pair again: `bluetoothctl remove \(address)` (if bluetoothd is running), then `quench pair \(address) --bond`"
    }
}

/// What goes wrong with a Bluetooth adapter on a gateway left alone for
/// months, as the gateway can tell from what its scan and links report.
public enum AdapterFault: Sendable, Hashable, CustomStringConvertible {
    /// The controller stopped answering commands (a mgmt or HCI command timed
    /// out): the locked-up UART controller of a Pi (CYW43455) looks like this.
    case notAnswering
    /// The adapter is down and could not be powered.
    case wontPower
    /// Discovery cannot start or restart (busy: "operation already in progress",
    /// BlueZ issue 807, or refused).
    case discoveryRefused
    /// The adapter is gone (a USB adapter unplugged, the driver unbound).
    case missing
    /// rfkill blocks the adapter: someone switched the radio off on purpose.
    case blocked

    /// Faults that are waited out rather than climbed: nothing the gateway does would help.
    public var isWaitedFor: Bool { self == .missing || self == .blocked }

    public var description: String {
        switch self {
        case .notAnswering: "the adapter does not answer commands"
        case .wontPower: "the adapter is down and cannot be powered"
        case .discoveryRefused: "discovery cannot be started"
        case .missing: "the adapter is gone"
        case .blocked: "the adapter is blocked by rfkill (`rfkill unblock bluetooth` lifts it)"
        }
    }
}

/// The recovery ladder (pure; the caller does what it says): when the adapter
/// seems stuck, restart discovery; if it is still stuck, power-cycle the
/// adapter; if even that does not help, give up so the service manager
/// starts the process afresh. Anything heard over the air, or a link that
/// comes up, shows the adapter works and puts it back at the bottom.
///
/// Silence alone (no advertisement from anyone while scanning) climbs only as
/// far as a power cycle, at most once per `silentPowerCycleSpacing`: a quiet
/// room with a scale that is asleep is silent too, and must not restart the
/// service. A missing or rfkill-blocked adapter is waited for, not climbed:
/// it comes back when it is plugged in or unblocked.
public struct RecoveryLadder: Sendable {
    public struct Policy: Sendable, Hashable {
        /// Seconds of scanning without any advertisement before discovery is restarted.
        public var quietLimit: Double = 600
        /// Seconds between two power cycles for silence alone.
        public var silentPowerCycleSpacing: Double = 6 * 3600
        /// Seconds a rung is given to work before a new fault climbs past it.
        public var settle: Double = 5
        public init() {}
    }

    public enum Rung: Int, Sendable, Comparable, CustomStringConvertible {
        case healthy, discoveryRestarted, adapterPowerCycled, gaveUp
        public static func < (a: Rung, b: Rung) -> Bool { a.rawValue < b.rawValue }
        public var description: String {
            switch self {
            case .healthy: "healthy"
            case .discoveryRestarted: "discovery restarted"
            case .adapterPowerCycled: "adapter power-cycled"
            case .gaveUp: "gave up"
            }
        }
    }

    public enum Action: Sendable, Hashable {
        case none
        case restartDiscovery
        case powerCycleAdapter
        /// Stop the process; systemd starts it again.
        case giveUp(AdapterFault)
    }

    /// For the logs and systemd's STATUS=.
    public struct Counters: Sendable, Hashable {
        public var discoveryRestarts = 0
        public var powerCycles = 0
        public var adapterLosses = 0
        public var staleBonds = 0
        public init() {}
    }

    public let policy: Policy
    public private(set) var rung: Rung = .healthy
    public private(set) var counters = Counters()
    /// Whether the adapter is known to be gone (waiting for it).
    public private(set) var adapterMissing = false
    private var lastSign: Double
    private var lastClimb = -Double.infinity
    private var lastSilentPowerCycle = -Double.infinity

    public init(policy: Policy = Policy(), now: Double) {
        self.policy = policy
        lastSign = now
    }

    /// An advertisement was heard or a link came up: the adapter works.
    /// Returns true when this ends a missing adapter (it came back).
    @discardableResult
    public mutating func alive(at now: Double) -> Bool {
        lastSign = now
        if rung != .gaveUp { rung = .healthy }
        let cameBack = adapterMissing
        adapterMissing = false
        return cameBack
    }

    /// Scanning has gone on with nothing heard: what to do about it.
    public mutating func checkSilence(at now: Double) -> Action {
        guard !adapterMissing, rung != .gaveUp, now - max(lastSign, lastClimb) >= policy.quietLimit else { return .none }
        switch rung {
        case .healthy:
            return climb(to: .discoveryRestarted, at: now)
        case .discoveryRestarted, .adapterPowerCycled:
            guard now - lastSilentPowerCycle >= policy.silentPowerCycleSpacing else {
                // Power-cycled recently: silence alone is no reason to do more.
                lastClimb = now
                return .none
            }
            lastSilentPowerCycle = now
            return climb(to: .adapterPowerCycled, at: now)
        case .gaveUp:
            return .none
        }
    }

    /// A fault seen by the scan or a link: what to do about it.
    public mutating func fault(_ fault: AdapterFault, at now: Double) -> Action {
        if fault.isWaitedFor {
            if !adapterMissing { counters.adapterLosses += 1 }
            adapterMissing = true
            return .none
        }
        // A rung just taken gets its chance; faults reported by several threads at once count once.
        guard rung != .gaveUp, now - lastClimb >= policy.settle else { return .none }
        switch rung {
        case .healthy: return climb(to: .discoveryRestarted, at: now)
        case .discoveryRestarted: return climb(to: .adapterPowerCycled, at: now)
        case .adapterPowerCycled, .gaveUp:
            rung = .gaveUp
            return .giveUp(fault)
        }
    }

    /// A link refused for a lost bond (counted; explained by the caller, never climbed).
    public mutating func staleBond() { counters.staleBonds += 1 }

    private mutating func climb(to next: Rung, at now: Double) -> Action {
        rung = next
        lastClimb = now
        switch next {
        case .discoveryRestarted:
            counters.discoveryRestarts += 1
            return .restartDiscovery
        case .adapterPowerCycled:
            counters.powerCycles += 1
            return .powerCycleAdapter
        case .healthy, .gaveUp:
            return .none
        }
    }
}

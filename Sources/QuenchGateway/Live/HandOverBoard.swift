import Logging
import QuenchCore
import QuenchStore
import Synchronization

/// The gateway's side of `HandOverRule`, for connected bottles that several gateways
/// are configured for: how well the shared scan hears each one, whether this gateway
/// holds its link, and the other gateways' claims, which the MQTT publisher keeps in the
/// store as the broker brings them. Each GATT session asks it before connecting and
/// while it holds the link; the main loop (`refresh`) saves this gateway's claims for
/// the publisher to send and reads the others'.
public final class HandOverBoard: Sendable {
    public let rule: HandOverRule
    /// This gateway, as the others know it: its database's id.
    public let gateway: String
    private let store: IntakeStore
    private let logger: Logger
    /// Until then, nothing is taken (`HandOverRule.settle`).
    private let settled: ContinuousClock.Instant

    private struct Seen {
        /// Smoothed over the last few advertisements, so one reflection does not move a bottle.
        var rssi: Double?
        var heardAt: Timestamp?
        var holding = false
        /// The claim last saved for the publisher.
        var saved: DeviceClaim?
        /// When this gateway last let the bottle go (kept in its claim, so it outlives a restart).
        var heldUntil: Timestamp?
    }
    private struct State {
        var mine: [String: Seen]
        var others: [String: [DeviceClaim]] = [:]
        /// The decision last logged per device (logged when it changes).
        var told: [String: HandOverRule.Decision] = [:]
    }
    private let state: Mutex<State>

    /// nil when the store cannot say which gateway this is (the claims could not be told apart).
    public init?(store: IntakeStore, devices: [String], rule: HandOverRule = HandOverRule(), logger: Logger) {
        guard let id = try? store.mqttIdentity().databaseID else {
            logger.error("cannot read this database's id: connected bottles are not handed over between gateways")
            return nil
        }
        self.store = store
        self.rule = rule
        self.logger = logger
        gateway = id
        settled = .now + .seconds(rule.settle)
        var mine = Dictionary(devices.map { ($0, Seen()) }, uniquingKeysWith: { a, _ in a })
        // This gateway's claims as it left them: when it last held each bottle (a claim still
        // holding is a process that ended without letting go: it held the bottle until then).
        for stored in (try? store.claims()) ?? [] where stored.claim.gateway == id {
            mine[stored.device]?.heldUntil = stored.claim.holding ? stored.claim.at : stored.claim.heldUntil
        }
        state = Mutex(State(mine: mine))
    }

    public var devices: Set<String> { state.withLock { Set($0.mine.keys) } }

    /// An advertisement of `device` heard by the shared scan.
    public func heard(_ device: String, rssi: Int8?) {
        let now = Timestamp.wallClockNow
        state.withLock { s in
            guard var seen = s.mine[device] else { return }
            if let rssi { seen.rssi = seen.rssi.map { 0.7 * $0 + 0.3 * Double(rssi) } ?? Double(rssi) }
            seen.heardAt = now
            s.mine[device] = seen
        }
    }

    /// This gateway took the bottle (its link came up) or let it go (released it, or `lost` the
    /// link; a bottle drained now and then stays held between drains): said at once, so a gateway
    /// waiting for it need not wait for a refresh. A lost link also forgets how well the bottle was
    /// heard before it: that says nothing of where it went, and would outrank a gateway that hears it now.
    public func setHolding(_ device: String, _ holding: Bool, lost: Bool = false) {
        let changed = state.withLock { s -> Bool in
            guard var seen = s.mine[device], seen.holding != holding else { return false }
            seen.holding = holding
            if !holding { seen.heldUntil = .wallClockNow }
            if lost {
                seen.rssi = nil
                seen.heardAt = nil
            }
            s.mine[device] = seen
            return true
        }
        if changed { save(device, force: true) }
    }

    /// This gateway's link to `device` came up: it holds the bottle (said at once, as `setHolding`).
    /// Returns whether another gateway held it since this one last did, by the claims read last:
    /// for a bottle that streams its level (and keeps no sips), the sips drunk meanwhile were
    /// stored there, and the level this gateway saw before is no measure of what was drunk since.
    public func took(_ device: String) -> Bool {
        let heldElsewhere = state.withLock { s -> Bool in
            guard let since = s.mine[device]?.heldUntil else { return false }
            return (s.others[device] ?? []).contains { $0.held(after: since) }
        }
        setHolding(device, true)
        return heldElsewhere
    }

    /// What this gateway should do about `device` now. A change is logged once.
    public func decision(for device: String) -> HandOverRule.Decision {
        let now = Timestamp.wallClockNow
        let (mine, others) = state.withLock { s in (s.mine[device].map { claim($0, at: now) }, s.others[device] ?? []) }
        guard let mine else { return .take }
        let decision = ContinuousClock.now < settled && !mine.holding ? .settling : rule.decide(mine: mine, others: others, now: now)
        let told = state.withLock { s in
            defer { s.told[device] = decision }
            return s.told[device] == decision
        }
        if !told {
            switch decision {
            case .take: logger.info("this gateway takes the bottle", metadata: ["device": "\(device)"])
            case .keep, .settling, .unheard: break
            case .leave(let to): logger.info("another gateway has the bottle, or hears it better: not connecting", metadata: ["device": "\(device)", "gateway": "\(to)"])
            case .release(let to): logger.notice("another gateway hears the bottle better: handing it over", metadata: ["device": "\(device)", "gateway": "\(to)"])
            }
        }
        return decision
    }

    /// Reads the other gateways' claims and saves this gateway's that changed or are due
    /// (a holder's every `rule.refreshEvery`, or one whose signal moved by 3 dB or more).
    public func refresh() {
        do {
            let all = try store.claims()
            let others = Dictionary(grouping: all.filter { $0.claim.gateway != gateway }, by: \.device).mapValues { $0.map(\.claim) }
            state.withLock { $0.others = others }
        } catch {
            logger.warning("cannot read the other gateways' claims", metadata: ["error": "\(error)"])
        }
        for device in devices { save(device, force: false) }
    }

    private func claim(_ seen: Seen, at now: Timestamp) -> DeviceClaim {
        DeviceClaim(gateway: gateway, rssi: seen.rssi.map { Int($0.rounded()) }, heardAt: seen.heardAt, holding: seen.holding, at: now,
                    heldUntil: seen.heldUntil)
    }

    private func save(_ device: String, force: Bool) {
        let now = Timestamp.wallClockNow
        let due = state.withLock { s -> DeviceClaim? in
            guard var seen = s.mine[device] else { return nil }
            let claim = claim(seen, at: now)
            if !force {
                // Nothing to say of a bottle never heard nor held; and a claim is said again only when it moved or is due.
                guard claim.heardAt != nil || claim.holding else { return nil }
                if let saved = seen.saved {
                    let moved = abs((claim.rssi ?? -128) - (saved.rssi ?? -128)) >= 3
                    let renew = (claim.holding || rule.isFresh(claim, now: now)) && now.secondsSince1970 - saved.at.secondsSince1970 >= rule.refreshEvery
                    guard moved || renew else { return nil }
                }
            }
            seen.saved = claim
            s.mine[device] = seen
            return claim
        }
        guard let due else { return }
        do { try store.saveClaim(device: device, due) } catch {
            logger.warning("cannot save this gateway's claim", metadata: ["device": "\(device)", "error": "\(error)"])
        }
    }
}

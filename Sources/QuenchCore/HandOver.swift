/// What one gateway says of a connected bottle (a GATT device, which takes one
/// central at a time) to the others on the broker, retained: how well it hears
/// the bottle's advertising, and whether it holds the bottle's link.
/// docs/hub.md, "A connected bottle, several gateways".
public struct DeviceClaim: Sendable, Hashable {
    /// The gateway, by its database's id (a database is one gateway, docs/hub.md): the same on
    /// every gateway's side, so ties are broken alike everywhere.
    public var gateway: String
    /// The bottle's advertising as this gateway hears it, smoothed (dBm); nil when never heard.
    public var rssi: Int?
    /// When it last heard an advertisement; nil when never.
    public var heardAt: Timestamp?
    /// The bottle is this gateway's: its link is up (or, for a bottle drained now and then, it drains it).
    public var holding: Bool
    /// When the gateway said this: a holder says it again every `HandOverRule.refreshEvery`.
    public var at: Timestamp
    /// When it last let the bottle go (released it, or lost its link); nil when it never held it.
    /// Kept in every later claim, so a gateway that missed the claims saying it held the bottle
    /// (a short hold, a broker outage) still learns that it did.
    public var heldUntil: Timestamp?

    public init(gateway: String, rssi: Int?, heardAt: Timestamp?, holding: Bool, at: Timestamp, heldUntil: Timestamp? = nil) {
        self.gateway = gateway
        self.rssi = rssi
        self.heardAt = heardAt
        self.holding = holding
        self.at = at
        self.heldUntil = heldUntil
    }

    /// Whether this gateway held the bottle after `time` (by what it says: holding now, or let it go since).
    public func held(after time: Timestamp) -> Bool {
        holding ? at > time : heldUntil.map { $0 > time } ?? false
    }
}

/// Which gateway connects a bottle several gateways are configured for: the one
/// that hears it best, with hysteresis, so that a bottle between two rooms does
/// not flap. Every gateway applies the same rule to the same claims, so they agree
/// without a coordinator; a claim nobody renews goes stale, so a gateway that
/// died or lost the bottle gives it up without saying so.
public struct HandOverRule: Sendable, Hashable {
    /// A claim counts for this long: a holder's from when it was said, anyone else's from when
    /// it last heard the bottle (an advertisement heard long ago says nothing of where it is now).
    public var freshFor = 30.0
    /// A holder renews its claim this often.
    public var refreshEvery = 10.0
    /// How much better (dB) another gateway must hear the bottle to take it from its holder.
    public var marginDB = 8
    /// A gateway that starts listens this long before it takes a bottle: for the others' retained
    /// claims to come from the broker, and to hear the bottle itself.
    public var settle = 5.0

    public init() {}

    public enum Decision: Sendable, Hashable {
        /// Nobody holds it and this gateway hears it best (or hears it, and no other gateway is heard of): connect.
        case take
        /// This gateway holds it and nobody hears it better by the margin: keep the link.
        case keep
        /// Another gateway holds it, or hears it best: do not connect.
        case leave(to: String)
        /// This gateway holds it, but another hears it better by the margin: let it go.
        case release(to: String)
        /// Just started: listening for the others' claims before deciding (`settle`).
        case settling
        /// This gateway has not heard the bottle lately: it may be out of range, or held by a phone.
        case unheard

        /// Whether this gateway should have the link.
        public var connects: Bool {
            switch self {
            case .take, .keep: true
            case .leave, .release, .settling, .unheard: false
            }
        }
    }

    /// Whether `claim` still counts at `now`.
    public func isFresh(_ claim: DeviceClaim, now: Timestamp) -> Bool {
        let since = claim.holding ? claim.at : claim.heardAt
        guard let since else { return false }
        return now.secondsSince1970 - since.secondsSince1970 <= freshFor
    }

    /// What the gateway whose claim is `mine` should do, given the other gateways' claims.
    public func decide(mine: DeviceClaim, others: [DeviceClaim], now: Timestamp) -> Decision {
        let rivals = others.filter { $0.gateway != mine.gateway && isFresh($0, now: now) }
        // Alone (no other gateway has a claim): keep it, or take it once heard. A blind attempt at a bottle
        // out of range would hold the adapter's one pending connection for the whole connect timeout.
        guard !rivals.isEmpty else { return mine.holding ? .keep : isFresh(mine, now: now) ? .take : .unheard }
        if mine.holding {
            // Two holders (each connected before hearing of the other): one link is real; the
            // weaker keeps no claim to it.
            if let other = rivals.filter(\.holding).max(by: Self.weaker), Self.weaker(mine, other) { return .release(to: other.gateway) }
            guard let mineRSSI = mine.rssi,
                  let best = rivals.filter({ ($0.rssi ?? Int.min) >= mineRSSI + marginDB }).max(by: Self.weaker) else { return .keep }
            return .release(to: best.gateway)
        }
        if let holder = rivals.filter(\.holding).max(by: Self.weaker) { return .leave(to: holder.gateway) }
        let candidates = isFresh(mine, now: now) ? rivals + [mine] : rivals
        guard let best = candidates.max(by: Self.weaker) else { return .take }
        return best.gateway == mine.gateway ? .take : .leave(to: best.gateway)
    }

    /// Orders claims by how well they hear the bottle; ties go to the lower gateway id, so every gateway picks the same.
    static func weaker(_ a: DeviceClaim, _ b: DeviceClaim) -> Bool {
        let (ra, rb) = (a.rssi ?? Int.min, b.rssi ?? Int.min)
        return ra != rb ? ra < rb : a.gateway > b.gateway
    }
}

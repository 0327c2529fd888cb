#if canImport(Glibc)
import Glibc
import Logging
import MQTT
import QuenchCore
import QuenchHistory
import QuenchStore
import Synchronization
import Threading

/// Publishes the history to an MQTT broker: each change from the outbox (in
/// order, QoS 1, a row deleted only once the broker acknowledged it), each
/// person's and bottle's retained state, availability with a last will, Home
/// Assistant discovery (again whenever Home Assistant says it is online), and
/// reminders as they are given. One thread drives it (`run` or `sync`):
/// libmosquitto's callbacks run inside `loop`, on that thread.
public final class MQTTPublisher {
    public struct Report: Sendable, Hashable, Encodable {
        /// Outbox messages sent (a message sent again after a lost connection counts again).
        public var published = 0
        /// Outbox messages the broker acknowledged.
        public var acknowledged = 0
        /// Outbox rows still waiting.
        public var pending = 0
        /// Rows the bounded outbox ever dropped.
        public var dropped = 0
        public var statesPublished = 0
        public var connections = 0
        /// Connections the broker closed within seconds of accepting them: another client taking over the client id.
        public var shortConnections = 0
    }

    public let settings: MQTTSettings
    public let topics: Topics
    /// This database's ids: its own (in every message) and, when no node id is set or known from the machine, the node's.
    /// (A restore gives the database another id: seen at the next change, `noticeRestore`.)
    public private(set) var identity: MQTTIdentity
    /// `settings.clientID`, else one made of the node's and the database's ids.
    public let clientID: String
    /// What this process is, as another publisher is told: `quench mqtt run`, `quench mqtt sync`, `quench run --mqtt`.
    public let command: String
    private let password: String?
    private let environment: HistoryEnvironment
    private let store: IntakeStore
    private let logger: Logger
    private let announcesAvailability: Bool

    private var client: MQTTClient?
    /// Outbox messages sent and not yet acknowledged: message id → outbox seq.
    private var inflight: [Int32: Int64] = [:]
    /// Other QoS 1 messages (state, discovery) not yet acknowledged.
    private var otherInflight: Set<Int32> = []
    private var lastSent: Int64 = 0
    private var acknowledgedThrough: Int64 = 0
    private var acksToRecord = false
    private var needDiscovery = true
    /// Discovery waits until then while Home Assistant lets go of configs in the other form (`announce`).
    private var migrationSettles = ContinuousClock.now
    /// Old-form config topics already handed over by this process.
    private var handedOver = Set<String>()
    private var lastPayloads: [String: String] = [:]
    /// The discovery topics sent on this connection.
    private var announced: Set<String> = []
    private var stateDue = ContinuousClock.now
    private var gatewayCheckDue = ContinuousClock.now
    /// Commands received (`RemoteCommand`), carried out after the network turn.
    private var commands: [MQTTMessage] = []
    /// A hub's requests for what it lacks (docs/hub.md), answered after the network turn.
    private var hubRequests: [MQTTMessage] = []
    /// Other gateways' claims on connected bottles (HandOverRule), kept in the store after the network turn.
    private var claimMessages: [MQTTMessage] = []
    /// This gateway's own claims are to be looked at: on a new connection, and when the gateway wrote to the database.
    private var claimsDue = true
    /// The hub's roster: the newest received, and when it is applied to the devices paired here again
    /// (a device paired after it came is given to its person then).
    private var rosterMessage: MQTTMessage?
    /// Times another database was heard taking this node while connected (said now and then).
    private var nodeTakenHeard = 0
    /// `retire` connects to clear the node's topics, not to publish as it.
    private var retiring = false
    private var roster: [RosterEntry]?
    private var rosterDue = ContinuousClock.now
    /// The database's data_version at the last turn: any commit by another connection changes it (a
    /// restore noticed, a gateway's claims exchanged).
    private var dataVersion: Int64?
    /// The store's count of changes shown at the last turn: a rename, a goal, the settings, a drink change
    /// it, and the states follow at once, not at the next check.
    private var shownChanges: Int64?
    /// The `last_reset` published for each person: it never goes back (a day start or zone moved mid-day),
    /// across restarts too (kept in the database).
    private var lastReset: [Int64: (dayStart: Timestamp, text: String)] = [:]
    /// When each person's state was last read for the cycle `lastReset` holds: its total counted the drinks until then.
    private var countedUntil: [Int64: Timestamp] = [:]
    /// Whether the broker passed on this connection's own owner record (`pump`), and when it was last sent.
    private var ownWritesSeen = false
    private var ownWriteAskedAt = ContinuousClock.now
    private var ownWritesMissed = 0
    private var connectedAt = ContinuousClock.now
    private var shortInARow = 0
    private var role: RoleHolding
    public private(set) var report = Report()

    /// How often the retained state is looked at even when nothing changed (the pace moves with the clock;
    /// every change to the database is seen within a turn).
    public var stateInterval = 60.0

    /// - Parameter announcesAvailability: `run` says `online` with an `offline` last will;
    ///   a one-off `sync` says `online` once it has published, and its entities expire
    ///   in Home Assistant once what it sent is older than `settings.syncFreshness`.
    public init(settings: MQTTSettings, environment: HistoryEnvironment, logger: Logger, announcesAvailability: Bool,
                command: String? = nil) throws(MQTTSetupError) {
        self.settings = settings
        password = try settings.password()
        self.environment = environment
        self.logger = logger
        self.announcesAvailability = announcesAvailability
        self.command = command ?? (announcesAvailability ? "quench mqtt run" : "quench mqtt sync")
        do {
            store = try environment.openIntakeStore(creating: false)
            if let upgrade = store.upgradeNotice { logger.notice("\(upgrade)") }
            // From now on every change enters the outbox.
            try store.setOutbox(enabled: true)
            identity = try store.mqttIdentity()
            lastReset = try store.heldLastResets()
        } catch {
            throw .store("\(error)")
        }
        topics = Topics(settings, nodeID: settings.nodeID ?? identity.nodeID)
        // Named with its node id: `mqtt status` without the publisher's options resolves another. Said as what it
        // is, not as an option: a publisher started without `--node-id` read as one started with it (an HA trial).
        role = RoleHolding(role: Self.role, command: "\(self.command) as node \(topics.node)")
        for warning in settings.readableFileWarnings() { logger.warning("a secret is readable by other users", metadata: ["file": "\(warning)"]) }
        clientID = settings.effectiveClientID(nodeID: topics.node, databaseID: identity.databaseID)
    }

    // MARK: - One publisher per database

    /// Becomes this database's one publisher; throws `.busy` naming the process that is.
    public func claim() throws(MQTTSetupError) {
        if let other = try role.claim(in: store) { throw .busy(other) }
        // A hub reading this database then knows its own publisher is no gateway. Only the publisher that says
        // `online` under that node (`run`): a `sync` or a `retire` under another node id would move it.
        if announcesAvailability {
            do { try store.notePublishedNode(topics.node) } catch { throw .store("\(error)") }
        }
    }

    private func release() { role.release(in: store) }

    static let role = "mqtt"

    // MARK: - Connection

    private func connect(within seconds: Double, checkingNode: Bool = true) throws(MQTTError) {
        if checkingNode { try checkNodeIsFree(within: seconds) }
        let c = try settings.connectedClient(clientID: clientID, cleanSession: true, password: password, within: seconds) { c throws(MQTTError) in
            if announcesAvailability { try c.setWill(topic: topics.availability, payload: Array("offline".utf8), qos: 1, retain: true) }
            c.setMaxInflight(UInt32(settings.window))
            c.onPublish = { [unowned self] mid in acknowledged(mid) }
            c.onMessage = { [unowned self] message in
                // Home Assistant restarted: it forgot the discovery configs that were not retained... and wants them again.
                if message.topic == topics.homeAssistantStatus, String(decoding: message.payload, as: UTF8.self) == "online" {
                    needDiscovery = true
                    stateDue = .now
                    // The states too, as the docs say, not only those that changed: a broker restarted
                    // without persistence holds none of them retained.
                    lastPayloads = [:]
                } else if message.topic.hasSuffix("/command"), commands.count < 100 {
                    commands.append(message)
                } else if message.topic == topics.syncRequests, hubRequests.count < 4 {
                    hubRequests.append(message)
                } else if topics.isClaim(message.topic), claimMessages.count < 1000 {
                    claimMessages.append(message)
                } else if message.topic == topics.roster {
                    rosterMessage = message
                } else if message.topic == topics.database {
                    let owner = NodeOwner(payload: message.payload)
                    // Passed on live (not the copy kept from before, which comes retained): what it publishes arrives.
                    if !message.retain, owner?.databaseID == identity.databaseID { ownWritesSeen = true }
                    heardNodeOwner(owner)
                }
            }
        }
        try c.subscribe(topics.database, qos: 1)
        try c.subscribe(topics.homeAssistantStatus, qos: 1)
        try c.subscribe(topics.commands, qos: 1)
        try c.subscribe(topics.syncRequests, qos: 1)
        try c.subscribe(topics.allClaims, qos: 1)
        try c.subscribe(topics.roster, qos: 1)
        client = c
        inflight = [:]
        otherInflight = []
        claimsDue = true
        // What was sent on a lost connection and not acknowledged is sent again.
        lastSent = acknowledgedThrough
        needDiscovery = true
        lastPayloads = [:]
        stateDue = .now
        report.connections += 1
        connectedAt = .now
        ownWritesSeen = false
        ownWriteAskedAt = .now
        if !retiring { try publishOther(ownerMessage) }
        if announcesAvailability {
            try publishOther(OutgoingMessage(topic: topics.availability, payload: "online", retain: true))
            try publishOther(OutgoingMessage(topic: topics.takingCommands, payload: "online", retain: true))
        }
        logger.info("connected to the MQTT broker", metadata: ["broker": "\(settings.broker)", "client_id": "\(clientID)", "node_id": "\(topics.node)"])
    }

    /// Before it says anything as its node: another database publishing as this node, online now
    /// with a will that says when it goes (`quench mqtt run`), keeps it, and this publisher does not
    /// publish (tried again later). Two databases given one node id overwrote each other's states, both
    /// carried out each command (a drink from Home Assistant added twice), and one stopping said the
    /// other offline, without a word (a black-box trial). Looked at on a connection of its own, with no
    /// will: one turned away with the will set could, closed with input unread, have the broker send it,
    /// saying the other's node offline (a review). A `sync` leaves `online` with no will, so it keeps
    /// nobody out (it did: a restored database was turned away by its own id before the restore).
    private func checkNodeIsFree(within seconds: Double) throws(MQTTError) {
        var owner: NodeOwner?
        var online: Bool?
        let node = topics
        let c = try settings.connectedClient(clientID: clientID + "-check", cleanSession: true, password: password, within: seconds) { c throws(MQTTError) in
            c.onMessage = { message in
                if message.topic == node.database { owner = NodeOwner(payload: message.payload) }
                if message.topic == node.availability { online = message.payload == Array("online".utf8) }
            }
        }
        defer { c.disconnect() }
        try c.subscribe(topics.database, qos: 1)
        try c.subscribe(topics.availability, qos: 1)
        // The broker sends what it keeps right after the subscriptions (on loopback within milliseconds);
        // a node never published has nothing to send, so the wait is bounded.
        let end = ContinuousClock.now + .milliseconds(Self.retainedWaitMS)
        while ContinuousClock.now < end, owner == nil || online == nil { try c.loop(timeoutMS: 20) }
        guard let owner, owner.hasWill, owner.databaseID != identity.databaseID, online == true else { return }
        throw MQTTError("publish as node \(topics.node)", .declined(Self.nodeTaken(topics.node, by: owner.databaseID)))
    }

    static let retainedWaitMS = 500
    /// How long the broker may take to pass on this connection's own first message before the publisher
    /// takes it that the broker drops what it publishes.
    static let ownWriteWaitSeconds = 5.0

    /// This database as the node's owner, retained (`NodeOwner`).
    private var ownerMessage: OutgoingMessage {
        OutgoingMessage(topic: topics.database, payload: NodeOwner(databaseID: identity.databaseID, hasWill: announcesAvailability).payload, retain: true)
    }

    static func nodeTaken(_ node: String, by other: String) -> String {
        "node \(node) is online for another database (\(other.shownSafely(limit: 40))): two databases given one node id (two "
            + "gateways on one machine, whose default node id is the machine's) overwrite each other's states and both carry out "
            + "each command; give this one its own mqtt.node_id (--node-id), or stop the other"
    }

    /// The database the broker says publishes as this node: another one, heard while connected (it did not
    /// see this one online in time), is said now and then; both go on, as before this check.
    private func heardNodeOwner(_ owner: NodeOwner?) {
        guard client != nil, let owner, owner.databaseID != identity.databaseID else { return }
        if RepeatedNotice.worthSaying(occurrence: nodeTakenHeard) {
            logger.error("another database publishes as this node", metadata: ["reason": "\(Self.nodeTaken(topics.node, by: owner.databaseID))"])
        }
        nodeTakenHeard += 1
    }

    private func dropConnection() {
        client = nil
        inflight = [:]
        otherInflight = []
    }

    /// A broker closes the older of two connections with the same client id: two gateways
    /// told the same `client_id` (or `node_id` on cloned cards) knock each other off every
    /// few hundred ms. Connections lost within seconds, again and again, say so in the log.
    private func noteLostConnection() {
        guard ContinuousClock.now - connectedAt < .seconds(MQTTSettings.shortConnectionSeconds) else {
            shortInARow = 0
            return
        }
        shortInARow += 1
        report.shortConnections += 1
        if shortInARow == 3 || (shortInARow > 3 && shortInARow % 50 == 0) {
            logger.warning("the broker keeps closing the connection right after accepting it: another client is probably connecting with the same client id; give each gateway its own mqtt.client_id (or mqtt.node_id)", metadata: [
                "client_id": "\(clientID)", "times": "\(shortInARow)",
            ])
        }
    }

    private func acknowledged(_ mid: Int32) {
        if let seq = inflight.removeValue(forKey: mid) {
            _ = seq
            report.acknowledged += 1
            acksToRecord = true
        } else {
            otherInflight.remove(mid)
        }
    }

    private func publishOther(_ m: OutgoingMessage) throws(MQTTError) {
        guard let client else { return }
        otherInflight.insert(try client.publish(topic: m.topic, payload: Array(m.payload.utf8), qos: 1, retain: m.retain))
    }

    // MARK: - The work of one turn

    /// Sends outbox rows up to the window; true when it sent any. Not before the broker passed on this
    /// connection's own owner record: a broker whose ACL does not let this user write `quench/…` acknowledges
    /// each message and drops it (mosquitto, as MQTT 3.1.1 allows), and the outbox let the changes go as
    /// delivered (a Home Assistant trial gave the gateway Home Assistant's user). Not seen within
    /// `ownWriteWaitSeconds`, it is said and the changes stay: a `sync` fails; `run` keeps its connection (dropped
    /// and made again, it did so every 5 s, its will saying the node offline each time: a review), says so now and
    /// then, and sends the record again, so an ACL mended on the broker is noticed.
    private func pump() throws(MQTTError) -> Bool {
        guard let client, inflight.count < settings.window else { return false }
        guard ownWritesSeen else {
            guard ContinuousClock.now - ownWriteAskedAt >= .seconds(Self.ownWriteWaitSeconds) else { return false }
            let refused = MQTTError("publish on \(topics.database)", .declined(
                "the broker passed on nothing this gateway published within \(Int(Self.ownWriteWaitSeconds)) s: does its ACL let "
                + "\(settings.broker.user.map { "the user \($0.shownSafely(limit: 40))" } ?? "this client") write and read \(topics.base)/#? "
                + "(docs/homeassistant.md#the-brokers-access-control)"))
            guard announcesAvailability else { throw refused }
            if RepeatedNotice.worthSaying(occurrence: ownWritesMissed) {
                logger.error("changes are kept in the outbox", metadata: ["reason": "\(refused)", "waiting": "\(pendingRows())"])
            }
            ownWritesMissed += 1
            ownWriteAskedAt = .now
            try publishOther(ownerMessage)
            return false
        }
        let entries: [OutboxEntry]
        do { entries = try store.outbox(after: lastSent, limit: settings.window - inflight.count) } catch {
            logger.error("cannot read the MQTT outbox", metadata: ["error": "\(error)"])
            return false
        }
        for entry in entries {
            let m = entry.change == "reminder" ? reminderMessage(entry) : Messages.event(entry, databaseID: identity.databaseID, topics: topics)
            inflight[try client.publish(topic: m.topic, payload: Array(m.payload.utf8), qos: 1, retain: false)] = entry.seq
            lastSent = entry.seq
            report.published += 1
        }
        if !entries.isEmpty, stateDue > .now + .milliseconds(300) {
            // The history changed: the state follows soon (once per burst).
            stateDue = .now + .milliseconds(300)
        }
        return !entries.isEmpty
    }

    /// A reminder as it was given (kept with its row); a row from before they were kept
    /// (`reminder|NAME`, or `reminder` from before people) is built as things stand now.
    private func reminderMessage(_ entry: OutboxEntry) -> OutgoingMessage {
        if let payload = entry.payload, let person = entry.person {
            return Messages.reminder(payload, person: person, seq: entry.seq, databaseID: identity.databaseID, topics: topics)
        }
        var env = environment
        env.now = .wallClockNow
        let named = entry.identity.split(separator: "|", maxSplits: 1).dropFirst().first.map(String.init)
        let people = (try? store.people()) ?? []
        let person = entry.person.flatMap { id in people.first { $0.id == id } } ?? named.flatMap { n in people.first { $0.name == n } } ?? people.first
        env.person = person?.name
        guard let state = try? History.personState(env) else {
            return Messages.reminder("{\"event_type\":\"reminder\"}", person: person?.id ?? 0, seq: entry.seq, databaseID: identity.databaseID,
                                     topics: topics)
        }
        return Messages.reminder(state, seq: entry.seq, databaseID: identity.databaseID, topics: topics)
    }

    /// Deletes the outbox rows the broker has acknowledged, all of them up to the oldest still in flight.
    private func recordAcknowledgements() {
        guard acksToRecord else { return }
        acksToRecord = false
        let through = inflight.values.min().map { $0 - 1 } ?? lastSent
        guard through > acknowledgedThrough else { return }
        do {
            try store.acknowledgeOutbox(through: through)
            acknowledgedThrough = through
        } catch {
            acksToRecord = true
            logger.error("cannot delete acknowledged outbox rows (they will be sent again)", metadata: ["error": "\(error)"])
        }
    }

    /// `quench restore` gave the database a new id (its history is another one to a hub):
    /// the changes from now on are published under it.
    private func noticeRestore() {
        guard let now = try? store.mqttIdentity().databaseID, now != identity.databaseID else { return }
        logger.notice("the database was restored: its changes are published as database \(now)", metadata: ["was": "\(identity.databaseID)"])
        identity.databaseID = now
        // The node is this database's still: said before the broker hears another id from it.
        try? publishOther(ownerMessage)
    }

    /// Whether anything was committed to the database since the last turn (`committed`), and whether
    /// anything a person's state shows changed (`shown`: a gateway's checkpoints and claims are commits
    /// that change nothing shown, and every person's state was read again for each).
    private func databaseChanged() -> (committed: Bool, shown: Bool) {
        guard let version = try? store.dataVersion(), let shown = try? store.shownChanges() else { return (false, false) }
        defer { (dataVersion, shownChanges) = (version, shown) }
        return (dataVersion != nil && version != dataVersion, shownChanges != nil && shown != shownChanges)
    }

    /// Publishes the retained states that changed (`changed`: something was committed since the
    /// last turn), the discovery configs when due, and the gateway's availability.
    private func refreshState(changed: Bool) throws(MQTTError) {
        if changed, stateDue > .now + .milliseconds(300) { stateDue = .now + .milliseconds(300) }
        guard ContinuousClock.now >= stateDue else { return }
        var env = environment
        env.now = .wallClockNow
        let states: [PersonState]
        do { states = try History.personStates(env) } catch {
            stateDue = .now + .seconds(stateInterval)
            logger.error("cannot read the state to publish", metadata: ["error": "\(error)"])
            return
        }
        // Again at the next day start, when the day's total and `last_reset` move.
        let nextDay = states.compactMap { Timestamp(iso8601: $0.dayEnd) }.min()
        let untilNextDay = nextDay.map { max(0.05, $0.secondsSince1970 - env.now.secondsSince1970 + 0.05) } ?? stateInterval
        stateDue = .now + .seconds(min(stateInterval, untilNextDay))
        let published = states.map { holdingLastReset($0, now: env.now) }
        // Again when Home Assistant asks, and when a bottle was paired or forgotten, or a person added or removed.
        let configs = HomeAssistantDiscovery.configs(published, topics: topics, expireAfter: announcesAvailability ? nil : settings.syncFreshness,
                                                     form: settings.discoveryForm)
        if needDiscovery || Set(configs.map(\.topic)) != announced || configs.contains(where: { lastPayloads[$0.topic] != $0.message.payload }),
           ContinuousClock.now >= migrationSettles {
            // The same entities in the other form: announced before a switch of `discovery`, they are migrated.
            let otherForm: DiscoveryForm = settings.discoveryForm == .components ? .device : .components
            let previousForm = HomeAssistantDiscovery.configs(published, topics: topics, expireAfter: announcesAvailability ? nil : settings.syncFreshness,
                                                              form: otherForm).map(\.topic)
            // Each person's retained state is theirs as their configs are: cleared with them when they are removed.
            needDiscovery = !(try announce(configs, alsoHeld: published.map { (topics.person($0.personId), "person \($0.personId)") },
                                           migrating: Set(previousForm)))
            if needDiscovery { stateDue = min(stateDue, migrationSettles) }
        }
        var messages = published.flatMap { [Messages.personState($0, topics: topics)] + Messages.deviceStates($0, topics: topics) }
        messages.append(OutgoingMessage(topic: topics.gateway, payload: gatewayRunning() ? "online" : "offline", retain: true))
        for m in messages where lastPayloads[m.topic] != m.payload {
            try publishOther(m)
            lastPayloads[m.topic] = m.payload
            report.statesPublished += 1
        }
    }

    /// `last_reset` is the day's start, except that it never goes back: a day start
    /// or time zone changed mid-day would otherwise have Home Assistant count the day twice.
    /// While it is held, the total Home Assistant counts is the intake since it, not the day's.
    /// Nor does a new one start before what the cycle it ends had counted: a day start moved
    /// later in the day (and back) had Home Assistant count the evening's drinks again at each move.
    private func holdingLastReset(_ state: PersonState, now: Timestamp) -> PersonState {
        var s = state
        guard let start = Timestamp(iso8601: state.dayStart) else { return s }
        defer { countedUntil[state.personId] = now }
        var reset = (start, state.dayStart)
        if let held = lastReset[state.personId] {
            if held.dayStart > start || held.text == state.dayStart {
                reset = held
            } else if let counted = countedUntil[state.personId], counted > start {
                // Read in the cycle before after this day's start: from then (this publisher's clock; after
                // a restart it is not known, and the day's start is taken, as before).
                reset = (counted, counted.iso8601)
            }
        }
        s.lastReset = reset.1
        if reset.0 != start {
            do {
                s.intakeSinceResetMl = PersonState.tenth(try History.intake(person: state.personId, from: reset.0,
                                                                            until: Timestamp(iso8601: state.dayEnd) ?? now.adding(86_400), in: store))
            } catch {
                // The day's, as before: counted twice at worst, never lost.
                logger.error("cannot read the intake since the held last_reset", metadata: ["error": "\(error)"])
            }
        }
        guard lastReset[state.personId]?.text != reset.1 else { return s }
        lastReset[state.personId] = reset
        do { try store.holdLastReset(person: state.personId, dayStart: reset.0, text: reset.1) } catch {
            logger.error("cannot remember the published last_reset (a restart today may send an earlier one)", metadata: ["error": "\(error)"])
        }
        return s
    }

    /// Whether the gateway's process came or went since its state was published. A gateway killed (kill -9, a crash)
    /// writes nothing the database's version would show, so its process is looked at every few seconds: its bottles
    /// stayed `online` until the next minute's states (a carer trial).
    private func gatewayStateMoved() -> Bool {
        guard ContinuousClock.now >= gatewayCheckDue, let said = lastPayloads[topics.gateway] else { return false }
        gatewayCheckDue = .now + .seconds(Self.gatewayCheckSeconds)
        return (said == "online") != gatewayRunning()
    }

    static let gatewayCheckSeconds = 2.0

    /// Whether the gateway that records the bottles' links runs now (it holds the `gateway` role while it does).
    private func gatewayRunning() -> Bool {
        guard let holder = try? store.roleHolder("gateway") else { return false }
        return ProcessIdentity.isRunning(pid: holder.pid, started: holder.started)
    }

    /// Discovery configs, retained; those of devices no longer paired are cleared (an empty retained payload),
    /// as are the other retained topics `alsoHeld` named before and no longer does (a removed person's state).
    /// Entities still here whose config was announced in the other form (`migrating`: `discovery` switched between
    /// one config per entity and one per device) are handed over as Home Assistant provides: `{"migrate_discovery":
    /// true}` on each old topic, which unloads the entity and keeps it registered, and the old topic cleared; the new
    /// configs follow `migrationSeconds` later, once Home Assistant has let go of the old (sent at once, some of its
    /// clean-up reached the entities already moved). Returns false when it only began such a hand-over.
    /// (Announced before the old were cleared, the new configs' entities were refused as duplicates and then removed
    /// with the old: all 22 of a gateway's, in Home Assistant 2025.4.)
    private func announce(_ configs: [(topic: String, owner: String, message: OutgoingMessage)],
                          alsoHeld: [(topic: String, owner: String)], migrating: Set<String>) throws(MQTTError) -> Bool {
        let current = Dictionary(configs.map { ($0.topic, $0.owner) } + alsoHeld, uniquingKeysWith: { a, _ in a })
        // Unknown, nothing is cleared, handed over or recorded this time: recording only what is announced
        // now would forget what still has to be cleared.
        let before: [String: String]?
        do { before = try store.announcedTopics().filter { !handedOver.contains($0.key) } } catch {
            logger.error("cannot read the discovery topics announced before", metadata: ["error": "\(error)"])
            before = nil
        }
        let moving = (before ?? [:]).keys.filter { current[$0] == nil && migrating.contains($0) }.sorted()
        if !moving.isEmpty {
            for topic in moving {
                try publishOther(OutgoingMessage(topic: topic, payload: #"{"migrate_discovery":true}"#, retain: true))
                try publishOther(OutgoingMessage(topic: topic, payload: "", retain: true))
                lastPayloads[topic] = nil
            }
            logger.notice("discovery form changed: handing the entities over to the new configs", metadata: [
                "old_topics": "\(moving.count)", "form": "\(settings.discoveryForm)",
            ])
            // Remembered here too: a database that cannot record it does not hand them over again and again.
            handedOver.formUnion(moving)
            do { try store.setAnnounced((before ?? [:]).filter { !moving.contains($0.key) }) } catch {
                logger.error("cannot record the discovery topics", metadata: ["error": "\(error)"])
            }
            migrationSettles = .now + .seconds(Self.migrationSeconds)
            return false
        }
        // Those that changed: a person added re-sent every other person's configs too (58 for three people).
        // After a connect or Home Assistant's birth message `lastPayloads` is empty, so all go then.
        for c in configs where lastPayloads[c.topic] != c.message.payload {
            try publishOther(c.message)
            lastPayloads[c.topic] = c.message.payload
        }
        announced = Set(configs.map(\.topic))
        guard let before else { return true }
        do {
            // Discovery configs first, then this node's own retained topics (a removed person's state): an
            // empty state while their entities still listened made Home Assistant log an error for each
            // template over it ("'value_json' is undefined"), a dozen for each person removed.
            let own = topics.base + "/"
            let last = { (topic: String) in topic.hasPrefix(own) ? 1 : 0 }
            for (topic, owner) in before.filter({ current[$0.key] == nil }).sorted(by: { (last($0.key), $0.key) < (last($1.key), $1.key) }) {
                lastPayloads[topic] = nil
                try publishOther(OutgoingMessage(topic: topic, payload: "", retain: true))
                logger.info("discovery config cleared", metadata: ["topic": "\(topic)", "device": "\(owner)"])
            }
            try store.setAnnounced(current)
        } catch let error as MQTTError {
            throw error
        } catch {
            logger.error("cannot record the discovery topics", metadata: ["error": "\(error)"])
        }
        return true
    }

    /// How long Home Assistant is given to let go of entities handed over between discovery forms.
    static let migrationSeconds = 3.0

    private func refreshCounts() {
        if let status = try? store.outboxStatus() {
            report.pending = status.pending
            report.dropped = status.dropped
        }
    }

    // MARK: - Running

    /// `quench mqtt run` (and the gateway beside it): publishes until `shouldStop`,
    /// reconnecting with backoff (0.5 s doubling to `maximumBackoff`) whenever the
    /// broker goes away; nothing is lost meanwhile (the outbox keeps it).
    public func run(shouldStop: () -> Bool) {
        // One publisher per database: wait while another process publishes (saying who, once).
        var told = false
        while !shouldStop() {
            do throws(MQTTSetupError) {
                try claim()
                break
            } catch {
                if !told { logger.warning("waiting: another process publishes this database", metadata: ["error": "\(error)"]) }
                told = true
                MQTTSettings.sleep(seconds: 2, unless: shouldStop)
            }
        }
        defer { release() }
        settings.keepConnected(logger: logger, shouldStop: shouldStop, waiting: { "\(pendingRows()) changes kept in the outbox" },
                               isConnected: { client != nil }, connect: { () throws(MQTTError) in try connect(within: 10) },
                               turn: { () throws(MQTTError) in try turn() }, lost: {
            recordAcknowledgements()
            if client != nil { noteLostConnection() }
            dropConnection()
        })
        recordAcknowledgements()
        if let client, announcesAvailability {
            // A clean goodbye: the will is not sent on DISCONNECT, so say offline first, and wait for
            // the broker's acknowledgements (at most a second): closed with them unread, the socket
            // went with a reset that lost the DISCONNECT, and the broker sent the will as well
            // ("offline" twice, and "disconnected due to out of memory" in its log).
            try? publishOther(OutgoingMessage(topic: topics.takingCommands, payload: "offline", retain: true))
            try? publishOther(OutgoingMessage(topic: topics.availability, payload: "offline", retain: true))
            let end = ContinuousClock.now + .seconds(1)
            repeat { _ = try? client.loop(timeoutMS: 20) } while !otherInflight.isEmpty && ContinuousClock.now < end
            client.disconnect()
        }
        dropConnection()
    }

    private func turn() throws(MQTTError) {
        // A restore is noticed before the outbox is read: the changes made after it are the restored
        // history's, under its id (a hub that got them under the old one never asked for the rest).
        let (changed, shown) = databaseChanged()
        if changed { noticeRestore() }
        let sent = try pump()
        try refreshState(changed: shown || gatewayStateMoved())
        // Waits for the network at most 20 ms when idle: new outbox rows are seen within that.
        try client?.loop(timeoutMS: sent ? 0 : 20)
        recordAcknowledgements()
        try performCommands()
        try answerHubs()
        try exchangeClaims(changed: changed)
        applyRoster()
    }

    /// Gives the devices paired here to their people as the hub's roster says (`IntakeStore.applyRoster`),
    /// when it comes and every 30 s after.
    private func applyRoster() {
        if let message = rosterMessage {
            rosterMessage = nil
            // An empty retained message: the hub's roster was cleared.
            if message.payload.isEmpty {
                roster = nil
            } else {
                do throws(HistoryError) {
                    roster = try GatewayMessages.roster(payload: message.payload).entries
                    rosterDue = .now
                } catch {
                    logger.warning("the hub's roster is refused", metadata: ["reason": "\(error)"])
                }
            }
        }
        guard let roster, ContinuousClock.now >= rosterDue else { return }
        rosterDue = .now + .seconds(30)
        do {
            let applied = try store.applyRoster(roster, at: .wallClockNow)
            for rename in applied.renamed {
                logger.notice("renamed at the hub, so here too", metadata: ["from": "\(rename.from)", "to": "\(rename.to)"])
            }
            for entry in applied.devices {
                logger.notice("the hub's roster gives a device to someone", metadata: ["device": "\(entry.address)", "person": "\(entry.person)"])
            }
        } catch {
            logger.error("cannot apply the hub's roster", metadata: ["error": "\(error)"])
        }
    }

    /// Keeps the other gateways' claims in the store, for the gateway's `HandOverBoard`, and
    /// publishes this gateway's (retained) when they changed: the gateway writes them, so they are
    /// looked at only after a commit by another connection (`changed`), and on a new connection.
    private func exchangeClaims(changed: Bool) throws(MQTTError) {
        if !claimMessages.isEmpty {
            let received = claimMessages
            claimMessages = []
            let now = Timestamp.wallClockNow
            for message in received where !message.payload.isEmpty {
                do throws(HistoryError) {
                    let claim = try GatewayMessages.claim(payload: message.payload, now: now, live: !message.retain)
                    guard claim.claim.gateway != identity.databaseID else { continue }
                    do { try store.saveClaim(device: claim.device, claim.claim) } catch {
                        logger.error("cannot keep a gateway's claim", metadata: ["topic": "\(message.topic)", "error": "\(error)"])
                    }
                } catch {
                    logger.warning("a gateway's claim is refused", metadata: ["topic": "\(message.topic)", "reason": "\(error)"])
                }
            }
        }
        if changed { claimsDue = true }
        guard claimsDue else { return }
        let claims: [StoredClaim]
        do { claims = try store.claims() } catch {
            logger.error("cannot read this gateway's claims", metadata: ["error": "\(error)"])
            return
        }
        claimsDue = false
        for claim in claims where claim.claim.gateway == identity.databaseID {
            let m = OutgoingMessage(topic: topics.claim(claim.device), payload: GatewayMessages.claim(claim), retain: true)
            guard lastPayloads[m.topic] != m.payload else { continue }
            try publishOther(m)
            lastPayloads[m.topic] = m.payload
        }
    }

    /// Answers each hub's request with the events changed since the change it
    /// asks from, as they are now (`IntakeStore.gatewayAnswer`), in parts of
    /// `GatewayMessages.answerBatch`, on `topics.answers`.
    private func answerHubs() throws(MQTTError) {
        guard !hubRequests.isEmpty else { return }
        let received = hubRequests
        hubRequests = []
        for message in received {
            var request: GatewayMessages.Request
            do { request = try GatewayMessages.request(payload: message.payload) } catch {
                logger.warning("a hub's request is refused", metadata: ["topic": "\(message.topic)", "reason": "\(error)"])
                continue
            }
            // The hub's own history published for Home Assistant: the hub is asking itself, and would
            // drop the answer (its whole history, at each of its reconnects) as its own.
            guard request.hub != identity.databaseID else {
                logger.debug("a request from the hub this database is: not answered", metadata: ["hub": "\(request.hub)"])
                continue
            }
            // A hub that says how much it takes gets its answer in windows of that many messages, each read
            // when asked for: what the broker queues for it, and this process holds, stays that size.
            let window = request.mostParts.map { $0 * GatewayMessages.answerBatch }
            // A window after the first only of this database's own answer: asked of another (restored since, or
            // a new install at the node), it answers from the start, as itself (carrying the other's change
            // number, it had the hub take its events before the cursor as had; a review).
            if request.after != nil, request.databaseId != identity.databaseID { (request.after, request.through, request.whole) = (nil, nil, nil) }
            let after = request.after.map { EventQuery.LogPosition(time: Timestamp(secondsSince1970: $0.time), id: $0.id) }
            let answer: (through: Int64, whole: Bool, events: [IntakeEvent], more: Bool)
            do { answer = try store.gatewayAnswer(fromSeq: request.fromSeq(answering: identity.databaseID), after: after, limit: window) } catch {
                logger.error("cannot read the history for a hub", metadata: ["error": "\(error)"])
                continue
            }
            // A later window is part of the first's answer: as of its change, as whole as it.
            let through = request.after == nil ? answer.through : request.through ?? answer.through
            let whole = request.after == nil ? answer.whole : request.whole ?? answer.whole
            let next = answer.more ? answer.events.last.flatMap { e in e.id.map { GatewayMessages.AnswerCursor(time: e.time.secondsSince1970, id: $0) } } : nil
            for payload in GatewayMessages.answer(databaseID: identity.databaseID, to: request, through: through, whole: whole,
                                                  events: answer.events, next: next) {
                try publishOther(OutgoingMessage(topic: topics.answers, payload: payload, retain: false))
            }
            logger.info("answered a hub", metadata: ["hub": "\(request.hub)", "from_seq": "\(request.fromSeq)", "through": "\(through)",
                                                      "events": "\(answer.events.count)", "whole_history": "\(whole)", "more": "\(next != nil)"])
        }
    }

    /// Carries out the commands received (each through the history's own functions, so the
    /// change enters the outbox as any other) and publishes what became of each.
    private func performCommands() throws(MQTTError) {
        guard !commands.isEmpty else { return }
        let received = commands
        commands = []
        var env = environment
        env.now = .wallClockNow
        let states: [PersonState]
        do { states = try History.personStates(env) } catch {
            logger.error("cannot read the people to carry out commands", metadata: ["error": "\(error)"])
            return
        }
        for message in received {
            // Kept by the broker, it would be carried out (or refused) again at every start of this publisher.
            guard !message.retain else {
                logger.warning("a retained command is not carried out: a command is sent without retain (clear it: mosquitto_pub -r -n -t TOPIC)",
                               metadata: ["topic": "\(message.topic.shownSafely(limit: 120))"])
                continue
            }
            guard let outcome = RemoteCommands.handle(topic: message.topic, payload: message.payload, states: states, environment: env,
                                                      topics: topics, now: env.now) else {
                logger.warning("command for nobody (no such person)", metadata: ["topic": "\(message.topic)"])
                continue
            }
            if let refusal = outcome.refusal {
                logger.warning("command refused", metadata: ["topic": "\(message.topic)", "reason": "\(refusal)"])
            } else {
                logger.info("command carried out", metadata: ["topic": "\(message.topic)"])
            }
            try publishOther(outcome.result)
        }
        // A goal changes no event (no outbox row): the state follows at once either way.
        stateDue = .now
    }

    /// `quench mqtt sync`: connects, publishes discovery, the states and every
    /// outbox row, waits until the broker acknowledged them all, and disconnects.
    public func sync(timeout: Double) throws(MQTTSetupError) -> Report {
        try claim()
        defer { release() }
        let end = ContinuousClock.now + .seconds(timeout)
        do throws(MQTTError) {
            try connect(within: min(timeout, 10))
            stateDue = .now
            // Nothing stays to say `offline`: the entities expire instead (`expire_after`, `syncFreshness`).
            // Nobody stays to take a command either: the controls say so at once.
            try publishOther(OutgoingMessage(topic: topics.availability, payload: "online", retain: true))
            try publishOther(OutgoingMessage(topic: topics.takingCommands, payload: "offline", retain: true))
            while true {
                try turn()
                // Only once the broker passed on what this connection published: its states went nowhere either.
                let drained = ownWritesSeen && inflight.isEmpty && otherInflight.isEmpty && !needDiscovery
                    && ((try? store.outbox(after: lastSent, limit: 1).isEmpty) ?? false)
                if drained { break }
                guard ContinuousClock.now < end else {
                    throw MQTTError("sync", .timeout(seconds: timeout))
                }
            }
            recordAcknowledgements()
            client?.disconnect()
            _ = try? client?.loop(timeoutMS: 50)
        } catch {
            recordAcknowledgements()
            dropConnection()
            refreshCounts()
            throw .broker("\(error); \(report.pending) change\(report.pending == 1 ? "" : "s") kept in the outbox for the next try")
        }
        dropConnection()
        refreshCounts()
        return report
    }

    /// Takes this gateway off the broker (`quench mqtt retire`): an empty retained message on each
    /// retained topic it holds there, so Home Assistant drops its entities and the other gateways
    /// its claims. Those are what the broker keeps under `quench/NODE/` (states, availability,
    /// claims), and the discovery configs it announced (the database keeps them: `mqtt_announced`).
    /// The history is untouched, and the next `run` or `sync` announces everything again. Returns
    /// the topics cleared, sorted, and the nodes they were under.
    /// - Parameter everyNodeOwned: also every other node whose retained owner (`NodeOwner`) is this database: a
    ///   `retire` without the node id a `sync --node-id nodex` used cleared nodex's entities and left its status,
    ///   commands and owner (a Home Assistant trial). Then a node is left (`left`) when its owner record names
    ///   another database (the machine's node, kept by another history on this machine), or when it is online
    ///   with a will (`quench mqtt run` on a copy of this database: a cloned card given its own node id).
    public func retire(timeout: Double, everyNodeOwned: Bool = false) throws(MQTTSetupError) -> (topics: [String], nodes: [String], left: [String]) {
        try claim()
        defer { release() }
        retiring = true
        defer { retiring = false }
        let end = ContinuousClock.now + .seconds(timeout)
        var retained = Set<String>()
        var nodes: Set<String> = [topics.node]
        var left: [String] = []
        do throws(MQTTError) {
            // Each node is judged by what the broker keeps of it, below: the check would refuse the whole retire
            // for a machine's node another history publishes as.
            try connect(within: min(timeout, 10), checkingNode: !everyNodeOwned)
            guard let client else { throw MQTTError("retire", .timeout(seconds: timeout)) }
            let announced = (try? store.announcedTopics().keys).map(Set.init) ?? []
            // The broker sends what it keeps under a node right after the subscription: two
            // seconds of listening take it all in (mosquitto on loopback: within milliseconds).
            // Only the nodes' own: the connection also hears every gateway's claims and the hub's roster.
            let (prefix, ownerSuffix, databaseID) = (topics.prefix + "/", "/database", identity.databaseID)
            var owners: [String: NodeOwner] = [:]
            var online: Set<String> = []
            client.onMessage = { message in
                guard message.retain, !message.payload.isEmpty else { return }
                let rest = message.topic.dropFirst(prefix.count)
                guard message.topic.hasPrefix(prefix), let node = rest.split(separator: "/", maxSplits: 1).first.map(String.init) else { return }
                if nodes.contains(node) { retained.insert(message.topic) }
                if everyNodeOwned, rest == node + ownerSuffix, let owner = NodeOwner(payload: message.payload) { owners[node] = owner }
                if everyNodeOwned, rest == node + "/status", message.payload == Array("online".utf8) { online.insert(node) }
            }
            func listen() throws(MQTTError) {
                let listenUntil = min(end, .now + .seconds(2))
                while ContinuousClock.now < listenUntil { try client.loop(timeoutMS: 100) }
            }
            try client.subscribe(topics.base + "/#", qos: 1)
            if everyNodeOwned {
                try client.subscribe(prefix + "+" + ownerSuffix, qos: 1)
                try client.subscribe(prefix + "+/status", qos: 1)
            }
            try listen()
            if everyNodeOwned {
                let live = { (node: String) in owners[node]?.hasWill == true && online.contains(node) }
                let others = Set(owners.filter { $0.value.databaseID == databaseID }.keys).subtracting(nodes).filter { !live($0) }
                left = owners.keys.filter { node in node == topics.node ? owners[node]?.databaseID != databaseID
                                                                        : owners[node]?.databaseID == databaseID && live(node) }.sorted()
                if left.contains(topics.node) { nodes.remove(topics.node) }
                if !others.isEmpty {
                    nodes.formUnion(others)
                    for node in others.sorted() { try client.subscribe(prefix + node + "/#", qos: 1) }
                    try listen()
                }
            }
            // What was heard of a node left stays; so do the discovery configs under its name (the same topics, now another's).
            retained = retained.filter { topic in !left.contains { topic.hasPrefix(prefix + $0 + "/") } }
            retained.formUnion(announced.filter { topic in
                !left.contains { node in topic.split(separator: "/").contains { $0 == "quench_\(node)" || $0.hasPrefix("quench_\(node)_") } }
            })
            for topic in retained.sorted() { try publishOther(OutgoingMessage(topic: topic, payload: "", retain: true)) }
            while !otherInflight.isEmpty {
                guard ContinuousClock.now < end else { throw MQTTError("retire", .timeout(seconds: timeout)) }
                try client.loop(timeoutMS: 100)
            }
            try? store.setAnnounced([:])
            client.disconnect()
            _ = try? client.loop(timeoutMS: 50)
        } catch {
            dropConnection()
            throw .broker("\(error)")
        }
        dropConnection()
        // The nodes something was cleared under (the machine's, with nothing there, is not named), else the one asked.
        let touched = nodes.filter { node in retained.contains { $0.hasPrefix(topics.prefix + "/" + node + "/") } }
        return (retained.sorted(), touched.isEmpty && left.isEmpty ? [topics.node] : touched.sorted(), left)
    }

    /// Whether the broker accepts a connection with these settings (doctor): nil when it does, else why not.
    public static func probe(_ settings: MQTTSettings, timeout: Double = 5) -> String? {
        let password: String?
        do { password = try settings.password() } catch { return "\(error)" }
        let warnings = settings.readableFileWarnings()
        do throws(MQTTError) {
            let s = settings
            // Its own client id: the service's is never knocked off by a doctor.
            let c = try MQTTClient(clientID: "quench-doctor-\(getpid())", cleanSession: true)
            if let user = s.broker.user { try c.setCredentials(user: user, password: password) }
            if s.broker.tls { try c.setTLS(caFile: s.caFile, certFile: s.certFile, keyFile: s.keyFile) }
            var answered = false
            c.onConnect = { _ in answered = true }
            try c.connect(host: s.broker.host, port: s.broker.port)
            let end = ContinuousClock.now + .seconds(timeout)
            while !answered {
                guard ContinuousClock.now < end else { throw MQTTError("connect to \(s.broker)", .timeout(seconds: timeout)) }
                try c.loop(timeoutMS: 100)
            }
            c.disconnect()
            return warnings.isEmpty ? nil : "accepts the connection, but " + warnings.joined(separator: "; ")
        } catch {
            return "\(error)"
        }
    }

    private func pendingRows() -> Int { (try? store.outboxStatus().pending) ?? 0 }
}
#endif

#if canImport(Glibc)
/// A publisher on a thread of its own beside the gateway (`quench run --mqtt`):
/// made on that thread, which alone drives it, and stopped with `stop()`.
public final class BackgroundPublisher: Sendable {
    private let stopping = Atomic<Bool>(false)
    private let worker = ThreadSlot()

    /// Fails at once (in the caller's thread) for what cannot work: a missing password file, a store that will not open.
    public init(settings: MQTTSettings, environment: HistoryEnvironment, logger: Logger) throws(MQTTSetupError) {
        _ = try settings.password()
        // Claimed here, so `quench run --mqtt` beside the service says at once who publishes; kept by the thread's publisher (same process).
        try MQTTPublisher(settings: settings, environment: environment, logger: logger, announcesAvailability: true,
                          command: "quench run --mqtt").claim()
        worker.start(name: "mqtt") { [self] in
            guard let publisher = try? MQTTPublisher(settings: settings, environment: environment, logger: logger,
                                                     announcesAvailability: true, command: "quench run --mqtt") else { return }
            publisher.run { stopping.load(ordering: .relaxed) }
        }
    }

    /// Ends the publisher (it says `offline`) and waits for its thread.
    public func stop() {
        stopping.store(true, ordering: .relaxed)
        worker.join()
    }
}
#endif

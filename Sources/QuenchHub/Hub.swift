#if canImport(Glibc)
import Logging
import MQTT
import QuenchCore
import QuenchHistory
import QuenchMQTT
import QuenchStore

/// `quench hub run`: one history from every gateway on the broker (docs/hub.md).
/// It subscribes to `PREFIX/+/event` (and the gateways' answers and status) in a
/// persistent session, so what gateways send while it is down waits at the
/// broker, and applies each change to its own database, once, by the event's
/// identity. A gap in a gateway's change numbers, a gateway it has not heard
/// before, and every start make it ask that gateway (`PREFIX/NODE/sync`) for
/// what it may lack; the gateway answers with its events as of its latest change.
/// One thread drives it: libmosquitto's callbacks run inside `loop`, on it.
public final class Hub {
    public struct Report: Sendable, Hashable, Encodable {
        public var applied = 0
        public var repeated = 0
        /// Messages refused (they do not decode, or break a bound); logged with the reason.
        public var refused = 0
        public var requests = 0
        public var answersApplied = 0
        public var connections = 0
    }

    public let settings: MQTTSettings
    /// This database's id: its changes, published when the hub's own history goes to Home Assistant, are not applied again.
    public let databaseID: String
    /// Persistent: the broker keeps the hub's subscriptions and queued changes under it.
    public let clientID: String
    private let password: String?
    private let store: IntakeStore
    private let logger: Logger
    private let prefix: String
    private var client: MQTTClient?
    private var received: [MQTTMessage] = []
    /// When each gateway (by node) was last asked, so a burst of gaps asks once.
    private var asked: [String: ContinuousClock.Instant] = [:]
    /// Nodes to ask once connected (every known gateway, at each start).
    private var toAsk: Set<String> = []
    /// Nodes that lacked something after a batch of changes: asked only if they still do when their turn comes
    /// (a change come before the one just before it, a moment later, made a gap asked for with nothing in it).
    private var toAskIfLacking: Set<String> = []
    /// The part of each gateway's answer expected next (by database id).
    private var answerParts: [String: Int] = [:]
    /// The roster as last published on this connection, and the database's data_version then.
    private var publishedRoster: String?
    private var rosterVersion: Int64?
    public private(set) var report = Report()
    /// One hub process a database: this one while it holds the `hub` role.
    private var role = RoleHolding(role: CarerReport.hubRole, command: "quench hub")

    /// A gateway is asked again at most this often (seconds).
    public var askInterval = 5.0
    /// A gateway still lacking something is asked again this often (seconds): a request or its answer
    /// lost (the gateway restarting as it came, its queue full) was otherwise asked again only at the next gap.
    public var askAgainInterval = 30.0
    private var lastLookForMissing = ContinuousClock.now
    /// How long an answer (its next part) is waited for before the gateway is asked again (seconds).
    public var answerWait = 60.0
    /// When each node was asked, or last sent a part of its answer, while the rest is awaited.
    private var awaiting: [String: ContinuousClock.Instant] = [:]
    /// Requests to each node since a part of an answer last came from it: the wait doubles with each, to half an
    /// hour (a gateway that never answers, a `mqtt sync` one whose retained online stays, was asked every minute).
    private var unanswered: [String: Int] = [:]
    /// Whether the hub knew each database answering before its answer's first part (by database id).
    private var answerFromKnown: [String: Bool] = [:]
    /// The next window of each node's answer, to ask for at once (`GatewayMessages.Request.mostParts`).
    private var continuations: [String: GatewayMessages.Request] = [:]
    /// Messages a window of an answer may have: what the broker queues for the hub at once stays well under
    /// mosquitto's 1,000 a client, and a gateway holds 10,000 events at a time.
    public var answerWindow = 50
    /// Gateways answering at once (`mostAnswersAtOnce` × `answerWindow` parts under the broker's queue).
    public var mostAnswersAtOnce = 8
    /// The window each node was last asked for, to ask for again when a part of it is lost.
    private var windowAsked: [String: GatewayMessages.Request] = [:]
    /// When a window asked for again is due.
    private var continuationDue: [String: ContinuousClock.Instant] = [:]

    public init(settings: MQTTSettings, databasePath: String, logger: Logger) throws(MQTTSetupError) {
        self.settings = settings
        self.logger = logger
        password = try settings.password()
        prefix = settings.topicPrefix
        do {
            store = try IntakeStore(path: databasePath)
            if let refusal = store.newerSchemaRefusal(doing: "keeping the house's history") { throw refusal }
            if let upgrade = store.upgradeNotice { logger.notice("\(upgrade)") }
            databaseID = try store.mqttIdentity().databaseID
            toAsk = Set(try store.hubGateways().map(\.node))
        } catch {
            throw .store("\(error)")
        }
        clientID = settings.clientID ?? "quench-hub-\(databaseID)"
        for warning in settings.readableFileWarnings() { logger.warning("a secret is readable by other users", metadata: ["file": "\(warning)"]) }
    }

    /// One hub process a database at a time (`run`, `retire`): two under one client id knock each other
    /// off the broker, over and over, and a retire under a running hub ended its session.
    public func claim() throws(MQTTSetupError) {
        if let other = try role.claim(in: store) { throw .hubBusy(other) }
    }

    public func release() { role.release(in: store) }

    // MARK: - Connection

    private func connect(within seconds: Double) throws(MQTTError) {
        let c = try settings.connectedClient(clientID: clientID, cleanSession: false, password: password, within: seconds) { c in
            c.onMessage = { [unowned self] message in received.append(message) }
        }
        // Every gateway's: its topics with the node's level a wildcard.
        let every = Topics(settings, nodeID: "+")
        // Reminders only for their change numbers: a hub without them heard a gap after each, and asked for it.
        for topic in [every.events, every.answers, every.availability, every.gateway, every.reminders] {
            try c.subscribe(topic, qos: 1)
        }
        client = c
        // Asked on a connection gone: asked again on this one, not waited for.
        awaiting.removeAll()
        publishedRoster = nil
        rosterVersion = nil
        report.connections += 1
        noteLink(connected: true)
        logger.info("connected to the MQTT broker", metadata: ["broker": "\(settings.broker)", "client_id": "\(clientID)"])
    }

    /// For the carer's view: a hub without the broker hears no gateway, and says so (`History.carerReport`).
    private func noteLink(connected: Bool) {
        do { try store.noteHubLink(connected: connected, at: .wallClockNow) } catch {
            logger.warning("could not note the link to the broker", metadata: ["error": "\(error)"])
        }
    }

    /// Runs until `shouldStop`, reconnecting with backoff whenever the broker goes away.
    public func run(shouldStop: () -> Bool) {
        settings.keepConnected(logger: logger, shouldStop: shouldStop, isConnected: { client != nil },
                               connect: { () throws(MQTTError) in try connect(within: 10) }, turn: { () throws(MQTTError) in
            try client?.loop(timeoutMS: 50)
            handleReceived()
            try askForTheRest()
            try askWhoIsDue()
            try publishRoster()
        }, lost: {
            handleReceived()
            client = nil
            noteLink(connected: false)
        })
        handleReceived()
        client?.disconnect()
        client = nil
        noteLink(connected: false)
    }

    // MARK: - Messages

    /// Applies what arrived in the last network turn: changes in one transaction, in order.
    private func handleReceived() {
        guard !received.isEmpty else { return }
        let messages = received
        received = []
        var changes: [GatewayChange] = []
        for message in messages {
            guard let node = node(of: message.topic) else { continue }
            let topics = Topics(settings, nodeID: node)
            switch message.topic {
            case topics.events:
                do {
                    let change = try GatewayMessages.change(node: node, payload: message.payload, now: .wallClockNow)
                    if change.databaseID != databaseID { changes.append(change) }
                } catch {
                    refuse(message, error)
                }
            case topics.answers:
                apply(changes)
                changes = []
                applyAnswer(node: node, message)
            case topics.availability:
                // A gateway online: ask it for what the hub lacks (everything, when it is new). Also when known:
                // what it sent while the hub was away or the broker restarted (a clean session missed them,
                // and no later change showed the gap) comes then.
                let online = message.payload == Array("online".utf8)
                // For the carers: a corridor's gateway gone quiet is said, not taken for its residents not drinking.
                // An empty payload is a gateway retired (`quench mqtt retire`): gone for good, not offline. The
                // hub's own publisher (for Home Assistant) is no gateway: neither noted nor asked.
                do {
                    let isGateway = try store.noteAvailability(node: node, online: message.payload.isEmpty ? nil : online, at: .wallClockNow)
                    // (Back online, it answers nothing it was asked before: not awaited.)
                    if online, isGateway { toAsk.insert(node); awaiting[node] = nil }
                } catch {
                    if online { toAsk.insert(node) }
                    logger.error("cannot note a gateway's availability", metadata: ["node": "\(node)", "error": "\(error)"])
                }
            case topics.gateway:
                // Whether its Bluetooth service runs (empty: retired): a dead quenchd is said to the carers.
                do {
                    try store.noteGatewayBluetooth(node: node, running: message.payload.isEmpty ? nil : message.payload == Array("online".utf8),
                                                   at: .wallClockNow)
                } catch {
                    logger.error("cannot note a gateway's Bluetooth service", metadata: ["node": "\(node)", "error": "\(error)"])
                }
            case _ where topics.isReminder(message.topic):
                do {
                    let number = try GatewayMessages.reminderNumber(node: node, payload: message.payload)
                    if number.databaseID != databaseID { changes.append(number) }
                } catch {
                    refuse(message, error)
                }
            default:
                break
            }
        }
        apply(changes)
    }

    private func apply(_ changes: [GatewayChange]) {
        guard !changes.isEmpty else { return }
        do {
            let outcomes = try store.applyGatewayChanges(changes)
            for outcome in outcomes {
                if outcome == .applied { report.applied += 1 } else { report.repeated += 1 }
            }
            // A gap in a gateway's numbers, or its history from before them: ask it for what is missing.
            toAskIfLacking.formUnion(try HubGateway.lacking(store.hubGateways(), online: store.onlineGatewayNodes()))
        } catch {
            // Not acknowledged to anyone but the broker: asked for again at the next start.
            logger.error("cannot store gateways' changes", metadata: ["error": "\(error)", "changes": "\(changes.count)"])
            for change in changes { toAsk.insert(change.node) }
        }
    }

    private func applyAnswer(node: String, _ message: MQTTMessage) {
        let answer: GatewayMessages.Answer
        do { answer = try GatewayMessages.answer(payload: message.payload, now: .wallClockNow) } catch {
            refuse(message, error)
            return
        }
        // Its own database's answer (the hub's history published for Home Assistant), or one to another hub on the broker.
        guard answer.databaseID != databaseID, answer.isFor(hub: databaseID) else { return }
        // Parts come in order (one publisher, QoS 1); a part missing leaves the gateway to be asked again.
        let expected = answer.part == 1 ? 1 : answerParts[answer.databaseID] ?? 0
        guard answer.part == expected else {
            logger.warning("a gateway's answer came without its earlier parts; asking again", metadata: ["node": "\(node)"])
            answerParts[answer.databaseID] = nil
            // Asked again once `answerWait` is over, not at once: a part that never comes right would be sent every 5 s.
            awaiting[node] = .now
            if let window = windowAsked[node] {
                // The window it was in, again: the ones before it are had (a part lost restarted a long answer).
                continuations[node] = window
                continuationDue[node] = .now + .seconds(answerWait)
            } else {
                answerFromKnown[answer.databaseID] = nil
                toAsk.insert(node)
            }
            return
        }
        for reason in answer.refused {
            logger.warning("an event of a gateway's answer is refused", metadata: ["node": "\(node)", "reason": "\(reason)"])
        }
        unanswered[node] = nil
        // A later window of this database's answer goes on with the answer begun: whether the hub knew the
        // gateway is as it was then.
        let laterWindow = windowAsked[node].map { $0.after != nil && $0.databaseId == answer.databaseID } ?? false
        if answer.part == 1, !laterWindow {
            answerFromKnown[answer.databaseID] = ((try? store.hubGateways()) ?? []).contains { $0.databaseID == answer.databaseID }
        }
        let last = answer.part == answer.parts
        // The last part of a window of a longer answer: the answer is not whole yet, and its next window is asked for.
        let goesOn = last ? GatewayMessages.Request(continuing: answer, mostParts: answerWindow) : nil
        do {
            let applied = try store.applyGatewaySnapshot(databaseID: answer.databaseID, node: node, through: answer.through,
                                                         events: answer.events, complete: last && goesOn == nil, fromSeq: answer.fromSeq,
                                                         whole: answer.whole, knownBefore: answerFromKnown[answer.databaseID] ?? true)
            report.answersApplied += applied
            answerParts[answer.databaseID] = last ? nil : answer.part + 1
            // Still coming: not asked again meanwhile (a whole history asked for again every 5 s was sent again each time).
            awaiting[node] = last && goesOn == nil ? nil : .now
            if let goesOn {
                continuations[node] = goesOn
                continuationDue[node] = nil
            } else if last {
                windowAsked[node] = nil
                answerFromKnown[answer.databaseID] = nil
                logger.info("a gateway's answer applied", metadata: ["node": "\(node)", "through": "\(answer.through)"])
                // What it still lacks (the changes between what it had and a whole answer): asked for next.
                toAskIfLacking.insert(node)
            }
        } catch {
            // Its later parts are refused (their earlier one missing): the last would have counted this one's events as had.
            logger.error("cannot store a gateway's answer", metadata: ["node": "\(node)", "error": "\(error)"])
            answerParts[answer.databaseID] = nil
            answerFromKnown[answer.databaseID] = nil
            windowAsked[node] = nil
            awaiting[node] = .now
            toAsk.insert(node)
        }
    }

    private func refuse(_ message: MQTTMessage, _ error: any Error) {
        report.refused += 1
        logger.warning("a message is refused", metadata: ["topic": "\(message.topic.shownSafely(limit: 120))", "reason": "\(error)"])
    }

    /// The NODE level of `PREFIX/NODE/…`, when it is a node id a publisher could have made.
    private func node(of topic: String) -> String? {
        guard topic.hasPrefix(prefix + "/") else { return nil }
        let node = String(topic.dropFirst(prefix.count + 1).prefix { $0 != "/" })
        return MQTTSettings.isValidNodeID(node) ? node : nil
    }

    // MARK: - The roster

    /// Publishes the roster (retained) when it changed: looked at whenever anything was committed to the database.
    private func publishRoster() throws(MQTTError) {
        guard let client, let version = try? store.dataVersion(), version != rosterVersion else { return }
        rosterVersion = version
        let roster: [RosterEntry]
        do { roster = try store.roster() } catch {
            logger.error("cannot read the roster", metadata: ["error": "\(error)"])
            return
        }
        let payload = GatewayMessages.roster(hub: databaseID, roster)
        guard payload != publishedRoster else { return }
        try client.publish(topic: Topics(settings, nodeID: "hub").roster, payload: Array(payload.utf8), qos: 1, retain: true)
        publishedRoster = payload
        logger.info("roster published", metadata: ["devices": "\(roster.count)"])
    }

    // MARK: - Retiring

    /// What `quench hub retire` did.
    public struct Retired: Sendable, Hashable, Encodable {
        /// The roster the broker kept was this hub's, and is cleared.
        public var rosterCleared = false
        /// The roster the broker keeps is another hub's (another database), and is left.
        public var rosterOfAnotherHub: String?
        /// The broker dropped this hub's persistent session (its subscriptions and what it queued for it).
        public var sessionDropped = false
    }

    /// Takes this hub off the broker (`quench hub retire`), for a hub being moved or retired:
    /// its session is ended (a clean connection under its client id discards the persistent
    /// session, MQTT 3.1.1 §3.1.2.4, so the broker stops queuing every gateway's changes for a hub
    /// that will not come back), and the retained roster is cleared when it is this hub's, so
    /// the gateways stop giving devices to people as a hub that is gone said. Another hub's
    /// roster (another database's id) stays. The database is untouched.
    public func retire(timeout: Double) throws(MQTTSetupError) -> Retired {
        var retired = Retired()
        let end = ContinuousClock.now + .seconds(timeout)
        var roster: [UInt8]?
        var acknowledged: Set<Int32> = []
        do throws(MQTTError) {
            let c = try settings.connectedClient(clientID: clientID, cleanSession: true, password: password, within: min(timeout, 10)) { c in
                c.onMessage = { message in if message.retain { roster = message.payload } }
                c.onPublish = { acknowledged.insert($0) }
            }
            defer { c.disconnect() }
            retired.sessionDropped = true
            let topic = Topics(settings, nodeID: "hub").roster
            try c.subscribe(topic, qos: 1)
            // The broker sends the retained roster right after the subscription (loopback: milliseconds).
            let listenUntil = min(end, .now + .seconds(2))
            while ContinuousClock.now < listenUntil, roster == nil { try c.loop(timeoutMS: 100) }
            if let roster, !roster.isEmpty {
                let owner = (try? GatewayMessages.roster(payload: roster))?.hub
                if let owner, owner != databaseID {
                    retired.rosterOfAnotherHub = owner
                } else {
                    // Ours, or one that no longer decodes: nobody can use it.
                    let id = try c.publish(topic: topic, payload: [], qos: 1, retain: true)
                    while !acknowledged.contains(id) {
                        guard ContinuousClock.now < end else { throw MQTTError("clear the roster", .timeout(seconds: timeout)) }
                        try c.loop(timeoutMS: 100)
                    }
                    retired.rosterCleared = true
                }
            }
            _ = try? c.loop(timeoutMS: 50)
        } catch {
            throw .broker("\(error)")
        }
        logger.notice("hub retired", metadata: ["roster_cleared": "\(retired.rosterCleared)"])
        return retired
    }

    // MARK: - Asking

    /// Asks each gateway whose answer's window just ended for the next one (or, a part of it lost, for the
    /// same window again once `answerWait` is over).
    private func askForTheRest() throws(MQTTError) {
        guard let client, !continuations.isEmpty else { return }
        for (node, request) in continuations.sorted(by: { $0.key < $1.key }) {
            if let due = continuationDue[node], ContinuousClock.now < due { continue }
            try ask(node, request, on: client)
            windowAsked[node] = request
            continuations[node] = nil
            continuationDue[node] = nil
            logger.debug("asked a gateway for the rest of its answer", metadata: ["node": "\(node)", "after": "\(request.after.map { "\($0.time)/\($0.id)" } ?? "")"])
        }
    }

    /// Sends `request` to the gateway at `node`, whose answer is then awaited.
    private func ask(_ node: String, _ request: GatewayMessages.Request, on client: MQTTClient) throws(MQTTError) {
        try client.publish(topic: Topics(settings, nodeID: node).syncRequests, payload: Array(GatewayMessages.request(request).utf8),
                           qos: 1, retain: false)
        awaiting[node] = .now
        report.requests += 1
    }

    /// Answers asked for and still coming (each up to `answerWindow` parts at the broker for the hub at once).
    private var answersUnderWay: Int {
        awaiting.values.filter { ContinuousClock.now - $0 < .seconds(answerWait) }.count
    }

    /// Asks each gateway due for the events changed from the first change the
    /// hub lacks of the database it last heard there (every event, for one it
    /// has not heard, or that is another database now).
    private func askWhoIsDue() throws(MQTTError) {
        let lookAgain = ContinuousClock.now - lastLookForMissing >= .seconds(askAgainInterval)
        guard lookAgain || (client != nil && !(toAsk.isEmpty && toAskIfLacking.isEmpty)) else { return }
        let gateways = (try? store.hubGateways()) ?? []
        // Not those offline: their publishers' sessions are clean, and a request to one would be lost.
        let lacking = Set((try? store.onlineGatewayNodes()).map { HubGateway.lacking(gateways, online: $0) } ?? [])
        if lookAgain {
            lastLookForMissing = .now
            toAsk.formUnion(lacking)
        }
        guard let client else { return }
        let due = toAskIfLacking.filter { node in asked[node].map { ContinuousClock.now - $0 >= .seconds(askInterval) } ?? true }
        toAskIfLacking.subtract(due)
        toAsk.formUnion(lacking.intersection(due))
        for node in toAsk.sorted() {
            if let last = asked[node], ContinuousClock.now - last < .seconds(askInterval) { continue }
            // An answer on its way (asked, or a part come, within `answerWait`, doubled for each request since
            // one last came): not asked again yet.
            let wait = answerWait * Double(1 << max(0, min(unanswered[node, default: 0], 6) - 1))
            if let since = awaiting[node], ContinuousClock.now - since < .seconds(wait) { continue }
            // A few answers at a time: each gateway's window of 50 parts, all asked at a hub's start, would
            // overflow what the broker queues for the hub (mosquitto: 1,000) past 20 gateways (a review).
            guard answersUnderWay < mostAnswersAtOnce else { break }
            // The database last heard at that node (a restored one has an id of its own).
            let known = HubGateway.current(gateways).first { $0.node == node }
            // Everything while its whole history has not come: what it held before its first change is in none.
            let request = GatewayMessages.Request(hub: databaseID, fromSeq: known.map { $0.wholeHistory ? $0.throughSeq + 1 : 0 } ?? 0,
                                                  databaseID: known?.databaseID, mostParts: answerWindow)
            try ask(node, request, on: client)
            asked[node] = .now
            windowAsked[node] = nil
            unanswered[node, default: 0] += 1
            toAsk.remove(node)
            logger.info("asked a gateway for what the hub may lack", metadata: ["node": "\(node)", "from_seq": "\(request.fromSeq)"])
        }
    }
}
#endif

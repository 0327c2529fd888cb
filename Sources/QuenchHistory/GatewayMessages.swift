import FoundationEssentials
import QuenchCore
import QuenchStore

/// What gateways and a hub say to each other on the broker (docs/hub.md), as
/// JSON: a gateway's change (`Messages.event` writes it), the hub's request for
/// what it lacks, and the gateway's answer. Everything read here comes from the
/// network: sizes, ids, numbers and texts are bounded before use, and a refusal
/// names the field.
public enum GatewayMessages {
    /// A larger message is refused unread (a change is about 600 bytes; an answer holds `answerBatch` events).
    public static let largestPayload = 1 << 20
    /// Events per answer message.
    public static let answerBatch = 200

    /// A change from `quench/NODE/event`.
    public static func change(node: String, payload: [UInt8], now: Timestamp) throws(HistoryError) -> GatewayChange {
        struct Payload: Decodable {
            var databaseId: String
            var seq: Int64
            var identity: String
            var change: String
            var event: EventRecord?
        }
        let p = try decode(Payload.self, payload, "a change")
        try checkDatabaseID(p.databaseId)
        try checkSeq(p.seq, "seq")
        if let problem = TextField.identity.problem(p.identity) { throw .invalidArgument(problem) }
        var event: IntakeEvent?
        if let record = p.event {
            let e = try checked(record, now: now, field: "event")
            guard e.identity == p.identity else { throw .invalidArgument("event.identity is not the change's identity") }
            event = e
        }
        return GatewayChange(databaseID: p.databaseId, node: node, seq: p.seq, identity: p.identity, event: event)
    }

    /// A reminder a gateway gave (`quench/NODE/person/ID/reminder`): only its change number counts at a hub,
    /// which heard a gap after each reminder and asked for it.
    public static func reminderNumber(node: String, payload: [UInt8]) throws(HistoryError) -> GatewayChange {
        struct Payload: Decodable {
            var databaseId: String
            var seq: Int64
        }
        let p = try decode(Payload.self, payload, "a reminder")
        try checkDatabaseID(p.databaseId)
        try checkSeq(p.seq, "seq")
        return .numberOnly(databaseID: p.databaseId, node: node, seq: p.seq)
    }

    /// The hub's request to a gateway (on `quench/NODE/sync`): the events changed
    /// from change `fromSeq` on (every event for 0), answered on the gateway's own
    /// `quench/NODE/answer`. `databaseId` is the database the hub last heard at that
    /// node: a gateway that is another now (restored, replaced) answers with everything.
    /// `mostParts`: how many messages the hub takes in one answer. A longer answer is cut into windows
    /// (its last part says `next`), and the hub asks for each next one `after` the last event it had,
    /// with the first window's `through` and `whole`. A broker keeps a limited queue for each client
    /// (mosquitto: 1,000 messages): a gateway's whole history sent at once, 1,300 messages of 260,000
    /// events, overflowed the hub's, and the hub, missing parts, asked for it again and again, never
    /// having it; the gateway built it all in memory each time (100 MB). nil (a hub before): all at once.
    public struct Request: Sendable, Hashable, Codable {
        public var hub: String
        public var fromSeq: Int64
        public var databaseId: String?
        public var mostParts: Int?
        public var after: AnswerCursor?
        public var through: Int64?
        public var whole: Bool?

        public init(hub: String, fromSeq: Int64, databaseID: String? = nil, mostParts: Int? = nil) {
            self.hub = hub
            self.fromSeq = fromSeq
            databaseId = databaseID
            self.mostParts = mostParts
        }

        /// The request for the window after `answer`'s, which said where it ends (`next`).
        public init?(continuing answer: Answer, mostParts: Int) {
            guard let next = answer.next, let hub = answer.hub else { return nil }
            self.init(hub: hub, fromSeq: answer.fromSeq ?? 0, databaseID: answer.databaseID, mostParts: mostParts)
            after = next
            through = answer.through
            whole = answer.whole
        }

        /// Where `database`'s answer starts: `fromSeq` when the hub asked about this database.
        public func fromSeq(answering database: String) -> Int64 {
            databaseId == nil || databaseId == database ? fromSeq : 0
        }
    }

    public static func request(_ request: Request) -> String { History.json(request) }

    public static func request(payload: [UInt8]) throws(HistoryError) -> Request {
        let r = try decode(Request.self, payload, "a request")
        try checkDatabaseID(r.hub, field: "hub")
        try checkSeq(r.fromSeq, "from_seq")
        if let database = r.databaseId { try checkDatabaseID(database) }
        if let most = r.mostParts, !(1...largestWindow).contains(most) { throw .invalidArgument("most_parts \(most) is not 1 to \(largestWindow)") }
        if let after = r.after {
            try after.check("after")
            guard let through = r.through, r.whole != nil else { throw .invalidArgument("after: without the first window's through and whole") }
            try checkSeq(through, "through")
        }
        return r
    }

    /// The most messages a hub may ask for in one window.
    public static let largestWindow = 500

    /// Where a cut answer goes on: after this event, in the order of time, then id (the gateway's own row id).
    public struct AnswerCursor: Sendable, Hashable, Codable {
        public var time: Double
        public var id: Int64

        public init(time: Double, id: Int64) {
            self.time = time
            self.id = id
        }

        /// A position in the gateway's own order, not a time to show: any its rows hold (a row from before the
        /// years were bounded may be past 9999; bounded so, a window ending on it was refused, and the answer
        /// asked for from the start for ever; a review).
        func check(_ field: String) throws(HistoryError) {
            guard time.isFinite, time > 0 else { throw .invalidArgument("\(field).time \(time) is not a positive number of seconds") }
            guard id >= 0 else { throw .invalidArgument("\(field).id \(id) is negative") }
        }
    }

    /// One message of a gateway's answer: its events as of its change `through`,
    /// `part` of `parts`. `hub`, `fromSeq` and `whole` are nil in a gateway's before they were said.
    public struct Answer: Sendable {
        public var databaseID: String
        public var through: Int64
        public var part: Int
        public var parts: Int
        public var events: [IntakeEvent]
        /// The hub that asked (its database id): another hub on the broker reads the answer too, and took
        /// it for one to its own request, and a gap of its own for had.
        public var hub: String? = nil
        /// The change the hub asked from, as the gateway took it (0: everything; also when the hub asked
        /// about another database).
        public var fromSeq: Int64? = nil
        /// Every event the gateway holds, not only those changed from `fromSeq` (asked for everything, or
        /// the changes asked from are no longer known there).
        public var whole: Bool? = nil
        /// A window of a longer answer: where the next one starts (`Request.mostParts`).
        public var next: AnswerCursor? = nil

        /// Why each of its events that broke a bound was left out.
        public var refused: [String] = []

        /// Whether it answers `hub`: one naming none is a gateway's from before answers named the hub.
        public func isFor(hub: String) -> Bool { self.hub == nil || self.hub == hub }
    }

    private struct AnswerPayload: Codable {
        var databaseId: String
        var through: Int64
        var part: Int
        var parts: Int
        var events: [EventRecord]
        var hub: String?
        var fromSeq: Int64?
        var whole: Bool?
        var next: AnswerCursor?
    }

    /// The answer to `request`: the events as of change `through`, `whole` when they are all the gateway
    /// holds (`IntakeStore.gatewayAnswer`), in messages of `answerBatch` events (one, empty, when there are none);
    /// `next`: they are a window of a longer answer, which goes on after that event.
    public static func answer(databaseID: String, to request: Request, through: Int64, whole: Bool, events: [IntakeEvent],
                              next: AnswerCursor? = nil) -> [String] {
        let batches = stride(from: 0, to: max(events.count, 1), by: answerBatch).map { Array(events[$0..<min($0 + answerBatch, events.count)]) }
        return batches.enumerated().map { i, batch in
            History.json(AnswerPayload(databaseId: databaseID, through: through, part: i + 1, parts: batches.count,
                                       events: batch.map(EventRecord.init), hub: request.hub,
                                       fromSeq: request.fromSeq(answering: databaseID), whole: whole, next: next))
        }
    }

    public static func answer(payload: [UInt8], now: Timestamp) throws(HistoryError) -> Answer {
        let a = try decode(AnswerPayload.self, payload, "an answer")
        try checkDatabaseID(a.databaseId)
        try checkSeq(a.through, "through")
        if let hub = a.hub { try checkDatabaseID(hub, field: "hub") }
        if let fromSeq = a.fromSeq { try checkSeq(fromSeq, "from_seq") }
        guard a.parts >= 1, a.parts <= 1_000_000, a.part >= 1, a.part <= a.parts else {
            throw .invalidArgument("part \(a.part) of \(a.parts) is not a part of a whole")
        }
        guard a.events.count <= answerBatch else { throw .invalidArgument("events: more than \(answerBatch) in one message") }
        try a.next?.check("next")
        // An event that breaks a bound is refused alone: refusing its part had the gateway asked again, and the same
        // history sent again, for ever (one stored before a bound existed is never taken, however often it comes).
        var events: [IntakeEvent] = []
        var refused: [String] = []
        for (i, record) in a.events.enumerated() {
            do { events.append(try checked(record, now: now, field: "events[\(i)]")) } catch { refused.append("\(error)") }
        }
        return Answer(databaseID: a.databaseId, through: a.through, part: a.part, parts: a.parts, events: events,
                      hub: a.hub, fromSeq: a.fromSeq, whole: a.whole, next: a.next, refused: refused)
    }

    // MARK: - Claims on connected bottles (HandOverRule)

    private struct ClaimPayload: Codable {
        var databaseId: String
        var device: String
        var rssi: Int?
        var heardAt: String?
        var holding: Bool
        var at: String
        /// Absent from the claims of gateways before it.
        var heldUntil: String?
    }

    /// A gateway's claim on `device`, retained on `quench/NODE/claim/DEVICE`; `claim.gateway` is its database id.
    public static func claim(_ stored: StoredClaim) -> String {
        History.json(ClaimPayload(databaseId: stored.claim.gateway, device: stored.device, rssi: stored.claim.rssi,
                                  heardAt: stored.claim.heardAt?.iso8601, holding: stored.claim.holding, at: stored.claim.at.iso8601,
                                  heldUntil: stored.claim.heldUntil?.iso8601))
    }

    /// Another gateway's claim as the broker brings it. Its times are its own clock's: one more
    /// than a minute ahead of `now` is refused (it would hold the bottle until then).
    /// `live`: the broker sent it as it was said (not a retained one, sent at subscription), so it was said now:
    /// its times are moved onto this gateway's clock by how far the sender's `at` is from `now`. A Pi without a
    /// real-time clock, booted before NTP answered, said its claims hours in the past; every other gateway took
    /// them for stale and connected to the bottle it held (a review). A retained claim keeps the sender's times.
    public static func claim(payload: [UInt8], now: Timestamp, live: Bool = false) throws(HistoryError) -> StoredClaim {
        guard payload.count <= 4096 else { throw .invalidArgument("a claim of \(payload.count) bytes is larger than 4096") }
        let c = try decode(ClaimPayload.self, payload, "a claim")
        try checkDatabaseID(c.databaseId)
        guard isAddress(c.device) else { throw .invalidArgument("device '\(c.device.shownSafely(limit: 40))' is not a Bluetooth address") }
        if let rssi = c.rssi, !(-128...127).contains(rssi) { throw .invalidArgument("rssi \(rssi) is not between -128 and 127 dBm") }
        func time(_ text: String, _ field: String, notAfter latest: Timestamp) throws(HistoryError) -> Timestamp {
            guard let t = Timestamp(iso8601: text) else { throw .invalidArgument("\(field) '\(text.shownSafely(limit: 40))' is not an ISO 8601 time") }
            guard t.secondsSince1970 <= latest.secondsSince1970 + IntakeEvent.clockSlack else {
                throw .invalidArgument("\(field) \(text) is in the future")
            }
            return t
        }
        // A live claim's own `at` may be anywhere on its sender's clock; its other times are not after it.
        let said = try time(c.at, "at", notAfter: live ? .init(secondsSince1970: .greatestFiniteMagnitude) : now)
        let onThisClock = live ? now.secondsSince1970 - said.secondsSince1970 : 0
        let heard: Timestamp?, heldUntil: Timestamp?
        if let h = c.heardAt { heard = try time(h, "heard_at", notAfter: said).adding(onThisClock) } else { heard = nil }
        if let h = c.heldUntil { heldUntil = try time(h, "held_until", notAfter: said).adding(onThisClock) } else { heldUntil = nil }
        return StoredClaim(device: c.device, claim: DeviceClaim(gateway: c.databaseId, rssi: c.rssi, heardAt: heard, holding: c.holding,
                                                                at: said.adding(onThisClock), heldUntil: heldUntil))
    }

    // MARK: - The hub's roster

    private struct RosterPayload: Codable {
        var hub: String
        var devices: [RosterEntry]
    }

    /// Devices in one roster at most.
    public static let largestRoster = 10_000

    /// The hub's roster, retained on `quench/hub/roster`.
    public static func roster(hub: String, _ entries: [RosterEntry]) -> String { History.json(RosterPayload(hub: hub, devices: entries)) }

    /// A roster as the broker brings it: every address and name checked.
    public static func roster(payload: [UInt8]) throws(HistoryError) -> (hub: String, entries: [RosterEntry]) {
        let r = try decode(RosterPayload.self, payload, "a roster")
        try checkDatabaseID(r.hub, field: "hub")
        guard r.devices.count <= largestRoster else { throw .invalidArgument("devices: more than \(largestRoster)") }
        for (i, entry) in r.devices.enumerated() {
            guard isAddress(entry.address) else {
                throw .invalidArgument("devices[\(i)].address '\(entry.address.shownSafely(limit: 40))' is not a Bluetooth address")
            }
            if let refusal = Person.refusal(ofName: entry.person) { throw .invalidArgument("devices[\(i)].person: \(refusal)") }
        }
        return (r.hub, r.devices)
    }

    /// An address in the spelling devices are keyed by (`AA:BB:CC:DD:EE:FF`).
    private static func isAddress(_ text: String) -> Bool { (try? DeviceAddress.canonical(text).get()) == text }

    // MARK: - Bounds

    private static func decode<T: Decodable>(_ type: T.Type, _ payload: [UInt8], _ what: String) throws(HistoryError) -> T {
        guard payload.count <= largestPayload else { throw .invalidArgument("\(what) of \(payload.count) bytes is larger than \(largestPayload)") }
        if let bad = String.firstInvalidUTF8Offset(payload) { throw .invalidArgument("\(what): byte \(bad) is not valid UTF-8") }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        do { return try decoder.decode(T.self, from: Data(payload)) } catch {
            throw .invalidArgument("\(what): \((error as? DecodingError)?.summary(snakeCase: true) ?? "\(error)")")
        }
    }

    /// A database id as `mqtt_identity` makes them: 1–64 letters, digits, '-' and '_'.
    public static func checkDatabaseID(_ id: String, field: String = "database_id") throws(HistoryError) {
        guard !id.isEmpty, id.utf8.count <= 64, id.utf8.allSatisfy({ $0.isASCIIAlphanumeric || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }) else {
            throw .invalidArgument("\(field) '\(id.shownSafely(limit: 40))' is not 1–64 letters, digits, '-' or '_'")
        }
    }

    private static func checkSeq(_ seq: Int64, _ field: String) throws(HistoryError) {
        guard seq >= 0, seq < 1 << 53 else { throw .invalidArgument("\(field) \(seq) is not a change's number") }
    }

    private static func checked(_ record: EventRecord, now: Timestamp, field: String) throws(HistoryError) -> IntakeEvent {
        guard record.identity?.isEmpty == false else { throw .invalidArgument("\(field).identity is missing") }
        do { return try record.event(now: now) } catch {
            throw .invalidArgument("\(field): \(error)")
        }
    }
}

private extension UInt8 {
    var isASCIIAlphanumeric: Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(self)
            || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(self)
    }
}

import FoundationEssentials
import QuenchCore
import QuenchHistory
import QuenchStore

/// A command from Home Assistant (its buttons, text and number entities; a voice assistant
/// or an automation pressing them) on a person's command topic, `<base>/person/<person>/command`:
///
///     {"id": "ha-1795847779629571-33229", "action": "add", "amount": "250ml"}
///     {"id": "…", "action": "undo"}
///     {"id": "…", "action": "goal", "amount": 2500}
///     {"id": "…", "action": "acknowledge"}
///
/// `id` makes it idempotent (QoS 1 delivers a message again when its acknowledgement was lost):
/// an add is stored with the identity `mqtt|ID`, an undo recorded with its id, and a goal is the
/// same goal set twice. `amount` is what `quench add` and `quench goal set` take (`250ml`, `8oz`,
/// `0.3l`), or a number of mL.
public struct RemoteCommand: Sendable, Hashable {
    public enum Action: String, Sendable, Hashable, CaseIterable {
        /// `acknowledge`: the carer's alert about the person (`quench carer ack`).
        case add, undo, goal, acknowledge

        /// Whether it needs an `amount`.
        var takesAmount: Bool { self == .add || self == .goal }
    }

    public enum Amount: Sendable, Hashable {
        case text(String)
        case millilitres(Double)

        /// As `quench add` / `goal set` take it.
        var argument: String {
            switch self {
            case .text(let s): s
            // As Home Assistant sent it: a refusal quotes `50ml`, not `50.0ml`.
            case .millilitres(let ml): "\(ml.compactDescription)ml"
            }
        }
    }

    public var id: String
    public var action: Action
    public var amount: Amount?

    /// The largest payload read; a longer one is refused unread.
    public static let maximumPayload = 1024
    /// Ids: 1 to 64 of letters, digits, `-`, `_`, `.`, `:`.
    public static let maximumID = 64

    public init(id: String, action: Action, amount: Amount? = nil) {
        self.id = id
        self.action = action
        self.amount = amount
    }

    /// Parses and bounds a payload; every refusal names the field.
    public init(parsing payload: [UInt8]) throws(RemoteCommandError) {
        guard payload.count <= Self.maximumPayload else {
            throw .init("the payload is \(payload.count) bytes; at most \(Self.maximumPayload)")
        }
        /// Each field as far as it can be read: one of another type, or a field no command takes, is named
        /// (both were "not a JSON object with id, action and amount", and `"at": "yesterday"` was dropped
        /// without a word: the drink went in as now; a black-box trial).
        struct Wire: Decodable {
            struct Key: CodingKey {
                var stringValue: String
                var intValue: Int? { nil }
                init(stringValue: String) { self.stringValue = stringValue }
                init?(intValue: Int) { nil }
            }
            var id: String?
            var action: String?
            var amount: WireAmount?
            var wrongType: [String] = []
            var unknown: [String] = []
            init(from decoder: any Decoder) throws {
                let c = try decoder.container(keyedBy: Key.self)
                var wrongType: [String] = []
                func field<T: Decodable>(_ name: String, _ type: T.Type) -> T? {
                    let key = Key(stringValue: name)
                    guard c.contains(key), (try? c.decodeNil(forKey: key)) != true else { return nil }
                    if let value = try? c.decode(type, forKey: key) { return value }
                    wrongType.append(name)
                    return nil
                }
                id = field("id", String.self)
                action = field("action", String.self)
                amount = field("amount", WireAmount.self)
                self.wrongType = wrongType
                unknown = c.allKeys.map(\.stringValue).filter { !["id", "action", "amount"].contains($0) }.sorted()
            }
        }
        enum WireAmount: Decodable {
            case text(String), number(Double)
            init(from decoder: any Decoder) throws {
                let c = try decoder.singleValueContainer()
                if let d = try? c.decode(Double.self) { self = .number(d) } else { self = .text(try c.decode(String.self)) }
            }
        }
        let wire: Wire
        do { wire = try JSONDecoder().decode(Wire.self, from: Data(payload)) } catch {
            throw .init("not a JSON object with id, action and amount (\(String(decoding: payload.prefix(80), as: UTF8.self).shownSafely()))")
        }
        if wire.wrongType.contains("id") { throw .init("field 'id' must be text (letters, digits, '-', '_', '.' or ':')") }
        guard let id = wire.id, !id.isEmpty, id.count <= Self.maximumID,
              id.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.:".unicodeScalars.contains($0)) })
        else {
            throw .init("field 'id' must be 1 to \(Self.maximumID) letters, digits, '-', '_', '.' or ':' (got \((wire.id ?? "nothing").shownSafely()))")
        }
        if let name = wire.unknown.first {
            throw .init("field '\(name.shownSafely(limit: 40))' is not one a command takes (id, action and amount): nothing was done", id: id)
        }
        if let name = wire.wrongType.first {
            throw .init(name == "amount" ? "field 'amount' must be text with its unit (\"250ml\") or, for a goal, a number of mL"
                                         : "field '\(name)' must be text", id: id)
        }
        guard let name = wire.action, let action = Action(rawValue: name) else {
            throw .init("field 'action' must be add, undo, goal or acknowledge (got \((wire.action ?? "nothing").shownSafely()))", id: id)
        }
        var amount: Amount?
        switch wire.amount {
        case nil: break
        case .text(let s):
            guard s.count <= 32 else { throw .init("field 'amount' is longer than 32 characters", id: id) }
            amount = .text(s)
        case .number(let ml):
            // A drink's number alone is refused, as `quench add 8` is: 8 for someone in fl oz went in as 8 mL.
            // The goal's number entity sends mL, as its unit says.
            guard action != .add else {
                throw .init("field 'amount' of a drink is text with its unit (\"250ml\", \"8oz\"), not a number: "
                            + "\(ml.compactDescription) could be mL or fl oz", id: id)
            }
            // The goal's own bounds, said as `quench goal set` says them (this said "more than 0 and at most
            // 100000 mL", and 99999 was then refused as "between 100 mL and 20 L").
            guard HistoryInput.goalML.contains(ml) else { throw .init("field 'amount' must be a daily goal between 100 mL and 20 L (in mL)", id: id) }
            amount = .millilitres(ml)
        }
        if action.takesAmount, amount == nil { throw .init("field 'amount' is needed to \(action.rawValue)", id: id) }
        // An undo's amount was dropped without a word, and the last drink deleted whatever it was (a trial).
        if !action.takesAmount, amount != nil { throw .init("field 'amount' is not one \(action == .undo ? "an undo" : "an acknowledge") takes: nothing was done", id: id) }
        self.init(id: id, action: action, amount: amount)
    }

    /// Carries it out for `person` through the history's own functions (`quench add`, `undo`,
    /// `goal set`): returns what they say.
    public func perform(_ environment: HistoryEnvironment, person: String) throws(HistoryError) -> String {
        var env = environment
        env.person = person
        switch action {
        case .add:
            return try History.add(env, amount: amount?.argument ?? "", at: nil, note: nil, json: false, identity: RemoteCommandID.drinkPrefix + id)
        case .undo:
            return try History.undo(env, json: false, command: id)
        case .goal:
            return try History.setGoal(env, amount: amount?.argument ?? "", from: nil, json: false, command: id)
        case .acknowledge:
            // Once: a repeat (or a second carer's press) says when the first was.
            return try History.acknowledgeCarerAlert(env, name: person, json: false)
        }
    }
}

/// Why a command was refused: the field and, when it could be read, the command's id.
public struct RemoteCommandError: Error, Sendable, Hashable, CustomStringConvertible {
    public var reason: String
    public var id: String?
    init(_ reason: String, id: String? = nil) {
        self.reason = reason
        self.id = id
    }
    public var description: String { reason }
}

extension Topics {
    /// Where Home Assistant sends a person's commands (`RemoteCommand`).
    public func command(_ state: PersonState) -> String { base + "/person/\(state.personId)/command" }
    /// What became of each command, not retained (the "Last command" sensor).
    public func commandResult(_ state: PersonState) -> String { command(state) + "/result" }
    /// The subscription that receives every person's commands.
    public var commands: String { base + "/person/+/command" }
    /// The person a topic of `commands` names, as written (whether or not anyone here has that id); nil for another topic.
    func commandPerson(_ topic: String) -> String? {
        let prefix = base + "/person/", suffix = "/command"
        guard topic.hasPrefix(prefix), topic.hasSuffix(suffix), topic.count > prefix.count + suffix.count else { return nil }
        return String(topic.dropFirst(prefix.count).dropLast(suffix.count))
    }
    /// `online` while `quench mqtt run` takes commands, `offline` once it stopped or after a
    /// `quench mqtt sync` (which says `online` on the status for its states, and is gone the
    /// next moment); retained. The controls need it and the status both: a drink pressed
    /// after a sync was lost, its button still offered.
    public var takingCommands: String { base + "/commands" }
}

/// The publisher's side: a message on a command topic in, the result to publish out.
public enum RemoteCommands {
    public struct Outcome: Sendable, Hashable {
        public var result: OutgoingMessage
        /// Nil when carried out; the refusal otherwise.
        public var refusal: String?
    }

    /// Carries out the command `payload` on `topic` says, for the person whose command topic it is
    /// (among `states`, everyone's now). Nil when `topic` is nobody's (a person removed since).
    public static func handle(topic: String, payload: [UInt8], states: [PersonState], environment: HistoryEnvironment,
                              topics: Topics, now: Timestamp) -> Outcome? {
        struct Result: Encodable {
            var id: String?
            var action: String?
            var ok: Bool
            var said: String?
            var error: String?
            var at: String
        }
        var result = Result(ok: false, at: now.iso8601)
        guard let state = states.first(where: { topics.command($0) == topic }) else {
            // A person's command topic, for someone not here (removed, or a typo in an automation):
            // answered on its result topic, as a refusal is (it was only logged).
            // A name or `01` got no answer, or "nobody here has the id 1" beside person 1 (a trial).
            guard let named = topics.commandPerson(topic) else { return nil }
            result.id = (try? RemoteCommand(parsing: payload))?.id
            let canonical = named.utf8.allSatisfy({ (0x30...0x39).contains($0) }) && Int64(named).map { "\($0)" == named } == true
            result.error = canonical ? "nobody here has the id \(named) (`quench people --json` gives each person's id)"
                : "'\(named.shownSafely(limit: 40))' is not a person's id: a person's commands go to …/person/ID/command, "
                    + "the ID a number as `quench people --json` gives it"
            return Outcome(result: OutgoingMessage(topic: topic + "/result", payload: History.json(result), retain: false), refusal: result.error)
        }
        do throws(RemoteCommandError) {
            let command = try RemoteCommand(parsing: payload)
            (result.id, result.action) = (command.id, command.action.rawValue)
            do throws(HistoryError) {
                result.said = try command.perform(environment, person: state.person)
                result.ok = true
            } catch {
                result.error = "\(error)"
            }
        } catch {
            result.id = error.id
            result.error = error.reason
        }
        return Outcome(result: OutgoingMessage(topic: topics.commandResult(state), payload: History.json(result), retain: false),
                       refusal: result.ok ? nil : result.error)
    }
}

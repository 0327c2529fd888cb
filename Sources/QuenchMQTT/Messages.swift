import FoundationEssentials
import QuenchCore
import QuenchHistory
import QuenchStore

/// One message to publish.
public struct OutgoingMessage: Sendable, Hashable {
    public var topic: String
    public var payload: String
    public var retain: Bool
}

/// Every topic Quench publishes on (docs/mqtt.md lists them with their payloads).
/// Each level is an id that never changes: the node's, a person's, a device's
/// address; names are only what Home Assistant shows.
public struct Topics: Sendable, Hashable {
    public let base: String
    /// What every node's topics begin with (`mqtt.topic_prefix`): `quench`.
    public let prefix: String
    public let discoveryPrefix: String
    /// The node id (`MQTTSettings.nodeID`, else the database's).
    public let node: String
    /// The node's name, as Home Assistant shows the gateway.
    public let nodeName: String

    public init(_ settings: MQTTSettings, nodeID: String) {
        base = "\(settings.topicPrefix)/\(nodeID)"
        prefix = settings.topicPrefix
        discoveryPrefix = settings.discoveryPrefix
        node = nodeID
        nodeName = settings.node
        allClaims = "\(settings.topicPrefix)/+/claim/+"
        roster = "\(settings.topicPrefix)/hub/roster"
    }

    /// `online` / `offline`, retained; `offline` is also the last will.
    public var availability: String { base + "/status" }
    /// `online` while the gateway that records the bottles' links runs, else `offline`; retained.
    public var gateway: String { base + "/gateway" }
    /// The database that publishes as this node (`NodeOwner`), retained: a second database given the same
    /// node id (two gateways on one machine) waits while the first is online.
    public var database: String { base + "/database" }
    /// Each change to the history, QoS 1, not retained.
    public var events: String { base + "/event" }
    /// A hub asks here for what it lacks (`GatewayMessages.Request`), QoS 1.
    public var syncRequests: String { base + "/sync" }
    /// The gateway's answers to a hub (`GatewayMessages.answer`), QoS 1, not retained.
    public var answers: String { base + "/answer" }

    /// This gateway's claim on a connected bottle (`GatewayMessages.claim`), retained.
    public func claim(_ address: String) -> String { base + "/claim/" + Self.deviceID(address) }
    /// Every gateway's claims, this one's included.
    public let allClaims: String

    /// The hub's roster (who drinks from which bottle), retained; under the hub's own user name,
    /// `hub`, which no gateway can have (docs/hub.md).
    public let roster: String

    /// Whether `topic` is a gateway's claim (what `allClaims` matches).
    public func isClaim(_ topic: String) -> Bool { Self.matches(topic, allClaims) }

    /// Whether `topic` is a reminder to one of the node's people (what `reminders` matches).
    public func isReminder(_ topic: String) -> Bool { Self.matches(topic, reminders) }

    /// Whether `topic` is one `filter` matches, its `+` levels any one level.
    static func matches(_ topic: String, _ filter: String) -> Bool {
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
        let filterLevels = filter.split(separator: "/", omittingEmptySubsequences: false)
        return levels.count == filterLevels.count && zip(levels, filterLevels).allSatisfy { $1 == "+" ? !$0.isEmpty : $0 == $1 }
    }

    /// Home Assistant says `online` here when it (re)starts: discovery is sent again.
    public var homeAssistantStatus: String { discoveryPrefix + "/status" }

    /// A person's topics hang on their id (`person/2/state`): a rename changes only the name in the payload.
    public func person(_ id: Int64) -> String { base + "/person/\(id)/state" }
    /// A reminder given to that person, QoS 1, not retained (Home Assistant's event entity).
    public func reminder(_ id: Int64) -> String { base + "/person/\(id)/reminder" }
    /// The reminders to every one of the node's people (a hub reads them for their change numbers).
    public var reminders: String { base + "/person/+/reminder" }
    public func device(_ address: String) -> String { base + "/device/\(Self.deviceID(address))/state" }

    /// A device address as a topic level and id: `c8:2a:3f:00:3f:2a` → `c82a3f003f2a`.
    public static func deviceID(_ address: String) -> String {
        MQTTSettings.topicSafe(address.filter { $0 != ":" })
    }
}

/// The JSON of each message, one function per kind.
public enum Messages {
    /// A change to the history: `{"database_id", "seq", "identity", "change", "changed_at", "event"}`,
    /// `event` being the row as it is now, as `quench log --json` and the export write it (absent
    /// when it is no longer in the history). `database_id` and `seq` together name the message:
    /// a consumer drops one it has seen (QoS 1 repeats what was in flight at a crash).
    public static func event(_ entry: OutboxEntry, databaseID: String, topics: Topics) -> OutgoingMessage {
        struct Payload: Encodable {
            var databaseId: String
            var seq: Int64
            var identity: String
            var change: String
            var changedAt: String
            var event: EventRecord?
        }
        let payload = Payload(databaseId: databaseID, seq: entry.seq, identity: entry.identity, change: entry.change,
                              changedAt: entry.at.iso8601, event: entry.event.map(EventRecord.init))
        return OutgoingMessage(topic: topics.events, payload: History.json(payload), retain: false)
    }

    /// A person's retained state (`PersonState` as `quench today --json` spells it).
    public static func personState(_ state: PersonState, topics: Topics) -> OutgoingMessage {
        OutgoingMessage(topic: topics.person(state.personId), payload: History.json(state), retain: true)
    }

    /// Each of the person's bottles' retained state: link, what is left, battery.
    public static func deviceStates(_ state: PersonState, topics: Topics) -> [OutgoingMessage] {
        state.bottles.map { OutgoingMessage(topic: topics.device($0.device), payload: History.json($0), retain: true) }
    }

    /// A reminder as it was given (`ReminderGiven`, kept with its outbox row), with
    /// `database_id` and `seq` as an event's, on its person's topic.
    public static func reminder(_ given: String, person: Int64, seq: Int64, databaseID: String, topics: Topics) -> OutgoingMessage {
        // The stored JSON is one object: the two keys go in front of its own.
        let body = given.utf8.first == UInt8(ascii: "{") ? String(given.dropFirst()) : "}"
        let head = String(History.json(["database_id": databaseID]).dropLast()) + ",\"seq\":\(seq)"
        return OutgoingMessage(topic: topics.reminder(person), payload: head + (body == "}" ? "}" : "," + body), retain: false)
    }

    /// A reminder from before they were kept with their outbox row: as it stands now.
    public static func reminder(_ state: PersonState, seq: Int64, databaseID: String, topics: Topics) -> OutgoingMessage {
        let given = ReminderGiven(person: state.person, personId: state.personId, at: state.lastReminderAt, intakeMl: state.intakeMl,
                                  goalMl: state.goalMl, paceMl: state.paceMl, behindByMl: state.behindByMl, reason: state.reminderReason)
        return reminder(History.json(given), person: state.personId, seq: seq, databaseID: databaseID, topics: topics)
    }
}

/// Home Assistant MQTT discovery (per-entity configs, retained, under
/// `<discovery prefix>/<component>/quench_<node id>/<object>/config`): each
/// person's intake, goal, progress, pace, last sip, behind-pace and reminder
/// on the gateway's device (object ids carry the person's id, names their name);
/// each bottle's remaining volume, link and battery on a device of its own, via the gateway.
public enum HomeAssistantDiscovery {
    /// A config's fields, in the names of Home Assistant's MQTT integration.
    struct Device: Encodable {
        var identifiers: [String]
        var name: String
        var manufacturer = "Quench"
        var model: String
        var swVersion: String?
        var modelId: String?
        var viaDevice: String?
        var connections: [[String]]?
    }

    /// Who sent the config: Home Assistant shows it in the MQTT info and logs.
    struct Origin: Encodable {
        var name = "Quench"
        var swVersion = QuenchVersion.string
    }

    /// The payloads are Home Assistant's defaults, written out: under load, Home Assistant
    /// 2025.4 was seen setting up an entity from a discovery config whose defaults it had not
    /// filled in (KeyError: 'payload_available' in its log, the entity never made).
    struct Availability: Encodable {
        var topic: String
        var payloadAvailable = "online"
        var payloadNotAvailable = "offline"
        /// What of the topic's payload says `online` or `offline` (a person's state, for a control that fits it).
        var valueTemplate: String?
    }

    /// A config with every field Quench's entities use, in the names of Home Assistant's MQTT integration.
    struct Config: Encodable {
        var name: String
        var uniqueId: String
        var stateTopic: String?
        var valueTemplate: String?
        var commandTopic: String?
        var commandTemplate: String?
        var availability: [Availability]
        /// `all`: a bottle's entities need both the publisher and the gateway.
        var availabilityMode: String?
        var deviceClass: String?
        var stateClass: String?
        var unitOfMeasurement: String?
        var suggestedDisplayPrecision: Int?
        var lastResetValueTemplate: String?
        /// `diagnostic` (a bottle's link and battery), `config` (the goal): shown apart from the rest.
        var entityCategory: String?
        var icon: String?
        var eventTypes: [String]?
        var min: Double?
        var max: Double?
        var step: Double?
        var mode: String?
        var payloadOn: String?
        var payloadOff: String?
        var jsonAttributesTopic: String?
        var jsonAttributesTemplate: String?
        /// Seconds after which Home Assistant shows the entity unavailable unless its state came again
        /// (what `quench mqtt sync` publishes: no process stays to say `offline`).
        var expireAfter: Int?
        /// The device and origin of the component form; nil in the device form, whose message has them once.
        var device: Device?
        var origin: Origin? = Origin()
        /// The component (`sensor`, `button`) in the device form.
        var platform: String?

        init(name: String, uniqueId: String, stateTopic: String?, valueTemplate: String?, availability: [Availability],
             availabilityMode: String? = nil, deviceClass: String? = nil, stateClass: String? = nil, unitOfMeasurement: String? = nil,
             lastResetValueTemplate: String? = nil, icon: String? = nil, eventTypes: [String]? = nil, expireAfter: Int? = nil, device: Device) {
            self.name = name
            self.uniqueId = uniqueId
            self.stateTopic = stateTopic
            self.valueTemplate = valueTemplate
            self.availability = availability
            self.availabilityMode = availabilityMode
            self.deviceClass = deviceClass
            self.stateClass = stateClass
            self.unitOfMeasurement = unitOfMeasurement
            self.lastResetValueTemplate = lastResetValueTemplate
            self.icon = icon
            self.eventTypes = eventTypes
            self.expireAfter = expireAfter
            self.device = device
        }
    }

    /// One entity: its component, object id, who owns it (`gateway`, or a bottle's address: its configs are
    /// cleared when it is forgotten) and its config.
    struct Entity {
        var component: String
        var object: String
        var owner: String
        var config: Config
    }

    /// Every config for these people's states, by topic; `gateway` owns the people's, the address each bottle's.
    /// - Parameter expireAfter: seconds for `expire_after` (`sync`'s freshness); nil: none (`run` says `offline`).
    /// - Parameter form: one config per entity (`homeassistant/sensor/…/config`, every Home Assistant),
    ///   or one per device (`homeassistant/device/ID/config`, Home Assistant 2024.11 and later).
    public static func configs(_ states: [PersonState], topics: Topics, expireAfter: Double? = nil, form: DiscoveryForm = .components)
        -> [(topic: String, owner: String, message: OutgoingMessage)] {
        let all = [gatewayEntity(topics: topics)] + states.flatMap { entities($0, topics: topics, expireAfter: expireAfter) }
        switch form {
        case .components:
            return all.map { e in
                let topic = "\(topics.discoveryPrefix)/\(e.component)/quench_\(topics.node)/\(e.object)/config"
                return (topic, e.owner, OutgoingMessage(topic: topic, payload: History.json(e.config), retain: true))
            }
        case .device:
            return deviceConfigs(all, topics: topics)
        }
    }

    static func gatewayDevice(_ topics: Topics) -> Device {
        Device(identifiers: ["quench_\(topics.node)"], name: "Quench (\(topics.nodeName))", model: "Smart bottle gateway",
               swVersion: QuenchVersion.string)
    }

    /// The gateway's own entity: whether the Bluetooth gateway runs (`topics.gateway`). It also makes
    /// the gateway's device, which the people's and the bottles' name as `via_device`.
    static func gatewayEntity(topics: Topics) -> Entity {
        let gatewayID = "quench_\(topics.node)"
        var c = Config(name: "Bluetooth gateway", uniqueId: "\(gatewayID)_gateway", stateTopic: topics.gateway, valueTemplate: nil,
                       availability: [Availability(topic: topics.availability)], deviceClass: "running", device: gatewayDevice(topics))
        (c.payloadOn, c.payloadOff, c.entityCategory) = ("online", "offline", "diagnostic")
        return Entity(component: "binary_sensor", object: "gateway", owner: "gateway", config: c)
    }

    /// One person's entities and their bottles'.
    static func entities(_ state: PersonState, topics: Topics, expireAfter: Double? = nil) -> [Entity] {
        let gatewayID = "quench_\(topics.node)"
        // Ids from the person's id, never their name: a rename changes only `name`.
        let person = "p\(state.personId)"
        // A device per person, via the gateway: their entities together, named by the device ("Ann Intake today").
        let personDevice = Device(identifiers: ["\(gatewayID)_\(person)"], name: state.person, model: "Person", viaDevice: gatewayID)
        let personTopic = topics.person(state.personId)
        let expiry = expireAfter.map { Int(saturating: $0.rounded()) }
        var out: [Entity] = []

        func add(_ component: String, _ object: String, owner: String, _ config: Config) {
            out.append(Entity(component: component, object: object, owner: owner, config: config))
        }
        func personEntity(_ object: String, _ name: String, _ template: String, deviceClass: String? = nil, stateClass: String? = nil,
                          unit: String? = nil, precision: Int? = nil, lastReset: String? = nil, icon: String? = nil) -> Config {
            var c = Config(name: name, uniqueId: "\(gatewayID)_\(person)_\(object)",
                           stateTopic: personTopic, valueTemplate: template, availability: [Availability(topic: topics.availability)],
                           deviceClass: deviceClass, stateClass: stateClass, unitOfMeasurement: unit, lastResetValueTemplate: lastReset,
                           icon: icon, eventTypes: nil, expireAfter: expiry, device: personDevice)
            c.suggestedDisplayPrecision = precision
            return c
        }
        // The day's intake goes down on an undo: `total` with `last_reset` at the day's start, not
        // `total_increasing` (which would take the decrease for a meter reset and count the rest twice).
        // `last_reset` never goes back (the publisher holds it when the day start or zone moves mid-day,
        // and the total is then what was drunk since it: `intake_since_reset_ml`).
        var intake = personEntity(
            "intake_today", "Intake today", "{{ value_json.intake_since_reset_ml }}", deviceClass: "volume", stateClass: "total", unit: "mL",
            precision: 0, lastReset: "{{ value_json.last_reset }}", icon: "mdi:cup-water")
        // Why the person is (or is not) behind, and their bottles, as attributes for cards and automations.
        intake.jsonAttributesTopic = personTopic
        intake.jsonAttributesTemplate = "{{ {'reason': value_json.reminder_reason, 'bottles': value_json.bottles} | to_json }}"
        add("sensor", "\(person)_intake_today", owner: "gateway", intake)
        add("sensor", "\(person)_goal", owner: "gateway", personEntity(
            "goal", "Daily goal", "{{ value_json.goal_ml }}", deviceClass: "volume", unit: "mL", precision: 0, icon: "mdi:flag-checkered"))
        add("sensor", "\(person)_progress", owner: "gateway", personEntity(
            "progress", "Progress", "{{ value_json.progress_percent }}", stateClass: "measurement", unit: "%", precision: 0, icon: "mdi:percent"))
        add("sensor", "\(person)_pace", owner: "gateway", personEntity(
            "pace", "Pace now", "{{ value_json.pace_ml }}", deviceClass: "volume", unit: "mL", precision: 0, icon: "mdi:speedometer"))
        add("sensor", "\(person)_last_sip", owner: "gateway", personEntity(
            "last_sip", "Last sip", "{{ value_json.last_sip_at if value_json.last_sip_at is defined else none }}",
            deviceClass: "timestamp"))
        add("binary_sensor", "\(person)_behind", owner: "gateway", personEntity(
            "behind", "Behind pace", "{{ 'ON' if value_json.behind else 'OFF' }}", deviceClass: "problem"))
        // An event entity reads `event_type` from the JSON payload itself: no template, and no expire_after.
        var reminder = personEntity("reminder", "Reminder", "", icon: "mdi:bell-ring")
        reminder.valueTemplate = nil
        reminder.expireAfter = nil
        reminder.stateTopic = topics.reminder(state.personId)
        reminder.eventTypes = ["reminder"]
        add("event", "\(person)_reminder", owner: "gateway", reminder)

        for bottle in state.bottles {
            let id = Topics.deviceID(bottle.device)
            // A scale the bottle stands on (it weighs) or a bottle that measures its own level; the profile as the model id.
            let scale = bottle.sensor == SensorKind.weight.rawValue
            let device = Device(identifiers: ["\(gatewayID)_\(id)"], name: bottle.name ?? "\(scale ? "Scale" : "Bottle") \(bottle.device)",
                                model: scale ? "Bluetooth scale" : "Smart bottle", swVersion: nil, modelId: bottle.profile,
                                viaDevice: gatewayID, connections: [["bluetooth", bottle.device.uppercased()]])
            func bottleEntity(_ object: String, _ name: String, _ template: String, deviceClass: String?, stateClass: String? = nil,
                              unit: String? = nil, category: String? = nil) -> Config {
                // A bottle's link and readings mean something only while the gateway runs, and reach Home Assistant only while the publisher does.
                var c = Config(name: name, uniqueId: "\(gatewayID)_\(id)_\(object)",
                       stateTopic: topics.device(bottle.device), valueTemplate: template,
                       availability: [Availability(topic: topics.availability), Availability(topic: topics.gateway)], availabilityMode: "all",
                       deviceClass: deviceClass, stateClass: stateClass, unitOfMeasurement: unit, lastResetValueTemplate: nil,
                       icon: nil, eventTypes: nil, expireAfter: expiry, device: device)
                c.suggestedDisplayPrecision = unit == nil ? nil : 0
                c.entityCategory = category
                return c
            }
            add("sensor", "\(id)_remaining", owner: bottle.device, bottleEntity(
                "remaining", "Remaining", "{{ value_json.remaining_ml if value_json.remaining_ml is defined else none }}",
                deviceClass: "volume_storage", stateClass: "measurement", unit: "mL"))
            add("binary_sensor", "\(id)_link", owner: bottle.device, bottleEntity(
                "link", "Link", "{{ 'ON' if value_json.link_up is defined and value_json.link_up else 'OFF' }}", deviceClass: "connectivity",
                category: "diagnostic"))
            if bottle.batteryPercent != nil {
                add("sensor", "\(id)_battery", owner: bottle.device, bottleEntity(
                    "battery", "Battery", "{{ value_json.battery_percent }}", deviceClass: "battery", stateClass: "measurement", unit: "%",
                    category: "diagnostic"))
            }
        }
        return out + controls(state, topics: topics, gatewayID: gatewayID, device: personDevice, expireAfter: expiry)
    }
}

/// What `quench/NODE/database` says: the database publishing as the node, and whether it has a will
/// (`quench mqtt run`: its `offline` comes when it goes), as JSON. A `sync`'s `online` stays after it,
/// so a node a sync holds keeps nobody out.
public struct NodeOwner: Sendable, Hashable, Codable {
    public var databaseID: String
    public var hasWill: Bool

    public init(databaseID: String, hasWill: Bool) {
        self.databaseID = databaseID
        self.hasWill = hasWill
    }

    enum CodingKeys: String, CodingKey {
        case databaseID = "database_id"
        case hasWill = "will"
    }

    public var payload: String { History.json(self) }

    /// Nil for anything else (an empty payload: the topic cleared; text of another version).
    public init?(payload: [UInt8]) {
        guard payload.count <= 256, let owner = try? JSONDecoder().decode(NodeOwner.self, from: Data(payload)),
              (1...64).contains(owner.databaseID.utf8.count) else { return nil }
        self = owner
    }
}

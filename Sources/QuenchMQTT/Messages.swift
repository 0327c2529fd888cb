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
public struct Topics: Sendable, Hashable {
    public let base: String
    public let discoveryPrefix: String
    public let node: String

    public init(_ settings: MQTTSettings) {
        base = "\(settings.topicPrefix)/\(settings.node)"
        discoveryPrefix = settings.discoveryPrefix
        node = settings.node
    }

    /// `online` / `offline`, retained; `offline` is also the last will.
    public var availability: String { base + "/status" }
    /// Each change to the history, QoS 1, not retained.
    public var events: String { base + "/event" }

    /// Home Assistant says `online` here when it (re)starts: discovery is sent again.
    public var homeAssistantStatus: String { discoveryPrefix + "/status" }

    /// Each person's topics are under their name made topic-safe (`quench person rename` moves them).
    public func person(_ person: String) -> String { base + "/person/\(MQTTSettings.topicSafe(person))/state" }
    /// A reminder given to that person, QoS 1, not retained (Home Assistant's event entity).
    public func reminder(_ person: String) -> String { base + "/person/\(MQTTSettings.topicSafe(person))/reminder" }
    public func device(_ address: String) -> String { base + "/device/\(Self.deviceID(address))/state" }

    /// A device address as a topic level and id: `c8:2a:3f:00:3f:2a` → `c82a3f003f2a`.
    public static func deviceID(_ address: String) -> String {
        MQTTSettings.topicSafe(address.filter { $0 != ":" })
    }
}

/// The JSON of each message, one function per kind.
public enum Messages {
    /// A change to the history: `{"seq", "identity", "change", "changed_at", "event"}`, `event`
    /// being the row as it is now, as `quench log --json` and the export write it (absent
    /// when it is no longer in the history).
    public static func event(_ entry: OutboxEntry, topics: Topics) -> OutgoingMessage {
        struct Payload: Encodable {
            var seq: Int64
            var identity: String
            var change: String
            var changedAt: String
            var event: EventRecord?
        }
        let payload = Payload(seq: entry.seq, identity: entry.identity, change: entry.change, changedAt: entry.at.iso8601,
                              event: entry.event.map(EventRecord.init))
        return OutgoingMessage(topic: topics.events, payload: History.json(payload), retain: false)
    }

    /// A person's retained state (`PersonState` as `quench today --json` spells it).
    public static func personState(_ state: PersonState, topics: Topics) -> OutgoingMessage {
        OutgoingMessage(topic: topics.person(state.person), payload: History.json(state), retain: true)
    }

    /// Each of the person's bottles' retained state: link, what is left, battery.
    public static func deviceStates(_ state: PersonState, topics: Topics) -> [OutgoingMessage] {
        state.bottles.map { OutgoingMessage(topic: topics.device($0.device), payload: History.json($0), retain: true) }
    }

    /// A reminder given, for Home Assistant's event entity (`event_type` is required).
    public static func reminder(_ state: PersonState, topics: Topics) -> OutgoingMessage {
        struct Payload: Encodable {
            var eventType = "reminder"
            var person: String
            var at: String?
            var intakeMl: Double
            var goalMl: Double
            var paceMl: Double
            var behindByMl: Double
            var reason: String
        }
        let p = Payload(person: state.person, at: state.lastReminderAt, intakeMl: state.intakeMl, goalMl: state.goalMl,
                        paceMl: state.paceMl, behindByMl: state.behindByMl, reason: state.reminderReason)
        return OutgoingMessage(topic: topics.reminder(state.person), payload: History.json(p), retain: false)
    }
}

/// Home Assistant MQTT discovery (per-entity configs, retained, under
/// `<discovery prefix>/<component>/quench_<node>/<object>/config`): each
/// person's intake, goal, progress, pace, last sip, behind-pace and reminder
/// on the gateway's device (object ids and names carry the person); each
/// bottle's remaining volume, link and battery on a device of its own, via the gateway.
public enum HomeAssistantDiscovery {
    /// A config's fields, in the names of Home Assistant's MQTT integration.
    struct Device: Encodable {
        var identifiers: [String]
        var name: String
        var manufacturer = "Quench"
        var model: String
        var swVersion: String?
        var viaDevice: String?
        var connections: [[String]]?
    }

    struct Config: Encodable {
        var name: String
        var uniqueId: String
        var stateTopic: String
        var valueTemplate: String?
        var availabilityTopic: String
        var deviceClass: String?
        var stateClass: String?
        var unitOfMeasurement: String?
        var lastResetValueTemplate: String?
        var icon: String?
        var eventTypes: [String]?
        var device: Device
    }

    /// Every config for these people's states, by topic; `gateway` owns the people's, the address each bottle's.
    public static func configs(_ states: [PersonState], topics: Topics) -> [(topic: String, owner: String, message: OutgoingMessage)] {
        states.flatMap { configs($0, topics: topics) }
    }

    /// One person's configs and their bottles'.
    public static func configs(_ state: PersonState, topics: Topics) -> [(topic: String, owner: String, message: OutgoingMessage)] {
        let gatewayID = "quench_\(topics.node)"
        let gateway = Device(identifiers: [gatewayID], name: "Quench (\(topics.node))", model: "Smart bottle gateway",
                             swVersion: QuenchVersion.string)
        let person = MQTTSettings.topicSafe(state.person)
        let personTopic = topics.person(state.person)
        var out: [(String, String, OutgoingMessage)] = []

        func add(_ component: String, _ object: String, owner: String, _ config: Config) {
            let topic = "\(topics.discoveryPrefix)/\(component)/\(gatewayID)/\(object)/config"
            out.append((topic, owner, OutgoingMessage(topic: topic, payload: History.json(config), retain: true)))
        }
        func personEntity(_ object: String, _ name: String, _ template: String, deviceClass: String? = nil, stateClass: String? = nil,
                          unit: String? = nil, lastReset: String? = nil, icon: String? = nil) -> Config {
            // The name says whose: several people's entities share the gateway's device.
            Config(name: "\(name) (\(state.person))", uniqueId: "\(gatewayID)_\(person)_\(object)",
                   stateTopic: personTopic, valueTemplate: template, availabilityTopic: topics.availability,
                   deviceClass: deviceClass, stateClass: stateClass, unitOfMeasurement: unit, lastResetValueTemplate: lastReset,
                   icon: icon, eventTypes: nil, device: gateway)
        }
        // The day's intake goes down on an undo: `total` with `last_reset` at the day's start, not
        // `total_increasing` (which would take the decrease for a meter reset and count the rest twice).
        add("sensor", "\(person)_intake_today", owner: "gateway", personEntity(
            "intake_today", "Intake today", "{{ value_json.intake_ml }}", deviceClass: "volume", stateClass: "total", unit: "mL",
            lastReset: "{{ value_json.day_start }}", icon: "mdi:cup-water"))
        add("sensor", "\(person)_goal", owner: "gateway", personEntity(
            "goal", "Daily goal", "{{ value_json.goal_ml }}", deviceClass: "volume", unit: "mL", icon: "mdi:flag-checkered"))
        add("sensor", "\(person)_progress", owner: "gateway", personEntity(
            "progress", "Progress", "{{ value_json.progress_percent }}", stateClass: "measurement", unit: "%", icon: "mdi:percent"))
        add("sensor", "\(person)_pace", owner: "gateway", personEntity(
            "pace", "Pace now", "{{ value_json.pace_ml }}", deviceClass: "volume", unit: "mL", icon: "mdi:speedometer"))
        add("sensor", "\(person)_last_sip", owner: "gateway", personEntity(
            "last_sip", "Last sip", "{{ value_json.last_sip_at if value_json.last_sip_at is defined else none }}",
            deviceClass: "timestamp"))
        add("binary_sensor", "\(person)_behind", owner: "gateway", personEntity(
            "behind", "Behind pace", "{{ 'ON' if value_json.behind else 'OFF' }}", deviceClass: "problem"))
        // An event entity reads `event_type` from the JSON payload itself: no template.
        var reminder = personEntity("reminder", "Reminder", "", icon: "mdi:bell-ring")
        reminder.valueTemplate = nil
        reminder.stateTopic = topics.reminder(state.person)
        reminder.eventTypes = ["reminder"]
        add("event", "\(person)_reminder", owner: "gateway", reminder)

        for bottle in state.bottles {
            let id = Topics.deviceID(bottle.device)
            let device = Device(identifiers: ["\(gatewayID)_\(id)"], name: bottle.name ?? "Bottle \(bottle.device)", model: "Smart bottle",
                                swVersion: nil, viaDevice: gatewayID, connections: [["bluetooth", bottle.device.uppercased()]])
            func bottleEntity(_ object: String, _ name: String, _ template: String, deviceClass: String?, stateClass: String? = nil,
                              unit: String? = nil) -> Config {
                Config(name: name, uniqueId: "\(gatewayID)_\(id)_\(object)",
                       stateTopic: topics.device(bottle.device), valueTemplate: template, availabilityTopic: topics.availability,
                       deviceClass: deviceClass, stateClass: stateClass, unitOfMeasurement: unit, lastResetValueTemplate: nil,
                       icon: nil, eventTypes: nil, device: device)
            }
            add("sensor", "\(id)_remaining", owner: bottle.device, bottleEntity(
                "remaining", "Remaining", "{{ value_json.remaining_ml if value_json.remaining_ml is defined else none }}",
                deviceClass: "volume_storage", stateClass: "measurement", unit: "mL"))
            add("binary_sensor", "\(id)_link", owner: bottle.device, bottleEntity(
                "link", "Link", "{{ 'ON' if value_json.link_up is defined and value_json.link_up else 'OFF' }}", deviceClass: "connectivity"))
            if bottle.batteryPercent != nil {
                add("sensor", "\(id)_battery", owner: bottle.device, bottleEntity(
                    "battery", "Battery", "{{ value_json.battery_percent }}", deviceClass: "battery", stateClass: "measurement", unit: "%"))
            }
        }
        return out + controls(state, topics: topics, gatewayID: gatewayID, device: gateway)
    }
}

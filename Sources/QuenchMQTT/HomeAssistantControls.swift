import QuenchCore
import QuenchHistory

/// The Home Assistant entities beyond the day's sensors: what to log a drink with (a button
/// per quick amount, a text for any amount, undo, the goal as a number; each sends a
/// `RemoteCommand`), and the sensors for automations and long-term statistics (reminder due,
/// still to drink, the lifetime counter, the last command's outcome).
extension HomeAssistantDiscovery {
    /// A command's payload as Home Assistant renders it on each press: a fresh id (the time to the
    /// microsecond and a random number; its sandbox has no UUID) and the fields given, `value`
    /// being what the entity sends (the text typed, the number set).
    static func commandTemplate(action: RemoteCommand.Action, amount: String?) -> String {
        var fields = "'id': 'ha-' ~ (now().timestamp() * 1000000) | int ~ '-' ~ range(100000) | random, 'action': '\(action.rawValue)'"
        if let amount { fields += ", 'amount': \(amount)" }
        return "{{ {\(fields)} | to_json }}"
    }

    /// The person's controls and extra sensors, on their `device`.
    static func controls(_ state: PersonState, topics: Topics, gatewayID: String, device: Device, expireAfter: Int?) -> [Entity] {
        let person = "p\(state.personId)"
        let personTopic = topics.person(state.personId)
        let commandTopic = topics.command(state)
        var out: [Entity] = []
        func add(_ component: String, _ object: String, _ name: String, _ fill: (inout Config) -> Void) {
            var config = Config(name: name, uniqueId: "\(gatewayID)_\(person)_\(object)", stateTopic: nil, valueTemplate: nil,
                                availability: [Availability(topic: topics.availability)], device: device)
            fill(&config)
            // What sends a command is offered only while `quench mqtt run` is there to take it.
            if config.commandTopic != nil {
                config.availability.append(Availability(topic: topics.takingCommands))
                config.availabilityMode = "all"
            }
            // What reads a state expires with it after a `sync`; what only sends has no state to go stale.
            if config.stateTopic != nil, component != "number" { config.expireAfter = expireAfter }
            out.append(Entity(component: component, object: "\(person)_\(object)", owner: "gateway", config: config))
        }

        // Logging a drink.
        for amount in History.quickAmounts(units: state.units) {
            let shown = amount.replacingSuffix("ml", " mL").replacingSuffix("oz", " fl oz")
            add("button", "drink_\(amount)", "Drink \(shown)") {
                $0.commandTopic = commandTopic
                $0.commandTemplate = commandTemplate(action: .add, amount: "'\(amount)'")
                $0.icon = "mdi:cup-water"
            }
        }
        add("text", "log_drink", "Log a drink") {
            $0.commandTopic = commandTopic
            $0.commandTemplate = commandTemplate(action: .add, amount: "value")
            ($0.min, $0.max) = (1, 32)
            $0.icon = "mdi:cup-outline"
        }
        add("button", "undo", "Undo last drink") {
            $0.commandTopic = commandTopic
            $0.commandTemplate = commandTemplate(action: .undo, amount: nil)
            $0.icon = "mdi:undo"
        }
        add("number", "goal_setting", "Daily goal setting") {
            $0.stateTopic = personTopic
            $0.valueTemplate = "{{ value_json.goal_ml }}"
            $0.commandTopic = commandTopic
            $0.commandTemplate = commandTemplate(action: .goal, amount: "value")
            ($0.unitOfMeasurement, $0.deviceClass) = ("mL", "volume")
            // `quench goal set`'s bounds.
            ($0.min, $0.max, $0.step, $0.mode) = (100, 20_000, 50, "box")
            $0.entityCategory = "config"
            $0.icon = "mdi:flag-checkered"
        }

        // Sensors for automations and statistics.
        add("binary_sensor", "reminder_due", "Reminder due") {
            $0.stateTopic = personTopic
            $0.valueTemplate = "{{ 'ON' if value_json.reminder_due else 'OFF' }}"
            $0.jsonAttributesTopic = personTopic
            $0.jsonAttributesTemplate = "{{ {'reason': value_json.reminder_reason, 'behind_by_ml': value_json.behind_by_ml} | to_json }}"
            $0.icon = "mdi:bell-alert"
        }
        // A carer's alert (`quench carer --notify`), open until acknowledged (here, on the page or
        // `quench carer ack`) or until they drink: an automation can announce it, a card show it.
        add("binary_sensor", "carer_alert", "Carer's alert") {
            $0.stateTopic = personTopic
            $0.valueTemplate = "{{ 'ON' if value_json.carer_alert_open else 'OFF' }}"
            $0.jsonAttributesTopic = personTopic
            $0.jsonAttributesTemplate = "{{ {'sent_at': value_json.get('carer_alert_sent_at')} | to_json }}"
            $0.deviceClass = "problem"
        }
        add("button", "acknowledge_alert", "Acknowledge carer's alert") {
            $0.commandTopic = commandTopic
            $0.commandTemplate = commandTemplate(action: .acknowledge, amount: nil)
            $0.icon = "mdi:check-circle-outline"
            // Offered only while an alert is open: pressed with none, it said "refused: there is no alert" (an HA trial).
            $0.availability.append(Availability(topic: personTopic,
                                                valueTemplate: "{{ 'online' if value_json.carer_alert_open else 'offline' }}"))
        }
        add("sensor", "still_to_drink", "Still to drink") {
            $0.stateTopic = personTopic
            $0.valueTemplate = "{{ value_json.still_to_drink_ml }}"
            // No state class: Home Assistant allows a volume only `total` or `total_increasing`, and this is neither.
            ($0.deviceClass, $0.unitOfMeasurement, $0.suggestedDisplayPrecision) = ("volume", "mL", 0)
            $0.icon = "mdi:cup-outline"
        }
        // In litres with device class water, as the Energy dashboard's water consumption and
        // utility_meter take it. `total`, not `total_increasing`: deleting a sip (any day's)
        // lowers it, which `total` books as a decrease where `total_increasing` would take a fall
        // of over 10 % for a meter reset and count the rest again (docs/homeassistant.md).
        add("sensor", "lifetime", "Lifetime intake") {
            $0.stateTopic = personTopic
            $0.valueTemplate = "{{ (value_json.lifetime_ml / 1000) | round(3) }}"
            ($0.deviceClass, $0.stateClass, $0.unitOfMeasurement, $0.suggestedDisplayPrecision) = ("water", "total", "L", 2)
            $0.icon = "mdi:water"
        }
        add("sensor", "last_command", "Last command") {
            $0.stateTopic = topics.commandResult(state)
            $0.valueTemplate = "{{ ((value_json.said or '').split('\\n')[0] if value_json.ok else 'refused: ' ~ value_json.error) | truncate(250) }}"
            $0.jsonAttributesTopic = topics.commandResult(state)
            $0.entityCategory = "diagnostic"
            $0.icon = "mdi:console"
        }
        return out
    }
}

extension String {
    fileprivate func replacingSuffix(_ suffix: String, _ replacement: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) + replacement : self
    }
}

import QuenchHistory

/// How the discovery configs are sent (`mqtt.discovery`).
public enum DiscoveryForm: String, Sendable, Hashable, CaseIterable {
    /// One retained config per entity, `<prefix>/<component>/quench_<node>/<object>/config`: every Home Assistant.
    case components
    /// One retained config per device, `<prefix>/device/<device id>/config`, its entities under
    /// `components`: Home Assistant 2024.11 and later (fewer messages, a device's entities together).
    case device
}

extension HomeAssistantDiscovery {
    /// A device-based discovery message (home-assistant.io/integrations/mqtt, "Device discovery payload").
    struct DeviceConfig: Encodable {
        var device: Device
        var origin = Origin()
        var components: [String: Config]
    }

    /// The same entities, one message per device (the gateway, each person, each bottle), in order of
    /// first appearance; a component's config without the device and origin the message carries once.
    static func deviceConfigs(_ entities: [Entity], topics: Topics) -> [(topic: String, owner: String, message: OutgoingMessage)] {
        var order: [String] = []
        var grouped: [String: (device: Device, owner: String, components: [String: Config])] = [:]
        for e in entities {
            guard let device = e.config.device, let id = device.identifiers.first else { continue }
            var config = e.config
            (config.device, config.origin, config.platform) = (nil, nil, e.component)
            if grouped[id] == nil {
                order.append(id)
                grouped[id] = (device, e.owner, [:])
            }
            grouped[id]?.components[e.object] = config
        }
        return order.compactMap { id in
            guard let g = grouped[id] else { return nil }
            let topic = "\(topics.discoveryPrefix)/device/\(id)/config"
            let message = DeviceConfig(device: g.device, components: g.components)
            return (topic, g.owner, OutgoingMessage(topic: topic, payload: History.json(message), retain: true))
        }
    }
}

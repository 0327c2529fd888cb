import Foundation
import QuenchCore
import QuenchHistory
import QuenchMQTT
import QuenchStore
import QuenchTestSupport
import Testing

@Suite("discovery forms")
struct DiscoveryFormTests {
    func objects(_ configs: [(topic: String, owner: String, message: OutgoingMessage)]) throws -> [String: [String: Any]] {
        try Dictionary(configs.map { ($0.topic, try #require(try JSONSerialization.jsonObject(with: Data($0.message.payload.utf8)) as? [String: Any])) },
                       uniquingKeysWith: { a, _ in a })
    }

    @Test("the device form: one config per device (gateway, person, bottle) with the same entities as the component form")
    func deviceForm() throws {
        let path = try TemporaryFolder.create("quench-forms") + "/q.sqlite"
        let store = try IntakeStore(path: path)
        try store.saveDevice(Device(address: "C8:2A:3F:00:3F:2A", name: "kitchen scale", profile: "decent-scale", sensor: .weight, addedAt: .wallClockNow))
        let env = HistoryEnvironment(databasePath: path, now: .wallClockNow, timeZone: LocalZone(identifier: "Europe/London"))
        let settings = MQTTSettings(broker: try BrokerAddress(parsing: "mqtt://127.0.0.1"), node: "Kitchen", nodeID: "kitchen",
                                    discoveryPrefix: "ha", topicPrefix: "home/quench")
        let topics = Topics(settings, nodeID: "kitchen")
        let states = try History.personStates(env)
        let components = try objects(HomeAssistantDiscovery.configs(states, topics: topics))
        let devices = try objects(HomeAssistantDiscovery.configs(states, topics: topics, form: .device))
        #expect(Set(devices.keys) == ["ha/device/quench_kitchen/config", "ha/device/quench_kitchen_p1/config", "ha/device/quench_kitchen_c82a3f003f2a/config"])
        #expect(components.keys.allSatisfy { $0.hasPrefix("ha/") && $0.hasSuffix("/config") }, "the discovery prefix")
        var ids: [String] = []
        for (topic, message) in devices {
            let device = try #require(message["device"] as? [String: Any], "\(topic)")
            #expect((message["origin"] as? [String: Any])?["name"] as? String == "Quench")
            let parts = try #require(message["components"] as? [String: [String: Any]], "\(topic)")
            for (object, c) in parts {
                #expect(c["platform"] as? String != nil && c["device"] == nil && c["origin"] == nil, "\(object)")
                ids.append(c["unique_id"] as? String ?? "")
            }
            #expect((device["identifiers"] as? [String])?.first.map { topic == "ha/device/\($0)/config" } == true)
        }
        #expect(ids.sorted() == components.values.compactMap { $0["unique_id"] as? String }.sorted(), "the same entities either way")
        let scale = try #require(devices["ha/device/quench_kitchen_c82a3f003f2a/config"]?["device"] as? [String: Any])
        #expect(scale["model"] as? String == "Bluetooth scale" && scale["model_id"] as? String == "decent-scale" && scale["via_device"] as? String == "quench_kitchen")
        let intake = try #require(components["ha/sensor/quench_kitchen/p1_intake_today/config"])
        #expect(intake["state_topic"] as? String == "home/quench/kitchen/person/1/state", "the topic prefix")
    }
}

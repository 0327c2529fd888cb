import Logging
import MQTT
import QuenchMQTT
import Testing

/// A broker away for long is told in the journal now and then, not at every retry: the publisher
/// and the hub wrote "cannot reach the MQTT broker" every 5 s of an outage (17,000 lines a day).
@Suite struct BrokerRetryTests {
    @Test func aBrokerAwayForLongIsToldNowAndThen() throws {
        let lines = LogLines()
        var settings = MQTTSettings(broker: try BrokerAddress(parsing: "mqtt://127.0.0.1:1"), node: "t", nodeID: "t")
        settings.maximumBackoff = 0.0001
        var tries = 0
        settings.keepConnected(logger: lines.logger, shouldStop: { tries >= 240 }, isConnected: { false },
                               connect: { () throws(MQTTError) in
                                   tries += 1
                                   throw MQTTError("connect to 127.0.0.1:1", .system(errno: 111))
                               },
                               turn: {}, lost: {})
        let warned = lines.all.filter { $0.hasPrefix("warning cannot reach the MQTT broker") }
        // Tries 1–5, 8, 16, 32, 64, 128, 120 and 240.
        #expect(tries == 240 && warned.count == 12, "\(warned.count) of \(tries)")
        #expect(warned.first?.contains("connect to 127.0.0.1:1") == true, "\(warned.first ?? "")")
    }
}

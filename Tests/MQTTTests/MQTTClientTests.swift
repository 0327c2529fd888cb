#if canImport(Glibc)
import Foundation
import MQTT
import QuenchTestSupport
import Testing

/// libmosquitto from Swift against Debian's broker.
@Suite("MQTT client (libmosquitto)", .serialized, .enabled(if: MosquittoBroker.isInstalled, Comment(rawValue: MosquittoBroker.missing)))
struct MQTTClientTests {
    /// Drives `client` until `condition` or 5 s.
    func pump(_ client: MQTTClient, until condition: () -> Bool) throws -> Bool {
        let end = Date().addingTimeInterval(5)
        while !condition(), Date() < end { try client.loop(timeoutMS: 20) }
        return condition()
    }

    @Test("connect, publish QoS 1 and get the acknowledgement; the message reaches a subscriber")
    func publishAcknowledged() throws {
        let broker = try MosquittoBroker()
        let subscriber = TestSubscriber(port: broker.port, topics: ["t/#"])
        defer { subscriber.close() }
        let client = try MQTTClient(clientID: "test-publisher")
        var connack: Int32?
        var acked: [Int32] = []
        client.onConnect = { connack = $0 }
        client.onPublish = { acked.append($0) }
        try client.connect(host: "127.0.0.1", port: Int32(broker.port))
        #expect(try pump(client) { connack != nil })
        #expect(connack == 0)
        // Let the subscriber's session exist before publishing. (30 s: a bound, not a timing; the
        // speed is the mqtt benchmark's. A starved CI machine took over 5 s, 2026-11-28.)
        #expect(subscriber.waitFor(seconds: 30) { broker.log.contains("quench-test-subscriber") })
        Thread.sleep(forTimeInterval: 0.2)
        let mid = try client.publish(topic: "t/one", payload: Array("hello".utf8), qos: 1, retain: false)
        #expect(try pump(client) { acked.contains(mid) }, "PUBACK for message \(mid)")
        #expect(subscriber.waitFor(seconds: 30) { subscriber.last("t/one")?.payload == Array("hello".utf8) })
    }

    @Test("a wrong password is refused in words; a broker that is not there says so")
    func refusals() throws {
        let broker = try MosquittoBroker(users: ["quench": "right"])
        let client = try MQTTClient(clientID: "test-wrong-password")
        try client.setCredentials(user: "quench", password: "wrong")
        var connack: Int32?
        client.onConnect = { connack = $0 }
        try client.connect(host: "127.0.0.1", port: Int32(broker.port))
        #expect {
            _ = try pump(client) { false }
        } throws: { error in
            guard let e = error as? MQTTError else { return false }
            return e.isNotAuthorized && e.description.contains("not authorised") && e.description.contains("password file")
                && e.description.contains("127.0.0.1:\(broker.port)")
        }
        #expect(connack == 5, "CONNACK 5: not authorised")

        let nobody = try TestPorts.next()
        let lonely = try MQTTClient(clientID: "test-nobody")
        #expect {
            try lonely.connect(host: "127.0.0.1", port: Int32(nobody))
        } throws: { error in
            guard let e = error as? MQTTError, case .system(let code) = e.cause else { return false }
            return code == ECONNREFUSED && e.description.contains("Connection refused") && e.description.contains("127.0.0.1:\(nobody)")
        }
    }
}
#endif

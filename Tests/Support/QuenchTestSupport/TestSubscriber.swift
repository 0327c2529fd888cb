import Foundation
import MQTT
import Synchronization

/// A subscriber on its own thread, for tests: a persistent session (clean
/// session off, QoS 1), so what is published while it or the broker is away
/// reaches it once both are back; it reconnects by itself.
public final class TestSubscriber: Sendable {
    private let received = Mutex<[MQTTMessage]>([])
    private let stopping = Atomic<Bool>(false)
    private let ended = Atomic<Bool>(false)

    public init(port: Int, clientID: String = "quench-test-subscriber", topics: [String] = ["quench/#", "homeassistant/#"]) {
        let thread = Thread { [self] in run(port: port, clientID: clientID, topics: topics) }
        thread.start()
    }

    private func run(port: Int, clientID: String, topics: [String]) {
        defer { ended.store(true, ordering: .releasing) }
        var client: MQTTClient?
        while !stopping.load(ordering: .relaxed) {
            if client == nil {
                guard let c = try? MQTTClient(clientID: clientID, cleanSession: false) else { return }
                c.onConnect = { [unowned c] code in
                    if code == 0 { for t in topics { try? c.subscribe(t, qos: 1) } }
                }
                c.onMessage = { [unowned self] m in received.withLock { $0.append(m) } }
                do { try c.connect(host: "127.0.0.1", port: Int32(port)) } catch {
                    Thread.sleep(forTimeInterval: 0.05)
                    continue
                }
                client = c
            }
            do { try client?.loop(timeoutMS: 20) } catch {
                client = nil
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        client?.disconnect()
    }

    public var messages: [MQTTMessage] { received.withLock { $0 } }

    /// The JSON objects received on topics ending with `suffix`.
    public func objects(onTopicsEndingWith suffix: String) -> [[String: Any]] {
        messages.filter { $0.topic.hasSuffix(suffix) }.compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.payload)) as? [String: Any]
        }
    }

    /// The last message on `topic` (retained state, configs).
    public func last(_ topic: String) -> MQTTMessage? { messages.last { $0.topic == topic } }

    public func waitFor(seconds: Double, _ condition: () -> Bool) -> Bool {
        LiveFixture.waitFor(seconds, condition)
    }

    public func close() {
        stopping.store(true, ordering: .relaxed)
        _ = waitFor(seconds: 2) { ended.load(ordering: .acquiring) }
    }

    deinit { stopping.store(true, ordering: .relaxed) }
}

/// A client connected to the broker on loopback `port`, to publish as another program would
/// (Home Assistant, a hub, a gateway's claim); nil connection is a thrown error, not a wait that passes.
public func connectedTestClient(_ clientID: String, port: Int) throws -> MQTTClient {
    let client = try MQTTClient(clientID: clientID)
    let connected = Atomic<Bool>(false)
    client.onConnect = { if $0 == 0 { connected.store(true, ordering: .relaxed) } }
    try client.connect(host: "127.0.0.1", port: Int32(port))
    let end = Date().addingTimeInterval(5)
    while !connected.load(ordering: .relaxed), Date() < end { try client.loop(timeoutMS: 20) }
    guard connected.load(ordering: .relaxed) else { throw TestClientError(clientID: clientID, port: port) }
    return client
}

public struct TestClientError: Error, CustomStringConvertible {
    let clientID: String, port: Int
    public var description: String { "\(clientID) did not connect to 127.0.0.1:\(port) within 5 s" }
}

extension MQTTClient {
    /// Publishes and turns the loop a few times, so the message is on its way before the test reads.
    public func publishNow(_ topic: String, _ payload: String, retain: Bool = false) throws {
        _ = try publish(topic: topic, payload: Array(payload.utf8), qos: 1, retain: retain)
        for _ in 0..<10 { try loop(timeoutMS: 20) }
    }
}

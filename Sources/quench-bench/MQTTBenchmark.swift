import Foundation
import Logging
import MQTT
import QuenchCore
import QuenchHistory
import QuenchMQTT
import QuenchStore
import Synchronization

/// `quench-bench mqtt`: a real mosquitto on loopback. Latency from an event
/// committed to the store to its message at a subscriber (the publisher
/// running as `quench mqtt run` does, in process); a backlog of outbox rows
/// drained by `quench mqtt sync` as a whole process (rate and peak RSS); and
/// the resident memory of an idle `quench mqtt run`.
struct MQTTBenchmark {
    var quench: String
    var events = 1000
    var backlog = 100_000
    var mosquitto = "/usr/sbin/mosquitto"

    init(arguments: [String]) throws {
        var quench: String?
        for (flag, v) in try StoreBenchmark.options(arguments) {
            switch flag {
            case "--quench": quench = v
            case "--events": events = Int(v) ?? events
            case "--backlog": backlog = Int(v) ?? backlog
            case "--mosquitto": mosquitto = v
            default: throw StoreBenchmark.BenchError.usage("unknown argument \(flag)")
            }
        }
        self.quench = quench ?? StoreBenchmark.quenchBeside
    }

    func run() throws {
        let work = NSTemporaryDirectory() + "quench-bench-mqtt-\(getpid())"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let port = 20_000 + Int(getpid() % 10_000)
        try "listener \(port) 127.0.0.1\nallow_anonymous true\n\(getuid() == 0 ? "user root\n" : "")max_queued_messages 0\n"
            .write(toFile: work + "/broker.conf", atomically: true, encoding: .utf8)
        let broker = Process()
        broker.executableURL = URL(fileURLWithPath: mosquitto)
        broker.arguments = ["-c", work + "/broker.conf"]
        broker.standardError = FileHandle.nullDevice
        try broker.run()
        defer { kill(broker.processIdentifier, SIGKILL); broker.waitUntilExit() }
        Thread.sleep(forTimeInterval: 0.5)
        print("mqtt: mosquitto on 127.0.0.1:\(port)")
        try latency(work: work, port: port)
        try drain(work: work, port: port)
        let idle = try spawnMeasured([quench, "mqtt", "run", "--db", work + "/backlog.sqlite", "--broker", "mqtt://127.0.0.1:\(port)",
                                      "--node", "bench", "--seconds", "5", "--log-level", "error"], output: "/dev/null")
        print("  quench mqtt run, 5 s idle: peak RSS \(mb(idle.peakBytes)) MB")
    }

    func mb(_ bytes: Int) -> String { TraceWriter.fixed(Double(bytes) / 1_048_576, places: 1) }

    /// Each event stored (one transaction each, 20 ms apart) → its message at a subscriber.
    func latency(work: String, port: Int) throws {
        let path = work + "/latency.sqlite"
        let store = try IntakeStore(path: path)
        let settings = MQTTSettings(broker: BrokerAddress(tls: false, host: "127.0.0.1", port: Int32(port), user: nil), node: "bench")
        let env = HistoryEnvironment(databasePath: path, now: .wallClockNow)
        let logger = { () -> Logger in
            var l = Logger(label: "bench")
            l.logLevel = .error
            return l
        }()
        let stop = Atomic<Bool>(false)
        let received = Mutex<[String: ContinuousClock.Instant]>([:])
        let subscribed = Atomic<Bool>(false)
        let subscriber = Thread {
            guard let c = try? MQTTClient(clientID: "bench-sub") else { return }
            c.onConnect = { _ in try? c.subscribe("quench/bench/event", qos: 1); subscribed.store(true, ordering: .relaxed) }
            c.onMessage = { m in
                let now = ContinuousClock.now
                guard let o = try? JSONSerialization.jsonObject(with: Data(m.payload)) as? [String: Any], let id = o["identity"] as? String else { return }
                received.withLock { $0[id] = now }
            }
            guard (try? c.connect(host: "127.0.0.1", port: Int32(port))) != nil else { return }
            while !stop.load(ordering: .relaxed) { try? c.loop(timeoutMS: 10) }
        }
        subscriber.start()
        let publisherThread = Thread {
            guard let p = try? MQTTPublisher(settings: settings, environment: env, logger: logger, announcesAvailability: true) else { return }
            p.run { stop.load(ordering: .relaxed) }
        }
        publisherThread.start()
        defer { stop.store(true, ordering: .relaxed) }
        while !subscribed.load(ordering: .relaxed) || (try? store.outboxStatus().enabled) != true { Thread.sleep(forTimeInterval: 0.05) }
        Thread.sleep(forTimeInterval: 0.5)
        var stored: [String: ContinuousClock.Instant] = [:]
        for i in 0..<events {
            let identity = "bench|\(i)"
            _ = try store.insert([(IntakeEvent(identity: identity, kind: .sip, ml: 20, time: .wallClockNow, source: .sensor, device: "bench",
                                               recordedAt: .wallClockNow), [])])
            stored[identity] = .now
            Thread.sleep(forTimeInterval: 0.02)
        }
        let end = ContinuousClock.now + .seconds(30)
        while received.withLock({ $0.count }) < events, ContinuousClock.now < end { Thread.sleep(forTimeInterval: 0.05) }
        let got = received.withLock { $0 }
        let latencies = stored.compactMap { id, t in got[id].map { ($0 - t).seconds * 1000 } }.sorted()
        guard !latencies.isEmpty else { throw StoreBenchmark.BenchError.usage("no message arrived") }
        func pct(_ p: Double) -> String { TraceWriter.fixed(latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))], places: 1) }
        print("  stored → received, \(latencies.count) of \(events) events one at a time: p50 \(pct(0.5)) ms, p99 \(pct(0.99)) ms, "
              + "max \(TraceWriter.fixed(latencies.last!, places: 1)) ms   target p99 < 100 ms")
    }

    /// `backlog` outbox rows (the broker down for a long while) drained by `quench mqtt sync`.
    func drain(work: String, port: Int) throws {
        let path = work + "/backlog.sqlite"
        let store = try IntakeStore(path: path)
        try store.setOutbox(enabled: true, bound: max(backlog, 100_000))
        let base = Timestamp.wallClockNow.secondsSince1970 - Double(backlog)
        for start in stride(from: 0, to: backlog, by: 1000) {
            let rows = (start..<min(backlog, start + 1000)).map { i in
                (event: IntakeEvent(identity: "backlog|\(i)", kind: .sip, ml: 25, time: Timestamp(secondsSince1970: base + Double(i)),
                                    source: .sensor, device: "bench", recordedAt: .wallClockNow), aliases: [String]())
            }
            _ = try store.insert(rows)
        }
        let r = try spawnMeasured([quench, "mqtt", "sync", "--db", path, "--broker", "mqtt://127.0.0.1:\(port)", "--node", "bench",
                                   "--timeout", "600"], output: work + "/sync.out")
        let left = try store.outboxStatus().pending
        print("  backlog of \(backlog) outbox rows drained by `quench mqtt sync`: \(TraceWriter.fixed(r.seconds, places: 2)) s "
              + "(\(Int(Double(backlog) / r.seconds)) messages/s, \(left) left), peak RSS \(mb(r.peakBytes)) MB   target ≥ 5000 messages/s")
    }
}

import Foundation
import QuenchCore
import QuenchStore

/// `quench-bench hub`: a care home on one broker (issue 25). `gateways` gateway
/// databases, each published by its own `quench mqtt run`, and one `quench hub
/// run`, all real processes on a real mosquitto (with persistence, as in a home).
/// `bottles` bottles drink for `hours` simulated hours, compressed into `seconds`
/// of wall time; a quarter of them are broadcast scales heard by two gateways
/// (each storing its own estimate, a second apart), and the bottles move
/// between gateways every simulated hour. In the middle, the hub, a gateway's
/// publisher and the broker are each killed and started again. At the end the
/// hub's history is compared with the drinks that happened (each once), and the
/// hub's CPU and peak memory are read from /proc. Then, one drink at a time,
/// the time from a gateway storing a sip to the hub holding it.
struct HubBenchmark {
    var quench: String
    var mosquitto = "/usr/sbin/mosquitto"
    var gateways = 4
    var bottles = 40
    var hours = 12.0
    var seconds = 60.0

    init(arguments: [String]) throws {
        var quench: String?
        for (flag, v) in try StoreBenchmark.options(arguments) {
            switch flag {
            case "--quench": quench = v
            case "--mosquitto": mosquitto = v
            case "--gateways": gateways = max(2, Int(v) ?? gateways)
            case "--bottles": bottles = max(1, Int(v) ?? bottles)
            case "--hours": hours = max(0.1, Double(v) ?? hours)
            case "--seconds": seconds = max(5, Double(v) ?? seconds)
            default: throw StoreBenchmark.BenchError.usage("unknown argument \(flag)")
            }
        }
        self.quench = quench ?? StoreBenchmark.quenchBeside
    }

    /// A process of ours, whose CPU time and peak memory are read before it is stopped.
    final class Child {
        let argv: [String]
        let log: String
        var process: Process?
        /// CPU seconds and peak RSS of the earlier runs (a killed process is started again).
        var cpu = 0.0
        var peakBytes = 0

        init(_ argv: [String], log: String) throws {
            self.argv = argv
            self.log = log
            try start()
        }

        func start() throws {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: argv[0])
            p.arguments = Array(argv.dropFirst())
            FileManager.default.createFile(atPath: log, contents: nil)
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
            handle.seekToEndOfFile()
            p.standardOutput = handle
            p.standardError = handle
            try p.run()
            process = p
        }

        /// Reads what /proc says of it, then SIGKILL (or SIGTERM) and waits.
        func stop(signal: Int32 = SIGKILL) {
            guard let p = process else { return }
            let pid = p.processIdentifier
            if let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
               let close = stat.lastIndex(of: ")") {
                let fields = stat[stat.index(after: close)...].split(separator: " ")
                // utime and stime are fields 14 and 15 (1-based, counting pid and comm): 12 and 13 after ')'.
                if fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) {
                    cpu += (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
                }
            }
            if let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
               let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
               let kb = Int(line.split(separator: " ").dropFirst().first ?? "") {
                peakBytes = max(peakBytes, kb * 1024)
            }
            kill(pid, signal)
            p.waitUntilExit()
            process = nil
        }
    }

    struct Drink {
        var identity: String
        var time: Double
        var ml: Double
        var bottle: Int
        /// The gateways that store it (two for a broadcast scale heard in both rooms).
        var gateways: [Int]
    }

    func run() throws {
        let work = NSTemporaryDirectory() + "quench-bench-hub-\(getpid())"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let port = 21_000 + Int(getpid() % 10_000)
        try """
            listener \(port) 127.0.0.1
            allow_anonymous true
            \(getuid() == 0 ? "user root" : "")
            persistence true
            persistence_location \(work)/
            autosave_on_changes true
            autosave_interval 1
            max_queued_messages 0

            """.write(toFile: work + "/broker.conf", atomically: true, encoding: .utf8)
        let broker = try Child([mosquitto, "-c", work + "/broker.conf"], log: work + "/broker.log")
        defer { broker.stop() }
        Thread.sleep(forTimeInterval: 0.5)
        let url = "mqtt://127.0.0.1:\(port)"

        let stores = try (0..<gateways).map { g in try IntakeStore(path: work + "/gateway\(g).sqlite") }
        for store in stores { try store.setOutbox(enabled: true) }
        let publishers = try (0..<gateways).map { g in
            try Child([quench, "mqtt", "run", "--db", work + "/gateway\(g).sqlite", "--broker", url, "--node-id", "floor\(g)", "--log-level", "error"],
                      log: work + "/gateway\(g).log")
        }
        defer { for p in publishers { p.stop() } }
        let hubPath = work + "/hub.sqlite"
        let hub = try Child([quench, "hub", "run", "--db", hubPath, "--broker", url, "--log-level", "error"], log: work + "/hub.log")
        defer { hub.stop() }
        Thread.sleep(forTimeInterval: 1)

        // The drinks: each bottle every 5–25 simulated minutes, 8–60 mL; a broadcast scale
        // heard in two rooms; each bottle in the room of hour `h` ((bottle + h) % gateways).
        var random = SystemRandomNumberGenerator()
        let start = Timestamp.wallClockNow.secondsSince1970 - hours * 3600
        var drinks: [Drink] = []
        for bottle in 0..<bottles {
            var t = start + Double.random(in: 0...600, using: &random)
            var n = 0
            while t < start + hours * 3600 {
                let hour = Int((t - start) / 3600)
                let room = (bottle + hour) % gateways
                let broadcast = bottle % 4 == 0
                drinks.append(Drink(identity: "b\(bottle)|sip|\(n)", time: t, ml: Double.random(in: 8...60, using: &random).rounded(),
                                    bottle: bottle, gateways: broadcast ? [room, (room + 1) % gateways] : [room]))
                t += Double.random(in: 300...1500, using: &random)
                n += 1
            }
        }
        drinks.sort { $0.time < $1.time }
        let messages = drinks.reduce(0) { $0 + $1.gateways.count }
        print("hub: \(gateways) gateways, \(bottles) bottles (\(bottles / 4) broadcast, heard in two rooms), \(TraceWriter.fixed(hours, places: 0)) simulated hours "
              + "in \(TraceWriter.fixed(seconds, places: 0)) s: \(drinks.count) drinks, \(messages) gateway events")

        let began = Date()
        for (i, drink) in drinks.enumerated() {
            let due = began.addingTimeInterval(seconds * Double(i) / Double(drinks.count))
            if due > Date() { Thread.sleep(until: due) }
            for (k, g) in drink.gateways.enumerated() {
                // The second gateway timed it a second later and read it 2 mL off (other packets lost).
                let e = IntakeEvent(identity: "floor\(g)|\(drink.identity)", kind: .sip, ml: drink.ml + Double(k) * 2,
                                    time: Timestamp(secondsSince1970: drink.time + Double(k)), source: .sensor,
                                    device: String(format: "C8:2A:3F:00:%02X:%02X", drink.bottle / 256, drink.bottle % 256),
                                    recordedAt: .wallClockNow, person: nil)
                _ = try stores[g].insert([(event: e, aliases: [])])
            }
            switch i {
            case drinks.count / 3:
                hub.stop()
                Thread.sleep(forTimeInterval: 2)
                try hub.start()
                print("  at 1/3: the hub killed (SIGKILL) and started 2 s later")
            case drinks.count / 2:
                publishers[1].stop()
                Thread.sleep(forTimeInterval: 2)
                try publishers[1].start()
                print("  at 1/2: floor1's publisher killed (SIGKILL) and started 2 s later")
            case 2 * drinks.count / 3:
                broker.stop(signal: SIGTERM)
                Thread.sleep(forTimeInterval: 2)
                try broker.start()
                print("  at 2/3: the broker stopped and started 2 s later")
            default:
                break
            }
        }
        let fed = Date().timeIntervalSince(began)
        let hubStore = try IntakeStore(path: hubPath)
        let end = Date().addingTimeInterval(60)
        var held: [IntakeEvent] = []
        repeat {
            Thread.sleep(forTimeInterval: 0.5)
            held = try hubStore.events(EventQuery(includeDeleted: true))
        } while held.count < drinks.count && Date() < end
        Thread.sleep(forTimeInterval: 2)
        held = try hubStore.events(EventQuery(includeDeleted: true))
        let settled = Date().timeIntervalSince(began)

        // Each drink once: the hub's events of a bottle, matched to its drinks by time.
        var missing = 0, doubled = 0, amountOff = 0.0
        let byBottle = Dictionary(grouping: held) { $0.device ?? "" }
        for (bottle, list) in Dictionary(grouping: drinks, by: \.bottle) {
            let device = String(format: "C8:2A:3F:00:%02X:%02X", bottle / 256, bottle % 256)
            let found = byBottle[device] ?? []
            for drink in list {
                let near = found.filter { abs($0.time.secondsSince1970 - drink.time) <= IntakeStore.sameDrinkSeconds }
                if near.isEmpty { missing += 1 }
                if near.count > 1 { doubled += near.count - 1 }
                if let e = near.first { amountOff += abs(e.ml - (drink.gateways.count == 2 ? drink.ml + 1 : drink.ml)) }
            }
        }
        print("  fed in \(TraceWriter.fixed(fed, places: 1)) s; the hub holds \(held.count) events \(TraceWriter.fixed(settled - fed, places: 1)) s later: "
              + "\(missing) drinks missing, \(doubled) doubled, amounts off by \(TraceWriter.fixed(amountOff, places: 1)) mL in all   target 0, 0")

        // One at a time: stored at a gateway → held by the hub.
        var latencies: [Double] = []
        for i in 0..<60 {
            let identity = "latency|\(i)"
            // A bottle of its own each: two gateways' sips from one bottle a moment apart would be one drink.
            let e = IntakeEvent(identity: identity, kind: .sip, ml: 20, time: .wallClockNow, source: .sensor,
                                device: String(format: "C8:2A:3F:FF:FF:%02X", i), recordedAt: .wallClockNow)
            let stored = ContinuousClock.now
            _ = try stores[i % gateways].insert([(event: e, aliases: [])])
            let deadline = stored + .seconds(5)
            while ContinuousClock.now < deadline {
                if try hubStore.events(EventQuery(limit: 1)).first?.identity == identity {
                    latencies.append((ContinuousClock.now - stored).seconds * 1000)
                    break
                }
                Thread.sleep(forTimeInterval: 0.002)
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
        latencies.sort()
        func pct(_ p: Double) -> String { latencies.isEmpty ? "-" : TraceWriter.fixed(latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))], places: 0) }
        print("  stored at a gateway → held by the hub, \(latencies.count) of 60: p50 \(pct(0.5)) ms, p99 \(pct(0.99)) ms   target < 1000 ms")

        // Idle: what the hub costs when nothing happens (its share of a core over a real day).
        let idleFrom = hub.cpu
        hub.stop()
        let busyCPU = hub.cpu
        try hub.start()
        Thread.sleep(forTimeInterval: 20)
        hub.stop()
        let idleRate = (hub.cpu - busyCPU) / 20
        _ = idleFrom
        let perReal = busyCPU / (hours * 3600) + idleRate
        print("  hub CPU: \(TraceWriter.fixed(busyCPU, places: 2)) s for the \(TraceWriter.fixed(hours, places: 0)) hours' \(messages) events (and the latency run), "
              + "idle \(TraceWriter.fixed(idleRate * 100, places: 2)) % of a core; over \(TraceWriter.fixed(hours, places: 0)) real hours "
              + "\(TraceWriter.fixed(perReal * 100, places: 2)) % of this machine's core   target < 5 % of a Pi's")
        print("  hub peak RSS \(TraceWriter.fixed(Double(hub.peakBytes) / 1_048_576, places: 1)) MB   target < 50 MB")
    }
}

#if os(Linux)
import BluetoothWire
import Foundation
import GATT
import Logging
import NIOPosix
import QuenchCore
import QuenchGateway
import QuenchProfiles
import QuenchSimulatedDevices
import QuenchSimulator
import QuenchStore
import Synchronization
import Threading

/// `quench-bench hub`: a care home on one broker (issue 25). `gateways` rooms, each a
/// gateway in this process (`Gateway`, as `quench run --hand-over` runs it) on its own
/// database, published by its own `quench mqtt run`; one `quench hub run`; a real
/// mosquitto with persistence. `bottles` simulated bottles stream their readings for
/// `hours` simulated hours, compressed into `seconds`, through the real wire protocols
/// (GATT over socketpairs, Mi Scale advertisements), and each gateway's detectors turn
/// them into events:
/// - a quarter are Mi broadcast scales, each heard in two rooms, losing 2 % of its
///   advertisements in one and 15 % in the other;
/// - a quarter are GATT scales standing in one room (Decent at 10 Hz, SIG Weight Scale at 1 Hz);
/// - half are level-sensing bottles (GATT, 1–10 Hz) that residents carry to the next room
///   about once an hour, between drinks: the link to the room left drops, and the gateways
///   hand the bottle over through their claims.
/// In the middle the hub is killed (SIGKILL), a gateway is stopped and started again, a
/// publisher is killed and the broker is stopped, each started again. The hub's history is
/// then compared with the simulated truth, and with what the gateways stored. Last, in real
/// time, a scale's sips go from the bottle being put back to the hub's page (`quench serve`
/// on the hub's database, its live `/api/events` stream).
struct HubBenchmark {
    var quench: String
    var mosquitto = "/usr/sbin/mosquitto"
    var gateways = 4
    var bottles = 40
    var hours = 12.0
    var seconds = 1200.0
    var seed: UInt64 = 2026
    var latencySips = 8

    init(arguments: [String]) throws {
        var quench: String?
        for (flag, v) in try StoreBenchmark.options(arguments) {
            switch flag {
            case "--quench": quench = v
            case "--mosquitto": mosquitto = v
            case "--gateways": gateways = max(2, min(16, Int(v) ?? gateways))
            case "--bottles": bottles = max(4, min(400, Int(v) ?? bottles))
            case "--hours": hours = max(1, min(48, Double(v) ?? hours))
            case "--seconds": seconds = max(30, Double(v) ?? seconds)
            case "--seed": seed = UInt64(v) ?? seed
            case "--latency-sips": latencySips = max(1, min(100, Int(v) ?? latencySips))
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
            // One log across restarts: what a killed process said is kept.
            if !FileManager.default.fileExists(atPath: log) { _ = FileManager.default.createFile(atPath: log, contents: nil) }
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
            defer { try? handle.close() }
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

    enum Kind: String {
        case miScale = "Mi scale (broadcast, two rooms)"
        case decent = "Decent scale (GATT, 10 Hz)"
        case sigScale = "SIG weight scale (GATT, 1 Hz)"
        case levelBottle = "level bottle (GATT, carried)"
    }

    /// One bottle of the home: its sensor, where it stands, what it streams and what truly happened.
    struct Bottle: Sendable {
        var index: Int
        var kind: Kind
        var address: BluetoothAddress
        var configuration: SimulationConfiguration
        var readings: [Reading]
        var truth: [TruthEvent]
        var room: Int
        /// Trace times at which it is carried to the next room (level bottles), each between drinks.
        var moves: [Double] = []

        var profile: DeviceProfile {
            switch kind {
            case .miScale: .miScale
            case .decent: .decentScale
            case .sigScale: .weightScale
            case .levelBottle: .custom(ProfileRegistry.levelBottle)
            }
        }

        /// The level bottle (the DIY profile) advertises on a random address.
        var addressType: AddressType { kind == .levelBottle ? .leRandom : .lePublic }

        func device() throws -> LiveDevice {
            let calibration = configuration.sensor == .level ? configuration.calibration
                : try BottleCalibration(unit: .g, capacityML: configuration.capacityML, emptyWeightG: configuration.emptyWeightG)
            return LiveDevice(address: address, addressType: addressType, profile: profile, calibration: calibration)
        }
    }

    func makeBottles() -> [Bottle] {
        let duration = hours * 3600
        return (0..<bottles).map { b in
            let kind: Kind = switch b % 4 {
            case 0: .miScale
            case 1: b % 8 == 1 ? .decent : .sigScale
            default: .levelBottle
            }
            var c: SimulationConfiguration
            switch kind {
            case .miScale:
                c = .preset(.kitchenScale, duration: duration)
                c.sampleRate = [2, 5, 10][b / 4 % 3]
            case .decent:
                c = .preset(.kitchenScale, duration: duration)
            case .sigScale:
                c = .preset(.sigWeightScale, duration: duration)
            case .levelBottle:
                c = .preset(.levelMillimetres, duration: duration)
                c.sampleRate = [1, 2, 5, 10][b / 4 % 4]
            }
            // A resident drinks every 10–20 minutes, on average.
            c.meanIdleSeconds = 600 + Double(b % 7) * 100
            var simulated = SimulatedBottle(configuration: c, seed: seed &+ UInt64(b))
            var readings: [Reading] = []
            while let r = simulated.next() { readings.append(r) }
            let truth = simulated.drainTruth()
            let prefix: String = kind == .levelBottle ? "C3:00:00:01" : kind == .miScale ? "F0:00:00:02" : "F0:00:00:03"
            var bottle = Bottle(index: b, kind: kind, address: BluetoothAddress(String(format: "\(prefix):%02X:%02X", b / 256, b % 256))!,
                                configuration: c, readings: readings, truth: truth, room: b % gateways)
            if kind == .levelBottle {
                // About once an hour, at a moment 15 simulated minutes away from any drink (the hand-over
                // takes a few wall seconds, minutes at this pace, in which nobody hears the bottle).
                for hour in 1..<Int(hours) {
                    let quiet = stride(from: -1500.0, through: 1500, by: 300).map { Double(hour) * 3600 + $0 }.first { t in
                        !truth.contains { $0.tStart - 900 < t && $0.tEnd + 900 > t }
                    }
                    if let quiet { bottle.moves.append(quiet) }
                }
            }
            return bottle
        }
    }

    /// Where each bottle is now, and the simulated devices.
    final class House: Sendable {
        let bottles: [Bottle]
        let rooms: Int
        let peripherals: [Int: SimulatedPeripheral]
        private let location: Mutex<[Int]>
        private let byAddress: [BluetoothAddress: Int]

        init(bottles: [Bottle], rooms: Int, speed: Double) {
            self.bottles = bottles
            self.rooms = rooms
            var peripherals: [Int: SimulatedPeripheral] = [:]
            for b in bottles where b.kind != .miScale {
                peripherals[b.index] = SimulatedPeripheral(address: b.address, profile: b.profile, readings: b.readings, unit: b.configuration.unit,
                                                           streaming: SimulatedStreaming(speed: speed))
            }
            self.peripherals = peripherals
            location = Mutex(bottles.map(\.room))
            byAddress = Dictionary(uniqueKeysWithValues: bottles.map { ($0.address, $0.index) })
        }

        func room(of bottle: Int) -> Int { location.withLock { $0[bottle] } }
        func index(of address: BluetoothAddress) -> Int? { byAddress[address] }

        /// Carried to the next room: the link to the room it leaves drops.
        func carry(_ bottle: Int) {
            location.withLock { $0[bottle] = ($0[bottle] + 1) % rooms }
            peripherals[bottle]?.dropLink()
        }

        /// The connected devices in `room` that advertise now (nobody holds their link).
        func advertising(in room: Int) -> [Bottle] {
            let here = location.withLock { l in bottles.filter { $0.kind != .miScale && l[$0.index] == room } }
            return here.filter { peripherals[$0.index]?.isConnected == false }
        }
    }

    /// A room's adapter: it reaches a connected device only while it is in the room.
    struct RoomRadio: ATTConnector {
        let house: House
        let room: Int

        func connect(to device: LiveDevice, timeout: Double, stop: StopSignal) throws(LiveError) -> any ATTBearer {
            guard let b = house.index(of: device.address), house.room(of: b) == room, let peripheral = house.peripherals[b] else {
                if stop.wait(seconds: min(timeout, 0.2)) { throw .stopped }
                throw .connectTimeout(address: device.label, seconds: timeout)
            }
            return try peripheral.connect(to: device, timeout: timeout, stop: stop)
        }
    }

    /// What a room's scan hears: the Mi scales in range (each losing its share of
    /// advertisements) and the connected devices in the room that are not connected now.
    final class RoomAir: Sendable {
        let room: Int
        private let queue = Condition<[AdvertisingReport]>([])
        private let pumps: [WorkerThread]
        private let stopSignal: StopSignal

        init(room: Int, house: House, scales: [(SimulatedBroadcaster, loss: Double)], stop: StopSignal, seed: UInt64) {
            self.room = room
            stopSignal = stop
            let queue = queue
            @Sendable func push(_ r: AdvertisingReport) {
                queue.changing { q in
                    q.append(r)
                    // Nobody listening (the gateway restarting): the air does not keep what was said.
                    if q.count > 512 { q.removeFirst(q.count - 512) }
                }
            }
            var pumps: [WorkerThread] = []
            for (i, (scale, loss)) in scales.enumerated() {
                let source = scale.source(stoppedBy: stop)
                pumps.append(WorkerThread(name: "room \(room) mi \(i)") {
                    var random = SeededRandom(seed: seed &+ UInt64(i), stream: UInt64(room))
                    while true {
                        do throws(LiveError) {
                            guard let r = try source.next(until: .now + .milliseconds(500)) else { continue }
                            if random.uniform(0, 1) >= loss { push(r) }
                        } catch {
                            return
                        }
                    }
                })
            }
            pumps.append(WorkerThread(name: "room \(room) beacons") {
                while !stop.wait(seconds: 0.5) {
                    for bottle in house.advertising(in: room) {
                        push(.connectable(bottle.address, bottle.addressType, rssi: -55))
                    }
                }
            })
            self.pumps = pumps
        }

        func join() { for p in pumps { p.join() } }

        /// A gateway's scan of the room, from now on.
        func scan(_ stop: StopSignal) -> Scan {
            queue.changing { $0.removeAll() }
            return Scan(air: self, stop: stop)
        }

        final class Scan: AdvertisementSource {
            let air: RoomAir
            let stopSignal: StopSignal
            init(air: RoomAir, stop: StopSignal) {
                self.air = air
                stopSignal = stop
            }

            func next(until deadline: ContinuousClock.Instant) throws(LiveError) -> AdvertisingReport? {
                while ContinuousClock.now < deadline {
                    if stopSignal.isStopped || air.stopSignal.isStopped { throw .stopped }
                    let wake = min(deadline, .now + .milliseconds(100))
                    if let r = air.queue.wait(until: Deadline(seconds: max(0, (wake - .now).seconds)), { q -> AdvertisingReport? in
                        q.isEmpty ? nil : q.removeFirst()
                    }) {
                        return r
                    }
                }
                return nil
            }

            func stop() {}
        }
    }

    /// What each room's gateway received of each device, on the simulated wall clock: run through
    /// a detector alone afterwards, it tells the radio's and the clock's share of an error from the hub's.
    final class Received: Sendable {
        /// By device, then room.
        private let readings = Mutex<[String: [Int: [Reading]]]>([:])
        func add(room: Int, device: String, _ reading: Reading) { readings.withLock { $0[device, default: [:]][room, default: []].append(reading) } }
        /// One list per room that heard `device`.
        func of(device: String) -> [[Reading]] { readings.withLock { Array(($0[device] ?? [:]).values) } }
    }

    /// A room's gateway, in this process, on its own database: started, stopped, started again.
    final class Room {
        let index: Int
        let store: IntakeStore
        let devices: [LiveDevice]
        let air: RoomAir
        let radio: RoomRadio
        let options: (Double) -> Gateway.Options
        let observer: LiveObserver
        private var gateway: Gateway?
        private var finished: DispatchSemaphore?

        init(index: Int, store: IntakeStore, devices: [LiveDevice], air: RoomAir, radio: RoomRadio, received: Received,
             wallNow: @escaping @Sendable () -> Double, options: @escaping (Double) -> Gateway.Options) {
            self.index = index
            self.store = store
            self.devices = devices
            self.air = air
            self.radio = radio
            self.options = options
            observer = LiveObserver(reading: { device, reading, _, _ in
                received.add(room: index, device: device.label, Reading(t: wallNow(), value: reading.value))
            })
        }

        /// Starts a gateway whose clock says `wall` now.
        func start(at wall: Double) {
            var logger = Logger(label: "room\(index)")
            logger.logLevel = ProcessInfo.processInfo.environment["QUENCH_BENCH_ROOM_LOG"] == "\(index)" ? .info : .error
            let air = air
            let g = Gateway(devices: devices, store: store, options: options(wall), observer: observer, logger: logger, connector: radio,
                            advertisements: { stop throws(LiveError) in air.scan(stop) })
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                g.run(seconds: nil)
                done.signal()
            }
            gateway = g
            finished = done
        }

        /// Stops the gateway; it judges what is pending and stores it first.
        func stop() {
            gateway?.stop()
            finished?.wait()
            gateway = nil
            finished = nil
        }
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

        let generated = ContinuousClock.now
        let bottles = makeBottles()
        let speed = hours * 3600 / seconds
        let readings = bottles.reduce(0) { $0 + $1.readings.count }
        let truth = bottles.flatMap(\.truth)
        func count(_ kind: EventKind) -> Int { truth.filter { $0.kind == kind }.count }
        print("hub: \(gateways) rooms (a gateway each), \(bottles.count) bottles, \(TraceWriter.fixed(hours, places: 0)) simulated hours in "
              + "\(TraceWriter.fixed(seconds, places: 0)) s (×\(TraceWriter.fixed(speed, places: 0))): \(readings) readings simulated in "
              + "\(TraceWriter.fixed((ContinuousClock.now - generated).seconds, places: 1)) s; truth \(count(.sip)) sips, \(count(.refill)) refills, \(count(.pour)) pours")
        for kind in [Kind.miScale, .decent, .sigScale, .levelBottle] {
            let these = bottles.filter { $0.kind == kind }
            print("  \(these.count) × \(kind.rawValue)" + (kind == .levelBottle ? ", carried to the next room \(these.reduce(0) { $0 + $1.moves.count }) times in all" : ""))
        }

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

        // The simulated day ends now: its wall time `start` + trace time, on every gateway's clock.
        let start = Timestamp.wallClockNow.secondsSince1970 - hours * 3600
        let house = House(bottles: bottles, rooms: gateways, speed: speed)
        let airStop = StopSignal()
        let origin = ContinuousClock.now
        var rule = HandOverRule()
        // Wall seconds, as in HandOverTests: a home's 30 s would be half an hour at this pace.
        rule.freshFor = 6
        rule.refreshEvery = 2
        rule.settle = 1
        var broadcasters: [SimulatedBroadcaster] = []
        let received = Received()
        let wallNow: @Sendable () -> Double = { start + (ContinuousClock.now - origin).seconds * speed }
        let rooms = try (0..<gateways).map { g in
            let scales = bottles.filter { $0.kind == .miScale && ($0.room == g || ($0.room + 1) % gateways == g) }.map { b in
                (SimulatedBroadcaster(address: b.address, readings: b.readings, unit: b.configuration.unit, speed: speed,
                                      started: Timestamp(secondsSince1970: start)), loss: b.room == g ? 0.02 : 0.15)
            }
            broadcasters += scales.map(\.0)
            let air = RoomAir(room: g, house: house, scales: scales, stop: airStop, seed: seed)
            let heard = Set(scales.map(\.0.address))
            let devices = try bottles.filter { b in
                b.kind == .levelBottle || (b.kind == .miScale ? heard.contains(b.address) : b.room == g)
            }.map { try $0.device() }
            return Room(index: g, store: stores[g], devices: devices, air: air, radio: RoomRadio(house: house, room: g), received: received,
                        wallNow: wallNow) { wall in
                var options = Gateway.Options()
                options.clockRate = speed
                options.started = Timestamp(secondsSince1970: wall)
                options.connectTimeout = 2
                options.backoff = Backoff(initial: 0.1, factor: 2, maximum: 1)
                options.handOver = rule
                return options
            }
        }
        for room in rooms { room.start(at: wallNow()) }

        // The moves, each when the bottle's own trace reaches it (its clock started at its first subscription).
        var moves = bottles.flatMap { b in b.moves.map { (t: $0, bottle: b.index) } }
        enum Disruption { case hub, gateway, publisher, broker }
        var disruptions: [(at: Double, what: Disruption)] = [(1.0 / 3, .hub), (5.0 / 12, .gateway), (0.5, .publisher), (2.0 / 3, .broker)]
        let cpu0 = GatewayBenchmark.cpuSeconds()
        // Until every trace has been streamed (each began at its first subscription, or scan), at most 60 s over.
        func streamed() -> Bool { house.peripherals.values.allSatisfy(\.isFinished) && broadcasters.allSatisfy(\.isFinished) }
        while !streamed(), (ContinuousClock.now - origin).seconds < seconds + 60 {
            let elapsed = (ContinuousClock.now - origin).seconds
            let due = moves.filter { move in (house.peripherals[move.bottle]?.traceTime ?? 0) >= move.t }
            for move in due { house.carry(move.bottle) }
            moves.removeAll { move in due.contains { $0 == move } }
            if let d = disruptions.first, d.at * seconds <= elapsed {
                disruptions.removeFirst()
                switch d.what {
                case .hub:
                    hub.stop()
                    Thread.sleep(forTimeInterval: 2)
                    try hub.start()
                    print("  at 1/3: the hub killed (SIGKILL) and started 2 s later")
                case .gateway:
                    let stopping = ContinuousClock.now
                    rooms[2 % gateways].stop()
                    rooms[2 % gateways].start(at: wallNow())
                    print("  at 5/12: floor\(2 % gateways)'s gateway stopped (its pending sips judged and stored) and started again, "
                          + "\(TraceWriter.fixed((ContinuousClock.now - stopping).seconds, places: 2)) s after the stop began")
                case .publisher:
                    publishers[1].stop()
                    Thread.sleep(forTimeInterval: 2)
                    try publishers[1].start()
                    print("  at 1/2: floor1's publisher killed (SIGKILL) and started 2 s later")
                case .broker:
                    broker.stop(signal: SIGTERM)
                    Thread.sleep(forTimeInterval: 2)
                    try broker.start()
                    print("  at 2/3: the broker stopped and started 2 s later")
                }
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        let gatewayCPU = GatewayBenchmark.cpuSeconds() - cpu0
        for room in rooms { room.stop() }
        airStop.stop()
        for room in rooms { room.air.join() }
        for p in house.peripherals.values { p.shutdown() }
        let fed = (ContinuousClock.now - origin).seconds

        // What the gateways stored, and the hub once it has caught up (nothing new for 5 s).
        let kinds: Set<EventKind> = [.sip, .refill, .pour]
        let atGateways = try stores.enumerated().flatMap { g, s in try s.events(EventQuery(kinds: kinds)).map { (gateway: g, event: $0) } }
        let hubStore = try IntakeStore(path: hubPath)
        var held: [IntakeEvent] = []
        var lastChange = ContinuousClock.now
        while (ContinuousClock.now - lastChange).seconds < 5, (ContinuousClock.now - origin).seconds < fed + 120 {
            Thread.sleep(forTimeInterval: 0.5)
            let now = try hubStore.events(EventQuery(kinds: kinds))
            if now.count != held.count { lastChange = .now }
            held = now
        }
        print("  fed in \(TraceWriter.fixed(fed, places: 1)) s (this process: gateways and simulated devices, \(TraceWriter.fixed(gatewayCPU / fed * 100, places: 0)) % of a core); "
              + "the gateways stored \(atGateways.count) events, the hub holds \(held.count)")

        // The hub against the gateways: each gateway's event there, once (two rooms' copies of a broadcast one, merged).
        let hubByDevice = Dictionary(grouping: held) { "\($0.device ?? "")|\($0.kind.rawValue)" }
        var notAtHub = 0
        for (_, e) in atGateways {
            let near = hubByDevice["\(e.device ?? "")|\(e.kind.rawValue)"]?.contains { abs($0.time.secondsSince1970 - e.time.secondsSince1970) <= IntakeStore.sameDrinkSeconds } ?? false
            if !near { notAtHub += 1 }
        }
        var twiceAtHub = 0
        for (_, list) in hubByDevice {
            let sorted = list.sorted { $0.time < $1.time }
            for (a, b) in zip(sorted, sorted.dropFirst()) where b.time.secondsSince1970 - a.time.secondsSince1970 <= IntakeStore.sameDrinkSeconds { twiceAtHub += 1 }
        }
        print("  the gateways' events at the hub: \(notAtHub) missing, \(twiceAtHub) twice (two copies of one drink)   target 0, 0")

        // The hub against the truth, by bottle, on each bottle's trace time; the bottles of a
        // group one after another on one clock, so one report covers them.
        var groups: [String: EvaluationPool] = [:]
        var doubled = 0
        /// A detector alone over `readings`: its events, without the diagnostic ones.
        func detectorAlone(_ readings: [Reading], _ calibration: BottleCalibration) -> [DetectedEvent] {
            var detector = SipDetector(calibration: calibration)
            var events: [DetectedEvent] = []
            for r in readings { detector.process(r, into: &events) }
            detector.finish(into: &events)
            return events.filter { !$0.kind.isDiagnostic }
        }
        for b in bottles {
            // Its trace's clock: from its first subscription, or a Mi scale's from its first room's first scan.
            let began = house.peripherals[b.index]?.streamOrigin ?? broadcasters.first { $0.address == b.address }?.streamOrigin ?? origin
            let offset = start + (began - origin).seconds * speed
            let detected = held.filter { $0.device == b.address.description }.map { e in
                let t = e.time.secondsSince1970 - offset
                return DetectedEvent(kind: e.kind, t: t, start: t, end: t, ml: e.ml)
            }
            let report = Evaluation.score(detected: detected, truth: b.truth)
            if ProcessInfo.processInfo.environment["QUENCH_BENCH_VERBOSE"] != nil {
                for m in report.missed { print("    missed: bottle \(b.index) (\(b.kind.rawValue)) \(m.kind.rawValue) \(TraceWriter.fixed(m.ml, places: 1)) mL at t \(TraceWriter.fixed(m.tStart, places: 0))–\(TraceWriter.fixed(m.tEnd, places: 0)); moves at \(b.moves.map { TraceWriter.fixed($0, places: 0) })") }
                for e in report.spurious { print("    not true: bottle \(b.index) (\(b.kind.rawValue)) \(e.kind.rawValue) \(TraceWriter.fixed(e.ml, places: 1)) mL at t \(TraceWriter.fixed(e.t, places: 0))") }
            }
            // A second event of one true drink: unmatched, in the window of a matched one of its kind.
            doubled += report.spurious.filter { s in report.matches.contains { $0.truth.kind == s.kind && Evaluation.window(of: $0.truth, contains: s.t) } }.count
            // The same readings through a detector alone (no radio, no restarts, no hub): what the detector itself errs by.
            var runs = [("all", detected), (b.kind.rawValue, detected), ("alone", detectorAlone(b.readings, b.configuration.calibration))]
            // What each gateway received (a Mi scale's two rooms each count), through a detector alone.
            let calibration = try b.device().calibration
            let receipts = received.of(device: b.address.description).map { readings in
                (readings: readings, events: detectorAlone(readings.map { Reading(t: $0.t - offset, value: $0.value) }, calibration))
            }
            // A carried bottle's stream is split between rooms, each of which saw part of its truth: left out.
            if b.moves.isEmpty { runs += receipts.map { ("received", $0.events) } }
            for (name, detected) in runs {
                groups[name, default: EvaluationPool()].add(detected: detected, truth: b.truth, duration: hours * 3600)
            }
            if ProcessInfo.processInfo.environment["QUENCH_BENCH_VERBOSE"] != nil, b.kind == .sigScale || b.kind == .miScale {
                for (readings, events) in receipts {
                    let rep = Evaluation.score(detected: events, truth: b.truth)
                    let gaps = zip(readings, readings.dropFirst()).map { $1.t - $0.t }.sorted()
                    print("    received: bottle \(b.index) \(readings.count) readings, gaps p50 \(TraceWriter.fixed(gaps.isEmpty ? 0 : gaps[gaps.count / 2], places: 2)) s, "
                          + "p99 \(TraceWriter.fixed(gaps.isEmpty ? 0 : gaps[gaps.count * 99 / 100], places: 2)) s, max \(TraceWriter.fixed(gaps.last ?? 0, places: 1)) s; "
                          + "sips recall \(rep.sip.recall ?? -1) precision \(rep.sip.precision ?? -1) total \(TraceWriter.fixed(rep.sip.totalErrorPercent ?? -1, places: 2)) %")
                }
            }
        }
        let byKind = groups.mapValues(\.report)
        let total = byKind["all"] ?? EvaluationReport()
        func line(_ label: String, _ r: EvaluationReport) -> String {
            func f(_ x: Double?, _ places: Int) -> String { x.map { TraceWriter.fixed($0, places: places) } ?? "-" }
            return "    \(label.padding(toLength: max(38, label.count), withPad: " ", startingAt: 0)) sips \(r.sip.truthCount): recall \(f(r.sip.recall, 3)), precision \(f(r.sip.precision, 3)), "
                + "\(f(r.sip.meanAbsoluteErrorML, 2)) mL / sip, total \(f(r.sip.totalErrorPercent, 2)) %; refills \(r.refill.matched)/\(r.refill.truthCount), "
                + "pours \(r.pour.matched)/\(r.pour.truthCount)"
        }
        print("  the hub against the simulated truth (\(total.sip.truthCount) sips; \(total.missed.filter { $0.kind == .sip }.count) missed, "
              + "\(total.spurious.filter { $0.kind == .sip }.count) not true, of which \(doubled) a second copy of a true drink):")
        print(line("all", total))
        if let alone = byKind["alone"] { print(line("(the detectors alone, same readings)", alone)) }
        if let r = byKind["received"] { print(line("(what each room received of the bottles that stay, a detector alone)", r)) }
        for kind in [Kind.miScale, .decent, .sigScale, .levelBottle] { if let r = byKind[kind.rawValue] { print(line(kind.rawValue, r)) } }

        // Real time: a scale's sips, from the bottle put back to the hub's page.
        try pageLatency(store: stores[0], hubPath: hubPath, work: work)

        // The hub's cost: its CPU over the run, idle, and its peak memory.
        hub.stop()
        let busyCPU = hub.cpu
        try hub.start()
        Thread.sleep(forTimeInterval: 20)
        hub.stop()
        let idleRate = (hub.cpu - busyCPU) / 20
        let perReal = busyCPU / (hours * 3600) + idleRate
        print("  hub CPU: \(TraceWriter.fixed(busyCPU, places: 2)) s for the \(TraceWriter.fixed(hours, places: 0)) hours' events (and the latency run), "
              + "idle \(TraceWriter.fixed(idleRate * 100, places: 2)) % of a core; over \(TraceWriter.fixed(hours, places: 0)) real hours "
              + "\(TraceWriter.fixed(perReal * 100, places: 2)) % of this machine's core   target < 5 % of a Pi's")
        print("  hub peak RSS \(TraceWriter.fixed(Double(hub.peakBytes) / 1_048_576, places: 1)) MB   target < 50 MB")
    }

    /// A Decent scale streams, in real time, to a gateway on `store`; its sips go through
    /// the publisher, the broker and the hub to `quench serve` on the hub's database. For
    /// each: the bottle put back → the event final at the gateway (the detector's
    /// confirmation) → in the hub's database → the `change` on the hub page's live stream.
    func pageLatency(store: IntakeStore, hubPath: String, work: String) throws {
        var scenario = Scenario(.clean(unit: .g).with(.noise), seed: seed, initialML: 700).idle(8)
        for i in 0..<latencySips { scenario = scenario.sip(ml: Double(20 + 5 * i)).idle(12) }
        let (readings, truth) = scenario.run()
        let address = BluetoothAddress("F0:00:00:FF:FF:01")!
        let peripheral = SimulatedPeripheral(address: address, profile: .decentScale, readings: readings, unit: .g)
        let device = LiveDevice(address: address, profile: .decentScale,
                                calibration: try BottleCalibration(unit: .g, capacityML: scenario.configuration.capacityML,
                                                                   emptyWeightG: scenario.configuration.emptyWeightG))
        let server = try ServedQuench(command: [quench, "serve"], database: hubPath, log: work + "/serve.log")
        defer { _ = server.stop() }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let stream = try EventStream.open(group, host: "127.0.0.1", port: server.port)
        let finals = Mutex<[(final: ContinuousClock.Instant, identity: String)]>([])
        var logger = Logger(label: "latency")
        logger.logLevel = .error
        let gateway = Gateway(devices: [device], store: store, logger: logger, connector: SimulatedRadio([peripheral]),
                              advertisements: { stop throws(LiveError) in SilentScan(stop: stop) })
        gateway.writer.subscribe { committed in
            guard committed.final.event.kind == .sip, let row = committed.row else { return }
            finals.withLock { $0.append((committed.final.finalAt, row.identity)) }
        }
        // When each sip is first in the hub's database, looked for every 5 ms.
        let hubStore = try IntakeStore(path: hubPath)
        let atHub = Mutex<[String: ContinuousClock.Instant]>([:])
        let watching = StopSignal()
        let watcher = WorkerThread(name: "hub watcher") {
            while !watching.wait(seconds: 0.005) {
                for (_, identity) in finals.withLock({ $0 }) where atHub.withLock({ $0[identity] == nil }) {
                    if (try? hubStore.event(identity: identity)) != nil { atHub.withLock { $0[identity] = .now } }
                }
            }
        }
        gateway.start()
        _ = peripheral.waitUntilFinished(timeout: truth.last.map { $0.tEnd + 30 } ?? 60)
        Thread.sleep(forTimeInterval: 2)
        gateway.stop()
        gateway.wait()
        peripheral.shutdown()
        watching.stop()
        watcher.join()
        guard let streamed = peripheral.streamOrigin else { throw StoreBenchmark.BenchError.failed("the latency phase's scale never streamed") }
        let changes = stream.log.changes
        var confirm: [Double] = [], toHub: [Double] = [], toPage: [Double] = []
        let sips = truth.filter { $0.kind == .sip }
        for (final, identity) in finals.withLock({ $0 }) {
            guard let sip = sips.min(by: { abs(($0.tEnd - (final - streamed).seconds)) < abs(($1.tEnd - (final - streamed).seconds)) }) else { continue }
            confirm.append((final - streamed).seconds - sip.tEnd)
            guard let held = atHub.withLock({ $0[identity] }) else { continue }
            toHub.append((held - final).seconds)
            // The page's change for this sip: the first after the hub stored it (seen at most 5 ms late).
            if let page = changes.first(where: { $0 >= held - .milliseconds(5) }) { toPage.append((page - final).seconds) }
        }
        func summary(_ xs: [Double], _ unit: Double, _ places: Int) -> String {
            let s = xs.sorted()
            guard !s.isEmpty else { return "-" }
            return "p50 \(TraceWriter.fixed(s[s.count / 2] * unit, places: places)), worst \(TraceWriter.fixed(s[s.count - 1] * unit, places: places))"
        }
        print("  real time, a Decent scale on floor0, \(finals.withLock { $0.count }) of \(sips.count) sips:")
        print("    bottle put back → the sip final (the detector's confirmation)  \(summary(confirm, 1, 1)) s")
        print("    the sip final → in the hub's database                         \(summary(toHub, 1000, 0)) ms, \(toHub.count) of \(finals.withLock { $0.count })")
        print("    the sip final → the change on the hub's page (live stream)     \(summary(toPage, 1000, 0)) ms, \(toPage.count) of \(finals.withLock { $0.count })   target < 1000 ms")
    }
}

/// Hears nothing until stopped.
final class SilentScan: AdvertisementSource {
    let stopSignal: StopSignal
    init(stop: StopSignal) { stopSignal = stop }
    func next(until deadline: ContinuousClock.Instant) throws(LiveError) -> AdvertisingReport? {
        if stopSignal.wait(seconds: max(0, (deadline - .now).seconds)) { throw .stopped }
        return nil
    }
    func stop() {}
}
#endif

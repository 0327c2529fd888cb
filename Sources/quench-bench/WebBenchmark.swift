import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import QuenchCore
import QuenchStore

/// `quench-bench web`: the real `quench serve` on ten years of a person's
/// history (`WebHistory`), on a free loopback port, asked over keep-alive
/// HTTP/1.1 connections (NIOHTTP1) as a browser asks:
/// - each endpoint's latency (p50, p99, max over N requests after a warm-up);
/// - a page refresh as the page's script makes it (household; today and state
///   together; log, stats 7, stats 30 and calendar together; the three charts
///   one after another), and a first load (page, script, style, then that);
/// - the server's resident memory (VmRSS, VmHWM) idle, after the load, with
///   live `/api/events` streams open, and with a flood of idle connections held
///   (of which it keeps at most its cap, letting the oldest go);
/// - the time from a `quench add` in another process (and from a POST
///   `/api/add`) to the `change` event on every open stream.
/// Targets (the issue): every answer < 50 ms, resident memory < 30 MB.
struct WebBenchmark {
    var quench: String
    /// The server's command: `quench serve`, or `--server PATH` (`quench-web`, which takes serve's options itself).
    var server: [String]
    var requests = 200
    var warmup = 20
    var adds = 50
    var streams = 20
    /// Connections opened that send nothing, as a hostile probe does (`--idle N`).
    var idle = 1000
    var tries = 20
    var years = 10
    /// Sips a day from the bottle (the store benchmark's detector-level history: 95-125).
    var sips = 6...12
    /// More paths to time after the page's (`--also '/api/stats?days=1,/api/log?since=week'`).
    var also: [String] = []

    init(arguments: [String]) throws {
        var quench: String?
        var server: String?
        for (flag, v) in try StoreBenchmark.options(arguments) {
            switch flag {
            case "--quench": quench = v
            case "--server": server = v
            case "--requests": requests = max(1, Int(v) ?? requests)
            case "--streams": streams = max(1, Int(v) ?? streams)
            case "--idle": idle = max(0, Int(v) ?? idle)
            case "--tries": tries = max(1, Int(v) ?? tries)
            case "--years": years = max(1, Int(v) ?? years)
            case "--also": also = v.split(separator: ",").map(String.init)
            case "--sips":
                let bounds = v.split(separator: "-").compactMap { Int($0) }
                guard bounds.count == 2, bounds[0] >= 1, bounds[0] <= bounds[1] else { throw StoreBenchmark.BenchError.usage("--sips MIN-MAX, e.g. 6-12") }
                sips = bounds[0]...bounds[1]
            default: throw StoreBenchmark.BenchError.usage("unknown argument \(flag)")
            }
        }
        self.quench = quench ?? StoreBenchmark.quenchBeside
        guard FileManager.default.isExecutableFile(atPath: self.quench) else {
            throw StoreBenchmark.BenchError.usage("no quench binary at \(self.quench) (give --quench PATH)")
        }
        if let server {
            guard FileManager.default.isExecutableFile(atPath: server) else { throw StoreBenchmark.BenchError.usage("no server binary at \(server)") }
            self.server = [server]
        } else {
            self.server = [self.quench, "serve"]
        }
    }

    /// What the page and its links ask for (GET unless a body is given).
    static let endpoints: [(path: String, json: String?)] = [
        ("/", nil), ("/app.js", nil), ("/app.css", nil),
        ("/api/today", nil), ("/api/log?since=today&deleted=true", nil),
        ("/api/stats?days=7", nil), ("/api/stats?days=30", nil), ("/api/stats?days=365", nil),
        ("/api/calendar", nil), ("/api/calendar?month=2020-02", nil), ("/api/goal", nil), ("/api/goal/recommend?weight=70kg&exercise=30min", nil),
        ("/api/remind", nil), ("/api/state", nil), ("/api/household", nil), ("/api/carer", nil), ("/icon-192.png", nil),
        ("/api/chart/day.svg", nil), ("/api/chart/week.svg", nil), ("/api/chart/30days.svg", nil), ("/api/chart/month.svg", nil),
        ("/api/share/day.svg", nil), ("/api/share/day.png", nil),
    ]

    func run() throws {
        let work = NSTemporaryDirectory() + "quench-bench-web-\(getpid())"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let database = work + "/quench.sqlite"
        let history = try WebHistory.build(path: database, years: years, sips: sips, now: Date())
        print("web: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(server.joined(separator: " ")) (and \(quench))")
        print("  history: \(sips.lowerBound)–\(sips.upperBound) sips a day, \(history.days) days in \(WebHistory.zone), \(history.events) events (\(history.sips) sensor sips, "
              + "\(history.manual) manual drinks, \(history.refills) refills; \(history.deleted) sips deleted), \(history.goals) goals, "
              + "1 paired bottle; \(history.bytes / 1024) KiB, built in \(fixed(history.seconds, 2)) s")

        let server = try ServedQuench(command: server, database: database, log: work + "/serve.log")
        defer { _ = server.stop() }
        print("  quench serve on 127.0.0.1:\(server.port), started in \(fixed(server.startSeconds * 1000, 0)) ms")
        Thread.sleep(forTimeInterval: 1)
        print(memoryLine("idle after start (no request yet)", server))

        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let connection = try BenchConnection.connect(group, host: "127.0.0.1", port: server.port)
        _ = try connection.timed(.GET, "/api/today")
        print(memoryLine("after the first answer", server))

        print("  latency, one keep-alive connection, \(requests) requests after \(warmup), target < 50 ms:")
        for path in Self.endpoints.map(\.path) + also {
            try measure(path, label: path, count: requests, connection: connection)
        }

        // A page refresh, as the script makes it, over a browser's six connections.
        let pool = try (0..<6).map { _ in try BenchConnection.connect(group, host: "127.0.0.1", port: server.port) }
        for (label, firstLoad) in [("page refresh (14 requests, as the script makes them)", false),
                                   ("first load (page, script, style, then the refresh)", true)] {
            var times: [Double] = []
            for i in 0..<(warmup + requests) {
                let t = try pageRefresh(pool, firstLoad: firstLoad)
                if i >= warmup { times.append(t) }
            }
            print("    \(label.padding(toLength: 52, withPad: " ", startingAt: 0)) \(summary(times))")
        }
        print(memoryLine("after the reads above", server))
        try measure("/api/add", label: "POST /api/add {\"amount\":\"250ml\"}", count: adds, connection: connection, json: #"{"amount":"250ml"}"#)
        print(memoryLine("after \(warmup + adds) adds", server))

        // Live pages: open streams, then changes from another process and from the API.
        var open: [EventStream] = []
        for _ in 0..<streams { open.append(try EventStream.open(group, host: "127.0.0.1", port: server.port)) }
        defer { for stream in open { stream.close() } }
        Thread.sleep(forTimeInterval: 1)
        print(memoryLine("\(streams) live /api/events streams open", server))
        if idle > 0 {
            let sockets = try IdleSockets(count: idle, port: server.port)
            Thread.sleep(forTimeInterval: 1)
            print(memoryLine("\(idle) idle connections opened", server) + "   (\(sockets.closedByServer()) closed by the server, the rest held)")
            sockets.close()
        }
        try changeLatency(open, server: server, database: database, connection: connection)
        print(memoryLine("at the end (streams still open)", server))
        print("  resident at the end, by mapping: " + server.residentByMapping()
            .map { "\($0.name) \(fixed(Double($0.kB) / 1024, 1))" }.joined(separator: ", ") + " MB")

        for stream in open { stream.close() }
        open.removeAll()
        for c in pool { c.close() }
        connection.close()
        let status = server.stop()
        print("  quench serve stopped on SIGTERM: exit status \(status)")
        // For scale: the same binary answering one question and exiting. Through GNU time: a child
        // spawned from here would report at least this process's own resident memory as its peak (the
        // kernel keeps the larger of the old and new address spaces' peaks across exec).
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/time") {
            _ = try spawnMeasured(["/usr/bin/time", "-f", "%M", "-o", work + "/today.rss", quench, "today", "--json", "--db", database],
                                  output: "/dev/null")
            let kB = Double((try? String(contentsOfFile: work + "/today.rss", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? .nan
            print("  for comparison, `quench today --json` as a whole process: peak RSS \(fixed(kB / 1024, 1)) MB (GNU time)")
        }
        if status != 0 { throw StoreBenchmark.BenchError.command("quench serve", status, (try? String(contentsOfFile: work + "/serve.log", encoding: .utf8)) ?? "") }
    }

    /// `count` requests after the warm-up, one at a time; prints p50, p99, max and the size.
    func measure(_ path: String, label: String, count: Int, connection: BenchConnection, json: String? = nil) throws {
        var times: [Double] = []
        var bytes = 0
        for i in 0..<(warmup + count) {
            let (seconds, reply) = try connection.timed(json == nil ? .GET : .POST, path, json: json)
            guard reply.status == 200 else {
                throw StoreBenchmark.BenchError.command("\(json == nil ? "GET" : "POST") \(path)", Int32(reply.status), reply.text)
            }
            bytes = reply.body.readableBytes
            if i >= warmup { times.append(seconds) }
        }
        print("    \(label.padding(toLength: 38, withPad: " ", startingAt: 0)) \(summary(times))   \(bytes) bytes")
    }

    /// One refresh of the page as its script makes it; the seconds from the first request to the last byte.
    func pageRefresh(_ pool: [BenchConnection], firstLoad: Bool) throws -> Double {
        let start = ContinuousClock.now
        func together(_ paths: [String]) throws -> ContinuousClock.Instant {
            let futures = paths.enumerated().map { i, path in pool[i].send(.GET, path) }
            var last = start
            for (future, path) in zip(futures, paths) {
                let reply = try future.wait()
                guard reply.status == 200 else { throw StoreBenchmark.BenchError.command("GET \(path)", Int32(reply.status), reply.text) }
                last = max(last, reply.finished)
            }
            return last
        }
        var end = start
        if firstLoad {
            end = try together(["/"])
            end = try together(["/app.js", "/app.css", "/icon.svg"])
        }
        end = try together(["/api/household"])
        end = try together(["/api/today", "/api/state"])
        end = try together(["/api/log?since=today&deleted=true", "/api/stats?days=7", "/api/stats?days=30", "/api/calendar", "/api/goal", "/api/remind"])
        for kind in ["day", "week", "30days"] { end = try together(["/api/chart/\(kind).svg"]) }
        return inSeconds(end - start)
    }

    /// From a drink stored by another process (`quench add`, which the server
    /// notices by polling the database every 250 ms) and by the API (which
    /// tells the streams at once) to the `change` event on every open stream.
    func changeLatency(_ streams: [EventStream], server: ServedQuench, database: String, connection: BenchConnection) throws {
        // Spaced irregularly so the adds do not fall in step with the server's poll.
        var random = SystemRandomNumberGenerator()
        func waitForChange(after counts: [Int], from start: ContinuousClock.Instant) throws -> (first: Double, all: Double) {
            let deadline = ContinuousClock.now + .seconds(5)
            while zip(streams, counts).contains(where: { $0.log.changes.count <= $1 }) {
                guard ContinuousClock.now < deadline else { throw StoreBenchmark.BenchError.usage("no change event within 5 s") }
                usleep(500)
            }
            let arrivals = zip(streams, counts).map { $0.log.changes[$1] }
            return (inSeconds(arrivals.min()! - start), inSeconds(arrivals.max()! - start))
        }
        var fromSpawn: [Double] = [], fromExit: [Double] = [], toAll: [Double] = [], addProcess: [Double] = []
        for _ in 0..<tries {
            Thread.sleep(forTimeInterval: 0.3 + Double.random(in: 0..<0.5, using: &random))
            let counts = streams.map { $0.log.changes.count }
            let start = ContinuousClock.now
            let add = try spawnMeasured([quench, "add", "250ml", "--note", "bench", "--db", database], output: "/dev/null")
            let (first, all) = try waitForChange(after: counts, from: start)
            fromSpawn.append(first)
            fromExit.append(first - add.seconds)
            toAll.append(all)
            addProcess.append(add.seconds)
        }
        print("  `quench add` in another process → change event, \(tries) tries, \(streams.count) streams open:")
        print("    the add process itself (spawn to exit)           \(summary(addProcess))")
        print("    from its spawn to the event on the first stream  \(summary(fromSpawn))")
        print("    from its exit (committed) to the event           \(summary(fromExit))")
        print("    from its spawn to the event on all \(streams.count) streams  \(summary(toAll))")
        var viaAPI: [Double] = [], viaAPIAll: [Double] = []
        for _ in 0..<tries {
            Thread.sleep(forTimeInterval: 0.3 + Double.random(in: 0..<0.5, using: &random))
            let counts = streams.map { $0.log.changes.count }
            let start = ContinuousClock.now
            let reply = try connection.send(.POST, "/api/add", json: #"{"amount":"250ml"}"#).wait()
            guard reply.status == 200 else { throw StoreBenchmark.BenchError.command("POST /api/add", Int32(reply.status), reply.text) }
            let (first, all) = try waitForChange(after: counts, from: start)
            viaAPI.append(first)
            viaAPIAll.append(all)
        }
        print("  POST /api/add (a page's own drink) → change event on the other pages, \(tries) tries:")
        print("    to the first stream                              \(summary(viaAPI))")
        print("    to all \(streams.count) streams                              \(summary(viaAPIAll))")
    }

    func memoryLine(_ label: String, _ server: ServedQuench) -> String {
        "  memory, " + (label + ":").padding(toLength: 42, withPad: " ", startingAt: 0) + server.memory()
    }

    func summary(_ seconds: [Double]) -> String {
        let sorted = seconds.sorted()
        func at(_ p: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] * 1000 }
        return "p50 \(fixed(at(0.5), 1).leftPadded(6)) ms   p99 \(fixed(at(0.99), 1).leftPadded(6)) ms   max \(fixed(sorted.last! * 1000, 1).leftPadded(6)) ms"
    }
}

func fixed(_ x: Double, _ places: Int) -> String { TraceWriter.fixed(x, places: places) }

extension String {
    func leftPadded(_ width: Int) -> String { count >= width ? self : String(repeating: " ", count: width - count) + self }
}

/// `quench serve --listen 127.0.0.1:0` as a child process; the port it bound
/// is read from its greeting.
final class ServedQuench {
    let process = Process()
    let port: Int
    let startSeconds: Double
    private var stopped: Int32?

    init(command: [String], database: String, log: String) throws {
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = command.dropFirst() + ["--db", database, "--listen", "127.0.0.1:0"]
        var environment = ProcessInfo.processInfo.environment
        environment["NO_COLOR"] = "1"
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: log)
        let start = ContinuousClock.now
        try process.run()
        var greeting = ""
        while !greeting.contains("\n") {
            let data = output.fileHandleForReading.availableData
            guard !data.isEmpty else {
                throw StoreBenchmark.BenchError.command("quench serve", 1, (try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
            }
            greeting += String(decoding: data, as: UTF8.self)
        }
        startSeconds = inSeconds(ContinuousClock.now - start)
        // "Quench is serving http://127.0.0.1:PORT/ (…)"
        guard let range = greeting.range(of: "http://127.0.0.1:"),
              let port = Int(greeting[range.upperBound...].prefix { $0.isNumber }) else {
            throw StoreBenchmark.BenchError.usage("cannot read the port from: \(greeting)")
        }
        self.port = port
    }

    /// VmRSS and VmHWM (its peak) from /proc/PID/status, and from smaps_rollup
    /// what the resident pages are: private dirty (the process's own heap and
    /// stacks), private clean (its binary's pages read from the file), shared
    /// clean (libraries other processes map too), and PSS (each shared page
    /// divided among the processes mapping it).
    func memory() -> String {
        let pid = process.processIdentifier
        func kB(_ file: String, _ key: String) -> String {
            guard let text = Self.readProcFile("/proc/\(pid)/\(file)"),
                  let line = text.split(separator: "\n").first(where: { $0.hasPrefix(key + ":") }),
                  let value = Double(line.split(separator: " ").dropFirst().first ?? "") else { return "?" }
            return fixed(value / 1024, 1)
        }
        return "VmRSS \(kB("status", "VmRSS")) MB, VmHWM \(kB("status", "VmHWM")) MB   (private dirty \(kB("smaps_rollup", "Private_Dirty")), "
            + "private clean \(kB("smaps_rollup", "Private_Clean")), shared clean \(kB("smaps_rollup", "Shared_Clean")); "
            + "PSS \(kB("smaps_rollup", "Pss")) MB)"
    }

    /// Resident memory by what is mapped (/proc/PID/smaps), largest first:
    /// which files (the binary, each library) and how much is anonymous.
    func residentByMapping(top: Int = 10) -> [(name: String, kB: Int)] {
        guard let smaps = Self.readProcFile("/proc/\(process.processIdentifier)/smaps") else { return [] }
        var totals: [String: Int] = [:]
        var name = ""
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if let first = fields.first, first.contains("-"), first.allSatisfy({ $0.isHexDigit || $0 == "-" }) {
                name = fields.count >= 6 ? fields[5...].joined(separator: " ") : "[anonymous]"
                if let slash = name.lastIndex(of: "/") { name = String(name[name.index(after: slash)...]) }
            } else if fields.first == "Rss:", fields.count >= 2, let kB = Int(fields[1]) {
                totals[name, default: 0] += kB
            }
        }
        let sorted: [(name: String, kB: Int)] = totals.map { (name: $0.key, kB: $0.value) }.sorted { $0.kB > $1.kB }
        return Array(sorted.prefix(top))
    }

    /// A /proc file read to its end (they say their size is 0, and a large one comes in several reads).
    static func readProcFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n > 0 { bytes += chunk.prefix(n) } else if n == 0 || errno != EINTR { break }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// SIGTERM, as systemd stops it; the exit status (once).
    func stop() -> Int32 {
        if let stopped { return stopped }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        stopped = process.terminationStatus
        return process.terminationStatus
    }
}

/// Connections that send nothing, held open: what a hostile probe does. Plain
/// sockets (the server must cope with whatever connects, not just with NIO).
final class IdleSockets {
    private var descriptors: [Int32] = []

    init(count: Int, port: Int) throws {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        for _ in 0..<count {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw StoreBenchmark.BenchError.command("socket", errno, String(cString: strerror(errno)) + " (raise ulimit -n)") }
            let rc = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard rc == 0 else {
                let error = errno
                Glibc.close(fd)
                throw StoreBenchmark.BenchError.command("connect to 127.0.0.1:\(port)", error, String(cString: strerror(error)))
            }
            descriptors.append(fd)
        }
    }

    /// How many the server has closed (they read EOF or a reset).
    func closedByServer() -> Int {
        descriptors.filter { fd in
            var poll = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard Glibc.poll(&poll, 1, 0) == 1 else { return false }
            var byte: UInt8 = 0
            return recv(fd, &byte, 1, Int32(MSG_DONTWAIT)) <= 0
        }.count
    }

    func close() {
        for fd in descriptors { Glibc.close(fd) }
        descriptors.removeAll()
    }
}

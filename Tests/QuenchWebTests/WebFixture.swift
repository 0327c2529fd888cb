import Foundation
import Synchronization
import QuenchCore
import QuenchStore
import QuenchTestSupport
import Testing
import Threading
#if canImport(Glibc)
import Glibc
#endif

/// Six weeks of a person's drinking in a temporary database, in a time zone
/// where it is now mid-afternoon (so today has sips whatever the hour the test
/// runs), and a `quench serve` on a free loopback port reading it.
final class WebFixture: Sendable {
    /// A zone where it is about 15:00 (or `hour`) at `now` (inside everyone's waking hours), and its offset in hours.
    /// Etc/GMT-N is UTC+N (POSIX's inverted sign).
    static func afternoon(_ now: Double, hour: Int = 15) -> (zone: String, offset: Int) {
        let utcHour = Int(now.truncatingRemainder(dividingBy: 86400) / 3600)
        var offset = hour - utcHour
        if offset > 12 { offset -= 24 }
        if offset < -11 { offset += 24 }
        return (offset == 0 ? "Etc/UTC" : "Etc/GMT\(offset > 0 ? "-" : "+")\(abs(offset))", offset)
    }

    /// A zone whose date is not the fixture's at `hour` (15:00 unless said) in `zone`: a phone set elsewhere
    /// (a visitor's, or one never set), whose "today" is another day than the household's.
    static func zoneADayAway(from zone: String) -> String {
        // 15:00 at UTC+o is 01:00 the next day at UTC+(o+10), and 23:00 the day before at UTC+(o−16).
        let offset = zone == "Etc/UTC" ? 0 : (zone.hasPrefix("Etc/GMT-") ? 1 : -1) * (Int(zone.dropFirst(8)) ?? 0)
        let away = offset <= 4 ? offset + 10 : offset - 16
        return away == 0 ? "Etc/UTC" : "Etc/GMT\(away > 0 ? "-" : "+")\(abs(away))"
    }

    let folder: String
    let database: String
    let zone: String
    static let bottle = "C4:7C:8D:6A:12:34"

    /// `hour`: about when it is now in the fixture's zone (15:00 unless said).
    init(days: Int = 42, seed: UInt64 = 11, hour: Int = 15) throws {
        folder = try TemporaryFolder.create("quench-web")
        database = folder + "/quench.sqlite"
        let now = Date().timeIntervalSince1970
        let offset: Int
        (zone, offset) = Self.afternoon(now, hour: hour)

        let store = try IntakeStore(path: database)
        try store.saveSettings(Settings(units: .ml, dayStartHour: 4, timeZone: zone))
        let localMidnight = ((now + Double(offset) * 3600) / 86400).rounded(.down) * 86400 - Double(offset) * 3600
        let today = CivilDay(number: Int((now + Double(offset) * 3600) / 86400))
        try store.setGoal(ml: 2000, from: CivilDay(number: today.number - days - 1), setAt: Timestamp(secondsSince1970: localMidnight - Double(days + 1) * 86400))
        try store.saveDevice(Device(address: Self.bottle, name: "Desk bottle", profile: "weight-scale", sensor: .weight,
                                    addedAt: Timestamp(secondsSince1970: localMidnight - Double(days) * 86400)))
        var random = FuzzRandom(seed: seed)
        var events: [IntakeEvent] = []
        func sip(_ time: Double, _ ml: Double, left: Double?) {
            let t = Timestamp(secondsSince1970: time)
            events.append(IntakeEvent(identity: IntakeEvent.sensorIdentity(device: Self.bottle, kind: .sip, time: t), kind: .sip, ml: ml,
                                      time: t, remainingML: left, source: .sensor, device: Self.bottle, recordedAt: t))
        }
        for day in 1...days {
            let start = localMidnight - Double(day) * 86400
            let count = 5 + Int(random.next() % 6)
            for i in 0..<count {
                // Between 08:00 and 21:00, 150–450 mL each.
                let at = start + 8 * 3600 + Double(i) * (13 * 3600 / Double(count)) + Double(random.next() % 1200)
                sip(at, 150 + Double(random.next() % 300), left: nil)
            }
        }
        // Today: three sips from the bottle, the last leaving 430 mL.
        sip(now - 3 * 3600, 220, left: 780)
        sip(now - 2 * 3600, 180, left: 600)
        sip(now - 40 * 60, 170, left: 430)
        _ = try store.insert(events)
        _ = try store.addManual(ml: 330, at: Timestamp(secondsSince1970: now - 90 * 60), note: "tea", identity: "manual|fixture-tea",
                                recordedAt: Timestamp(secondsSince1970: now - 90 * 60))
        try store.recordLink(address: Self.bottle, up: true, at: Timestamp(secondsSince1970: now - 60))
    }

    deinit { try? FileManager.default.removeItem(atPath: folder) }

    /// `quench ARGS --db DATABASE` and its standard output, which must succeed.
    func quench(_ arguments: [String]) throws -> String {
        let r = try runQuench(arguments + ["--db", database])
        guard r.status == 0 else { throw WebDriver.Failure("quench \(arguments.joined(separator: " ")) failed: \(r.stderr)") }
        return r.stdout
    }

    func json(_ arguments: [String]) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(quench(arguments + ["--json"]).utf8)) as? [String: Any] ?? [:]
    }
}

/// `quench serve` as a separate process; or, given `command`, that (`quench-web`, as the service runs it).
final class ServerProcess: Sendable {
    let process: ChildProcess.Running
    let port: Int
    let log: String
    var client: HTTPTestClient { HTTPTestClient(port: port) }
    var url: String { "http://127.0.0.1:\(port)" }

    init(database: String, extra: [String] = [], command: [String]? = nil) async throws {
        let command = command ?? [quenchBinary!, "serve"]
        // A port free when handed out may be taken before the server binds it (eleven test processes and
        // their browsers share the machine): the server says so and exits, and another port is tried.
        var attempt = 0
        while true {
            attempt += 1
            let port = try TestPorts.next()
            let log = database + ".serve-\(port).log"
            let process = try ChildProcess.start(command[0], Array(command.dropFirst()) + ["--db", database, "--listen", "127.0.0.1:\(port)"] + extra,
                                                 logFile: log).get()
            // Ready when this server says it bound the port (not another's answering there) and answers.
            let greeting = "serving http://127.0.0.1:\(port)/"
            var taken = false
            for _ in 0..<200 {
                let said = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                if said.contains(greeting), let answer = try? await HTTPTestClient(port: port).get("/icon.svg"), answer.status == 200 {
                    (self.port, self.log, self.process) = (port, log, process)
                    return
                }
                if said.contains("is already in use") { taken = true; break }
                try await Task.sleep(for: .milliseconds(50))
            }
            process.signal(SIGKILL)
            _ = process.wait()
            guard taken, attempt < 3 else {
                throw WebDriver.Failure("quench serve did not answer: " + ((try? String(contentsOfFile: log, encoding: .utf8)) ?? ""))
            }
        }
    }

    private let status = Mutex<Int32?>(nil)

    /// SIGTERM, as systemd stops it; the exit status (once: later calls repeat it).
    func stop() -> Int32 {
        status.withLock { status in
            if let status { return status }
            process.signal(SIGTERM)
            status = process.wait()
            return status!
        }
    }
}

/// Where the tests leave their screenshots (look at them): $QUENCH_SCREENSHOTS, else .build/screenshots.
let screenshotFolder: String = {
    let folder = ProcessInfo.processInfo.environment["QUENCH_SCREENSHOTS"] ?? TestPackage.root.appendingPathComponent(".build/screenshots").path
    try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    return folder
}()

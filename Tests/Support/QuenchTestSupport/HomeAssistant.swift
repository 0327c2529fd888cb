import Foundation
import Threading

/// A real Home Assistant core for a test: `hass -c FOLDER --skip-pip` from the virtual
/// environment `.ci/setup-home-assistant` prepares (`$QUENCH_HA_VENV`, else
/// `~/.cache/quench-ha/venv`), with a configuration of its own (recorder on SQLite committing
/// every second, HTTP on a free loopback port, MQTT through its config entry, discovery on),
/// onboarded with a first user so the test holds a token. Nothing reaches the network.
/// Tests that need it are skipped, saying so, when the environment is missing.
public final class HomeAssistant: @unchecked Sendable {
    // @unchecked: a test drives it from one thread; `process` is only touched there.

    public static let venv: String = ProcessInfo.processInfo.environment["QUENCH_HA_VENV"]
        ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/quench-ha/venv").path
    /// Ready only once the setup script finished (it writes its stamp last).
    public static var isInstalled: Bool {
        FileManager.default.isExecutableFile(atPath: venv + "/bin/hass") && FileManager.default.fileExists(atPath: venv + "/.quench-setup")
    }
    public static var missing: String {
        "Home Assistant is not prepared at \(venv) ($QUENCH_HA_VENV): .ci/setup-home-assistant prepares it (the CI's .ci/run does)"
    }

    public let folder: String
    public let port: Int
    public var url: String { "http://127.0.0.1:\(port)" }
    public private(set) var token = ""
    private var refreshToken = ""
    /// Seconds from start to the HTTP API answering.
    public private(set) var startSeconds = 0.0
    private var process: ChildProcess.Running?

    public init(brokerPort: Int) throws {
        guard Self.isInstalled else { throw BrokerError(Self.missing) }
        folder = try TemporaryFolder.create("quench-ha")
        port = try TestPorts.next()
        try FileManager.default.createDirectory(atPath: folder + "/.storage", withIntermediateDirectories: true)
        try """
            homeassistant:
              name: Quench test
              latitude: 51.5
              longitude: 0
              elevation: 0
              unit_system: metric
              time_zone: Europe/London
              country: GB
              currency: GBP
            recorder:
              db_url: sqlite:///\(folder)/home-assistant_v2.db
              commit_interval: 1
            http:
              server_host: 127.0.0.1
              server_port: \(port)
            api:
            history:
            onboarding:
            stats_now:
            logger:
              default: warning
            """.write(toFile: folder + "/configuration.yaml", atomically: true, encoding: .utf8)
        // MQTT is set up through its config entry (no YAML for the broker since 2022.12).
        let entry: [String: Any] = [
            "version": 1, "minor_version": 5, "key": "core.config_entries",
            "data": ["entries": [[
                "created_at": "2026-01-01T00:00:00+00:00", "modified_at": "2026-01-01T00:00:00+00:00",
                "data": ["broker": "127.0.0.1", "port": brokerPort], "options": ["discovery": true],
                "disabled_by": NSNull(), "discovery_keys": [String: Any](), "domain": "mqtt", "entry_id": "01quenchtestmqttentry000000",
                "minor_version": 1, "pref_disable_new_entities": false, "pref_disable_polling": false, "source": "user",
                "subentries": [Any](), "title": "mosquitto", "unique_id": NSNull(), "version": 1,
            ]]],
        ]
        try JSONSerialization.data(withJSONObject: entry).write(to: URL(fileURLWithPath: folder + "/.storage/core.config_entries"))
        // The test's service that compiles the short-term statistics now (Tests/Fixtures/homeassistant).
        try FileManager.default.createDirectory(atPath: folder + "/custom_components", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: TestPackage.fixtures.appendingPathComponent("homeassistant/custom_components/stats_now").path,
                                         toPath: folder + "/custom_components/stats_now")
    }

    /// Starts it and waits until its HTTP API answers, then onboards the first user.
    public func start(within seconds: Double = 90) throws {
        let started = Date()
        switch ChildProcess.start(Self.venv + "/bin/hass", ["-c", folder, "--skip-pip"], logFile: folder + "/stdout.log") {
        case .success(let p): process = p
        case .failure(let e): throw BrokerError("\(e)")
        }
        let end = started.addingTimeInterval(seconds)
        while Date() < end {
            if TestPorts.accepts(port), (try? client(["get", "onboarding", "-"])) != nil { break }
            Thread.sleep(forTimeInterval: 0.25)
        }
        guard TestPorts.accepts(port) else { throw BrokerError("Home Assistant did not answer on \(port) within \(seconds) s: \(log.suffix(2000))") }
        startSeconds = Date().timeIntervalSince(started)
        let tokens = try client(["onboard"]) as? [String: Any]
        guard let t = tokens?["token"] as? String, let r = tokens?["refresh_token"] as? String else { throw BrokerError("onboarding gave no token") }
        (token, refreshToken) = (t, r)
    }

    /// SIGTERM: it saves its registries and stops.
    public func stop() {
        guard let p = process else { return }
        p.signal(SIGTERM)
        p.wait()
        process = nil
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// `home-assistant.log`.
    public var log: String { (try? String(contentsOfFile: folder + "/home-assistant.log", encoding: .utf8)) ?? "" }

    /// GET /api/PATH.
    public func get(_ path: String) throws -> Any { try client(["get", path, token]) }
    /// POST /api/PATH with a JSON body (a service call: `services/button/press`).
    public func post(_ path: String, _ body: [String: Any]) throws -> Any {
        try client(["post", path, token, String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self)])
    }
    /// One websocket command (`config/entity_registry/list`): its result.
    public func websocket(_ command: [String: Any]) throws -> Any {
        try client(["ws", token, String(decoding: try JSONSerialization.data(withJSONObject: command), as: UTF8.self)])
    }

    /// A dashboard of this one card (YAML, as pasted), in headless Chromium through chromedriver: a PNG at `path`.
    public func screenshot(card: String, to path: String) throws {
        let file = folder + "/card.yaml"
        try card.write(toFile: file, atomically: true, encoding: .utf8)
        _ = try client(["screenshot", token, refreshToken, file, path])
    }

    /// Every state, by entity id.
    public func states() throws -> [String: [String: Any]] {
        let all = try get("states") as? [[String: Any]] ?? []
        return Dictionary(all.compactMap { s in (s["entity_id"] as? String).map { ($0, s) } }, uniquingKeysWith: { a, _ in a })
    }

    /// Rows of an SQL query on the recorder's database (through the venv's Python: its sqlite3).
    public func query(_ sql: String) throws -> [[Any]] {
        let script = "import json,sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(json.dumps(c.execute(sys.argv[2]).fetchall()))"
        let r = try runProgram(Self.venv + "/bin/python", ["-c", script, folder + "/home-assistant_v2.db", sql])
        guard r.status == 0 else { throw BrokerError("query \(sql): \(r.stderr)") }
        return try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[Any]] ?? []
    }

    private func client(_ arguments: [String]) throws -> Any {
        let script = TestPackage.fixtures.appendingPathComponent("homeassistant/ha_client.py").path
        let r = try runProgram(Self.venv + "/bin/python", [script, url] + arguments)
        guard r.status == 0 else { throw BrokerError("ha_client \(arguments.first ?? ""): \(r.stderr.suffix(1500))") }
        return try JSONSerialization.jsonObject(with: Data(r.stdout.utf8), options: .fragmentsAllowed)
    }
}

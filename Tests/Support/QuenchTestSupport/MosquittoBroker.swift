import Foundation
import Testing
import Threading

/// Debian's `mosquitto` broker, started by a test on a free loopback port with
/// persistence in a folder of its own; stopped, killed and started again on the
/// same port and folder. Tests that need it are skipped, saying so, when it is
/// not installed (`.ci/run` installs it).
public final class MosquittoBroker: @unchecked Sendable {
    // @unchecked: a test drives it from one thread; `process` is only touched there.
    public static let path = ["/usr/sbin/mosquitto", "/usr/bin/mosquitto"].first { FileManager.default.isExecutableFile(atPath: $0) }
    public static var isInstalled: Bool { path != nil }
    public static let missing = "mosquitto is not installed: apt-get install -y mosquitto (the CI's .ci/run does)"

    public private(set) var port: Int
    public let folder: String
    /// Lines added to mosquitto.conf.
    let settings: String
    /// The TLS listener's port, when started with `tls`.
    public private(set) var tlsPort: Int?
    private var process: ChildProcess.Running?

    public struct TLS: Sendable {
        public var certificate: String
        public var key: String
        /// When set, the TLS listener wants a client certificate signed by this CA.
        public var clientCA: String?
        public init(certificate: String, key: String, clientCA: String? = nil) {
            self.certificate = certificate
            self.key = key
            self.clientCA = clientCA
        }
    }

    /// - Parameter users: user → password; without, anonymous clients are allowed.
    /// - Parameter acl: the text of a mosquitto ACL file (`acl_file`), what each user may read and write.
    /// - Parameter settings: more lines of mosquitto.conf (`max_queued_messages 40`).
    public init(users: [String: String] = [:], tls: TLS? = nil, acl: String? = nil, settings: String = "") throws {
        self.settings = settings
        folder = try TemporaryFolder.create("quench-mosquitto")
        port = try TestPorts.next()
        tlsPort = tls == nil ? nil : try TestPorts.next()
        // A port free when TestPorts handed it out can be bound by another process before mosquitto
        // binds it (seen once in CI: "Address already in use"): then the next ports, a few times.
        for attempt in 1... {
            try configure(users: users, tls: tls, acl: acl)
            do {
                try start()
                return
            } catch where attempt < 4 && log.contains("Address already in use") {
                kill()
                try? FileManager.default.removeItem(atPath: folder + "/broker.log")
                port = try TestPorts.next()
                tlsPort = tls == nil ? nil : try TestPorts.next()
            }
        }
    }

    /// Writes `mosquitto.conf` for `port` (and `tlsPort`).
    private func configure(users: [String: String], tls: TLS?, acl: String?) throws {
        var conf = """
            per_listener_settings false
            \(getuid() == 0 ? "user root" : "")
            persistence true
            persistence_location \(folder)/
            # Saved after every change: a broker killed with SIGKILL keeps what it acknowledged.
            autosave_on_changes true
            autosave_interval 1
            log_dest file \(folder)/broker.log
            listener \(port) 127.0.0.1

            """
        if let tls, let tlsPort {
            conf += "listener \(tlsPort) 127.0.0.1\ncertfile \(tls.certificate)\nkeyfile \(tls.key)\n"
            if let clientCA = tls.clientCA { conf += "require_certificate true\ncafile \(clientCA)\n" }
        }
        if users.isEmpty {
            conf += "allow_anonymous true\n"
        } else {
            // mosquitto_passwd's file format: user:$7$… hashes; made with its own tool.
            let file = folder + "/passwords"
            guard FileManager.default.createFile(atPath: file, contents: nil) else { throw BrokerError("cannot create \(file)") }
            for (user, password) in users {
                let r = try runProgram("/usr/bin/mosquitto_passwd", ["-b", file, user, password])
                guard r.status == 0 else { throw BrokerError("mosquitto_passwd failed: \(r.stderr)") }
            }
            conf += "allow_anonymous false\npassword_file \(file)\n"
        }
        if let acl {
            try acl.write(toFile: folder + "/acl", atomically: true, encoding: .utf8)
            conf += "acl_file \(folder)/acl\n"
        }
        conf += settings
        try conf.write(toFile: folder + "/mosquitto.conf", atomically: true, encoding: .utf8)
    }

    public var url: String { "mqtt://127.0.0.1:\(port)" }

    public func start() throws {
        guard let path = Self.path else { throw BrokerError(Self.missing) }
        // Spawned with no signal blocked, so SIGTERM stops it whatever the test runner's threads block.
        switch ChildProcess.start(path, ["-c", folder + "/mosquitto.conf"], logFile: folder + "/stdout.log") {
        case .success(let p): process = p
        case .failure(let e): throw BrokerError("\(e)")
        }
        // Ready once it accepts connections.
        let end = Date().addingTimeInterval(5)
        while Date() < end {
            if TestPorts.accepts(port) { return }
            Thread.sleep(forTimeInterval: 0.02)
        }
        throw BrokerError("mosquitto did not listen on \(port) within 5 s: \(log)")
    }

    /// SIGTERM: the broker saves its state and exits.
    public func stop() {
        guard let p = process else { return }
        p.signal(SIGTERM)
        p.wait()
        process = nil
    }

    /// SIGKILL: no goodbye, no final save (what was saved every second survives).
    public func kill() {
        guard let p = process else { return }
        p.signal(SIGKILL)
        p.wait()
        process = nil
    }

    public var log: String { (try? String(contentsOfFile: folder + "/broker.log", encoding: .utf8)) ?? "" }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: folder)
    }
}

public struct BrokerError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

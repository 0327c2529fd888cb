import QuenchCore
import QuenchStore
import Threading
#if canImport(Glibc)
import Glibc
#endif

/// Where the broker is: `mqtt://[user@]host[:port]` (1883) or `mqtts://…` (TLS, 8883).
public struct BrokerAddress: Sendable, Hashable, CustomStringConvertible {
    public var tls: Bool
    public var host: String
    public var port: Int32
    public var user: String?

    public init(tls: Bool, host: String, port: Int32, user: String?) {
        self.tls = tls
        self.host = host
        self.port = port
        self.user = user
    }

    public init(parsing url: String) throws(MQTTSetupError) {
        let scheme: String
        var rest: Substring
        if url.hasPrefix("mqtt://") { (scheme, rest) = ("mqtt", url.dropFirst(7)) }
        else if url.hasPrefix("mqtts://") { (scheme, rest) = ("mqtts", url.dropFirst(8)) }
        else { throw .badURL(url, "it must start with mqtt:// or mqtts://") }
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.contains("/"), !rest.contains("?") else { throw .badURL(url, "a broker URL has no path or query") }
        var user: String?
        if let at = rest.lastIndex(of: "@") {
            let who = rest[..<at]
            guard !who.isEmpty, !who.contains(":") else {
                throw .badURL(url, "give the user before @ and the password in a file (--password-file), never in the URL")
            }
            user = String(who)
            rest = rest[rest.index(after: at)...]
        }
        var host = rest
        var port: Int32 = scheme == "mqtts" ? 8883 : 1883
        if rest.hasPrefix("[") {
            // An IPv6 literal: [::1]:1883.
            guard let close = rest.firstIndex(of: "]") else { throw .badURL(url, "an IPv6 address needs its closing ]") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let p = Int32(after.dropFirst()), (1...65535).contains(p) else { throw .badURL(url, "the port must be 1 to 65535") }
                port = p
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            guard let p = Int32(rest[rest.index(after: colon)...]), (1...65535).contains(p) else { throw .badURL(url, "the port must be 1 to 65535") }
            port = p
        }
        guard !host.isEmpty else { throw .badURL(url, "no host") }
        self.init(tls: scheme == "mqtts", host: String(host), port: port, user: user)
    }

    public var description: String {
        let h = host.contains(":") ? "[\(host)]" : host
        return "\(tls ? "mqtts" : "mqtt")://\(user.map { "\($0)@" } ?? "")\(h):\(port)"
    }
}

/// Everything the publisher needs to know besides the database.
public struct MQTTSettings: Sendable {
    public var broker: BrokerAddress
    /// A file whose first line is the password (never on the command line, where `ps` shows it).
    public var passwordFile: String?
    /// nil: `quench-NODEID-DATABASEID`, which no other machine or database shares.
    public var clientID: String?
    /// The CA certificate that signed the broker's (mqtts); nil: the system's CAs.
    public var caFile: String?
    /// A client certificate and its key, for a broker that asks for one (mqtts).
    public var certFile: String?
    public var keyFile: String?
    /// Quench's own topics: `<prefix>/<node id>/…`.
    public var topicPrefix = "quench"
    /// Home Assistant's discovery prefix.
    public var discoveryPrefix = "homeassistant"
    /// One discovery config per entity, or one per device (`mqtt.discovery`).
    public var discoveryForm = DiscoveryForm.components
    /// This gateway's name as Home Assistant shows it (the device's name); changing it changes no id.
    public var node: String
    /// This gateway's id in topics and unique ids (letters, digits, `_` and `-`): `mqtt.node_id`,
    /// else from /etc/machine-id (unique per machine, the same after a reboot); nil: the
    /// database's own random one (a machine without a machine id).
    public var nodeID: String?
    /// `mqtt.node_id` / `--node-id` as given (nil: from the machine or the database).
    public var configuredNodeID: String?
    /// QoS 1 messages in flight at once: what kill -9 can make a consumer see twice.
    public var window = 20
    /// Seconds between connection attempts, at most (backoff from 1 s).
    public var maximumBackoff = MQTTSettings.defaultMaximumBackoff
    public static let defaultMaximumBackoff = 5.0
    /// How long Home Assistant keeps what `quench mqtt sync` published (it has no
    /// availability of its own): its entities go unavailable once that is stale.
    public var syncFreshness = 7200.0

    public init(broker: BrokerAddress, passwordFile: String? = nil, clientID: String? = nil, caFile: String? = nil, node: String? = nil,
                nodeID: String? = nil, certFile: String? = nil, keyFile: String? = nil, discoveryForm: DiscoveryForm = .components,
                discoveryPrefix: String = "homeassistant", topicPrefix: String = "quench") {
        self.broker = broker
        self.discoveryForm = discoveryForm
        self.discoveryPrefix = discoveryPrefix
        self.topicPrefix = topicPrefix
        self.passwordFile = passwordFile
        self.node = node ?? Self.hostName()
        configuredNodeID = nodeID
        self.nodeID = nodeID ?? NodeID.machine()
        self.clientID = clientID
        self.caFile = caFile
        self.certFile = certFile
        self.keyFile = keyFile
    }

    /// The client id in force: two publishers never share one unless told to.
    public func effectiveClientID(nodeID: String, databaseID: String) -> String {
        clientID ?? Self.defaultClientID(nodeID: nodeID, databaseID: databaseID)
    }

    public static func defaultClientID(nodeID: String, databaseID: String) -> String {
        "quench-\(nodeID)-\(databaseID.prefix(8))"
    }

    /// Refuses a password or CA file another user could have written: they
    /// would know the password, or could vouch for a broker of their own.
    public func checkFiles() throws(MQTTSetupError) {
        for path in [passwordFile, caFile, certFile, keyFile].compactMap({ $0 }) {
            if let problem = FileTrust.check(path) { throw .untrusted(problem) }
        }
        // Said here by name: libmosquitto answers a missing file, or a certificate without its key,
        // with "Invalid function arguments provided."
        if (certFile == nil) != (keyFile == nil) {
            throw .tlsFile(certFile ?? keyFile ?? "", certFile == nil
                ? "a client key needs its certificate (--cert, mqtt.cert_file)" : "a client certificate needs its key (--key, mqtt.key_file)")
        }
        for (path, what) in [(caFile, "CA file"), (certFile, "client certificate"), (keyFile, "client key")] {
            guard let path else { continue }
            switch RegularFile.openForReading(path) {
            case .success(let fd): close(fd)
            case .failure(.notRegular): throw .tlsFile(path, "the \(what) is not a regular file")
            case .failure(.errno(let code)): throw .tlsFile(path, "the \(what) cannot be read: \(String(cString: strerror(code)))")
            }
        }
    }

    /// Why the password (or key) file is too open: other users can read it. A warning, not a
    /// refusal (they cannot change which broker is trusted), said by `run`, `sync` and `doctor`.
    public func readableFileWarnings() -> [String] {
        [passwordFile, keyFile].compactMap { $0 }.compactMap { path in
            var st = stat()
            guard stat(path, &st) == 0, st.st_mode & 0o004 != 0 else { return nil }
            let mode = String(st.st_mode & 0o777, radix: 8)
            return "\(path.shownSafely()) can be read by every user (mode \(mode)): chmod o-r \(path.shownSafely())"
        }
    }

    /// The password file's first line; nil without a file.
    public func password() throws(MQTTSetupError) -> String? {
        try checkFiles()
        guard let path = passwordFile else { return nil }
        switch SecretFile.firstLine(path) {
        case let .success(password): return password
        case let .failure(problem): throw .passwordFile(path, problem.reason)
        }
    }

    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "gateway" }
        let name = String(nulTerminated: buffer)
        return name.isEmpty ? "gateway" : name
    }

    /// Whether `id` will do as a node id: 1 to 64 of `a-z`, `0-9`, `_`, `-`; not `hub`, whose topics
    /// are the hub's (its roster: a gateway retired as `hub` cleared it).
    public static func isValidNodeID(_ id: String) -> Bool {
        id != "hub" && (1...64).contains(id.utf8.count)
            && id.utf8.allSatisfy { (0x61...0x7a).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5f || $0 == 0x2d }
    }

    /// Letters, digits, `_` and `-` only: safe in a topic level and in Home Assistant's ids.
    static func topicSafe(_ s: String) -> String {
        let mapped = String(s.lowercased().map { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") ? $0 : "_" })
        return mapped.isEmpty ? "gateway" : mapped
    }
}

/// Why MQTT could not be set up or used; each case names what and where.
public enum MQTTSetupError: Error, Sendable, CustomStringConvertible {
    case badURL(String, String)
    case passwordFile(String, String)
    /// The password or CA file, or a folder above it, is writable by another user.
    case untrusted(UntrustedFile)
    case noBroker
    /// A TLS file (CA, certificate, key) that is not there, cannot be read, or lacks its pair.
    case tlsFile(String, String)
    case broker(String)
    case store(String)
    /// Another process publishes this database (one at a time: two would send each change twice).
    case busy(ProcessHolder)
    /// Another hub process holds this hub's database (and its session on the broker).
    case hubBusy(ProcessHolder)

    public var description: String {
        switch self {
        case .badURL(let url, let why): "broker URL '\(url.shownSafely())': \(why)"
        case .passwordFile(let path, let why): "password file \(path.shownSafely()): \(why)"
        case .untrusted(let problem): problem.description
        case .noBroker: "no broker: give --broker mqtt://HOST[:PORT], set QUENCH_MQTT, or `broker` under [mqtt] in the config file"
        case .tlsFile(let path, let why): "\(path.shownSafely(limit: 240)): \(why)"
        case .broker(let why): why
        case .store(let why): why
        case .busy(let other):
            "\(other.command) (pid \(other.pid), since \(other.since.iso8601)) publishes this database to MQTT now; "
                + "one publisher at a time (stop it, or let it publish: `quench mqtt status` says what waits)"
        case .hubBusy(let other):
            "\(other.command) (pid \(other.pid), since \(other.since.iso8601)) is this hub now, with its session on the broker; "
                + "one hub process at a time (stop it first: sudo systemctl stop quench-hub)"
        }
    }
}

/// The node id from the machine's id: /etc/machine-id is made once per installation
/// and kept across reboots, so two stock Raspberry Pis (both `raspberrypi`) differ.
/// Not the machine id itself (systemd asks that it stay private): 12 hex digits of
/// a hash of it with Quench's own prefix, as sd_id128_get_machine_app_specific does.
public enum NodeID {
    public static let machineIDFiles = ["/etc/machine-id", "/var/lib/dbus/machine-id"]

    public static func machine(files: [String] = machineIDFiles) -> String? {
        for path in files {
            guard let text = readSmall(path) else { continue }
            let id = text.split(whereSeparator: { $0 == "\n" || $0 == " " }).first.map(String.init) ?? ""
            // 32 hex digits; an empty or "uninitialized" file (an image not yet booted) is no id.
            guard id.utf8.count == 32, id.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else { continue }
            return fromMachineID(id)
        }
        return nil
    }

    /// FNV-1a (64 bits) of `quench-mqtt-node:ID`, 48 bits of it in hex.
    public static func fromMachineID(_ id: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in "quench-mqtt-node:\(id)".utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        let hex = String(hash >> 16, radix: 16)
        return String(repeating: "0", count: max(0, 12 - hex.count)) + hex
    }

    private static func readSmall(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 128)
        let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        return n > 0 ? String(decoding: bytes.prefix(n), as: UTF8.self) : nil
    }
}

#if canImport(Glibc)
import Logging
import MQTT

extension MQTTSettings {
    /// Seconds to wait before the next try to reach the broker after `attempt`
    /// failed tries in a row: 1 s doubling, up to `maximumBackoff`.
    public func backoff(attempt: Int) -> Double {
        min(maximumBackoff, pow(2, Double(min(attempt, 16))) / 2)
    }

    /// Keeps a connection to the broker until `shouldStop`: `connect` when there is
    /// none (after a failure, again with `backoff`), then `turn` after turn; a turn
    /// that fails has lost the connection (`lost` cleans up) and the next connects
    /// again. `waiting` says, in the log line of a failed connection, what is kept meanwhile.
    /// The publisher and the hub run this way.
    public func keepConnected(logger: Logger, shouldStop: () -> Bool, waiting: () -> String? = { nil },
                              isConnected: () -> Bool, connect: () throws(MQTTError) -> Void,
                              turn: () throws(MQTTError) -> Void, lost: () -> Void) {
        var attempt = 0
        var connectedAt = ContinuousClock.now
        while !shouldStop() {
            if !isConnected() {
                do throws(MQTTError) {
                    try connect()
                    connectedAt = .now
                } catch {
                    lost()
                    let delay = backoff(attempt: attempt)
                    attempt += 1
                    var metadata: Logger.Metadata = ["error": "\(error)", "retry_in_s": "\(Int(delay))"]
                    if let waiting = waiting() { metadata["waiting"] = "\(waiting)" }
                    // Declined: reached, and closed for what was heard there (its node online for another database).
                    let declined = if case .declined = error.cause { true } else { false }
                    logger.log(level: RepeatedNotice.worthSaying(occurrence: attempt - 1) ? .warning : .debug,
                               declined ? "not publishing; trying again" : "cannot reach the MQTT broker; retrying", metadata: metadata)
                    Self.sleep(seconds: delay, unless: shouldStop)
                    continue
                }
            }
            do throws(MQTTError) {
                try turn()
            } catch {
                lost()
                guard ContinuousClock.now - connectedAt < .seconds(Self.shortConnectionSeconds) else {
                    attempt = 0
                    logger.warning("lost the MQTT broker; reconnecting", metadata: ["error": "\(error)"])
                    continue
                }
                // Closed right after it was accepted (another client with this client id takes it over,
                // or the broker drops us at once): waited for as after a failed connect. Two publishers
                // given one client id knocked each other off 700 times in 25 s, each time "offline" and
                // "online" to Home Assistant.
                let delay = backoff(attempt: attempt)
                attempt += 1
                logger.log(level: RepeatedNotice.worthSaying(occurrence: attempt - 1) ? .warning : .debug, "lost the MQTT broker right after connecting; reconnecting",
                           metadata: ["error": "\(error)", "retry_in_s": "\(delay)"])
                Self.sleep(seconds: delay, unless: shouldStop)
            }
        }
    }

    /// A connection lost sooner than this after it was made is waited for before the next (seconds).
    static let shortConnectionSeconds = 5.0

    /// Sleeps `seconds`, waking every 50 ms to end early once `shouldStop`.
    public static func sleep(seconds: Double, unless shouldStop: () -> Bool) {
        let end = ContinuousClock.now + .seconds(seconds)
        while !shouldStop(), ContinuousClock.now < end {
            usleep(50_000)
        }
    }

    /// A client of the broker, connected: its credentials and TLS from these settings,
    /// what `prepare` sets before connecting (callbacks, a will), and the broker's
    /// CONNACK received within `seconds` (a refusal thrown in words). The publisher
    /// and the hub connect this way.
    public func connectedClient(clientID: String, cleanSession: Bool, password: String?, within seconds: Double,
                                prepare: (MQTTClient) throws(MQTTError) -> Void) throws(MQTTError) -> MQTTClient {
        let c = try MQTTClient(clientID: clientID, cleanSession: cleanSession)
        if let user = broker.user { try c.setCredentials(user: user, password: password) }
        if broker.tls { try c.setTLS(caFile: caFile, certFile: certFile, keyFile: keyFile) }
        try prepare(c)
        var connack: Int32?
        let onConnect = c.onConnect
        c.onConnect = { code in
            connack = code
            onConnect?(code)
        }
        let operation = "connect to \(broker)"
        try c.connect(host: broker.host, port: broker.port)
        let end = ContinuousClock.now + .seconds(seconds)
        while connack == nil {
            guard ContinuousClock.now < end else { throw MQTTError(operation, .timeout(seconds: seconds)) }
            try c.loop(timeoutMS: 100)
        }
        if let code = connack, code != 0 { throw MQTTError(operation, .refused(code)) }
        return c
    }
}
#endif

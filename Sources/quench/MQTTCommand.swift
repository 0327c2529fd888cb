#if os(Linux)
import ArgumentParser
import Glibc
import Logging
import QuenchConfig
import QuenchComposition
import QuenchGateway
import QuenchHistory
import QuenchMQTT
import QuenchServe
import QuenchService
import Synchronization
import Threading

/// Where the broker is and how to log in to it; each over `[mqtt]` in the config file.
struct BrokerOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The broker (default: $QUENCH_MQTT, else `mqtt.broker` in the config file).",
                               valueName: "mqtt://[USER@]HOST[:PORT] | mqtts://…"))
    var broker: String?
    @Option(help: ArgumentHelp("A file whose first line is the broker password (default: $QUENCH_MQTT_PASSWORD_FILE, else `mqtt.password_file`).",
                               valueName: "FILE"))
    var passwordFile: String?
    @Option(help: "The MQTT client id (default: `mqtt.client_id`, else quench-NODEID-DATABASEID).") var clientId: String?
    @Option(help: ArgumentHelp("The CA certificate that signed the broker's, for mqtts:// (default: `mqtt.ca_file`, else the system's CAs).",
                               valueName: "FILE"))
    var caFile: String?
    @Option(help: ArgumentHelp("A client certificate, for a broker that asks for one (default: `mqtt.cert_file`).", valueName: "FILE"))
    var cert: String?
    @Option(help: ArgumentHelp("The client certificate's key (default: `mqtt.key_file`).", valueName: "FILE"))
    var key: String?
    @Option(help: "This gateway's name as Home Assistant shows it (default: `mqtt.node`, else the host name).") var node: String?
    @Option(help: "This gateway's id in topics and unique ids (default: `mqtt.node_id`, else from /etc/machine-id).") var nodeId: String?
    @Option(help: "Home Assistant discovery: components (every version) or device (2024.11 and later) (default: `mqtt.discovery`, else components).")
    var discovery: String?
    @Option(help: "Home Assistant's discovery prefix (default: `mqtt.discovery_prefix`, else homeassistant).") var discoveryPrefix: String?
    @Option(help: "The prefix of Quench's own topics (default: `mqtt.topic_prefix`, else quench).") var topicPrefix: String?
    @Option(help: "Log level: trace, debug, info, notice, warning, error (default: $QUENCH_LOG, else info).") var logLevel: String?

    func validate() throws { try LogLevel.validate(logLevel) }

    var values: ConfigValues {
        var v = ConfigValues()
        (v.mqttBroker, v.mqttPasswordFile, v.mqttClientID, v.mqttCAFile, v.mqttNode) = (broker, passwordFile, clientId, caFile, node)
        (v.mqttNodeID, v.mqttCertFile, v.mqttKeyFile) = (nodeId, cert, key)
        (v.mqttDiscovery, v.mqttDiscoveryPrefix, v.mqttTopicPrefix) = (discovery, discoveryPrefix, topicPrefix)
        return v
    }
}

extension BrokerOptions {
    /// The effective configuration and the broker's settings, their files checked. A
    /// configuration error is exit 78 (EX_CONFIG), as quenchd and quench serve: the
    /// quench-mqtt and quench-hub units do not restart on it (RestartPreventExitStatus=78),
    /// since a wrong file stays wrong.
    func checkedSettings(_ store: StoreOptions) throws -> (Configuration, MQTTSettings) {
        do {
            let configuration = try store.configuration(values)
            let settings = try configuration.mqttSettings()
            try settings.checkFiles()
            return (configuration, settings)
        } catch let error as ConfigError {
            throw configurationFailure(error)
        } catch let error as MQTTSetupError {
            throw configurationFailure(error)
        }
    }
}

/// Runs `body` until SIGINT or SIGTERM (said in the log), or until `seconds` have passed.
func untilStopped(seconds: Double?, logger: Logger, _ body: (_ shouldStop: () -> Bool) -> Void) {
    let stop = Atomic<Bool>(false)
    let signals = StopSignals.handle { signal in
        logger.notice("signal \(signal): stopping")
        stop.store(true, ordering: .relaxed)
    }
    defer { signals.cancel() }
    let end = Deadline(seconds: seconds ?? .infinity)
    body { stop.load(ordering: .relaxed) || end.hasPassed }
}

extension Configuration {
    /// The publisher's settings from the effective configuration.
    func mqttSettings() throws -> MQTTSettings {
        guard let url = mqttBroker.value else { throw MQTTSetupError.noBroker }
        let broker: BrokerAddress
        do { broker = try BrokerAddress(parsing: url) } catch {
            // Where it was given, as every other setting's mistake says (FILE:LINE: key, $QUENCH_MQTT).
            guard mqttBroker.source != .commandLine, case .badURL(_, let why) = error else { throw error }
            throw ConfigError.badValue(mqttBroker.source, key: ConfigKey.mqttBroker.description, expected: "mqtt://HOST[:PORT] or mqtts://…",
                                       got: "'\(url.shownSafely())'", reason: why)
        }
        return MQTTSettings(broker: broker, passwordFile: mqttPasswordFile.value,
                            clientID: mqttClientID.value, caFile: mqttCAFile.value, node: mqttNode.value, nodeID: mqttNodeID.value,
                            certFile: mqttCertFile.value, keyFile: mqttKeyFile.value,
                            discoveryForm: mqttDiscovery.value.flatMap(DiscoveryForm.init(rawValue:)) ?? .components,
                            discoveryPrefix: mqttDiscoveryPrefix.value ?? "homeassistant", topicPrefix: mqttTopicPrefix.value ?? "quench")
    }
}

struct MQTTCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mqtt", abstract: "Publish the history to an MQTT broker, with Home Assistant discovery.",
        discussion: """
            Every change to the history (a sip stored, an add, an undo) enters an outbox in the same \
            transaction; the publisher sends it with QoS 1 and deletes it only once the broker acknowledged it, \
            so a broker that is down loses nothing. Topics and payloads: docs/mqtt.md.
            """,
        subcommands: [Run.self, Sync.self, Retire.self, Status.self], defaultSubcommand: Status.self)

    struct Run: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Publish as changes come, until stopped (the quench-mqtt service).")
        @OptionGroup var store: StoreOptions
        @OptionGroup var mqtt: BrokerOptions
        @Option(help: "Stop after this many seconds (default: until a signal); exits 1 if the broker was never reached.", transform: parseSeconds) var seconds: Double?

        func run() throws {
            let (configuration, settings) = try mqtt.checkedSettings(store)
            let logger = LiveLogging.bootstrap(level: mqtt.logLevel ?? configuration.logLevel.value.rawValue)
            let publisher = try MQTTPublisher(settings: settings, environment: HistoryEnvironment.process(configuration),
                                              logger: logger, announcesAvailability: true)
            untilStopped(seconds: seconds, logger: logger) { publisher.run(shouldStop: $0) }
            // A bounded run that never reached the broker did nothing it was run for: exit 0 said it had (a trial).
            if let seconds, publisher.report.connections == 0 {
                FileHandleStderr.write("quench: error: never reached the MQTT broker \(settings.broker) in \(seconds.compactDescription) s; "
                                       + "every change stays in the outbox\n")
                throw ExitCode(1)
            }
        }
    }

    /// What a command that connects once and exits takes (`sync`, `retire`), and its publisher:
    /// warnings only, unless asked; no availability kept on the broker (nothing stays to say `offline`).
    struct OnceOptions: ParsableArguments {
        @OptionGroup var store: StoreOptions
        @OptionGroup var mqtt: BrokerOptions
        @Option(help: "Give up after this many seconds.", transform: parseSeconds) var timeout: Double = 30

        func publisher() throws -> (MQTTPublisher, MQTTSettings) {
            let configuration = try store.configuration(mqtt.values)
            let logger = LiveLogging.bootstrap(level: mqtt.logLevel ?? configuration.logLevel(otherwise: .warning).rawValue)
            let settings = try configuration.mqttSettings()
            let publisher = try MQTTPublisher(settings: settings, environment: HistoryEnvironment.process(configuration), logger: logger,
                                              announcesAvailability: false)
            return (publisher, settings)
        }
    }

    struct Sync: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Publish what is waiting once and exit: 0 when the broker acknowledged all of it, 1 if not (it stays for the next time).")
        @OptionGroup var once: OnceOptions

        func run() throws {
            let (publisher, settings) = try once.publisher()
            let r = try publisher.sync(timeout: once.timeout)
            if once.store.json {
                print(History.json(r))
            } else {
                print("published \(r.published) change\(r.published == 1 ? "" : "s") to \(settings.broker) (\(r.acknowledged) acknowledged) "
                      + "and \(r.statesPublished) state\(r.statesPublished == 1 ? "" : "s"); \(r.pending) waiting"
                      + (r.dropped > 0 ? "; \(r.dropped) dropped earlier by the full outbox" : ""))
            }
        }
    }

    struct Retire: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Take this gateway off the broker: clear its retained states, claims and Home Assistant entities.",
            discussion: """
                For a gateway being retired, or before its node id changes: an empty retained message on \
                each retained topic it holds on the broker (under quench/NODE/, and the discovery configs it \
                announced), so Home Assistant drops its entities and the other gateways its claims. The \
                history is untouched; a later `quench mqtt run` or `sync` announces everything again. Stop the \
                quench-mqtt service first (one publisher at a time).
                """)
        @OptionGroup var once: OnceOptions

        func run() throws {
            let (publisher, settings) = try once.publisher()
            // Without a node id, every node this database holds on the broker: a `sync --node-id nodex` before left nodex's.
            let (cleared, nodes, left) = try publisher.retire(timeout: once.timeout, everyNodeOwned: settings.configuredNodeID == nil)
            if once.store.json {
                print(History.json(["cleared": cleared, "left": left]))
            } else {
                print("cleared \(cleared.count) retained topic\(cleared.count == 1 ? "" : "s")"
                      + (nodes.isEmpty ? "" : " of node\(nodes.count == 1 ? "" : "s") \(nodes.joined(separator: ", "))") + " on \(settings.broker)"
                      + (left.isEmpty ? "" : "; left node\(left.count == 1 ? "" : "s") \(left.joined(separator: ", ")), another history's or publishing now "
                         + "(--node-id NODE retires one by name)"))
            }
        }
    }

    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "What waits in the outbox, this gateway's ids, who publishes.")
        @OptionGroup var store: StoreOptions
        @OptionGroup var mqtt: BrokerOptions

        func run() throws {
            let configuration = try store.configuration(mqtt.values)
            let from = configuration.mqttNodeID.source
            let s = try MQTTStatus.read(store: try store.environment().openIntakeStore(creating: false), nodeID: configuration.mqttNodeID.value,
                                        nodeIDFrom: from == .commandLine ? "--node-id" : "mqtt.node_id, \(from)", clientID: configuration.mqttClientID.value)
            print(store.json ? History.json(s) : s.text)
        }
    }
}
#endif

#if os(Linux)
import ArgumentParser
import QuenchHistory
import QuenchHub
import QuenchService
import QuenchStore

struct HubCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hub", abstract: "Keep one history from every gateway on the MQTT broker.",
        discussion: """
            The hub subscribes to every gateway's changes (quench/+/event) in a persistent session and applies \
            each once, by the event's identity, to its own database; its page, CLI and Home Assistant then read \
            that history as a gateway's. A gap in a gateway's changes, a gateway it has not heard, and every start \
            make it ask that gateway for what it may lack. docs/hub.md.
            """,
        subcommands: [Run.self, Status.self, Assign.self, Roster.self], defaultSubcommand: Status.self)

    struct Run: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Apply the gateways' changes as they come, until stopped (the quench-hub service).")
        @OptionGroup var store: StoreOptions
        @OptionGroup var mqtt: BrokerOptions
        @Option(help: "Stop after this many seconds (default: until a signal).") var seconds: Double?

        func run() throws {
            let (configuration, settings) = try mqtt.checkedSettings(store)
            let logger = LiveLogging.bootstrap(level: mqtt.logLevel ?? configuration.logLevel.value.rawValue)
            let hub = try Hub(settings: settings, databasePath: try store.environment().databasePath, logger: logger)
            untilStopped(seconds: seconds, logger: logger) { hub.run(shouldStop: $0) }
        }
    }

    struct Assign: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Say at the hub who drinks from a bottle or scale; every gateway that has it paired gives it to them.",
            discussion: "The person is someone at the hub (quench person add NAME there). The gateways add them by name if they lack them.")
        @Argument(help: "The device's address.") var address: String
        @Flag(help: "Take the device off the roster: each gateway keeps it with whoever has it there.") var nobody = false
        @OptionGroup var store: StoreOptions
        @OptionGroup var who: PersonOption
        func run() throws {
            emit(try History.assignAtHub(store.environment(who), address: address, nobody: nobody, json: store.json))
        }
    }

    struct Roster: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Who drinks from which bottle, as the hub tells the gateways.")
        @OptionGroup var store: StoreOptions
        func run() throws {
            emit(try History.roster(store.environment(), json: store.json))
        }
    }

    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The gateways this hub has heard: what it has of each, and when it last heard it.")
        @OptionGroup var store: StoreOptions

        func run() throws {
            let gateways = try store.environment().openIntakeStore(creating: false).hubGateways()
            if store.json {
                print(History.json(gateways))
                return
            }
            guard !gateways.isEmpty else {
                print("no gateway heard yet (quench hub run listens for them)")
                return
            }
            for g in gateways {
                let missing = g.missing ? "; changes \(g.throughSeq + 1)–\(g.highestSeq) asked for" : ""
                print("\(g.node) (database \(g.databaseID)): \(g.applied) changes applied, all through \(g.throughSeq)\(missing); last heard \(g.seenAt.iso8601)")
            }
        }
    }
}
#endif

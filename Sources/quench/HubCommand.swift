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
        subcommands: [Run.self, Status.self, Assign.self, Roster.self, Retire.self], defaultSubcommand: Status.self)

    struct Run: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Apply the gateways' changes as they come, until stopped (the quench-hub service).")
        @OptionGroup var store: StoreOptions
        @OptionGroup var mqtt: BrokerOptions
        @Option(help: "Stop after this many seconds (default: until a signal).", transform: parseSeconds) var seconds: Double?

        func run() throws {
            let (configuration, settings) = try mqtt.checkedSettings(store)
            let logger = LiveLogging.bootstrap(level: mqtt.logLevel ?? configuration.logLevel.value.rawValue)
            let hub = try Hub(settings: settings, databasePath: try store.environment().databasePath, logger: logger)
            try hub.claim()
            defer { hub.release() }
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
        func validate() throws {
            if nobody, who.person != nil { throw ValidationError("--nobody takes the device off the roster, --person gives it to someone: one of them") }
        }
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

    struct Retire: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Take this hub off the broker: end its session there and clear its roster.",
            discussion: """
                For a hub being retired or moved to another machine: the broker drops the hub's persistent \
                session (and stops keeping the gateways' changes for it), and the roster it keeps for the \
                gateways is cleared when it is this hub's, so they stop giving devices to people by it; they \
                keep who has each device now. Another hub's roster stays. The history is untouched. Stop the \
                quench-hub service first: it would connect again.
                """)
        @OptionGroup var store: StoreOptions
        @OptionGroup var mqtt: BrokerOptions
        @Option(help: "Give up after this many seconds.", transform: parseSeconds) var timeout: Double = 15

        func run() throws {
            let (configuration, settings) = try mqtt.checkedSettings(store)
            // Warnings only, unless asked (as `quench mqtt retire`): the answer is on stdout.
            let logger = LiveLogging.bootstrap(level: mqtt.logLevel ?? configuration.logLevel(otherwise: .warning).rawValue)
            let hub = try Hub(settings: settings, databasePath: try store.environment().databasePath, logger: logger)
            try hub.claim()
            defer { hub.release() }
            let retired = try hub.retire(timeout: timeout)
            if store.json {
                print(History.json(retired))
            } else if retired.rosterCleared {
                print("hub \(hub.clientID) retired from \(settings.broker): session ended, roster cleared")
            } else if let other = retired.rosterOfAnotherHub {
                print("hub \(hub.clientID) retired from \(settings.broker): session ended; the roster there is another hub's (database \(other)), left as it is")
            } else {
                print("hub \(hub.clientID) retired from \(settings.broker): session ended; no roster was kept there")
            }
        }
    }

    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The gateways this hub has heard: what it has of each, and when it last heard it.")
        @OptionGroup var store: StoreOptions

        func run() throws {
            let intake = try store.environment().openIntakeStore(creating: false)
            let gateways = try intake.hubGateways()
            if store.json {
                print(History.json(gateways))
                return
            }
            guard !gateways.isEmpty else {
                print("no gateway heard yet (quench hub run listens for them)")
                return
            }
            let current = Set(HubGateway.current(gateways).map(\.databaseID))
            // What it lacks is asked for while its publisher is online; said so of one that is not (it read "asked for").
            let offline = Set(try intake.offlineGateways().map(\.node))
            for g in gateways {
                let state: String
                if !current.contains(g.databaseID) {
                    state = "another database is at this node now, and this one is not asked"
                } else {
                    let asked = offline.contains(g.node) ? "to be asked for when it is online again" : "asked for"
                    let gap = g.highestSeq > g.throughSeq ? "; changes \(g.throughSeq + 1)–\(g.highestSeq) \(asked)" : ""
                    state = (g.wholeHistory ? "none missing up to its change \(g.throughSeq)"
                        : "its whole history \(asked) (what it held before its changes came here is in none of them)") + gap
                }
                print("\(g.node) (database \(g.databaseID)): \(g.applied) changes applied; \(state); last heard \(g.seenAt.iso8601)")
            }
            if let problem = try History.hubProblemText(store.environment()) { print(problem) }
        }
    }
}
#endif

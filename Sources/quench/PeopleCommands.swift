import ArgumentParser
import QuenchServe
import QuenchHistory
import QuenchNotify
import QuenchConfig
import QuenchComposition

/// `--person`, for the commands that read or write one person's history.
struct PersonOption: ParsableArguments {
    @Option(help: ArgumentHelp("Whose history (default: $QUENCH_PERSON, else `person` in the config file; "
                               + "needed when several people share the database).", valueName: "NAME"))
    var person: String?
}

struct PeopleCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "people", abstract: "Who shares the history: each person's goal today, units and devices.")
    @OptionGroup var options: StoreOptions

    func run() throws {
        emit(try History.people(options.environment(), json: options.json))
    }
}

struct CarerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "carer",
        abstract: "Everyone, the one longest without a drink (in their waking hours) first; who is over their threshold (`quench person alert`).",
        subcommands: [Show.self, Acknowledge.self], defaultSubcommand: Show.self)

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Everyone, the one longest without a drink first; with --notify, the alerts due.")
        @OptionGroup var options: StoreOptions
        @Flag(help: ArgumentHelp("Send an alert about each person over their threshold whose time without a drink has none yet, "
                                 + "and again each time the threshold passes once more while nobody has acknowledged it "
                                 + "(a line on stdout, and a push when [notify] url is set; the quench-remind timer runs it)."))
        var notify = false

        func run() throws {
            guard notify else { return emit(try History.carer(options.environment(), json: options.json)) }
            let notifier: Notifier?
            let deliveries: [History.CarerDelivery]
            let environment: HistoryEnvironment
            let urlFrom: String
            do {
                let configuration = try options.configuration(ConfigValues())
                urlFrom = configuration.notifyURL.source.description
                // Checked before anything is due, as `quench remind --notify` does.
                notifier = try configuration.notifierSettings.map { settings throws(NotifyError) in try Notifier(settings) }
                environment = HistoryEnvironment.process(configuration)
                deliveries = try History.deliverCarerAlerts(environment)
            } catch let error as ConfigError {
                throw configurationFailure(error)
            } catch let error as NotifyError {
                throw configurationFailure(error)
            }
            var failed = false
            for delivery in deliveries {
                emit("carer's alert: " + delivery.message)
                guard let notifier else { continue }
                let push = PushMessage.carerAlert(person: delivery.person, message: delivery.message, fields: delivery.fields)
                if !notifier.deliver(push, what: "carer's alert", urlFrom: urlFrom) {
                    failed = true
                    // Each put back by itself: one that cannot be (the database busy) must not keep the others' pushes from going.
                    let who = delivery.person.shownSafely(limit: 40)
                    do {
                        let putBack = try History.carerAlertNotDelivered(environment, delivery)
                        FileHandleStderr.write("quench: " + (putBack ? "the alert about \(who) is not counted as sent: the next run sends it again\n"
                                                              : "the alert about \(who) was acknowledged or sent meanwhile\n"))
                    } catch {
                        FileHandleStderr.write("quench: error: the alert about \(who) could not be put back to be sent again: \(commandLineMessage(for: error))\n")
                    }
                }
            }
            if failed { throw ExitCode(1) }
        }
    }

    struct Acknowledge: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ack", abstract: "Say you have seen the alert about someone: it is shown as acknowledged, and not sent again.")
        @OptionGroup var options: StoreOptions
        @Argument(help: "Who the alert is about.") var name: String

        func run() throws {
            emit(try History.acknowledgeCarerAlert(options.environment(), name: name, json: options.json))
        }
    }
}

struct PersonCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "person", abstract: "Add, rename or remove someone in the household; their units; a carer's threshold.",
        subcommands: [Add.self, Rename.self, Units.self, DayStart.self, Alert.self, Remove.self])

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add someone, with their own goal and units.")
        // Not StoreOptions: `--units` here is theirs, not the display's.
        @Option(name: .long, help: databaseHelp) var db: String?
        @Argument(help: "Their name.") var name: String
        @Option(help: "Their daily goal from today: 2000ml, 2l, 68oz (default 2,000 mL until they set one).") var goal: String?
        @Option(help: "Their units, ml or oz (default: the household's setting).") var units: String?
        @Flag(help: "Print JSON instead of text.") var json = false

        func run() throws {
            emit(try History.addPerson(HistoryEnvironment.process(database: db, units: nil), name: name, goal: goal, units: units, json: json))
        }
    }

    struct Rename: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Rename someone; their history, goals, reminders and devices follow.")
        @OptionGroup var options: StoreOptions
        @Argument(help: "Their name now.") var old: String
        @Argument(help: "Their new name.") var new: String

        func run() throws {
            emit(try History.renamePerson(options.environment(), from: old, to: new, json: options.json))
        }
    }

    struct Units: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Set someone's units: ml, oz, or household (the setting's).")
        @Option(name: .long, help: databaseHelp) var db: String?
        @Argument(help: "Their name.") var name: String
        @Argument(help: "ml, oz or household.") var units: String
        @Flag(help: "Print JSON instead of text.") var json = false

        func run() throws {
            emit(try History.setPersonUnits(HistoryEnvironment.process(database: db, units: nil), name: name, units: units, json: json))
        }
    }

    struct DayStart: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "day-start",
            abstract: "Set the hour someone's days begin (a night shift's, while they sleep), or household (the setting's).")
        @OptionGroup var options: StoreOptions
        @Argument(help: "Their name.") var name: String
        @Argument(help: "An hour, 0 to 23 (14 or 14:00), or household.") var hour: String

        func run() throws {
            emit(try History.setPersonDayStart(options.environment(), name: name, hour: hour, json: options.json))
        }
    }

    struct Alert: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set how long someone may go without a drink in their waking hours before `quench carer` and the page's carer view flag them.")
        @OptionGroup var options: StoreOptions
        @Argument(help: "Their name.") var name: String
        @Argument(help: "A time (90min, 3h; 15 min to 24 h), or off.") var after: String

        func run() throws {
            emit(try History.setPersonAlert(options.environment(), name: name, after: after, json: options.json))
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove someone: refused while they have events or devices, unless --move-to says who gets them.")
        @OptionGroup var options: StoreOptions
        @Argument(help: "Their name.") var name: String
        @Option(name: .customLong("move-to"), help: ArgumentHelp("Give their events and devices to this person first.", valueName: "NAME"))
        var moveTo: String?

        func run() throws {
            emit(try History.removePerson(options.environment(), name: name, moveTo: moveTo, json: options.json))
        }
    }
}

import ArgumentParser
import QuenchConfig
import QuenchComposition
import QuenchHistory
import QuenchNotify
import QuenchServe

struct RemindCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remind", abstract: "Reminders to drink: where you stand against the pace, and when the next would come.",
        discussion: """
            The pace is the day's goal spread over the waking window (default 08:00-22:00). In pace mode a \
            reminder comes when intake is below the pace by more than the slack, the last drink is at least \
            --after ago and the last reminder at least --every ago; never outside the window, never once the \
            goal is met. `quench remind --notify` delivers one when due (the quench-remind timer runs it).
            """,
        subcommands: [Show.self, Set.self, Snooze.self], defaultSubcommand: Show.self)

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Where you stand, and when the next reminder would come and why.")
        @OptionGroup var options: StoreOptions
        @OptionGroup var who: PersonOption
        @Flag(help: "Deliver a reminder if one is due now: a line on stdout, and --command if given; without --person, to each person it is due for.") var notify = false
        @Option(help: ArgumentHelp("With --notify: a program to run (no shell) with QUENCH_INTAKE_ML, QUENCH_GOAL_ML, QUENCH_PACE_ML, "
                                   + "QUENCH_BEHIND_ML, QUENCH_REASON and QUENCH_PERSON set; stopped after 10 s "
                                   + "(default: `command` in [reminders] of the config file).", valueName: "PATH"))
        var command: String?

        func validate() throws {
            if command != nil && !notify { throw ValidationError("--command goes with --notify") }
        }

        func run() throws {
            guard notify else { return emit(try History.remind(options.environment(who), json: options.json)) }
            var values = ConfigValues(reminderCommand: command)
            values.person = who.person
            // 78 (EX_CONFIG) for the configuration and the command it names, as the other services.
            let deliveries: [History.Delivery]
            let urlFrom: String
            let notifier: Notifier?
            do {
                let configuration = try options.configuration(values)
                urlFrom = configuration.notifyURL.source.description
                // Checked before anything is due, as the command is: a wrong [notify] is said at every run.
                notifier = try configuration.notifierSettings.map { settings throws(NotifyError) in try Notifier(settings) }
                deliveries = try History.deliverReminders(HistoryEnvironment.process(configuration), command: configuration.reminderCommand.value)
            } catch let error as ConfigError {
                throw configurationFailure(error)
            } catch let error as NotifyError {
                throw configurationFailure(error)
            } catch let error as HistoryError {
                if case .untrustedFile = error { throw configurationFailure(error) }
                throw error
            }
            var failed = false
            for delivery in deliveries {
                emit(delivery.text)
                if let problem = delivery.hookProblem {
                    FileHandleStderr.write("quench: error: reminder command: \(problem)\n")
                    failed = true
                }
                guard let notifier, delivery.delivered else { continue }
                let push = PushMessage.reminder(message: delivery.message, fields: delivery.fields,
                                                 person: deliveries.count > 1 ? delivery.person : nil)
                if !notifier.deliver(push, what: "reminder", urlFrom: urlFrom) { failed = true }
            }
            if failed { throw ExitCode(1) }
        }
    }

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Change how reminders work; what is not given stays.")
        @OptionGroup var options: StoreOptions
        @OptionGroup var who: PersonOption
        @Option(help: "pace (when behind), hourly (every --every in the window) or off.") var mode: String?
        @Option(help: ArgumentHelp("The waking window: 07:00-22:30, or whole hours, 7-23; 22-6 ends the next morning (a night shift).", valueName: "HH:MM-HH:MM")) var window: String?
        @Option(help: "Only when the last drink is at least this long ago: 60min, 1.5h.") var after: String?
        @Option(help: "At most this often: 60min, 2h.") var every: String?
        @Option(help: "Behind means below the pace by more than this: 150ml, 5oz.") var slack: String?

        func run() throws {
            emit(try History.setReminders(options.environment(who), mode: mode, window: window, after: after, every: every,
                                          slack: slack, json: options.json))
        }
    }

    struct Snooze: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "No reminder for a while: 30min, 2h; `off` ends a snooze.")
        @OptionGroup var options: StoreOptions
        @OptionGroup var who: PersonOption
        @Argument(help: "How long, with its unit: 30min, 2h; or off.") var duration: String

        func run() throws {
            emit(try History.snoozeReminders(options.environment(who), duration: duration, json: options.json))
        }
    }
}

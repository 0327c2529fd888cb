import ArgumentParser
import QuenchHistory

struct GoalCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "goal", abstract: "Set, show or work out the daily goal.",
        subcommands: [Show.self, Set.self, Recommend.self], defaultSubcommand: Show.self)

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Set the daily goal, e.g. 2000ml, 2l or 68oz.")
        @OptionGroup var options: StoreOptions
        @OptionGroup var who: PersonOption
        @Argument(help: "The goal: 2000ml, 2l, 68oz.") var amount: String
        @Option(help: "In force from this day (YYYY-MM-DD; default today).") var from: String?

        func run() throws {
            emit(try History.setGoal(options.environment(who), amount: amount, from: from, json: options.json))
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show the daily goal and earlier ones.")
        @OptionGroup var options: StoreOptions
        @OptionGroup var who: PersonOption

        func run() throws {
            emit(try History.showGoal(options.environment(who), json: options.json))
        }
    }

    struct Recommend: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Recommend a goal: 35 mL per kg of body weight + 350 mL per 30 min of exercise.")
        @OptionGroup var options: StoreOptions
        @OptionGroup var who: PersonOption
        @Option(help: "Body weight: 70kg, 154lb.") var weight: String
        @Option(help: "Exercise a day: 30min, 1h.") var exercise: String?
        @Flag(help: "Save it as the daily goal from today.") var save = false

        func run() throws {
            emit(try History.recommendGoal(options.environment(who), weight: weight, exercise: exercise, save: save, json: options.json))
        }
    }
}

import ArgumentParser
import QuenchHistory

struct Edit: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Mend a drink: its amount, its time, its note, who drank it, or whether it was poured away (the ids are in `quench log`).")
    @OptionGroup var options: StoreOptions
    @OptionGroup var who: PersonOption
    @Argument(help: "The event's id (quench log shows them).") var id: Int64
    @Option(help: "The amount it really was: 250ml, 0.3l, 8oz (a bare number: your units).") var amount: String?
    @Option(help: "When it was really drunk: HH:MM, 'YYYY-MM-DD HH:MM' or ISO 8601.") var at: String?
    @Option(help: "A note, e.g. 'tea' ('' removes it).") var note: String?
    @Option(help: "Who really drank it (a name in `quench people`): the drink becomes theirs.") var to: String?
    @Option(help: "What it really was: pour (poured away, not drunk) or sip (drunk: a sensor took it for a pour).") var kind: String?

    func run() throws {
        emit(try History.edit(options.environment(who), id: id, amount: amount, at: at, note: note, to: to, kind: kind, json: options.json))
    }
}

import ArgumentParser
import QuenchCore
import QuenchGateway
import QuenchHistory

struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Simulate a day of drinking and run it through the whole pipeline.")

    @Option(help: "Hours of the simulated day.") var hours: Double = 16
    @Option(help: "Seed of the simulation.") var seed: UInt64 = 7
    @Option(help: "The database file (default: $QUENCH_DB, else $XDG_DATA_HOME/quench/quench.sqlite).") var db: String?
    @Flag(help: "Do not write the day into the intake store.") var noStore = false

    func run() throws {
        try runReporting {
            let started = DemoClock.dayEndingNow(hours: hours)
            let day = Demo.simulateDay(hours: hours, seed: seed, started: started)
            let output = StandardOutput()
            output.write("Simulated \(TraceWriter.fixed(hours, places: 0)) h of a bottle on a kitchen scale (seed \(seed)).\n\n")
            output.write(EventFormat.tableHeader + "\n")
            for event in day.events { output.write(EventFormat.tableRow(event, started: day.header.started) + "\n") }
            output.write("\n" + EventFormat.summary(day.summary) + "\n")
            if !noStore {
                let environment = try HistoryEnvironment.process(database: db, units: nil)
                let store = try environment.openStore(creating: true)
                let result = try PipelineStore.ingest(
                    day.events, header: day.header, started: nil, device: "demo-bottle", source: "demo", into: store)
                output.write("stored in \(environment.databasePath): \(result.inserted) new events, \(result.duplicates) already there\n")
                output.write("try: quench today, quench log, quench stats --week, quench calendar\n")
            }
            output.flush()
        }
    }
}

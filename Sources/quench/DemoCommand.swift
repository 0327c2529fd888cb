import ArgumentParser
import QuenchCore
import QuenchComposition
import QuenchGateway
import QuenchHistory
import QuenchStore
import Foundation

struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Simulate a day of drinking and run it through the whole pipeline.")

    @Option(help: "Hours of the simulated day.") var hours: Double = 16
    @Option(help: "Seed of the simulation.") var seed: UInt64 = 7
    @Option(help: "The database file (default: the demo's own, $XDG_DATA_HOME/quench/demo.sqlite, made anew each run).") var db: String?
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
                // The simulated day goes into a database of its own, never the person's history:
                // no total, streak, export or publisher can then count it, without each of them
                // having to filter. Made anew each run, so two demos never add up.
                let variables = ProcessInfo.processInfo.environment
                let path = db ?? StoreLocation.demoPath(environment: variables)
                if db == nil {
                    for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
                }
                let environment = try HistoryEnvironment.process(database: path, units: nil)
                let store = try environment.openStore(creating: true)
                let result = try PipelineStore.ingest(
                    day.events, header: day.header, started: nil, device: "demo-bottle", source: "demo", into: store).result
                let own = db == nil ? " (the demo's own database; your history is untouched)" : ""
                output.write("stored in \(path)\(own): \(result.inserted) new events, \(result.duplicates) already there\n")
                let flag = " --db " + (path.contains(" ") ? "'\(path)'" : path)
                output.write("try: quench today\(flag)\n     quench log\(flag)\n     quench calendar\(flag)\n")
            }
            output.flush()
        }
    }
}

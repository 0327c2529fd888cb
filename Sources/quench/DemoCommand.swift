import ArgumentParser
import QuenchCore
import QuenchGateway

struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Simulate a day of drinking and run it through the whole pipeline.")

    @Option(help: "Hours of the simulated day.") var hours: Double = 16
    @Option(help: "Seed of the simulation.") var seed: UInt64 = 7

    func run() throws {
        try runReporting {
            let started = DemoClock.dayEndingNow(hours: hours)
            let day = Demo.simulateDay(hours: hours, seed: seed, started: started)
            let output = StandardOutput()
            output.write("Simulated \(TraceWriter.fixed(hours, places: 0)) h of a bottle on a kitchen scale (seed \(seed)).\n\n")
            output.write(EventFormat.tableHeader + "\n")
            for event in day.events { output.write(EventFormat.tableRow(event, started: day.header.started) + "\n") }
            output.write("\n" + EventFormat.summary(day.summary) + "\n")
            output.flush()
        }
    }
}

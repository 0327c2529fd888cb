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
        abstract: "Simulate a day of drinking and run it through the whole pipeline.",
        discussion: """
            The day runs from 08:00 local time for --hours, on the latest date on which those hours are over \
            (yesterday, or today's history day after midnight), so the whole day is in the demo's database at once. \
            QUENCH_NOW (ISO 8601 with a zone) stands in for the clock, as for the history commands.
            """)

    @Option(help: "Hours of the simulated day, from 08:00 (at most 20: until 04:00, when the next day starts).") var hours: Double = 16
    @Option(help: "Seed of the simulation.") var seed: UInt64 = 7
    @Option(help: "The database file (default: the demo's own, $XDG_DATA_HOME/quench/demo.sqlite, made anew each run).") var db: String?
    @Flag(help: "Do not write the day into the intake store.") var noStore = false
    @Flag(help: "Print one JSON document: the events (as `replay --json`), the summary and where they were stored.") var json = false

    func validate() throws {
        guard hours > 0, hours <= 20 else { throw ValidationError("--hours must be more than 0 and at most 20") }
    }

    func run() throws {
        try runReporting {
            let variables = ProcessInfo.processInfo.environment
            let calendar = try DemoDay.calendar(environment: variables)
            let started = DemoDay.start(hours: hours, calendar: calendar, now: try HistoryEnvironment.clock(variables))
            let day = Demo.simulateDay(hours: hours, seed: seed, started: started)
            let output = StandardOutput()
            if !json {
                // Whole hours as before (16 h); a part of one as the summary says it (30 min), not rounded to 1 h.
                let span = hours == hours.rounded() ? "\(Int(hours)) h" : EventFormat.duration(hours * 3600)
                output.write("Simulated \(span) of a bottle on a kitchen scale (seed \(seed)), "
                             + "\(DemoDay.longDate(started, calendar)) from 08:00 (\(calendar.timeZone.identifier)).\n\n")
                output.write(EventFormat.tableHeader + "\n")
                for event in day.events {
                    output.write(EventFormat.tableRow(event, started: day.header.started) { DemoDay.wallClock($0, calendar) } + "\n")
                }
                output.write("\n" + EventFormat.summary(day.summary) + "\n")
            }
            var stored: (database: String, inserted: Int, duplicates: Int)?
            if !noStore {
                // The simulated day goes into a database of its own, never the person's history:
                // no total, streak, export or publisher can then count it, without each of them
                // having to filter. Made anew each run, so two demos never add up.
                let path = db ?? StoreLocation.demoPath(environment: variables)
                if db == nil {
                    for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
                }
                let environment = try HistoryEnvironment.process(database: path, units: nil)
                let store = try environment.openStore(creating: true)
                let result = try PipelineStore.ingest(
                    day.events, header: day.header, started: nil, device: "demo-bottle", source: "demo", now: environment.now, into: store).result
                stored = (path, result.inserted, result.duplicates)
                if !json {
                    let own = db == nil ? " (the demo's own database; your history is untouched)" : ""
                    output.write("stored in \(path)\(own): \(result.inserted) new events, \(result.duplicates) already there\n")
                    let flag = " --db " + (path.contains(" ") ? "'\(path)'" : path)
                    output.write("try: quench today --date \(calendar.day(of: started))\(flag)\n     quench stats --days 2\(flag)\n     quench log\(flag)\n     quench calendar\(flag)\n")
                }
            }
            if json { output.write(day.json(seed: seed, hours: hours, stored: stored) + "\n") }
            output.flush()
        }
    }
}

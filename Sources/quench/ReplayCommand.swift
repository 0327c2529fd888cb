import ArgumentParser
import QuenchCore
import QuenchGateway

struct ReplayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Run a recorded trace through the sip detector.",
        discussion: "FILE is a trace v1 CSV (docs/trace-format.md), or - for standard input."
    )

    @Argument(help: "Trace file, or - for standard input.")
    var file: String

    @Flag(help: "One JSON object a line per event.")
    var json = false

    @Option(help: "Wall-clock start (ISO-8601) for a trace without '# started:'.")
    var started: Timestamp?

    @Flag(help: "Also write the events into the intake store (idempotent).")
    var store = false

    @Option(help: "Device the trace came from, when the header has no '# device:' (for --store).")
    var device: String?

    @Option(help: "The database file (default: $QUENCH_DB, else $XDG_DATA_HOME/quench/quench.sqlite).")
    var db: String?

    @OptionGroup var calibration: CalibrationOptions

    func validate() throws {
        if let curve = calibration.levelCurve, curve.points.count < 2 { throw ValidationError("bad --level-curve") }
    }

    func run() throws {
        var options = calibration.replayOptions()
        options.started = started
        try runReporting {
            let output = StandardOutput()
            // Opened before the replay so a bad database fails fast.
            let intakeStore = store ? try HistoryEnvironment.process(database: db, units: nil).openStore(creating: true) : nil
            var found: [DetectedEvent] = []
            var started: Timestamp?
            let summary = try Replay.run(TraceSource(argument: file), options: options, onStart: { header, _ in
                started = header.started ?? options.started
                if !json { output.write(EventFormat.tableHeader + "\n") }
            }, onEvent: { event in
                if intakeStore != nil { found.append(event) }
                output.write((json ? EventFormat.jsonLine(event, started: started) : EventFormat.tableRow(event, started: started)) + "\n")
            })
            if !json { output.write("\n" + EventFormat.summary(summary) + "\n") }
            if let intakeStore {
                let result = try PipelineStore.ingest(
                    found, header: summary.header, started: options.started, device: device, source: file, into: intakeStore)
                if !json { output.write("stored: \(result.inserted) new, \(result.duplicates) already there\n") }
            }
            output.flush()
        }
    }
}

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

    @OptionGroup var calibration: CalibrationOptions

    func validate() throws {
        if let curve = calibration.levelCurve, curve.points.count < 2 { throw ValidationError("bad --level-curve") }
    }

    func run() throws {
        var options = calibration.replayOptions()
        options.started = started
        try runReporting {
            let output = StandardOutput()
            var started: Timestamp?
            let summary = try Replay.run(TraceSource(argument: file), options: options, onStart: { header, _ in
                started = header.started ?? options.started
                if !json { output.write(EventFormat.tableHeader + "\n") }
            }, onEvent: { event in
                output.write((json ? EventFormat.jsonLine(event, started: started) : EventFormat.tableRow(event, started: started)) + "\n")
            })
            if !json { output.write("\n" + EventFormat.summary(summary) + "\n") }
            output.flush()
        }
    }
}

import ArgumentParser
import QuenchCore
import QuenchGateway
import QuenchSimulator
import QuenchStore
import Threading

struct SimulateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Write a simulated bottle's readings as a trace, with the ground truth.",
        discussion: "The same seed and preset always give the same trace (its header names both).")

    @Option(help: "Hours to simulate.") var hours: Double = 8
    @Option(help: "Seed of the simulation.") var seed: UInt64 = 1
    /// `day` (the default) is what a trace's `# preset: day` names: the kitchen scale at 10 Hz, a drink every 7 min or so
    /// (it was refused, so a trace could not be made again from its header).
    @Option(help: ArgumentHelp("Sensor and rate preset: day (the default: a kitchen scale at 10 Hz, a drink every 7 min or so), "
                               + SimulationConfiguration.Preset.allCases.map(\.rawValue).joined(separator: ", ") + ".", valueName: "preset"),
            transform: { text in
                guard text == "day" else {
                    guard let preset = SimulationConfiguration.Preset(rawValue: text) else {
                        throw ValidationError("it is none of day, "
                                              + SimulationConfiguration.Preset.allCases.map(\.rawValue).joined(separator: ", "))
                    }
                    return preset
                }
                return nil
            })
    var preset: SimulationConfiguration.Preset??
    @Option(help: "Wall-clock time of t = 0 (ISO-8601).", transform: parseInstant) var started: Timestamp?
    @Option(help: "Trace file to write (- for standard output, as `replay -` reads standard input).") var out: String
    @Option(help: "Ground-truth CSV to write (t_start,t_end,kind,ml).") var truth: String?

    func validate() throws {
        guard hours > 0, hours <= 24 * 366 else { throw ValidationError("--hours must be more than 0 and at most 8784 (a year)") }
        // Where a history could keep its events: a replay with --store refuses any outside.
        if let started, !(IntakeEvent.plausibleTime.contains(started.secondsSince1970)
                          && IntakeEvent.plausibleTime.contains(started.secondsSince1970 + hours * 3600)) {
            throw ValidationError("--started \(started.iso8601): the simulated hours must lie between 1970 and the end of 9999")
        }
        // An empty name said "error: : cannot write: rename: No such file or directory".
        if out.isEmpty { throw ValidationError("--out takes a file name (or - for standard output)") }
        if truth?.isEmpty == true { throw ValidationError("--truth takes a file name") }
        // One file for both: the truth, written last, replaced the trace.
        if truth == "-" { throw ValidationError("--truth takes a file (standard output is the trace's, with --out -)") }
        if let truth, out != "-", OutputDestination.sameFile(out, truth) {
            throw ValidationError("--truth \(truth) is where the trace goes (--out \(out)): give each its own file")
        }
    }

    func run() throws {
        try runReporting {
            let configuration = Simulate.configuration(hours: hours, preset: preset ?? nil, started: started)
            let result = try Simulate.write(configuration: configuration, seed: seed, tracePath: out, truthPath: truth)
            let sips = result.truth[.sip] ?? (0, 0)
            func count(_ n: Int, _ what: String) -> String { "\(n) \(what)\(n == 1 ? "" : "s")" }
            let summary = "wrote \(out == "-" ? "the trace" : out): \(count(result.readings, "reading")); truth: \(count(sips.count, "sip")) "
                + "(\(TraceWriter.fixed(sips.ml, places: 0)) mL), \(count(result.truth[.refill]?.count ?? 0, "refill")), \(count(result.truth[.pour]?.count ?? 0, "pour"))"
            // With the trace on standard output, the summary goes beside it, not into it.
            if out == "-" { FileHandleStderr.write(summary + "\n") } else { print(summary) }
        }
    }
}

struct EvaluateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "evaluate",
        abstract: "Score the detector on a trace against its ground truth.",
        discussion: "A detected event matches a true one of its kind when its time lies between 2 s before the lift and 15 s after the bottle is back (one to one).")

    @Argument(help: "Trace file, or - for standard input.") var trace: String
    @Argument(help: "Ground truth CSV (t_start,t_end,kind,ml), or - for standard input.") var truth: String
    @OptionGroup var calibration: CalibrationOptions
    @Flag(help: "Print the scores as one JSON object.") var json = false

    func validate() throws {
        if trace == "-" && truth == "-" { throw ValidationError("standard input is one file: give the trace or the truth as -, not both") }
    }

    func run() throws {
        try runReporting {
            let source = TraceSource(argument: trace)
            let (report, summary, clockDoubt) = try Evaluate.run(trace: source, truthPath: truth, options: calibration.replayOptions())
            // A header alone scored recall 0 with exit 0 (a developer's trial); `replay` says the same of it.
            guard summary.readings > 0 else {
                FileHandleStderr.write("quench: error: \(source): no readings in it, only its header: nothing to score\n")
                throw ExitCode(1)
            }
            print(json ? Evaluate.json(report) : report.description)
            for doubt in summary.doubts { FileHandleStderr.write("quench: \(source): \(doubt)\n") }
            // Not a doubt but a certainty: scores against a truth on another clock mean nothing, and a script
            // reading the exit status took them (exit 0).
            if let clockDoubt {
                FileHandleStderr.write("quench: error: \(truth.shownSafely()): \(clockDoubt)\n")
                throw ExitCode(1)
            }
        }
    }
}

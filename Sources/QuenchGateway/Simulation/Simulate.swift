#if canImport(Glibc)
import Glibc
#endif
import QuenchCore
import QuenchSimulator
import Threading

/// `quench simulate`: writes a simulated bottle's trace and its ground truth.
public enum Simulate {
    public struct Result: Sendable {
        public var readings = 0
        public var truth: [EventKind: (count: Int, ml: Double)] = [:]
    }

    /// The configuration `quench simulate` and `quench demo` use.
    public static func configuration(hours: Double, preset: SimulationConfiguration.Preset?, started: Timestamp?) -> SimulationConfiguration {
        var c = preset.map { SimulationConfiguration.preset($0, duration: hours * 3600) } ?? .day(hours: hours)
        c.duration = hours * 3600
        c.started = started
        return c
    }

    public static func write(configuration: SimulationConfiguration, seed: UInt64, tracePath: String, truthPath: String?) throws -> Result {
        var bottle = SimulatedBottle(configuration: configuration, seed: seed)
        let trace = try OutputFile(path: tracePath)
        let truthFile = try truthPath.map { path throws(OutputFileError) in try OutputFile(path: path) }
        // Ctrl-C or a SIGTERM in a long simulation: its partial files go with it (they were left behind, 8 MB
        // each; a black-box trial), and the process ends by the signal as it would have.
        let partials = [trace.temporaryPath, truthFile?.temporaryPath].compactMap { $0 }
        let stop = StopSignals.handle { number in
            for path in partials { unlink(path) }
            signal(number, SIG_DFL)
            raise(number)
        }
        defer { stop.cancel() }
        var result = Result()
        try trace.write(bottle.header.formatted())
        try truthFile?.write(TruthWriter.header)
        let decimals = configuration.valueDecimals
        while let reading = bottle.next() {
            try trace.write(TraceWriter.row(reading, decimals: decimals))
            result.readings += 1
            if result.readings % 4096 == 0 { try drain(&bottle, into: truthFile, &result) }
        }
        try drain(&bottle, into: truthFile, &result)
        // Both written before either is put in place: a truth that cannot be written (a full disk) left the trace.
        try trace.finishWriting()
        try truthFile?.finishWriting()
        try trace.putInPlace()
        // The truth's rename refused (its name another user's, in /tmp): the new trace beside an old truth would
        // score against the wrong one; neither is left.
        do { try truthFile?.putInPlace() } catch {
            if trace.temporaryPath != nil { unlink(trace.path) }
            throw error
        }
        return result
    }

    private static func drain(_ bottle: inout SimulatedBottle, into file: OutputFile?, _ result: inout Result) throws {
        for event in bottle.drainTruth() {
            try file?.write(TruthWriter.row(event))
            let sum = result.truth[event.kind] ?? (0, 0)
            result.truth[event.kind] = (sum.count + 1, sum.ml + event.ml)
        }
    }
}

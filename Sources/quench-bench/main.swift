// quench-bench: benchmarks, chosen by the first argument.
//   quench-bench detector [--readings N]
//   quench-bench replay [--readings N] [--quench PATH] [--folder DIR]
//   quench-bench store [--quench PATH] [--db PATH] [--runs N]
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "store":
    do {
        try StoreBenchmark(arguments: Array(arguments.dropFirst())).run()
    } catch {
        FileHandle.standardError.write(Data("store benchmark failed: \(error)\n".utf8))
        exit(1)
    }
case "detector", "replay":
    do {
        let benchmark = try PipelineBenchmark(arguments: Array(arguments.dropFirst()))
        if arguments.first == "detector" { benchmark.runDetector() } else { try benchmark.runReplay() }
    } catch {
        FileHandle.standardError.write(Data("\(arguments[0]) benchmark failed: \(error)\n".utf8))
        exit(1)
    }
default:
    FileHandle.standardError.write(Data("""
        usage: quench-bench detector [--readings N]
               quench-bench replay [--readings N] [--quench PATH] [--folder DIR]
               quench-bench store [--quench PATH] [--db PATH] [--runs N]
          detector  sip detector alone on simulated readings (default 10 M)
          replay    a trace file of N readings through the detector, in process and
                    as a whole `quench replay --json` process with its peak RSS
          store  10-year synthetic database: ingest throughput, and `quench today`,
                 `quench stats --year`, `quench calendar` timed as whole processes

        """.utf8))
    exit(2)
}

// quench-bench: benchmarks, chosen by the first argument.
//   quench-bench store [--quench PATH] [--db PATH] [--runs N]
//   quench-bench gateway [--seconds S]
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
case "gateway":
    do {
        try GatewayBenchmark(arguments: Array(arguments.dropFirst())).run()
    } catch {
        FileHandle.standardError.write(Data("gateway benchmark failed: \(error)\n".utf8))
        exit(1)
    }
default:
    FileHandle.standardError.write(Data("""
        usage: quench-bench store [--quench PATH] [--db PATH] [--runs N]
               quench-bench gateway [--seconds S]
          store  10-year synthetic database: ingest throughput, and `quench today`,
                 `quench stats --year`, `quench calendar` timed as whole processes
          gateway  `quench run`'s pipeline with four simulated devices at 10 Hz:
                 CPU share of one core, peak RSS, event-to-store latency

        """.utf8))
    exit(2)
}

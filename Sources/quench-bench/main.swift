// quench-bench: benchmarks, chosen by the first argument.
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
default:
    FileHandle.standardError.write(Data("""
        usage: quench-bench store [--quench PATH] [--db PATH] [--runs N]
          store  10-year synthetic database: ingest throughput, and `quench today`,
                 `quench stats --year`, `quench calendar` timed as whole processes

        """.utf8))
    exit(2)
}

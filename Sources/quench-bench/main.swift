// quench-bench: benchmarks, chosen by the first argument.
//   quench-bench detector [--readings N]
//   quench-bench replay [--readings N] [--quench PATH] [--folder DIR]
//   quench-bench store [--quench PATH] [--db PATH] [--runs N]
//   quench-bench backup [--quench PATH] [--db PATH] [--runs N]
//   quench-bench gateway [--seconds S]
//   quench-bench mqtt [--quench PATH] [--events N] [--backlog N] [--mosquitto PATH]
//   quench-bench hub [--quench PATH] [--gateways N] [--bottles N] [--hours H] [--seconds S] [--seed N] [--latency-sips N]
//   quench-bench web [--quench PATH] [--server PATH] [--requests N] [--streams N] [--idle N] [--tries N] [--years N] [--sips MIN-MAX] [--also PATHS]
import Foundation

/// Runs one benchmark; a failure is printed and exits 1.
func benchmark(_ name: String, _ body: () throws -> Void) {
    do {
        try body()
    } catch {
        FileHandle.standardError.write(Data("\(name) benchmark failed: \(error)\n".utf8))
        exit(1)
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
let rest = Array(arguments.dropFirst())
switch arguments.first {
case "store":
    benchmark("store") { try StoreBenchmark(arguments: rest).run() }
case "backup":
    benchmark("backup") { try StoreBenchmark(arguments: rest).runBackup() }
case "detector":
    benchmark("detector") { try PipelineBenchmark(arguments: rest).runDetector() }
case "replay":
    benchmark("replay") { try PipelineBenchmark(arguments: rest).runReplay() }
case "gateway":
    benchmark("gateway") { try GatewayBenchmark(arguments: rest).run() }
case "mqtt":
    benchmark("mqtt") { try MQTTBenchmark(arguments: rest).run() }
case "web":
    benchmark("web") { try WebBenchmark(arguments: rest).run() }
case "hub":
    benchmark("hub") { try HubBenchmark(arguments: rest).run() }
default:
    FileHandle.standardError.write(Data("""
        usage: quench-bench detector [--readings N]
               quench-bench replay [--readings N] [--quench PATH] [--folder DIR]
               quench-bench store [--quench PATH] [--db PATH] [--runs N]
               quench-bench backup [--quench PATH] [--db PATH] [--runs N]
               quench-bench gateway [--seconds S]
               quench-bench mqtt [--quench PATH] [--events N] [--backlog N] [--mosquitto PATH]
               quench-bench hub [--quench PATH] [--gateways N] [--bottles N] [--hours H] [--seconds S] [--seed N] [--latency-sips N] [--mosquitto PATH]
               quench-bench web [--quench PATH] [--server PATH] [--requests N] [--streams N] [--idle N] [--tries N] [--years N] [--sips MIN-MAX] [--also PATHS]
          detector  sip detector alone on simulated readings (default 10 M)
          replay    a trace file of N readings through the detector, in process and
                    as a whole `quench replay --json` process with its peak RSS
          store     10-year synthetic database: ingest throughput, and `quench today`,
                    `quench stats --year`, `quench calendar` timed as whole processes
          backup    the same database: `quench backup` (time, peak RSS, size) and
                    `quench restore` of it over a copy
          gateway   `quench run`'s pipeline with four simulated devices at 10 Hz:
                    CPU share of one core, peak RSS, event-to-store latency
          mqtt      a real mosquitto: stored → received latency, a 100 000-row outbox
                    drained by `quench mqtt sync` (rate, peak RSS), `quench mqtt run` idle RSS
          hub       a care home: simulated bottles streaming to gateways' detectors (broadcast
                    scales heard in two rooms, bottles carried between rooms), each gateway's
                    `quench mqtt run` and `quench hub run` on a real mosquitto, every part
                    restarted; the hub against the truth, its CPU and peak RSS, a sip final →
                    on the hub's page
          web       `quench serve` on 10 years of history: each endpoint's and a page refresh's
                    latency, the server's RSS (idle, loaded, 20 live streams), add → change event

        """.utf8))
    exit(2)
}

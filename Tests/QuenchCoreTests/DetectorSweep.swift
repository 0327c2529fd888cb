import Foundation
import Testing
import QuenchCore
import QuenchSimulator

/// Exploration aid: `SWEEP=40 swift test --filter detectorSweep` prints per-preset scores.
@Test(.enabled(if: ProcessInfo.processInfo.environment["SWEEP"] != nil)) func detectorSweep() throws {
    let seeds = UInt64(ProcessInfo.processInfo.environment["SWEEP"]!) ?? 20
    let verbose = ProcessInfo.processInfo.environment["VERBOSE"] != nil
    var byPreset: [String: (detected: [DetectedEvent], truth: [TruthEvent], offset: Double)] = [:]
    for seed in 1...seeds {
        let configuration = SimulationConfiguration.randomised(seed: seed, duration: 3600)
        var bottle = SimulatedBottle(configuration: configuration, seed: seed)
        var detector = SipDetector(calibration: configuration.calibration)
        var events: [DetectedEvent] = []
        var truth: [TruthEvent] = []
        while let r = bottle.next() { detector.process(r, into: &events) }
        detector.finish(into: &events)
        truth += bottle.drainTruth()
        let report = Evaluation.score(detected: events, truth: truth)
        if verbose {
            print("seed \(seed) \(configuration.name) rate \(configuration.sampleRate) noise \(configuration.noise): recall \(report.sipRecall ?? -1) precision \(report.sipPrecision ?? -1) mae \(report.sipMeanAbsoluteErrorML ?? -1) total \(report.totalIntakeErrorPercent ?? -1) refill \(report.refillRecall ?? -1)")
            for m in report.missed { print("   missed \(m)") }
            for s in report.spurious { print("   spurious \(s)") }
            for m in report.matches where abs(m.truth.ml - m.detected.ml) > 3 { print("   error \(m.truth) -> \(m.detected.ml) \(m.detected.kind)") }
        }
        var entry = byPreset[configuration.name] ?? ([], [], 0)
        // Concatenate on one clock so the report covers every seed.
        entry.detected += events.map { var e = $0; e.t += entry.offset; e.start += entry.offset; e.end += entry.offset; return e }
        entry.truth += truth.map { var e = $0; e.tStart += entry.offset; e.tEnd += entry.offset; return e }
        entry.offset += configuration.duration + 1000
        byPreset[configuration.name] = entry
    }
    var all: ([DetectedEvent], [TruthEvent], Double) = ([], [], 0)
    for (name, entry) in byPreset.sorted(by: { $0.key < $1.key }) {
        let r = Evaluation.score(detected: entry.detected, truth: entry.truth)
        print(String(format: "%-32@ sips %4d recall %.3f precision %.3f mae %.2f total %.2f%% refill %.3f pour %.3f", name as NSString, r.sip.truthCount, r.sipRecall ?? -1, r.sipPrecision ?? -1, r.sipMeanAbsoluteErrorML ?? -1, r.totalIntakeErrorPercent ?? -1, r.refillRecall ?? -1, r.pourRecall ?? -1))
        all.0 += entry.detected.map { var e = $0; e.t += all.2; return e }
        all.1 += entry.truth.map { var e = $0; e.tStart += all.2; e.tEnd += all.2; return e }
        all.2 += 1e7
    }
    let r = Evaluation.score(detected: all.0, truth: all.1)
    print(String(format: "ALL sips %d recall %.4f precision %.4f mae %.3f total %.2f%% refill %.3f", r.sip.truthCount, r.sipRecall ?? -1, r.sipPrecision ?? -1, r.sipMeanAbsoluteErrorML ?? -1, r.totalIntakeErrorPercent ?? -1, r.refillRecall ?? -1))
}

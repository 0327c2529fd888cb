import Foundation
import Testing
import QuenchCore
import QuenchSimulator

/// Exploration aid: `ABLATE=1 swift test --filter detectorAblation` scores one behaviour at a time
/// (the opt-in big drinks and parts poured out too), with pours at a sink's 40–150 mL/s.
@Test(.enabled(if: ProcessInfo.processInfo.environment["ABLATE"] != nil)) func detectorAblation() throws {
    let presets: [SimulationConfiguration.Preset] = ProcessInfo.processInfo.environment["PRESET"].flatMap { SimulationConfiguration.Preset(rawValue: $0) }.map { [$0] } ?? [.kitchenScale, .sigWeightScale, .levelMillimetres]
    for preset in presets {
        let base = SimulationConfiguration.preset(preset, duration: 3 * 3600)
        let all = Behaviour.allCases
        let only: [Behaviour?] = [nil] + all.map { $0 }
        for extra in only {
            var c = base
            c.behaviours = [.sips, .refills]
            c.pourMLPerSecond = 40...150
            if let extra { c.behaviours.insert(extra) }
            var events: [DetectedEvent] = [], truth: [TruthEvent] = []
            for seed in UInt64(1)...6 {
                var bottle = SimulatedBottle(configuration: c, seed: seed)
                var d = SipDetector(calibration: c.calibration)
                var e: [DetectedEvent] = []
                while let r = bottle.next() { d.process(r, into: &e) }
                d.finish(into: &e)
                let off = Double(seed) * 1e6
                events += e.map { var x = $0; x.t += off; return x }
                truth += bottle.drainTruth().map { var x = $0; x.tStart += off; x.tEnd += off; return x }
            }
            let r = Evaluation.score(detected: events, truth: truth)
            print(String(format: "%-18@ +%-20@ sips %4d recall %.3f precision %.3f mae %.2f total %.2f%% refill %.3f", preset.rawValue as NSString, (extra?.rawValue ?? "-") as NSString, r.sip.truthCount, r.sipRecall ?? -1, r.sipPrecision ?? -1, r.sipMeanAbsoluteErrorML ?? -1, r.totalIntakeErrorPercent ?? -1, r.refillRecall ?? -1))
        }
    }
}

import Foundation
import Testing
import QuenchCore
import QuenchSimulator

@Test(.enabled(if: ProcessInfo.processInfo.environment["SCEN"] != nil)) func debugScenario() throws {
    let preset = SimulationConfiguration.Preset(rawValue: ProcessInfo.processInfo.environment["SCEN"]!) ?? .sigWeightScale
    var c = SimulationConfiguration.preset(preset, duration: 3 * 3600)
    c.behaviours = [.sips, .refills]
    if let extra = ProcessInfo.processInfo.environment["EXTRA"] { for b in extra.split(separator: ",") { c.behaviours.insert(Behaviour(rawValue: String(b))!) } }
    var bottle = SimulatedBottle(configuration: c, seed: 1)
    var readings: [Reading] = []
    while let r = bottle.next() { readings.append(r) }
    let truth = bottle.drainTruth()
    var d = SipDetector(calibration: c.calibration)
    var e: [DetectedEvent] = []
    for r in readings { d.process(r, into: &e) }
    d.finish(into: &e)
    let report = Evaluation.score(detected: e, truth: truth)
    var shown = 0
    for m in report.matches where abs(m.truth.ml - m.detected.ml) > 2.5 && shown < 4 {
        shown += 1
        print("ERR truth \(m.truth.ml) detected \(m.detected.ml) [\(m.truth.tStart)-\(m.truth.tEnd)] det start \(m.detected.start) end \(m.detected.end) t \(m.detected.t)")
        for r in readings where r.t > m.truth.tStart - 6 && r.t < m.detected.t + 1 { print("   \(r.t) \(r.value ?? .nan)") }
    }
    for m in report.missed.prefix(3) {
        print("MISSED \(m)")
        for r in readings where r.t > m.tStart - 6 && r.t < m.tEnd + 12 { print("   \(r.t) \(r.value ?? .nan)") }
    }
    for s in report.spurious.prefix(3) { print("SPURIOUS \(s)") }
}

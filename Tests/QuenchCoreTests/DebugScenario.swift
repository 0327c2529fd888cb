import Foundation
import Testing
import QuenchCore
import QuenchSimulator

@Test(.enabled(if: ProcessInfo.processInfo.environment["SCEN"] != nil)) func debugScenario() throws {
    let preset = SimulationConfiguration.Preset(rawValue: ProcessInfo.processInfo.environment["SCEN"]!) ?? .sigWeightScale
    var c = SimulationConfiguration.preset(preset, duration: 3 * 3600)
    c.behaviours = [.sips, .refills]
    if let extra = ProcessInfo.processInfo.environment["EXTRA"] { for b in extra.split(separator: ",") { c.behaviours.insert(Behaviour(rawValue: String(b))!) } }
    var seed: UInt64 = 1
    if let s = ProcessInfo.processInfo.environment["SEED"].flatMap({ UInt64($0) }) { c = .randomised(seed: s); seed = s }
    var bottle = SimulatedBottle(configuration: c, seed: seed)
    var readings: [Reading] = []
    while let r = bottle.next() { readings.append(r) }
    let truth = bottle.drainTruth()
    var d = SipDetector(calibration: c.calibration)
    var e: [DetectedEvent] = []
    let from = Double(ProcessInfo.processInfo.environment["FROM"] ?? "") ?? -1
    let to = Double(ProcessInfo.processInfo.environment["TO"] ?? "") ?? -1
    for r in readings {
        let before = d.phase
        d.process(r, into: &e)
        if r.t >= from && r.t <= to { print("PH \(String(format: "%.2f", r.t)) \(r.value ?? .nan) \(before) -> \(d.phase) tol \(d.band)") }
    }
    d.finish(into: &e)
    let report = Evaluation.score(detected: e, truth: truth)
    var shown = 0
    for m in report.matches where abs(m.truth.ml - m.detected.ml) > 2.5 && shown < 4 {
        shown += 1
        print("ERR truth \(m.truth.ml) detected \(m.detected.ml) [\(m.truth.tStart)-\(m.truth.tEnd)] det start \(m.detected.start) end \(m.detected.end) t \(m.detected.t)")
        for r in readings where r.t > m.truth.tStart - 6 && r.t < m.detected.t + 1 { print("   \(String(format: "%.2f", r.t)) \(r.value ?? .nan)") }
    }
    for m in report.missed.prefix(3) {
        print("MISSED \(m)")
        for r in readings where r.t > m.tStart - 6 && r.t < m.tEnd + 12 { print("   \(String(format: "%.2f", r.t)) \(r.value ?? .nan)") }
    }
    for s in report.spurious.prefix(3) { print("SPURIOUS \(s)") }
}

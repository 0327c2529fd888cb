import Foundation
import Testing
import QuenchCore
import QuenchSimulator

@Test(.enabled(if: ProcessInfo.processInfo.environment["SCEN"] != nil)) func debugScenario() throws {
    let c = SimulationConfiguration.clean(unit: .g)
    let (readings, truth) = Scenario(c).idle(30).sip(ml: 20).idle(30).sip(ml: 35).idle(30).run()
    var d = SipDetector(calibration: c.calibration)
    var e: [DetectedEvent] = []
    for r in readings { d.process(r, into: &e) }
    d.finish(into: &e)
    print(truth); print(e)
    var last: Double? = nil
    for r in readings { if r.value != last { print("t=\(r.t) \(r.value ?? .nan)") ; last = r.value } }
}

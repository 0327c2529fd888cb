import Foundation
import Testing
import QuenchCore

@Test(.enabled(if: ProcessInfo.processInfo.environment["DUMP"] != nil)) func dumpTrace() throws {
    let path = ProcessInfo.processInfo.environment["DUMP"]!
    let (header, readings) = try loadTrace(path)
    let calibration = try BottleCalibration(unit: header.unit ?? .g)
    var c = DetectorConfiguration(); c.emitDiagnostics = true
    var detector = SipDetector(calibration: calibration, configuration: c)
    var events: [DetectedEvent] = []
    var lastPhase = detector.phase
    for r in readings {
        detector.process(r, into: &events)
        if detector.phase != lastPhase { print("t=\(r.t) v=\(r.value ?? .nan) phase \(lastPhase) -> \(detector.phase)"); lastPhase = detector.phase }
    }
    detector.finish(into: &events)
    print("readings \(readings.count) events \(events.count)"); for e in events { print(e) }
}

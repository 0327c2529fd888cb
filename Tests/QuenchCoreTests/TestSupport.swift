import QuenchTestSupport
import Foundation
import QuenchCore

/// The repository root and `../shared` beside it (maintained outside the repo).
let repositoryRoot = TestPackage.root
let sharedFolder = TestPackage.shared

func loadTrace(_ path: String) throws -> (TraceHeader, [Reading]) {
    let text = try String(contentsOf: URL(fileURLWithPath: path), encoding: .utf8)
    return try TraceParser.parse(text)
}

/// Runs readings through a detector, one at a time.
func detect(_ readings: [Reading], calibration: BottleCalibration, configuration: DetectorConfiguration = .init()) -> [DetectedEvent] {
    var detector = SipDetector(calibration: calibration, configuration: configuration)
    var events: [DetectedEvent] = []
    for r in readings { detector.process(r, into: &events) }
    detector.finish(into: &events)
    return events
}

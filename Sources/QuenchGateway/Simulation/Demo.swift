import QuenchCore
import QuenchStore
import QuenchSimulator

/// `quench demo`: a simulated day of drinking through the whole pipeline.
public enum Demo {
    public struct Day: Sendable {
        public var header: TraceHeader
        public var calibration: BottleCalibration
        public var events: [DetectedEvent]
        public var summary: ReplaySummary
        public var truth: [TruthEvent]
    }

    /// Simulates `hours` of a bottle on a kitchen scale starting at `started`
    /// and runs every reading through the detector as it is produced.
    public static func simulateDay(hours: Double, seed: UInt64, started: Timestamp) -> Day {
        var configuration = SimulationConfiguration.day(hours: hours)
        configuration.started = started
        var bottle = SimulatedBottle(configuration: configuration, seed: seed)
        var pipeline = ReplayPipeline(header: bottle.header, calibration: configuration.calibration, configuration: .init())
        var events: [DetectedEvent] = []
        var truth: [TruthEvent] = []
        while let reading = bottle.next() {
            pipeline.process(reading) { events.append($0) }
            if pipeline.summary.readings % 4096 == 0 { truth += bottle.drainTruth() }
        }
        let summary = pipeline.finish { events.append($0) }
        truth += bottle.drainTruth()
        return Day(header: bottle.header, calibration: configuration.calibration, events: events, summary: summary, truth: truth)
    }
}

/// Wall-clock helpers for the demo.
public enum DemoClock {
    /// The start of a simulated day of `hours` that ends now.
    public static func dayEndingNow(hours: Double, now: Timestamp = .wallClockNow) -> Timestamp {
        Timestamp(secondsSince1970: (now.secondsSince1970 - hours * 3600).rounded(.down))
    }
}

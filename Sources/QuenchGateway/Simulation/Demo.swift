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

extension Demo.Day {
    /// The day as one JSON document (`quench demo --json`): the events as `replay
    /// --json` prints them, the summary, and where they were stored (`stored`: the
    /// database, new events, events already there; nil with --no-store).
    public func json(seed: UInt64, hours: Double, stored: (database: String, inserted: Int, duplicates: Int)?) -> String {
        var s = "{\"seed\":\(seed),\"hours\":\(EventFormat.number(hours, 3))"
        if let started = header.started { s += ",\"started\":\"\(started.iso8601)\"" }
        s += ",\"events\":[" + events.map { EventFormat.jsonLine($0, started: header.started) }.joined(separator: ",") + "]"
        s += ",\"summary\":" + EventFormat.summaryJSON(summary)
        if let stored {
            s += ",\"stored\":{\"database\":\"\(EventFormat.jsonEscaped(stored.database))\",\"inserted\":\(stored.inserted),\"duplicates\":\(stored.duplicates)}"
        }
        return s + "}"
    }
}

import QuenchCore
import QuenchStore

/// Writing what a replay or the demo found into the intake store: the same
/// path live ingestion takes.
public enum PipelineStore {
    public enum Failure: Error, Sendable, CustomStringConvertible {
        case noStartTime(source: String)
        case store(StoreError)

        public var description: String {
            switch self {
            case .noStartTime(let source): "\(source): the trace has no '# started:' time"
            case .store(let error): error.description
            }
        }
    }

    /// What was stored, and the events the store cannot hold.
    public struct Outcome: Sendable {
        public var result: IngestResult
        /// Events outside what a history holds (an amount past 100 L, a time
        /// outside 1970–9999): garbage from a broken trace, named, not stored.
        public var refused: [DetectedEvent]
    }

    /// When the trace's t = 0 was on the wall clock, which storing needs: known from
    /// the header (or `--started`), so a replay that could not be stored fails before
    /// it reads a reading.
    public static func startTime(header: TraceHeader, started override: Timestamp?, source: String) throws(Failure) -> Timestamp {
        guard let started = header.started ?? override else { throw .noStartTime(source: source) }
        return started
    }

    /// Ingests `events` in one transaction; replaying the same trace again adds
    /// nothing. An event the store cannot hold is refused by itself and the
    /// others are stored: each event was judged on its own, so a garbage spike
    /// that made an absurd "refill" must not cost the real sips (the command
    /// names it and exits non-zero).
    public static func ingest(
        _ events: [DetectedEvent], header: TraceHeader, started override: Timestamp?, device: String?,
        source: String, into store: IntakeStore
    ) throws(Failure) -> Outcome {
        let started = try startTime(header: header, started: override, source: source)
        var kept: [DetectedEvent] = []
        var refused: [DetectedEvent] = []
        for event in events {
            let time = started.secondsSince1970 + event.start
            let holds = IntakeEvent.holds(ml: event.ml) && IntakeEvent.plausibleTime.contains(time)
            if holds || event.kind.isDiagnostic { kept.append(event) } else { refused.append(event) }
        }
        do {
            return Outcome(result: try store.ingest(kept, device: device ?? header["device"], started: started), refused: refused)
        } catch {
            throw .store(error)
        }
    }
}

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
            case .noStartTime(let source): "\(source): the trace has no '# started:' time; give --started to store its events"
            case .store(let error): error.description
            }
        }
    }

    /// Ingests `events` in one transaction; replaying the same trace again adds nothing.
    public static func ingest(
        _ events: [DetectedEvent], header: TraceHeader, started override: Timestamp?, device: String?,
        source: String, into store: IntakeStore
    ) throws(Failure) -> IngestResult {
        guard let started = header.started ?? override else { throw .noStartTime(source: source) }
        do {
            return try store.ingest(events, device: device ?? header["device"], started: started)
        } catch {
            throw .store(error)
        }
    }
}

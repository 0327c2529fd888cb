import QuenchCore

/// `quench evaluate TRACE TRUTH`: scores the detector against ground truth.
public enum Evaluate {
    public static func run(trace: TraceSource, truthPath: String, options: ReplayOptions) throws -> EvaluationReport {
        let truth = try readTruth(truthPath)
        var detected: [DetectedEvent] = []
        _ = try Replay.run(trace, options: options) { detected.append($0) }
        return Evaluation.score(detected: detected, truth: truth)
    }

    public static func readTruth(_ path: String) throws -> [TruthEvent] {
        let text = try readWholeFile(path)
        do {
            return try TruthParser.parse(text)
        } catch {
            throw TruthFileError(path: path, cause: error)
        }
    }

    static func readWholeFile(_ path: String) throws -> String {
        var bytes: [UInt8] = []
        try ChunkedInput(.file(path)).forEachChunk { bytes += $0 }
        return String(decoding: bytes, as: UTF8.self)
    }
}

public struct TruthFileError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var cause: TruthError
    public var description: String { "\(path):\(cause.line): \(cause.reasonDescription)" }
}

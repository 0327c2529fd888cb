import QuenchCore

/// `quench evaluate TRACE TRUTH`: scores the detector against ground truth.
public enum Evaluate {
    /// The scores, and the replay's summary: its doubts about the unit or the curve are
    /// what a recall of 0 needs said (`summary.unitDoubt`).
    public static func run(trace: TraceSource, truthPath: String, options: ReplayOptions)
        throws -> (report: EvaluationReport, summary: ReplaySummary, clockDoubt: String?) {
        let truth = try readTruth(truthPath)
        var detected: [DetectedEvent] = []
        let summary = try Replay.run(trace, options: options) { detected.append($0) }
        return (Evaluation.score(detected: detected, truth: truth), summary, clockDoubt(truth: truth, summary: summary))
    }

    /// Why every true event was missed, when the truth is on another clock than the trace: none of its
    /// events is within the trace's times (a developer's truth in epoch seconds beside a trace's t from
    /// 0 scored recall 0, with nothing said).
    public static func clockDoubt(truth: [TruthEvent], summary: ReplaySummary) -> String? {
        guard let first = summary.firstT, !truth.isEmpty else { return nil }
        let last = first + summary.duration
        guard !truth.contains(where: { $0.tEnd >= first - 60 && $0.tStart <= last + 60 }) else { return nil }
        func s(_ t: Double) -> String { TraceWriter.fixed(t, places: 1) }
        return "none of the truth's events is within the trace's times (t \(s(first)) to \(s(last)) s; the truth's from "
            + "\(s(truth.map(\.tStart).min() ?? 0)) to \(s(truth.map(\.tEnd).max() ?? 0))): give the truth in seconds on the trace's clock"
    }

    /// The report as one JSON object (`quench evaluate --json`): per kind the
    /// counts, recall, precision, mean absolute error per matched event (mL) and
    /// total error (%); null where a figure cannot be computed.
    public static func json(_ report: EvaluationReport) -> String {
        func kind(_ k: EvaluationReport.KindScore) -> String {
            "{\"truth\":\(k.truthCount),\"detected\":\(k.detectedCount),\"matched\":\(k.matched)"
                + ",\"recall\":\(EventFormat.number(k.recall, 4)),\"precision\":\(EventFormat.number(k.precision, 4))"
                + ",\"mean_abs_error_ml\":\(EventFormat.number(k.meanAbsoluteErrorML, 3))"
                + ",\"total_error_percent\":\(EventFormat.number(k.totalErrorPercent, 3))"
                + ",\"truth_ml\":\(EventFormat.number(k.truthTotalML, 2)),\"detected_ml\":\(EventFormat.number(k.detectedTotalML, 2))}"
        }
        // Each one, to find in the trace: a count alone said how many, not where (detector.md promised them).
        let missed = report.missed.map { m in
            "{\"type\":\"\(m.kind.rawValue)\",\"start\":\(TraceWriter.fixed(m.tStart, places: 3)),\"end\":\(TraceWriter.fixed(m.tEnd, places: 3))"
                + ",\"ml\":\(TraceWriter.fixed(m.ml, places: 2))}"
        }
        let spurious = report.spurious.map { EventFormat.jsonLine($0, started: nil) }
        return "{\"sip\":\(kind(report.sip)),\"refill\":\(kind(report.refill)),\"pour\":\(kind(report.pour))"
            + ",\"missed\":[\(missed.joined(separator: ","))],\"spurious\":[\(spurious.joined(separator: ","))]}"
    }

    public static func readTruth(_ path: String) throws -> [TruthEvent] {
        let text = try readWholeFile(path)
        do {
            return try TruthParser.parse(text)
        } catch {
            throw TruthFileError(path: path, cause: error)
        }
    }

    /// A truth file of a year's simulation is about 15 MB: anything past this is not one
    /// (`/dev/zero` filled memory before any line was looked at).
    public static let largestTruthFile = 64 << 20

    static func readWholeFile(_ path: String) throws -> String {
        var bytes: [UInt8] = []
        try ChunkedInput(TraceSource(argument: path)).forEachChunk { chunk in
            guard bytes.count + chunk.count <= largestTruthFile else { throw TruthFileTooLarge(path: path) }
            bytes += chunk
        }
        // A binary file (the wrong argument) is said so, as a trace is: decoded, its bytes were quoted back raw.
        if let bad = String.firstInvalidUTF8Offset(bytes) {
            let line = bytes[..<bad].reduce(1) { $1 == 0x0A ? $0 + 1 : $0 }
            throw TruthFileNotText(path: path, line: line, offset: bad)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

public struct TruthFileNotText: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var line: Int
    public var offset: Int
    public var description: String { "\(path):\(line): not valid UTF-8 text (byte offset \(offset)): not a truth file" }
}

public struct TruthFileTooLarge: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var description: String { "\(path): larger than \(Evaluate.largestTruthFile >> 20) MB, not a truth file" }
}

public struct TruthFileError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var cause: TruthError
    public var description: String { "\(path):\(cause.line): \(cause.reasonDescription)" }
}

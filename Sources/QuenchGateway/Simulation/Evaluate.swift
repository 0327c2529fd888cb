#if canImport(Glibc)
import Glibc
#endif
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
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ReplayError.cannotOpen(path: path, SystemError("open", errno: errno)) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw ReplayError.cannotRead(path: path, SystemError("read", errno: errno))
            }
            if n == 0 { break }
            bytes += chunk[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

public struct TruthFileError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var cause: TruthError
    public var description: String { "\(path):\(cause.line): \(cause.reasonDescription)" }
}

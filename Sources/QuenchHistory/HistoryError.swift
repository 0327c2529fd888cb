import QuenchStore

/// Why a history command failed; each case says what was wrong with which input
/// and keeps the underlying error.
public enum HistoryError: Error, Sendable, CustomStringConvertible {
    case store(StoreError)
    /// An amount that is not a number with a known unit, or out of range.
    case invalidAmount(String, reason: String)
    case unknownUnit(String)
    case invalidDate(String, reason: String)
    case invalidArgument(String)
    /// A file given to `import` that cannot be read as an export.
    case invalidImport(file: String, line: Int?, reason: String)
    case fileError(path: String, cause: any Error)
    /// `share --out card.png`: the SVG could not be made a PNG.
    case rasterizer(RasterError)

    public var description: String {
        switch self {
        case .store(let error): error.description
        case .invalidAmount(let text, let reason): "invalid amount '\(text.shownSafely())': \(reason)"
        case .unknownUnit(let unit): "unknown unit '\(unit.shownSafely())' (use ml, l, oz, or kg/lb for weights, min/h for durations)"
        case .invalidDate(let text, let reason): "invalid date '\(text.shownSafely())': \(reason)"
        case .invalidArgument(let message): message
        case .invalidImport(let file, let line, let reason):
            "cannot import \(file)\(line.map { " line \($0)" } ?? ""): \(reason); nothing was imported"
        case .fileError(let path, let cause): "\(path): \(describeFileError(cause))"
        case .rasterizer(let error): error.description
        }
    }
}

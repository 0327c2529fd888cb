import Threading
import QuenchCore
import QuenchStore

/// Why a history command failed; each case says what was wrong with which input
/// and keeps the underlying error.
public enum HistoryError: Error, Sendable, CustomStringConvertible {
    case store(StoreError)
    /// An amount that is not a number with a known unit, or out of range.
    case invalidAmount(String, reason: String)
    /// A unit that is not one of those `expected` takes.
    case unknownUnit(String, expected: UnitKind)
    case invalidDate(String, reason: String)
    /// A moment (`--at`) or a time of day that cannot be one.
    case invalidTime(String, reason: String)
    case invalidArgument(String)
    /// A file given to `import` that cannot be read as an export.
    case invalidImport(file: String, line: Int?, reason: String)
    case fileError(path: String, cause: any Error)
    /// `share --out card.png`: the SVG could not be made a PNG.
    case rasterizer(RasterError)
    /// Several people share the database and the command did not say whose history it is.
    case personNeeded(people: [String])
    /// `--person` (or `QUENCH_PERSON`, or the config file) names nobody in the household.
    case unknownPerson(String, people: [String])
    /// What was wrong with the value of a command's option (`--date`, `--from`).
    indirect case inOption(String, HistoryError)

    /// What a unit was asked for, so an unknown one is answered with the units that would do.
    public enum UnitKind: Sendable {
        /// An amount drunk, a goal, a slack.
        case volume
        /// `--units`: how volumes are shown.
        case displayUnits
        /// `quench person units`: theirs, or the household's again.
        case personUnits
        /// A body weight.
        case weight
        /// A duration (`--after`, `--every`, `snooze`, `--exercise`).
        case duration

        var accepted: String {
            switch self {
            case .volume: "a volume takes ml, cl, l, or oz or fl oz for US fluid ounces"
            case .displayUnits: "units are ml, or oz for US fluid ounces"
            case .personUnits: "their units are ml, oz for US fluid ounces, or household"
            case .weight: "a weight takes kg or lb"
            case .duration: "a duration takes min or h, e.g. 30min or 2h"
            }
        }
    }
    /// A file Quench would obey (the reminder's command) that another user could have written.
    case untrustedFile(UntrustedFile)
    /// A delete of an event already deleted (`deleted` true), or a restore of one that is not:
    /// the fact only; the command line adds what to type, the page has its own Restore.
    case unchanged(id: Int64, deleted: Bool)

    public var description: String {
        switch self {
        case .store(let error): error.description
        case .untrustedFile(let problem): problem.description
        case .invalidAmount(let text, let reason): "invalid amount '\(text.shownSafely())': \(reason)"
        case .unknownUnit(let unit, let expected): "unknown unit '\(unit.shownSafely())' (\(expected.accepted))"
        case .invalidDate(let text, let reason): "invalid date '\(text.shownSafely())': \(reason)"
        case .invalidTime(let text, let reason): "invalid time '\(text.shownSafely())': \(reason)"
        case .invalidArgument(let message): message
        case .invalidImport(let file, let line, let reason):
            "cannot import \(file)\(line.map { " line \($0)" } ?? ""): \(reason); nothing was imported"
        case .fileError(let path, let cause): "\(path): \(describeFileError(cause))"
        case .rasterizer(let error): error.description
        case .personNeeded(let people):
            "several people share this history (\(people.map { $0.shownSafely(limit: 40) }.joined(separator: ", "))): "
                + "say whose with --person NAME (or QUENCH_PERSON, or `person` in the config file)"
        case .unknownPerson(let name, let people):
            "nobody is called '\(name.shownSafely(limit: 40))' (people: \(people.map { $0.shownSafely(limit: 40) }.joined(separator: ", ")); "
                + "`quench person add NAME` adds someone)"
        case .inOption(let option, let error): "\(option): \(error.description)"
        case .unchanged(let id, let deleted): deleted ? "event \(id) is already deleted (nothing to delete)" : "event \(id) is not deleted (nothing to restore)"
        }
    }
}

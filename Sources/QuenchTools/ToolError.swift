import QuenchCore
import QuenchGateway
import QuenchProfiles

/// Why an interactive tool (scan, pair, watch, record, calibrate) failed;
/// the gateway's own failures are kept whole as `.live`.
public enum ToolError: Error, Sendable, CustomStringConvertible {
    case live(LiveError)
    case calibration(CalibrationError)
    /// Level points that make no curve (listed in order of mL, as checked).
    case levelPoints([LevelCurve.Point], CalibrationError)
    case calibrationRequest(CalibrationProblem)
    /// Nothing was heard from the device in time.
    case noReadings(address: String, seconds: Double)
    /// The device was not seen advertising.
    case notFound(address: String, seconds: Double)
    /// The device advertises, but no known profile fits what it says.
    case noProfileFits(address: String, known: [String])
    case output(OutputFileError)

    public var description: String {
        switch self {
        case .live(let e): "\(e)"
        case .calibration(let e): "calibration: \(e)"
        case .levelPoints(let points, let e):
            "level points \(points.map { "\($0.level.compactDescription):\($0.ml.compactDescription)" }.joined(separator: ",")) (in order of mL): \(e)"
        case .calibrationRequest(let problem): "calibrate: \(problem)"
        case .noReadings(let a, let s): "no readings from \(a) within \(TraceWriter.fixed(s, places: 1)) s"
        case .notFound(let a, let s): "\(a) was not seen advertising within \(TraceWriter.fixed(s, places: 1)) s"
        case .noProfileFits(let a, let known): "no known profile fits \(a)'s advertisement (known: \(known.joined(separator: ", "))); name one or give a profile file"
        case .output(let e): "\(e)"
        }
    }
}

/// A calibration that cannot be done as asked, in terms of what to measure
/// or give; the command line names its own options for each.
public enum CalibrationProblem: Sendable, Hashable, CustomStringConvertible {
    /// Nothing was asked: no measurement, no volume, no points.
    case nothingToDo
    /// Level points were given for a weight device.
    case pointsNeedLevelSensor(address: String, profile: String)
    /// The full bottle's volume is not a positive number of mL.
    case volumeNotPositive(String)
    /// A full bottle was to be measured on a scale without the empty bottle's weight.
    case fullNeedsEmptyWeight
    /// A full level bottle was to be measured without its volume.
    case fullNeedsVolume
    /// A level point is not two numbers.
    case badPoint(String)
    /// The full bottle weighed no more than the empty one (grams).
    case fullNotHeavier(fullG: Double, emptyG: Double)

    public var description: String {
        switch self {
        case .nothingToDo: "nothing to do: measure the empty or the full bottle, give the full volume, or give level points"
        case .pointsNeedLevelSensor(let a, let p): "level points are for level sensors; \(a) is a \(p) (weight)"
        case .volumeNotPositive(let v): "the full bottle's volume must be a positive number of mL, not '\(v.shownSafely())'"
        case .fullNeedsEmptyWeight: "measuring the full bottle needs the empty bottle's weight: measure the empty bottle first"
        case .fullNeedsVolume: "measuring a full level bottle needs its volume in mL"
        case .badPoint(let p): "level point '\(p.shownSafely())' is not LEVEL:ML (two numbers, e.g. 12.5:250)"
        case .fullNotHeavier(let full, let empty):
            "the full bottle (\(TraceWriter.fixed(full, places: 1)) g) is not heavier than the empty one (\(TraceWriter.fixed(empty, places: 1)) g)"
        }
    }
}

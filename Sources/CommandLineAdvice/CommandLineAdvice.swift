import QuenchCore
import QuenchGateway
import QuenchStore

/// What the command-line programs (`quench`, `quenchd`) add to a library's
/// error: the library says the fact and carries the data; this says what to
/// type about it, naming the programs' commands, options and variables (the
/// page says the same facts in its own words, `Responses.message(for:)`).
public enum CommandLineAdvice {
    /// `text` (the error as said, ending with `leaf`'s description) with the
    /// advice for `leaf`: after the fact, before SQLite's own words.
    public static func message(_ text: String, leaf: any Error) -> String {
        let leaf = innermost(leaf)
        guard let advice = advice(for: leaf) else { return text }
        if let store = leaf as? StoreError, !store.causeDescription.isEmpty, text.hasSuffix(store.causeDescription) {
            return String(text.dropLast(store.causeDescription.count)) + advice + store.causeDescription
        }
        return text + advice
    }

    /// The gateway's wrappers' causes (each wrapper's description ends with its cause's).
    static func innermost(_ error: any Error) -> any Error {
        switch error {
        case LiveError.store(let e): e
        case ReplayError.calibration(_, let e): e
        case PipelineStore.Failure.store(let e): e
        default: error
        }
    }

    /// This process's arguments.
    static var words: [String] { CommandLine.arguments }

    /// This process's command line as typed (`quench today`), for advice that repeats it.
    static var invocation: String {
        let program = words.first.flatMap { $0.split(separator: "/").last.map(String.init) } ?? "quench"
        return ([program] + words.dropFirst()).joined(separator: " ")
    }

    /// What to type about an error, appended to its fact; nil when the fact says it all.
    static func advice(for error: any Error) -> String? {
        switch error {
        case let e as StoreError:
            switch e.code {
            case .notFound: " (nothing recorded yet: `quench add 250ml` creates it; --db or QUENCH_DB choose another)"
            case .emptyFile: " (remove it, or choose another --db)"
            // The service's database, in its private state folder: read it as root or as its owner.
            case .noAccess: " (run the command with sudo, e.g. `sudo \(invocation)`)"
            case .noSuchEvent: " (see `quench log`)"
            case .tooLong: " (import the file in parts: `quench export --since/--until` makes them)"
            default: nil
            }
        case LiveError.unknownDevice: " (see `quench devices`)"
        case LiveError.noDevices: ": pair one with `quench pair ADDRESS`"
        case LiveError.notCalibrated(let address): " (run `quench calibrate \(address)`)"
        case CalibrationError.missingLevelCurve: " (--level-curve LEVEL:ML,LEVEL:ML,...)"
        case CalibrationError.unitDoesNotFitSensor(_, let sensor):
            " (the trace is a \(sensor.rawValue) sensor's, by `# sensor:` in its header or --sensor: give its unit, or the other with --sensor)"
        // A capture has no header, and its unit is its profile's (--unit is refused with --btsnoop).
        case CalibrationError.levelCurveForScale where words.contains(where: { $0 == "--btsnoop" || $0.hasPrefix("--btsnoop=") }):
            ": leave out --level-curve: the capture's profile reads a weight"
        case CalibrationError.levelCurveForScale: ": leave out --level-curve (or the header's `# level-curve:`), or, if the trace is a level sensor's, say so with --unit mm|percent|raw"
        case PipelineStore.Failure.noStartTime: "; give --started to store its events"
        case ReplayError.missingUnit: " (use --unit g|kg|lb|oz|mm|percent|raw)"
        case ReplayError.malformedTrace(_, let e) where e.reason == .btsnoopCapture: ": replay it with `quench replay --btsnoop FILE`"
        // What was not given yet: both given, nothing of that device reads as that profile.
        case BTSnoopReplayError.noReadings(_, let device, let profile, _, _, _, _):
            switch (device, profile) {
            case (nil, nil): "; try --device or --profile"
            case (nil, _): "; try --device, or another --profile"
            case (_, nil): "; try --profile"
            default: "; is it the right capture, device and profile?"
            }
        default: nil
        }
    }
}

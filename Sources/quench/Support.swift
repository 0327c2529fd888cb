import ArgumentParser
import QuenchCore
import QuenchGateway
import QuenchHistory
import QuenchStore
import QuenchTools
import QuenchWeb
#if canImport(Glibc)
import Glibc
#endif

/// Runs a command body; an error is printed as `quench: error: …` on stderr
/// and the process exits 1.
func runReporting(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error as ExitCode {
        throw error
    } catch {
        StandardOutput().flush()
        FileHandleStderr.write("quench: error: \(commandLineMessage(for: error))\n")
        throw ExitCode(1)
    }
}

/// An error as this command line says it: the library's fact, then what to
/// type about it, naming this program's commands, options and variables (the
/// libraries name none: the page says the same facts in its own words).
/// Every error a command prints comes through here.
func commandLineMessage(for error: any Error) -> String {
    let text = Quench.message(for: error)
    guard let advice = commandLineAdvice(for: innermost(error)) else { return text }
    if let store = innermost(error) as? StoreError, !store.causeDescription.isEmpty, text.hasSuffix(store.causeDescription) {
        // The advice goes with the message, before SQLite's own words.
        return String(text.dropLast(store.causeDescription.count)) + advice + store.causeDescription
    }
    return text + advice
}

/// The error a wrapper's description ends with (each wrapper says its own words, then its cause's).
private func innermost(_ error: any Error) -> any Error {
    switch error {
    case HistoryError.store(let e): e
    case HistoryError.inOption(_, let e): innermost(e)
    case LiveError.store(let e): e
    case ToolError.live(let e): innermost(e)
    case ToolError.calibration(let e): e
    case ToolError.levelPoints(_, let e): e
    case ReplayError.calibration(_, let e): e
    case PipelineStore.Failure.store(let e): e
    case WebError.history(let e): innermost(e)
    default: error
    }
}

/// What to type about an error, appended to its fact; nil when the fact says it all.
private func commandLineAdvice(for error: any Error) -> String? {
    switch error {
    case let e as StoreError:
        switch e.code {
        case .notFound: " (nothing recorded yet: `quench add 250ml` creates it; --db or QUENCH_DB choose another)"
        case .emptyFile: " (remove it, or choose another --db)"
        case .noSuchEvent: " (see `quench log`)"
        case .tooLong: " (import the file in parts: `quench export --since/--until` makes them)"
        default: nil
        }
    case LiveError.unknownDevice: " (see `quench devices`)"
    case LiveError.noDevices: ": pair one with `quench pair ADDRESS`"
    case LiveError.notCalibrated(let address): " (run `quench calibrate \(address)`)"
    case CalibrationError.missingLevelCurve: " (--level-curve LEVEL:ML,LEVEL:ML,...)"
    case PipelineStore.Failure.noStartTime: "; give --started to store its events"
    case ReplayError.missingUnit: " (use --unit g|kg|lb|oz|mm|percent|raw)"
    case BTSnoopReplayError.noReadings: "; try --device or --profile"
    default: nil
    }
}

enum FileHandleStderr {
    static func write(_ s: String) {
        var s = s
        s.withUTF8 { buf in _ = Glibc.write(2, buf.baseAddress, buf.count) }
    }
}

/// Buffered standard output: printing event by event is too slow for
/// traces with many events.
final class StandardOutput: TextOutputStream {
    private var buffer: [UInt8] = []

    init() { buffer.reserveCapacity(1 << 16) }

    func write(_ s: String) {
        buffer.append(contentsOf: s.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    func flush() {
        // A closed stdout (a pipe to `head`) ends the output, not the command.
        try? writeAll(buffer, to: 1)
        buffer.removeAll(keepingCapacity: true)
    }

    deinit { flush() }
}

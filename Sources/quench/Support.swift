import ArgumentParser
import CommandLineAdvice
import QuenchConfig
import QuenchGateway
import QuenchHistory
import QuenchTools
import QuenchWeb
#if canImport(Glibc)
import Glibc
#endif

/// A number of seconds an option asks for (`--timeout`, `--seconds`): above zero, a year at
/// most, as the config file's durations (`Configuration.duration`).
func parseSeconds(_ text: String) throws -> Double { try duration(text, otherwise: "not a number of seconds > 0, a year at most") }

/// The hidden `--clock-rate` of the tests (how much faster than real time): as quenchd's, above 0, a year at most.
func parseClockRate(_ text: String) throws -> Double { try duration(text, otherwise: "not a rate above 0") }

private func duration(_ text: String, otherwise refusal: String) throws -> Double {
    guard let n = Double(text).flatMap(Configuration.duration) else { throw ValidationError(refusal) }
    return n
}

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
/// type about it (`CommandLineAdvice`). Every error a command prints comes through here.
func commandLineMessage(for error: any Error) -> String {
    let leaf = innermost(error)
    return CommandLineAdvice.message(Quench.message(for: error), leaf: leaf) + (historyAdvice(for: leaf) ?? "")
}

/// What to type about the history's own facts (`CommandLineAdvice` is quenchd's too, which has no history commands).
private func historyAdvice(for leaf: any Error) -> String? {
    switch leaf {
    case HistoryError.unchanged(let id, true): "; `quench restore \(id)` brings it back"
    case HistoryError.unchanged(_, false): "; `quench log --deleted` lists deleted events"
    default: nil
    }
}

/// The error a wrapper of these layers ends its description with (the gateway's own, `CommandLineAdvice` unwraps).
private func innermost(_ error: any Error) -> any Error {
    switch error {
    case HistoryError.store(let e): e
    case HistoryError.inOption(_, let e): innermost(e)
    case ToolError.live(let e): e
    case ToolError.calibration(let e): e
    case ToolError.levelPoints(_, let e): e
    case WebError.history(let e): innermost(e)
    default: error
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

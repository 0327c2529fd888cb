import ArgumentParser
import CommandLineAdvice
import QuenchConfig
import QuenchGateway
import QuenchHistory
import QuenchTools
import QuenchWeb
import Synchronization
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
        do { try writeAll(buffer, to: 1) } catch { StandardOutputCheck.note(error.errno) }
        buffer.removeAll(keepingCapacity: true)
    }

    deinit { flush() }
}

/// Whether standard output took everything a command wrote. An error writing it (a full disk
/// under `> file`, an I/O error) is the command's failure: `quench export > /mnt/usb/all.csv` on a
/// full stick cut the file mid-row and exited 0. A reader that went away (`quench log | head`)
/// ends the process by SIGPIPE, as any filter's, and is no error.
enum StandardOutputCheck {
    private static let firstError = Atomic<Int32>(0)

    static func note(_ code: Int32) {
        guard code != EPIPE else { return }
        _ = firstError.compareExchange(expected: 0, desired: code == 0 ? EIO : code, ordering: .relaxed)
    }

    /// Flushes what `print` holds; nil when everything was written, else why not.
    static func lost() -> String? {
        // Every stream: the one `print` writes to is all there is (a global C variable Swift 6 will not name).
        if fflush(nil) != 0 { note(errno) }
        let code = firstError.load(ordering: .relaxed)
        return code == 0 ? nil : String(cString: strerror(code))
    }

    /// Exits 74 (EX_IOERR), said on standard error, when the output was not all written. Not 1: what the
    /// command did is done (`quench add` stored the drink), and a script that retried on 1 would do it twice.
    static func exitIfLost() {
        guard let reason = lost() else { return }
        FileHandleStderr.write("quench: error: standard output could not be written (\(reason)): what was printed is incomplete; "
                               + "anything the command changed is changed\n")
        Glibc.exit(74)
    }
}

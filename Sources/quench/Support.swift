import ArgumentParser
import QuenchGateway
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
        FileHandleStderr.write("quench: error: \(error)\n")
        throw ExitCode(1)
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

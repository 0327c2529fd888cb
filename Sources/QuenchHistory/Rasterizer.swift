import FoundationEssentials
import QuenchCore
import Threading
#if canImport(Glibc)
import Glibc
#endif

/// SVG to PNG through librsvg's `rsvg-convert` (Debian `librsvg2-bin`), run as a
/// child process: a well-kept rasterizer with real text layout (Pango, fonts
/// from fontconfig: `fonts-dejavu-core` for DejaVu Sans), rather than one of our
/// own. Run directly, never through a shell, and stopped after `timeout`.
public struct SVGRasterizer: Sendable {
    public static let program = "rsvg-convert"
    /// The Debian packages that provide the program and the charts' font.
    public static let packages = "librsvg2-bin fonts-dejavu-core"
    public static let installCommand = "apt-get install -y \(packages)"

    /// The program's path; nil when it is not installed.
    public var executable: String?
    /// Seconds before the child is killed: a 1200 × 630 card takes well under
    /// a second, even on a Raspberry Pi; a wedged child must not hold the command.
    public var timeout: Double

    public init(executable: String?, timeout: Double = 30) {
        self.executable = executable
        self.timeout = timeout
    }

    /// `rsvg-convert` on `PATH` (from `variables`, else the usual directories).
    public static func find(variables: [String: String] = ProcessInfo.processInfo.environment, timeout: Double = 30) -> SVGRasterizer {
        let path = variables["PATH"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/bin:/usr/bin:/bin"
        let found = path.split(separator: ":").map { "\($0)/\(program)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
        return SVGRasterizer(executable: found, timeout: timeout)
    }

    /// Renders `svg` at `width` × `height` pixels into a PNG at `path`. The PNG
    /// is written beside it under a temporary name and renamed into place, so a
    /// failure never leaves half a file where the card should be.
    public func writePNG(svg: String, width: Int, height: Int, to path: String) throws(RasterError) {
        guard let executable else { throw .notInstalled }
        let destination: OutputDestination
        do { destination = try OutputDestination.of(path) } catch { throw .file(path: path, cause: error) }
        // Beside the file it replaces (a rename within one file system); for a device, in the temporary folder.
        let beside = switch destination {
        case .replace(let file): file
        case .stream: (ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp") + "/quench-card"
        }
        // Unique per call, so two cards written at once (a web server) do not share temporary files.
        let unique = "\(beside).\(ProcessInfo.processInfo.processIdentifier).\(UInt32.random(in: .min ... .max))"
        let input = unique + ".in.svg", output = unique + ".out.png"
        defer {
            try? FileManager.default.removeItem(atPath: input)
            try? FileManager.default.removeItem(atPath: output)
        }
        // Named by the card's path: the temporary file beside it is ours, not the person's.
        do { try Data(svg.utf8).write(to: URL(fileURLWithPath: input)) } catch { throw .file(path: path, cause: error) }
        let arguments = ["--format", "png", "--width", String(width), "--height", String(height), "--output", output, input]
        switch ChildProcess.run(executable, arguments, timeout: timeout) {
        case .exited(0, _): break
        case .exited(let status, _): throw .failed(program: executable, status: status)
        case .killed(let signal): throw .killed(program: executable, signal: signal)
        case .timedOut: throw .timedOut(program: executable, seconds: timeout)
        case .cannotStart(let code): throw .cannotStart(program: executable, errno: code)
        }
        switch destination {
        case .replace(let file):
            // rename(2) replaces an older card in one step.
            guard rename(output, file) == 0 else { throw .rename(path: path, errno: errno) }
        case .stream(let device):
            do {
                let png = try Data(contentsOf: URL(fileURLWithPath: output))
                try OutputDestination.stream(Array(png), into: device)
            } catch {
                throw .file(path: path, cause: error)
            }
        }
    }
}

/// Why an SVG could not be made a PNG; each case says what to do about it.
public enum RasterError: Error, Sendable, CustomStringConvertible {
    case notInstalled
    case cannotStart(program: String, errno: Int32)
    /// It ran and failed; its own message went to standard error just before.
    case failed(program: String, status: Int32)
    case killed(program: String, signal: Int32)
    case timedOut(program: String, seconds: Double)
    case file(path: String, cause: any Error)
    case rename(path: String, errno: Int32)

    public var description: String {
        switch self {
        case .notInstalled:
            "cannot write a PNG: \(SVGRasterizer.program) is not installed (Debian: \(SVGRasterizer.installCommand)); "
                + "or write the card as SVG (--out card.svg)"
        case .cannotStart(let program, let code): "cannot run \(program): \(errnoDescription(code))"
        case .failed(let program, let status): "\(program) failed (exit status \(status))"
        case .killed(let program, let signal): "\(program) was killed by signal \(signal)"
        case .timedOut(let program, let seconds): "\(program) did not finish within \(Int(saturating: seconds)) s; stopped"
        case .file(let path, let cause): "\(path): \(describeFileError(cause))"
        case .rename(let path, let code): "cannot write \(path): \(errnoDescription(code))"
        }
    }
}

/// A file error as people read it: Foundation's errors for files carry the
/// system's errno underneath ("No such file or directory (errno 2)"), which says
/// more than the error domain's wording; anything else as it describes itself.
/// The cause itself is kept whole in the error; this is only its text.
func describeFileError(_ error: any Error) -> String {
    if let posix = (error as? CocoaError)?.underlying as? POSIXError { return errnoDescription(posix.code.rawValue) }
    return "\(error)"
}

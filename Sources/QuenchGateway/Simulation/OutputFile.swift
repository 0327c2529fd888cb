#if canImport(Glibc)
import Glibc
#endif
import Threading

/// A file written through a buffer into a temporary name and renamed into
/// place on `commit()`: a failed or interrupted write never leaves a
/// half-written file under the real name.
public final class OutputFile {
    public let path: String
    /// Where it is written until `commit()`; nil when writing straight into a device or FIFO (`OutputDestination.stream`).
    public let temporaryPath: String?
    private var fd: Int32
    private var buffer: [UInt8] = []
    private var committed = false

    /// The partial file is created exclusively and never through a symlink
    /// (`O_EXCL|O_NOFOLLOW`): a link planted under the name in a shared folder
    /// is not followed, another name is taken instead. `path` itself may be a link
    /// (the file it names is replaced), or a device or FIFO (written into).
    public init(path given: String) throws(OutputFileError) {
        // `-`: this process's standard output, written into as it is: a file it was redirected
        // to (`>> all.csv`) is appended to, never replaced, as /dev/stdout would have been.
        if given == "-" {
            path = "standard output"
            temporaryPath = nil
            fd = dup(STDOUT_FILENO)
            guard fd >= 0 else { throw OutputFileError(path: path, SystemError("dup", errno: errno)) }
            return
        }
        let destination: OutputDestination
        do { destination = try OutputDestination.of(given) } catch { throw OutputFileError(refused: error) }
        switch destination {
        case .stream(let device):
            path = device
            temporaryPath = nil
            do { fd = try OutputDestination.openStream(device) } catch {
                guard case .cannotWrite(_, let code) = error else { throw OutputFileError(refused: error) }
                throw OutputFileError(path: device, SystemError("open", errno: code))
            }
            return
        case .replace(let file):
            path = file
        }
        let path = self.path
        var attempt = 0
        while true {
            let candidate = path + ".partial-\(getpid())" + (attempt == 0 ? "" : "-\(attempt)")
            let opened = open(candidate, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
            if opened >= 0 {
                temporaryPath = candidate
                fd = opened
                break
            }
            let code = errno
            attempt += 1
            guard code == EEXIST || code == ELOOP, attempt < 100 else {
                throw OutputFileError(path: path, SystemError("open", errno: code))
            }
        }
        buffer.reserveCapacity(1 << 16)
    }

    public func write(_ text: String) throws(OutputFileError) {
        guard !committed else { return }
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { try flush() }
    }

    private func flush() throws(OutputFileError) {
        do { try writeAll(buffer, to: fd) } catch { throw OutputFileError(path: path, error) }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Flushes, syncs and renames the file into place (a device or FIFO: flushes and closes it).
    public func commit() throws(OutputFileError) {
        try finishWriting()
        try putInPlace()
    }

    /// Flushes, syncs and closes the file, not yet under its name: files that belong together (a trace
    /// and its truth) are all written before any is put in place, so one that fails leaves none.
    public func finishWriting() throws(OutputFileError) {
        guard fd >= 0 else { return }
        try flush()
        if temporaryPath != nil, fsync(fd) != 0 { throw OutputFileError(path: path, SystemError("fsync", errno: errno)) }
        close(fd)
        fd = -1
    }

    /// Renames the finished file into place (`finishWriting` first).
    public func putInPlace() throws(OutputFileError) {
        if let temporaryPath, !committed {
            guard rename(temporaryPath, path) == 0 else { throw OutputFileError(path: path, SystemError("rename", errno: errno)) }
        }
        committed = true
    }

    /// Gives the file up: closes and removes the partial file now (and later
    /// writes are ignored), without waiting for the last reference to go.
    public func discard() {
        if fd >= 0 { close(fd) }
        fd = -1
        if !committed, let temporaryPath { unlink(temporaryPath) }
        committed = true
        buffer.removeAll()
    }

    deinit {
        if fd >= 0 { close(fd) }
        if !committed, let temporaryPath { unlink(temporaryPath) }
    }
}

/// Writes all of `bytes` to `fd`, resuming after short writes and EINTR (`writeFully`).
public func writeAll(_ bytes: [UInt8], to fd: Int32) throws(SystemError) {
    do { try writeFully(bytes, to: fd) } catch { throw SystemError("write", errno: error.code) }
}

public struct OutputFileError: Error, Sendable, CustomStringConvertible {
    public var path: String
    /// The call that failed; nil when the path is no place to write (`refused`).
    public var cause: SystemError?
    public var refused: OutputDestinationError?
    public init(path: String, _ cause: SystemError) {
        self.path = path
        self.cause = cause
    }
    public init(refused: OutputDestinationError) {
        path = refused.path
        self.refused = refused
    }
    public var description: String {
        if let refused { return refused.description }
        return "\(path): cannot write: " + (cause.map { "\($0)" } ?? "")
    }
}

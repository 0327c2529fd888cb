#if canImport(Glibc)
import Glibc

/// Opens a file that must be a regular one (a configuration, a profile, a secret, a
/// token) without waiting on what is not: open(2) of a FIFO for reading blocks until
/// something writes to it, so a configuration path that named a pipe hung `quenchd`
/// at boot with nothing said. The file is opened non-blocking, looked at, and only a
/// regular file is kept (blocking again, as reads of it expect).
public enum RegularFile {
    /// Why a file was not opened.
    public enum Problem: Error, Sendable, Equatable {
        /// open(2) or fstat(2) failed with this errno (ENOENT: there is none).
        case errno(Int32)
        /// It is a folder, a pipe, a device or a socket.
        case notRegular
    }

    /// A descriptor of the regular file at `path`, for reading; the caller closes it.
    public static func openForReading(_ path: String) -> Result<Int32, Problem> {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { return .failure(.errno(errno)) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            return .failure(.errno(code))
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            return .failure(.notRegular)
        }
        let flags = fcntl(fd, F_GETFL)
        if flags >= 0 { _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }
        return .success(fd)
    }
}
#endif

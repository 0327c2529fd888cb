#if canImport(Glibc)
import Glibc

/// Where a command's `--out PATH` goes. A regular file (or nothing yet) is
/// replaced in one step: written beside it under a temporary name and renamed,
/// so a failure never leaves half a file. A symbolic link is followed to the
/// file it names, which is replaced the same way, as a shell's `>` writes
/// through a link. A character device or a FIFO (`/dev/null`, `/dev/stdout`, a
/// pipe) is written into, never replaced: run as root, a rename over
/// `/dev/null` made it a regular file for every program on the machine.
public enum OutputDestination: Sendable, Equatable {
    /// Replace the regular file at this path (a link already followed).
    case replace(String)
    /// Write straight into this device or FIFO.
    case stream(String)

    /// What `path` is now, or why nothing can be written there.
    public static func of(_ path: String) throws(OutputDestinationError) -> OutputDestination {
        var followed = stat()
        guard stat(path, &followed) == 0 else {
            let code = errno
            var link = stat()
            if lstat(path, &link) == 0 { throw .danglingLink(path: path) }
            // Nothing there yet (its folder is checked when the file is created).
            guard code == ENOENT else { throw .cannotLook(path: path, errno: code) }
            return .replace(path)
        }
        switch followed.st_mode & S_IFMT {
        case S_IFREG:
            var link = stat()
            guard lstat(path, &link) == 0, link.st_mode & S_IFMT == S_IFLNK else { return .replace(path) }
            guard let resolved = realpath(path, nil) else { throw .cannotLook(path: path, errno: errno) }
            defer { free(resolved) }
            return .replace(String(cString: resolved))
        case S_IFCHR, S_IFIFO:
            return .stream(path)
        case S_IFDIR:
            throw .notAFile(path: path, what: "a folder")
        case S_IFBLK:
            throw .notAFile(path: path, what: "a disk device")
        default:
            throw .notAFile(path: path, what: "a socket")
        }
    }

    /// Opens the device or FIFO at `path` for writing (never creating it, never as a controlling terminal).
    public static func openStream(_ path: String) throws(OutputDestinationError) -> Int32 {
        let fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { throw .cannotWrite(path: path, errno: errno) }
        return fd
    }

    /// Writes all of `bytes` into the device or FIFO at `path`.
    public static func stream(_ bytes: [UInt8], into path: String) throws(OutputDestinationError) {
        let fd = try openStream(path)
        defer { close(fd) }
        do { try writeFully(bytes, to: fd) } catch { throw .cannotWrite(path: path, errno: error.code) }
    }

    /// Whether two paths name one file: the same file now (device and inode, so
    /// `./t.csv`, a link or a hard link count), or the same place in a folder
    /// for a file not made yet. Two outputs of one command must not be one file.
    public static func sameFile(_ a: String, _ b: String) -> Bool {
        if a == b { return true }
        var first = stat(), second = stat()
        if stat(a, &first) == 0, stat(b, &second) == 0 { return first.st_dev == second.st_dev && first.st_ino == second.st_ino }
        func place(_ path: String) -> String? {
            let folder = OwnerOnlyFolder.folder(of: path)
            let name = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? path
            guard let resolved = realpath(folder.isEmpty ? "." : folder, nil) else { return nil }
            defer { free(resolved) }
            return String(cString: resolved) + "/" + name
        }
        return place(a).map { $0 == place(b) } ?? false
    }
}

/// Why `--out` cannot be written, naming the path.
public enum OutputDestinationError: Error, Sendable, Equatable, CustomStringConvertible {
    case danglingLink(path: String)
    case notAFile(path: String, what: String)
    case cannotLook(path: String, errno: Int32)
    case cannotWrite(path: String, errno: Int32)

    public var path: String {
        switch self {
        case .danglingLink(let path), .notAFile(let path, _), .cannotLook(let path, _), .cannotWrite(let path, _): path
        }
    }

    public var description: String {
        switch self {
        case .danglingLink(let path): "\(path): a link to nothing; give the file itself"
        case .notAFile(let path, let what): "\(path) is \(what), not a file to write"
        case .cannotLook(let path, let code): "\(path): \(errnoDescription(code))"
        case .cannotWrite(let path, let code): "cannot write \(path): \(errnoDescription(code))"
        }
    }
}
#endif

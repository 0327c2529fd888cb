import CSQLite
import QuenchCore
import Threading
#if canImport(Glibc)
import Glibc
#endif

/// A consistent copy of a live database in a new file: what a backup, the copy
/// kept before a migration and the history a restore replaces are made of.
///
/// SQLite's online backup (`sqlite3_backup_*`, https://sqlite.org/backup.html)
/// copies every page in one step, inside one read transaction of the source: in
/// WAL mode that is a snapshot of the last commit, and writers in other
/// processes go on meanwhile. The copy is written under a hidden name beside its
/// final one, switched to a rollback journal (one self-contained file), checked
/// whole with `PRAGMA integrity_check`, synced, and only then renamed into place:
/// a file with the final name is always a complete, checked database.
enum DatabaseCopy {
    struct Written: Sendable {
        var path: String
        var bytes: Int64
        /// Migrations applied in the copy (its schema version).
        var schemaVersion: Int
        var events: Int
    }

    /// Writes what `source` reads into the new file `path` (refused if it exists).
    /// `owner`: when running as root, the copy is handed to this user (the
    /// database's owner), so the service that owns the history can read and rotate it.
    static func write(from source: SQLiteConnection, to path: String, owner: (uid: uid_t, gid: gid_t)?,
                      busyTimeout: Double) throws(StoreError) -> Written {
        var info = stat()
        if lstat(path, &info) == 0 {
            throw StoreError(.cannotOpen, path: path, "\(path) already exists; it was left as it is")
        }
        let staging = stagingPath(for: path, purpose: "partial")
        defer { removeWithSideFiles(staging) }
        try createExclusive(staging, purpose: path)
        let written: Written
        do {
            written = try copyAndCheck(from: source, into: staging, busyTimeout: busyTimeout)
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.wrap(error, path: path, doing: "writing the copy \(path)")
        }
        try sync(staging, path: path)
        if let owner, geteuid() == 0 { _ = chown(staging, owner.uid, owner.gid) }
        if lstat(path, &info) == 0 {
            throw StoreError(.cannotOpen, path: path, "\(path) already exists; it was left as it is")
        }
        guard rename(staging, path) == 0 else {
            throw StoreError(.io, path: path, "cannot rename the copy into \(path)", cause: posixError(errno))
        }
        syncFolder(of: path)
        return Written(path: path, bytes: written.bytes, schemaVersion: written.schemaVersion, events: written.events)
    }

    private static func copyAndCheck(from source: SQLiteConnection, into staging: String, busyTimeout: Double) throws -> Written {
        let destination = try SQLiteConnection(path: staging, readOnly: false, busyTimeout: busyTimeout)
        try copyPages(from: source, into: destination, busyTimeout: busyTimeout)
        // The copied header says WAL when the source is: make it one file again.
        try destination.execute("PRAGMA journal_mode = DELETE")
        try checkIntegrity(destination, path: staging)
        let version = try Schema.appliedCount(destination)
        let hasEvents = try destination.first("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'intake_event'") { _ in true } ?? false
        let events = hasEvents ? try destination.first("SELECT count(*) FROM intake_event") { row -> Int in row[0] } ?? 0 : 0
        var info = stat()
        let bytes = stat(staging, &info) == 0 ? Int64(info.st_size) : 0
        return Written(path: staging, bytes: bytes, schemaVersion: version, events: events)
    }

    /// Every page of `source`'s main database into `destination`'s, in one step
    /// (one snapshot); waits out a lock up to `busyTimeout`.
    static func copyPages(from source: SQLiteConnection, into destination: SQLiteConnection, busyTimeout: Double) throws(SQLiteError) {
        let backup = try start(from: source, into: destination)
        try step(backup, pages: -1, destination: destination, busyTimeout: busyTimeout)
        try finish(backup, destination: destination)
    }

    static func start(from source: SQLiteConnection, into destination: SQLiteConnection) throws(SQLiteError) -> OpaquePointer {
        guard let backup = sqlite3_backup_init(destination.handle, "main", source.handle, "main") else {
            throw destination.lastError("backup")
        }
        return backup
    }

    /// `pages` 0 takes the destination's write lock and copies nothing: the
    /// lock is then held until the copy ends (restore relies on this).
    /// Returns whether the copy is complete.
    @discardableResult
    static func step(_ backup: OpaquePointer, pages: Int32, destination: SQLiteConnection, busyTimeout: Double) throws(SQLiteError) -> Bool {
        let deadline = Deadline(seconds: busyTimeout)
        while true {
            let status = sqlite3_backup_step(backup, pages)
            switch status {
            case SQLITE_DONE: return true
            case SQLITE_OK: return false
            case SQLITE_BUSY where !deadline.hasPassed, SQLITE_LOCKED where !deadline.hasPassed:
                usleep(20_000)
            default:
                let error = SQLiteError(extendedCode: status, message: String(cString: sqlite3_errstr(status)), sql: "backup")
                sqlite3_backup_finish(backup)
                throw error
            }
        }
    }

    /// Ends the copy: a complete one is committed, an incomplete one rolled back.
    static func finish(_ backup: OpaquePointer, destination: SQLiteConnection) throws(SQLiteError) {
        let status = sqlite3_backup_finish(backup)
        guard status == SQLITE_OK else { throw destination.lastError("backup") }
    }

    /// `PRAGMA integrity_check` on the whole file: its first complaint, as a `.corrupt` error.
    static func checkIntegrity(_ db: SQLiteConnection, path: String) throws {
        let lines = try db.all("PRAGMA integrity_check(5)") { row -> String in row[0] }
        guard lines == ["ok"] else {
            throw StoreError(.corrupt, path: path, "integrity_check: " + lines.joined(separator: "; ").shownSafely(limit: 300))
        }
    }

    // MARK: - Files

    /// `BASE.sqlite`, or `BASE-2.sqlite` (and so on) when that is taken.
    static func freePath(_ base: String) -> String {
        var info = stat()
        var candidate = base + ".sqlite"
        var n = 1
        while lstat(candidate, &info) == 0, n < 1000 {
            n += 1
            candidate = base + "-\(n).sqlite"
        }
        return candidate
    }

    /// `.NAME.PURPOSE-PID` beside `path`: hidden, and never a name the rotation
    /// or the store looks at. One left by a process that no longer runs (killed
    /// midway) is removed first.
    static func stagingPath(for path: String, purpose: String) -> String {
        let (folder, name) = split(path)
        removeLeftovers(in: folder.isEmpty ? "." : folder, purpose: purpose)
        return (folder.isEmpty ? "" : folder + "/") + ".\(name).\(purpose)-\(getpid())"
    }

    /// Hidden `.NAME.PURPOSE-<pid>` files (and their side files) of processes
    /// that are gone, whatever NAME (a copy's name carries its time).
    private static func removeLeftovers(in folder: String, purpose: String) {
        guard let directory = opendir(folder) else { return }
        var gone: [String] = []
        let marker = ".\(purpose)-"
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            let bytes = Array(name.utf8), mark = Array(marker.utf8)
            guard bytes.first == UInt8(ascii: "."), bytes.count > mark.count,
                  let at = (0...(bytes.count - mark.count)).last(where: { Array(bytes[$0..<($0 + mark.count)]) == mark })
            else { continue }
            var digits = Substring(String(decoding: bytes[(at + mark.count)...], as: UTF8.self))
            for suffix in ["-journal", "-wal", "-shm"] where digits.hasSuffix(suffix) { digits = digits.dropLast(suffix.count) }
            guard let pid = pid_t(digits), pid > 0, pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            gone.append(folder + "/" + name)
        }
        closedir(directory)
        for file in gone { unlink(file) }
    }

    /// The folder (empty for the working directory) and the file's name.
    static func split(_ path: String) -> (folder: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return ("", path) }
        let folder = slash == path.startIndex ? "/" : String(path[..<slash])
        return (folder, String(path[path.index(after: slash)...]))
    }

    /// A new owner-only file, never through a symlink; a leftover of this
    /// process id (a copy killed midway) is replaced.
    static func createExclusive(_ path: String, purpose: String) throws(StoreError) {
        for attempt in 0..<2 {
            let fd = open(path, O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY | O_CLOEXEC, 0o600)
            if fd >= 0 { close(fd); return }
            let code = errno
            if code == EEXIST, attempt == 0 { removeWithSideFiles(path); continue }
            throw StoreError(code == EACCES || code == EROFS ? .readOnly : code == ENOSPC ? .diskFull : .cannotOpen, path: purpose,
                             "cannot create \(path) for \(purpose)", cause: posixError(code))
        }
    }

    static func removeWithSideFiles(_ path: String) {
        for suffix in ["", "-journal", "-wal", "-shm"] { unlink(path + suffix) }
    }

    static func sync(_ file: String, path: String) throws(StoreError) {
        let fd = open(file, O_RDONLY | O_CLOEXEC)
        guard fd >= 0, fsync(fd) == 0 else {
            let code = errno
            if fd >= 0 { close(fd) }
            throw StoreError(code == ENOSPC ? .diskFull : .io, path: path, "cannot sync \(file) to disk", cause: posixError(code))
        }
        close(fd)
    }

    /// Makes a rename in the folder of `path` durable; a file system that
    /// cannot sync folders (some network shares) is taken as it is.
    static func syncFolder(of path: String) {
        let folder = split(path).folder
        let fd = open(folder.isEmpty ? "." : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }

    static func posixError(_ code: Int32) -> POSIXErrorWords { POSIXErrorWords(code: code) }
}

/// errno in words, as a `StoreError`'s cause.
struct POSIXErrorWords: Error, Sendable, CustomStringConvertible {
    var code: Int32
    var description: String { errnoDescription(code) }
}

extension SQLiteConnection {
    /// The connection's last error, for the statement or step `what`.
    func lastError(_ what: String) -> SQLiteError {
        SQLiteError(extendedCode: sqlite3_extended_errcode(handle), message: String(cString: sqlite3_errmsg(handle)), sql: what)
    }
}

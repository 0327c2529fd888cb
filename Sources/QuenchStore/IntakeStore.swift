import FoundationEssentials
import QuenchCore
import Threading
#if canImport(Glibc)
import Glibc
#endif

/// The intake history in one SQLite file: the façade every pipeline and command
/// goes through, with methods named for intent.
///
/// WAL journal, so readers never block the writer; every write is one
/// `BEGIN IMMEDIATE` transaction, so a second writer waits (busy timeout) rather
/// than failing midway, and nothing is ever half-written. SQLite's C API is
/// used directly: the gateway runs for months on a Pi, and a database framework
/// would bring Foundation's megabytes into its resident memory.
public final class IntakeStore: Sendable {
    public enum OpenMode: Sendable {
        /// Create the file (0600, directory 0700) when it is missing.
        case create
        /// Fail with `.notFound` when the file is missing.
        case existing
    }

    public let path: String
    /// True when the file could not be opened for writing; writes then fail with `.readOnly`.
    public let isReadOnly: Bool
    /// One connection, used by one thread at a time.
    private let connection: Condition<SQLiteConnection>

    /// Opens (and migrates) the database at `path`.
    /// - Parameter busyTimeout: how long a write waits for another process's lock.
    public init(path: String, mode: OpenMode = .create, busyTimeout: Double = 10) throws(StoreError) {
        self.path = path
        var info = stat()
        let exists = stat(path, &info) == 0
        if exists, info.st_mode & S_IFMT == S_IFDIR {
            throw StoreError(.cannotOpen, path: path, "cannot open the database \(path): it is a directory")
        }
        if !exists {
            guard mode == .create else {
                throw StoreError(.notFound, path: path, "no database at \(path) (nothing recorded yet: `quench add 250ml` or `quench demo` creates it; --db or QUENCH_DB choose another)")
            }
            try Self.createFile(path)
        }
        // Read-only when we cannot write, or when nobody may (`chmod a-w`): root
        // passes access(2) on any file, yet a file without write bits was made
        // read-only on purpose.
        let directory = Self.directory(of: path)
        let readOnly = access(path, W_OK) != 0
            || access(directory.isEmpty ? "." : directory, W_OK) != 0
            || (stat(path, &info) == 0 && info.st_mode & 0o222 == 0)
        self.isReadOnly = readOnly

        let db: SQLiteConnection
        do {
            db = try SQLiteConnection(path: path, readOnly: readOnly, busyTimeout: busyTimeout)
            // Sorting and grouping in memory: a temporary file costs more than the query.
            try db.execute("PRAGMA temp_store = MEMORY; PRAGMA foreign_keys = ON")
            // Reading the header here makes a file that is not a database fail now, untouched.
            if !readOnly { try db.execute("PRAGMA journal_mode = WAL") }
        } catch {
            throw StoreError.wrap(error, path: path, doing: "opening the database")
        }
        try Self.migrate(db, path: path, readOnly: readOnly)
        connection = Condition(db)
    }

    private static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// An empty file with owner-only permissions: SQLite treats it as an empty
    /// database, and gives its -wal and -shm files the same mode.
    private static func createFile(_ path: String) throws(StoreError) {
        let directory = Self.directory(of: path)
        if !directory.isEmpty, !FileManager.default.fileExists(atPath: directory) {
            do {
                try FileManager.default.createDirectory(
                    atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw StoreError(.cannotOpen, path: path, "cannot create the directory \(directory)", cause: error)
            }
        }
        let fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        if fd < 0 {
            let code = errno
            if code == EEXIST { return }  // another process created it first: fine
            let cause = POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
            throw StoreError(code == EACCES || code == EROFS ? .readOnly : .cannotOpen, path: path,
                             "cannot create the database \(path)", cause: cause)
        }
        close(fd)
    }

    private static func migrate(_ db: SQLiteConnection, path: String, readOnly: Bool) throws(StoreError) {
        do {
            // The common case, read-only friendly: nothing to do.
            if try Schema.appliedCount(db) >= Schema.migrations.count { return }
            if readOnly {
                throw StoreError(.needsMigration, path: path, "the database \(path) needs an upgrade but is read-only")
            }
            try Schema.migrate(db)
        } catch {
            throw StoreError.wrap(error, path: path, doing: "opening the database")
        }
    }

    // MARK: - Access helpers

    /// One immediate transaction: all of `body` or nothing.
    func write<T>(_ what: String, _ body: (SQLiteConnection) throws -> T) throws(StoreError) -> T {
        if isReadOnly {
            throw StoreError(.readOnly, path: path, "\(what) failed: the database \(path) is read-only (check the permissions of the file and its directory)")
        }
        do {
            return try connection.withLock { db in try db.transaction(immediate: true) { try body(db) } }
        } catch {
            throw StoreError.wrap(error, path: path, doing: what)
        }
    }

    /// One read transaction: every query in `body` sees the same snapshot.
    func read<T>(_ what: String, _ body: (SQLiteConnection) throws -> T) throws(StoreError) -> T {
        do {
            return try connection.withLock { db in try db.transaction(immediate: false) { try body(db) } }
        } catch {
            throw StoreError.wrap(error, path: path, doing: what)
        }
    }
}

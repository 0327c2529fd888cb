import Foundation
import GRDB
import QuenchCore

/// The intake history in one SQLite file: the façade every pipeline and command
/// goes through, with methods named for intent.
///
/// WAL journal, so readers never block the writer; every write is one
/// `BEGIN IMMEDIATE` transaction, so a second writer waits (busy timeout) rather
/// than failing midway, and nothing is ever half-written.
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
    let queue: DatabaseQueue

    /// Opens (and migrates) the database at `path`.
    /// - Parameter busyTimeout: how long a write waits for another process's lock.
    public init(path: String, mode: OpenMode = .create, busyTimeout: TimeInterval = 10) throws(StoreError) {
        self.path = path
        let fm = FileManager.default
        var isDirectory: ObjCBool = false
        let exists = fm.fileExists(atPath: path, isDirectory: &isDirectory)
        if exists, isDirectory.boolValue {
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
        let directory = (path as NSString).deletingLastPathComponent
        var info = stat()
        let readOnly = access(path, W_OK) != 0
            || access(directory.isEmpty ? "." : directory, W_OK) != 0
            || (stat(path, &info) == 0 && info.st_mode & 0o222 == 0)
        self.isReadOnly = readOnly

        var config = Configuration()
        config.readonly = readOnly
        config.journalMode = .wal
        config.busyMode = .timeout(busyTimeout)
        config.foreignKeysEnabled = true
        config.label = "quench"
        config.prepareDatabase { db in
            // Sorting and grouping in memory: a temporary file costs more than the query.
            try db.execute(sql: "PRAGMA temp_store = MEMORY")
        }
        do {
            queue = try DatabaseQueue(path: path, configuration: config)
        } catch {
            throw StoreError.wrap(error, path: path, doing: "opening the database")
        }
        try migrate()
    }

    /// An empty file with owner-only permissions: SQLite treats it as an empty
    /// database, and gives its -wal and -shm files the same mode.
    private static func createFile(_ path: String) throws(StoreError) {
        let directory = (path as NSString).deletingLastPathComponent
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

    private func migrate() throws(StoreError) {
        let migrator = Schema.migrator
        do {
            // The common case, read-only friendly: nothing to do. (A database from a
            // newer Quench also passes: its extra migrations only add.)
            if try queue.read({ try migrator.hasCompletedMigrations($0) }) { return }
            if isReadOnly {
                throw StoreError(.needsMigration, path: path, "the database \(path) needs an upgrade but is read-only")
            }
            do {
                try migrator.migrate(queue)
            } catch {
                // Two processes creating the database at once: the loser's migration
                // fails on tables the winner just made. Done is done.
                if try queue.read({ try migrator.hasCompletedMigrations($0) }) { return }
                throw error
            }
        } catch {
            throw StoreError.wrap(error, path: path, doing: "opening the database")
        }
    }

    // MARK: - Access helpers

    /// One immediate transaction: takes the write lock up front (waiting up to the
    /// busy timeout), so it never fails halfway on a lock upgrade.
    func write<T>(_ what: String, _ body: (Database) throws -> T) throws(StoreError) -> T {
        if isReadOnly {
            throw StoreError(.readOnly, path: path, "\(what) failed: the database \(path) is read-only (check the permissions of the file and its directory)")
        }
        do {
            return try queue.writeWithoutTransaction { db in
                var result: T?
                try db.inTransaction(.immediate) {
                    result = try body(db)
                    return .commit
                }
                return result!
            }
        } catch {
            throw StoreError.wrap(error, path: path, doing: what)
        }
    }

    func read<T>(_ what: String, _ body: (Database) throws -> T) throws(StoreError) -> T {
        do {
            return try queue.read(body)
        } catch {
            throw StoreError.wrap(error, path: path, doing: what)
        }
    }
}

import CSQLite
#if canImport(Glibc)
import Glibc
#endif

/// Why a store operation failed. A struct with a code, a message for people and
/// the underlying cause (usually an `SQLiteError`, which keeps SQLite's
/// extended result code), in the manner of swift-nio's `FileSystemError`.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// No database file at the path (and the operation does not create one).
        public static let notFound = Code(rawValue: "not-found")
        /// The file exists but is not an SQLite database (SQLITE_NOTADB).
        public static let notADatabase = Code(rawValue: "not-a-database")
        /// The file exists but is empty, and not one Quench made (owner-only): not a database, untouched.
        public static let emptyFile = Code(rawValue: "empty-file")
        /// The database's content is damaged (SQLITE_CORRUPT).
        public static let corrupt = Code(rawValue: "corrupt")
        /// The file or its directory cannot be written (SQLITE_READONLY, EACCES).
        public static let readOnly = Code(rawValue: "read-only")
        /// The disk (or the database's size limit) is full (SQLITE_FULL).
        public static let diskFull = Code(rawValue: "disk-full")
        /// Another connection held the lock longer than the busy timeout.
        public static let busy = Code(rawValue: "busy")
        /// A write would hold the database longer than `IntakeStore.longestWrite` (an import too large at once).
        public static let tooLong = Code(rawValue: "too-long")
        /// The file could not be opened or created (SQLITE_CANTOPEN, permissions).
        public static let cannotOpen = Code(rawValue: "cannot-open")
        /// A value broke a schema rule (SQLITE_CONSTRAINT) or the API's preconditions.
        public static let invalidValue = Code(rawValue: "invalid-value")
        /// No intake event with that id.
        public static let noSuchEvent = Code(rawValue: "no-such-event")
        /// The database was written by a newer Quench (unknown migrations).
        public static let schemaTooNew = Code(rawValue: "schema-too-new")
        /// The database needs migrations but was opened read-only.
        public static let needsMigration = Code(rawValue: "needs-migration")
        /// Its upgrade to this version's schema failed, and was undone: it would fail again at every try.
        public static let upgradeFailed = Code(rawValue: "upgrade-failed")
        /// An I/O error below SQLite (SQLITE_IOERR).
        public static let io = Code(rawValue: "io")
        /// A folder on the way is closed to this user (EACCES): the database may well be there (the service's,
        /// in its 0700 state folder), but this user cannot tell or read it.
        public static let noAccess = Code(rawValue: "no-access")
        /// The file itself is closed to this user (its owner and mode), as a `sudo` run leaves a file it made.
        public static let notReadable = Code(rawValue: "not-readable")
        /// What only writes (the gateway) found it cannot write the file or its folder: a restart cannot mend it.
        public static let notWritable = Code(rawValue: "not-writable")
        /// The file or a folder above it could have been written by another user (`FileTrust`): refused, untouched.
        public static let untrusted = Code(rawValue: "untrusted")
        public static let other = Code(rawValue: "other")
    }

    public var code: Code
    /// The database file concerned.
    public var path: String?
    /// The fact, in words that name no program, option or variable: each front
    /// end (the command line, the page) adds its own advice by `code`.
    public var message: String
    public var cause: (any Error)?
    /// The event concerned (`noSuchEvent`).
    public var eventID: Int64?

    public init(_ code: Code, path: String?, _ message: String, cause: (any Error)? = nil, eventID: Int64? = nil) {
        self.code = code
        self.path = path
        self.message = message
        self.cause = cause
        self.eventID = eventID
    }

    /// No event with this id.
    public static func noSuchEvent(_ id: Int64, path: String?) -> StoreError {
        StoreError(.noSuchEvent, path: path, "there is no event \(id)", eventID: id)
    }

    /// Whether the same write may succeed later: the database was locked, the
    /// disk full, an I/O error, or the file unusable for now. A value the
    /// schema refuses (`invalidValue`) fails again every time, as do the
    /// caller's own mistakes (no such event, unknown migrations).
    public var isTransient: Bool {
        switch code {
        case .invalidValue, .noSuchEvent, .schemaTooNew, .upgradeFailed, .notFound, .tooLong: false
        default: true
        }
    }

    /// Whether the database stays unusable until someone acts (a damaged file, one that is not a
    /// database or is a newer Quench's, one another user could write): a service stopping on it
    /// exits 78 (EX_CONFIG), which its unit does not restart on. A restart every 5 s for months
    /// would only fill the journal.
    public var restartCannotMend: Bool {
        // A file or folder closed to this user stays closed: the service restarted every 5 s for ever (the service trial).
        [.untrusted, .notADatabase, .emptyFile, .schemaTooNew, .upgradeFailed, .corrupt, .noAccess, .notReadable, .notWritable].contains(code)
    }

    public var description: String { message + causeDescription }

    /// The cause, as " (…)" after the message: SQLite's own words and code, for
    /// whoever debugs it; empty without a cause.
    public var causeDescription: String {
        if let cause = cause as? SQLiteError { return " (SQLite: \(cause.message), code \(cause.extendedCode))" }
        if let cause { return " (\(cause))" }
        return ""
    }

    /// Classifies an error thrown by SQLite, keeping it as the cause.
    static func wrap(_ error: any Error, path: String?, doing what: String) -> StoreError {
        if let error = error as? StoreError { return error }
        guard let db = error as? SQLiteError else {
            return StoreError(.other, path: path, "\(what) failed", cause: error)
        }
        let place = path.map { " \($0)" } ?? ""
        switch db.primaryCode {
        case SQLITE_NOTADB:
            return StoreError(.notADatabase, path: path, "\(what) failed: the file\(place) is not an SQLite database; it was left untouched", cause: db)
        case SQLITE_CORRUPT:
            return StoreError(.corrupt, path: path, "\(what) failed: the database\(place) is damaged", cause: db)
        case SQLITE_READONLY:
            return StoreError(.readOnly, path: path, "\(what) failed: the database\(place) \(readOnlyReason(path))", cause: db)
        case SQLITE_FULL:
            return StoreError(.diskFull, path: path, "\(what) failed: the disk is full; nothing was written (free some space)", cause: db)
        case SQLITE_BUSY, SQLITE_LOCKED:
            return StoreError(.busy, path: path, "\(what) failed: the database\(place) stayed locked by another process past the timeout", cause: db)
        case SQLITE_CANTOPEN, SQLITE_PERM, SQLITE_AUTH:
            return StoreError(.cannotOpen, path: path, "cannot open the database\(place)", cause: db)
        case SQLITE_CONSTRAINT:
            return StoreError(.invalidValue, path: path, "\(what) failed: a value breaks the database's rules", cause: db)
        case SQLITE_IOERR where path.map(isFull) == true:
            // A full disk often surfaces as an I/O error (growing the -shm or -wal file), not SQLITE_FULL.
            return StoreError(.diskFull, path: path, "\(what) failed: the disk holding\(place) is full; nothing was written (free some space)", cause: db)
        case SQLITE_IOERR:
            return StoreError(.io, path: path, "\(what) failed: input/output error on\(place.isEmpty ? " the database" : place)", cause: db)
        default:
            return StoreError(.other, path: path, "\(what) failed", cause: db)
        }
    }

    /// Whether the file system holding `path` has (next to) no room left.
    static func isFull(_ path: String) -> Bool {
        let folder = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        var info = statvfs()
        guard statvfs(folder.isEmpty ? "/" : folder, &info) == 0 else { return false }
        return UInt64(info.f_bavail) * UInt64(info.f_frsize) < 64 * 1024
    }
}

extension StoreError {
    /// Why a database cannot be written, for "the database PATH …": a file system the kernel mounted
    /// read-only (as it does a failing SD card) is not a matter of permissions.
    static func readOnlyReason(_ path: String?) -> String {
        switch path.map(readOnlyCause) {
        case .mountedReadOnly?:
            return "is on a file system mounted read-only (as a failing SD card is remounted: take a backup now, then check the card)"
        case .sideFiles(let sides)?:
            let side = sides[0]
            var info = stat()
            let owner = stat(side, &info) == 0 && info.st_uid != geteuid() ? "it belongs to uid \(info.st_uid), as a `sudo` run leaves it"
                : "left so by a run while the database could not be written"
            return "is read-only: its \(side) file cannot be written by this user (\(owner))"
        default:
            return "is read-only (check the permissions of the file and its directory)"
        }
    }

    /// Why a database that opened read-only cannot be written.
    public enum ReadOnlyCause: Sendable, Equatable {
        /// The kernel mounted its file system read-only (a failing SD card).
        case mountedReadOnly
        /// The file may be written but its `-shm` or `-wal` may not (these, never empty): SQLite makes them
        /// with the database's mode, so a run while the file was 0400 left them so after a `chmod`.
        case sideFiles([String])
        /// The file or its folder.
        case permissions
    }

    public static func readOnlyCause(_ path: String) -> ReadOnlyCause {
        if mountedReadOnly(path) { return .mountedReadOnly }
        let sides = ["-shm", "-wal"].map { path + $0 }.filter { access($0, F_OK) == 0 && access($0, W_OK) != 0 }
        if access(path, W_OK) == 0, !sides.isEmpty { return .sideFiles(sides) }
        return .permissions
    }

    /// Whether the file system `path` is on is mounted read-only here (this view of it, at least).
    public static func mountedReadOnly(_ path: String) -> Bool {
        var fs = statvfs()
        return statvfs(path, &fs) == 0 && fs.f_flag & UInt(ST_RDONLY) != 0
    }
}

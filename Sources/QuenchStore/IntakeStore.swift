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
/// `BEGIN IMMEDIATE` transaction, so a second writer waits (busy timeout, past
/// the longest write: `longestWrite`) rather than failing midway, and nothing
/// is ever half-written. SQLite's C API is
/// used directly: the gateway runs for months on a Pi, and a database framework
/// would bring Foundation's megabytes into its resident memory.
public final class IntakeStore: Sendable {
    public enum OpenMode: Sendable {
        /// Create the file (0600) when it is missing; its folder must exist.
        case create
        /// Also create the folder (0700): only for Quench's own default
        /// location, never for a path a person gave, where a missing folder is a typo.
        case createWithFolder
        /// Fail with `.notFound` when the file is missing.
        case existing
    }

    public let path: String
    /// True when the file could not be opened for writing; writes then fail with `.readOnly`.
    public let isReadOnly: Bool
    /// The schema version of a database a newer Quench wrote (more migrations than this one
    /// knows), else nil. It is read (a newer version's migrations only add), never written:
    /// this version's writes would leave the tables it does not know out of step.
    public let newerSchema: Int?
    /// The upgrade this opening made, for a service's log: from which schema version, and where the copy
    /// of the database as it was is kept (a Pi trial's services upgraded it without a word).
    public let upgrade: (fromVersion: Int, copy: String)?
    /// How long an import's one transaction may hold the lock.
    let importBound: Double
    /// One connection, used by one thread at a time.
    private let connection: Condition<SQLiteConnection>
    /// Opens (and migrates) the database at `path`.
    /// - Parameter busyTimeout: how long a write waits for another process's lock
    ///   (by default longer than any write may hold it: see `longestWrite`).
    ///   - importBound: how long an import's last step may hold the lock (`longestWrite`; shorter in tests).
    ///   - upgradeBackupFolder: where the copy kept before a schema upgrade goes
    ///     (`backUpBeforeUpgrade`); by default beside the database.
    ///   - onlyReading: opened read-only whatever the file allows, so that nothing is written, not even the
    ///     log's checkpoint when the last connection closes (`doctor` looks at a damaged file as it is).
    public init(path: String, mode: OpenMode = .create, busyTimeout: Double = IntakeStore.defaultBusyTimeout,
                importBound: Double = IntakeStore.longestWrite, upgradeBackupFolder: String? = nil, onlyReading: Bool = false) throws(StoreError) {
        // A history is a file: SQLite takes ":memory:" as a database that vanishes at close, so
        // `--db :memory:` said "Added #1" and kept nothing. As a file name it is a file.
        let path = path == ":memory:" ? "./:memory:" : path
        self.path = path
        self.importBound = importBound
        // Another user's file (or one in a folder they can write) is not written into, nor read.
        if let problem = FileTrust.check(path, folderOwnersData: true) {
            throw StoreError(.untrusted, path: path, "the database " + problem.description)
        }
        try Self.checkSideFiles(path)
        var info = stat()
        let exists = stat(path, &info) == 0
        if !exists, errno == EACCES { throw Self.noAccess(path) }
        if exists, access(path, R_OK) != 0, errno == EACCES { throw Self.notReadable(path, info) }
        if !exists {
            guard mode != .existing else {
                throw StoreError(.notFound, path: path, "no database at \(path)")
            }
            try Self.createFile(path, folder: mode == .createWithFolder)
        }
        guard stat(path, &info) == 0 else {
            throw StoreError(.cannotOpen, path: path, "cannot open the database \(path): \(String(cString: strerror(errno)))")
        }
        let hold = try OpenDatabaseFiles.hold(info) { () throws(StoreError) in
            if exists { try Self.checkIsDatabase(path, info) }
        }
        let readOnly = onlyReading || !Self.isWritable(path)
        self.isReadOnly = readOnly

        // SQLite does not always wait out another process's lock while a database is opened: two
        // processes that open a new one at once, one switching it to WAL or creating the tables as the
        // other reads it, got SQLITE_BUSY at once (CI: after 5 s of a 180 s timeout), as SQLite does
        // where waiting could deadlock. Opening is tried afresh until the busy timeout is spent.
        let started = ContinuousClock.now
        var db: SQLiteConnection
        var applied: Int
        var upgrade: (fromVersion: Int, copy: String)?
        while true {
            do {
                db = try Self.connect(path, readOnly: readOnly, busyTimeout: busyTimeout, hold: hold)
                (applied, upgrade) = try Self.migrate(db, path: path, readOnly: readOnly, backupFolder: upgradeBackupFolder, busyTimeout: busyTimeout)
                break
            } catch where error.code == .busy && ContinuousClock.now - started < .seconds(busyTimeout) {
                usleep(20_000)
            }
        }
        connection = Condition(db)
        newerSchema = applied > Schema.migrations.count ? applied : nil
        self.upgrade = upgrade
    }

    /// Whether this user may write the database at `path` (and its folder, where SQLite keeps its log):
    /// root passes access(2) on any file, yet a file without write bits was made read-only on purpose.
    public static func isWritable(_ path: String) -> Bool {
        var info = stat()
        let directory = OwnerOnlyFolder.folder(of: path)
        return access(path, W_OK) == 0 && access(directory.isEmpty ? "." : directory, W_OK) == 0
            && !(stat(path, &info) == 0 && info.st_mode & 0o222 == 0)
    }

    /// Why what only writes (the gateway) cannot write the database at `path`, and that a restart will not
    /// change it; nil when it can.
    public static func writeRefusal(_ path: String, doing what: String) -> StoreError? {
        guard !isWritable(path) else { return nil }
        return StoreError(.notWritable, path: path, "\(what) failed: the database \(path) \(StoreError.readOnlyReason(path))")
    }

    /// The upgrade in words, for a log line; nil when this opening made none.
    public var upgradeNotice: String? {
        upgrade.map { "upgraded the database \(path) from schema v\($0.fromVersion) to v\(Schema.migrations.count); the copy as it was is \($0.copy)" }
    }

    /// Why nothing may be written here: the database is a newer Quench's (`newerSchema`); nil when
    /// it may. Every write asks; whatever only writes (the gateway, the hub) asks once it has opened it.
    public func newerSchemaRefusal(doing what: String) -> StoreError? {
        guard let newerSchema else { return nil }
        return StoreError(.schemaTooNew, path: path, "\(what) failed: the database \(path) was written by a newer Quench "
                          + "(schema v\(newerSchema); this one knows up to v\(Schema.migrations.count)), and is only read; "
                          + "install that version again, or restore a backup this one wrote")
    }

    /// The bytes a write-ahead log is cut back to after a checkpoint (`PRAGMA journal_size_limit`).
    static let walSizeLimit = 4 << 20

    /// A connection to `path` as the store uses it (WAL, foreign keys), not yet migrated.
    private static func connect(_ path: String, readOnly: Bool, busyTimeout: Double, hold: OpenDatabaseFiles.Hold) throws(StoreError) -> SQLiteConnection {
        do {
            var db = try SQLiteConnection(path: path, readOnly: readOnly, busyTimeout: busyTimeout, hold: hold)
            // Sorting and grouping in memory: a temporary file costs more than the query.
            try db.execute("PRAGMA temp_store = MEMORY; PRAGMA foreign_keys = ON")
            // Reading the header here makes a file that is not a database fail now, untouched.
            // The write-ahead log cut back to 4 MB once checkpointed: a reader holding its transaction open (a
            // `quench log` paused in a pager) let it grow, and it stayed that size for as long as a process had the file open.
            if !readOnly { try db.execute("PRAGMA journal_mode = WAL; PRAGMA journal_size_limit = \(Self.walSizeLimit)") }
            if readOnly, !(try canRead(db)), onReadOnlyMedium(path) {
                // A card the kernel remounted read-only (as failing SD cards are): a WAL database cannot even
                // be read there without its -shm file, which cannot be made. Nothing can write it either,
                // and no -wal holds rows the file lacks, so it is read as it stands: a backup can be taken.
                db = try SQLiteConnection(path: path, readOnly: true, busyTimeout: busyTimeout, hold: hold, immutable: true)
                try db.execute("PRAGMA temp_store = MEMORY")
            }
            return db
        } catch {
            throw StoreError.wrap(error, path: path, doing: "opening the database")
        }
    }

    /// Whether the database reads; false only for SQLite's "unable to open" (the -shm file it needs).
    private static func canRead(_ db: SQLiteConnection) throws -> Bool {
        do {
            _ = try db.first("PRAGMA user_version") { row -> Int in row[0] }
            return true
        } catch let error as SQLiteError where error.isCannotOpen {
            return false
        }
    }

    /// The database's file system itself is read-only (not only this view of it), and no write-ahead log with
    /// rows in it lies beside it. A read-only bind mount, a container's `:ro` volume or `ProtectSystem=` is a
    /// view another process may write through: an immutable reader there would read pages as they change.
    private static func onReadOnlyMedium(_ path: String) -> Bool {
        var info = stat()
        guard StoreError.mountedReadOnly(path), stat(path, &info) == 0, superblockIsReadOnly(device: info.st_dev) else { return false }
        var wal = stat()
        return stat(path + "-wal", &wal) != 0 || wal.st_size == 0
    }

    /// Whether the file system on `device` is read-only for everyone: its super options in
    /// /proc/self/mountinfo (`… - tmpfs none ro,size=4096k`) say `ro`; false when they cannot be read.
    static func superblockIsReadOnly(device: dev_t) -> Bool {
        let major = ((device >> 8) & 0xFFF) | ((device >> 32) & ~0xFFF)
        let minor = (device & 0xFF) | ((device >> 12) & ~0xFF)
        guard let file = fopen("/proc/self/mountinfo", "r") else { return false }
        defer { fclose(file) }
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(line) }
        while getline(&line, &capacity, file) > 0, let line {
            let fields = String(cString: line).split(separator: " ")
            guard fields.count > 3, fields[2] == "\(major):\(minor)", let dash = fields.firstIndex(of: "-"),
                  fields.count > dash + 3 else { continue }
            return fields[dash + 3].split(whereSeparator: { $0 == "," || $0 == "\n" }).contains("ro")
        }
        return false
    }

    /// SQLite applies a `-wal` (or `-journal`) it finds beside the database, and
    /// shares memory through `-shm`: one another user left there would put their
    /// rows in ours, so each that exists is held to the database's rule. SQLite
    /// looks beside the file a link leads to, so both places are checked.
    static func checkSideFiles(_ path: String) throws(StoreError) {
        var places = [path]
        if let real = realpath(path, nil) {
            let resolved = String(cString: real)
            free(real)
            if resolved != path { places.append(resolved) }
        }
        for place in places {
            for suffix in ["-wal", "-shm", "-journal"] {
                var info = stat()
                guard lstat(place + suffix, &info) == 0 else { continue }
                if let problem = FileTrust.check(place + suffix, folderOwnersData: true) {
                    throw StoreError(.untrusted, path: path, "the database's side file " + problem.description)
                }
            }
        }
    }

    /// Fails as `init(path:mode:)` would, but creates nothing: an existing file is
    /// opened (so one that is not a database is named now); for a missing one, its
    /// folder must exist (unless `mode` may create it) and be writable. For a command
    /// that writes only at its end (`quench pair`): a bad path fails before its wait,
    /// and a failure during the wait leaves no empty database behind.
    public static func checkCanOpen(path: String, mode: OpenMode) throws(StoreError) {
        var info = stat()
        guard stat(path, &info) != 0 else {
            _ = try IntakeStore(path: path, mode: .existing)
            return
        }
        guard mode != .existing else { _ = try IntakeStore(path: path, mode: .existing); return }
        let directory = OwnerOnlyFolder.folder(of: path)
        guard stat(directory.isEmpty ? "." : directory, &info) == 0 else {
            guard mode == .createWithFolder else { throw missingFolder(path, directory) }
            return
        }
        guard access(directory.isEmpty ? "." : directory, W_OK) == 0 else {
            let cause = POSIXError(POSIXErrorCode(rawValue: errno) ?? .EACCES)
            throw StoreError(.readOnly, path: path, "cannot create the database \(path)", cause: cause)
        }
    }

    /// The deepest folder on the way that this user may not enter, with its owner and mode: why the file cannot be seen.
    public static func noAccess(_ path: String) -> StoreError {
        var folder = OwnerOnlyFolder.folder(of: path)
        var closed: (String, stat)?
        while !folder.isEmpty {
            var info = stat()
            if stat(folder, &info) == 0, access(folder, X_OK) != 0 { closed = (folder, info) }
            guard folder != "/" else { break }
            folder = OwnerOnlyFolder.folder(of: folder)
        }
        let because = closed.map { folder, info in
            let owner = FileTrust.accountName(info.st_uid) ?? "uid \(info.st_uid)"
            return ": the folder \(folder) (owner \(owner), mode 0\(String(info.st_mode & 0o777, radix: 8))) is closed to it"
        } ?? ""
        return StoreError(.noAccess, path: path, "the database \(path) cannot be read by this user (uid \(geteuid()))\(because)")
    }

    /// The file is there but closed to this user: whose it is and its mode, and the fix. SQLite said only
    /// "unable to open database file", and a forgotten `chown` after `sudo quench pair` read as a broken card.
    static func notReadable(_ path: String, _ info: stat) -> StoreError {
        let owner = FileTrust.accountName(info.st_uid) ?? "uid \(info.st_uid)"
        let me = FileTrust.accountName(geteuid()) ?? "\(geteuid())"
        return StoreError(.notReadable, path: path, "the database \(path) cannot be read by this user (\(me)): it belongs to \(owner) "
                          + "with mode 0\(String(info.st_mode & 0o777, radix: 8)), as a `sudo` run leaves a file it made "
                          + "(`sudo chown \(me): \(path)` gives it to this user, with its -wal and -shm files)")
    }

    static func missingFolder(_ path: String, _ directory: String) -> StoreError {
        StoreError(.cannotOpen, path: path, "cannot create the database \(path): the folder \(directory) does not exist")
    }

    /// SQLite's file header (its file format, 1.3).
    static let sqliteHeader = Array("SQLite format 3\0".utf8)

    /// Refuses what is not a database before SQLite touches it: a folder, a
    /// device or pipe, a file of something else. An empty file is taken only
    /// when it is owner-only (0600), as Quench creates its own (another
    /// Quench process may have just made it); any other empty file (a
    /// symlink to someone's empty file) is left alone.
    private static func checkIsDatabase(_ path: String, _ info: stat) throws(StoreError) {
        let type = info.st_mode & S_IFMT
        if type == S_IFDIR {
            throw StoreError(.cannotOpen, path: path, "cannot open the database \(path): it is a directory")
        }
        guard type == S_IFREG else {
            throw StoreError(.notADatabase, path: path, "\(path) is not a Quench database: it is not a regular file (a device, a pipe or a socket); nothing was changed")
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        // Unreadable: SQLite's own open says why, with its code.
        guard fd >= 0 else { return }
        defer { close(fd) }
        var head = [UInt8](repeating: 0, count: sqliteHeader.count)
        let n = head.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        if n == 0 {
            guard info.st_mode & 0o777 == 0o600 else {
                throw StoreError(.emptyFile, path: path, "\(path) is an empty file, not a Quench database; nothing was changed")
            }
            return
        }
        if n >= 0, Array(head.prefix(n)) != sqliteHeader {
            throw StoreError(.notADatabase, path: path, "\(path) is not a Quench database (not an SQLite database); nothing was changed")
        }
    }

    /// An empty file with owner-only permissions, created exclusively (never
    /// through a symlink): SQLite treats it as an empty database, and gives
    /// its -wal and -shm files the same mode.
    private static func createFile(_ path: String, folder: Bool) throws(StoreError) {
        let directory = OwnerOnlyFolder.folder(of: path)
        if !directory.isEmpty, !FileManager.default.fileExists(atPath: directory) {
            guard folder else { throw missingFolder(path, directory) }
            do {
                try OwnerOnlyFolder.make(directory, parents: true)
            } catch {
                throw StoreError(.cannotOpen, path: path, "cannot create the directory \(directory)", cause: error)
            }
        }
        let fd = open(path, O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY | O_CLOEXEC, 0o600)
        if fd < 0 {
            let code = errno
            if code == EEXIST { return }  // another process created it first: fine
            let cause = POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
            throw StoreError(code == EACCES || code == EROFS ? .readOnly : .cannotOpen, path: path,
                             "cannot create the database \(path)", cause: cause)
        }
        close(fd)
    }

    /// Upgrades an older schema, keeping a copy of the database as it was first
    /// (`backUpBeforeUpgrade`): no upgrade without it.
    /// Returns the migrations the database holds (more than this version knows when a newer one wrote it),
    /// and the upgrade made, if any: the version it was, and its copy.
    private static func migrate(_ db: SQLiteConnection, path: String, readOnly: Bool, backupFolder: String?,
                                busyTimeout: Double) throws(StoreError) -> (Int, (fromVersion: Int, copy: String)?) {
        do {
            // The common case, read-only friendly: nothing to do.
            let applied = try Schema.appliedCount(db)
            if applied >= Schema.migrations.count { return (applied, nil) }
            if readOnly {
                throw StoreError(.needsMigration, path: path, "the database \(path) needs an upgrade but is read-only")
            }
            var copy: (path: String, version: Int)?
            do {
                try Schema.migrate(db) { version in
                    copy = (try backUpBeforeUpgrade(path: path, version: version, folder: backupFolder, busyTimeout: busyTimeout), version)
                }
            } catch let error where copy != nil {
                // The upgrade is one transaction: it failed whole, and the database is as it was, so its copy is not
                // needed. Kept, a service restarted after each failure left a whole copy every few seconds until the
                // disk was full.
                guard let copy else { throw error }
                // Unless the upgrade did land after all (a commit whose sync failed, recovered from the log).
                if (try? Schema.appliedCount(db)) == copy.version { _ = unlink(copy.path) }
                let cause = StoreError.wrap(error, path: path, doing: "upgrading the database")
                // A lock or a full disk may pass (and a lock is waited out); anything else fails again at every try.
                throw StoreError([.busy, .diskFull, .io].contains(cause.code) ? cause.code : .upgradeFailed, path: path,
                                 "the database \(path) could not be upgraded from schema v\(copy.version) to v\(Schema.migrations.count) "
                                    + "(\(cause.message)); nothing was changed", cause: cause.cause)
            }
            if let copy { removeUpgradeCopies(of: path, besides: copy.path, olderThan: Timestamp.wallClockNow.adding(-upgradeCopiesKeptSeconds)) }
            return (Schema.migrations.count, copy.map { (fromVersion: $0.version, copy: $0.path) })
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.wrap(error, path: path, doing: "opening the database")
        }
    }

    // MARK: - Access helpers

    /// One immediate transaction: all of `body` or nothing.
    func write<T>(_ what: String, _ body: (SQLiteConnection) throws -> T) throws(StoreError) -> T {
        if isReadOnly {
            throw StoreError(.readOnly, path: path, "\(what) failed: the database \(path) \(StoreError.readOnlyReason(path))")
        }
        if let refusal = newerSchemaRefusal(doing: what) { throw refusal }
        do {
            return try connection.withLock { db in try db.transaction(immediate: true) { try body(db) } }
        } catch {
            throw StoreError.wrap(error, path: path, doing: what)
        }
    }

    /// The connection, for a transaction `body` manages itself (a streamed import).
    func withConnection<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try connection.withLock { db in try body(db) }
    }

    /// What SQLite's `PRAGMA quick_check` finds wrong with the file's pages (its first complaints), nil
    /// when nothing: every page is read (0.1 s for ten years of history), so `doctor` and a failed
    /// backup ask, not every command. A damaged file still answers most reads, and only the nightly
    /// backup's check of its copy said so, naming the copy.
    public func damage() throws(StoreError) -> String? {
        do {
            let lines = try read("checking the database") { db in try db.all("PRAGMA quick_check(3)") { row -> String in row[0] } }
            guard lines != ["ok"] else { return nil }
            // Its rows hold several lines each, under a heading ("*** in database main ***").
            return lines.flatMap { $0.split(separator: "\n") }.filter { !$0.hasPrefix("***") }.joined(separator: "; ").shownSafely(limit: 300)
        } catch where error.code == .corrupt || error.code == .notADatabase {
            return error.causeDescription.isEmpty ? error.message : String(error.causeDescription.dropFirst(2).dropLast())
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

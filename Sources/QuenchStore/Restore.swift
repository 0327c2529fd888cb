import CSQLite
import QuenchCore
import Threading
#if canImport(Glibc)
import Glibc
#endif

extension IntakeStore {
    /// Puts the history in `file` (a backup) in place of the database at `path`.
    ///
    /// Nothing is replaced until the backup has been copied beside the database
    /// and checked: an SQLite file (`integrity_check` clean), with Quench's
    /// schema at a version this Quench knows (an older one is upgraded, on the
    /// copy). Then the database's content is replaced in one write transaction
    /// (SQLite's backup API into the live file, which keeps its inode, owner and
    /// WAL mode): while that transaction holds the write lock, the history it
    /// replaces is copied to `STEM-replaced-STAMP.sqlite` beside the database, so
    /// nothing written before the lock is lost and nothing can be written in
    /// between. Running services (quenchd, quench-web) wait for the lock like
    /// any other writer, then go on with the restored history.
    /// `makingFolder`: the database's folder is made when missing (Quench's own default location,
    /// as the first write there makes it: a backup restored on a new machine).
    public static func restore(backup file: String, into path: String, at time: Timestamp, makingFolder: Bool = false,
                               busyTimeout: Double = IntakeStore.defaultBusyTimeout) throws(StoreError) -> RestoreOutcome {
        func refused(_ code: StoreError.Code, _ why: String, cause: (any Error)? = nil) -> StoreError {
            StoreError(code, path: file, "\(file) \(why); nothing was replaced", cause: cause)
        }
        guard !file.isEmpty else { throw StoreError(.cannotOpen, path: file, "no backup named (an empty file name); nothing was replaced") }
        var info = stat()
        guard stat(file, &info) == 0 else {
            throw refused(.cannotOpen, "cannot be read: \(errnoDescription(errno))")
        }
        guard info.st_mode & S_IFMT == S_IFREG else { throw refused(.notADatabase, "is not a regular file") }
        // A copy that never got its bytes (a full disk, a pulled USB stick): SQLite would take it for an empty database.
        guard info.st_size > 0 else { throw refused(.notADatabase, "is an empty file, not a backup (a copy that did not finish?)") }
        if OutputDestination.sameFile(file, path) {
            throw refused(.invalidValue, "is the database itself (\(path)), not a backup of it")
        }
        // A history another user could have written is theirs to choose, as a database would be (a Pi trial's
        // 0666 backup was taken). On a stick whose modes cannot change (FAT), a copy of one's own does.
        if let problem = FileTrust.check(file, folderOwnersData: true) {
            throw StoreError(.untrusted, path: file, "\(problem.fact), so it was not restored (fix: \(problem.fix), or copy it "
                             + "into a folder of yours first: cp \(file.quotedForShell) ~/ && chmod 600 ~/\(DatabaseCopy.split(file).name.quotedForShell)); "
                             + "nothing was replaced")
        }
        var side = stat()
        if stat(file + "-wal", &side) == 0, side.st_size > 0 {
            throw refused(.invalidValue, "has a write-ahead log beside it (\(file)-wal): it is a database in use, not a backup (back it up, and restore the backup)")
        }
        let (folder, name) = DatabaseCopy.split(path)
        if stat(folder.isEmpty ? "." : folder, &info) != 0 {
            guard makingFolder else { throw refused(.cannotOpen, "was not restored: the folder \(folder) does not exist (make it, or choose another --db)") }
            do { try OwnerOnlyFolder.make(folder, parents: true) } catch {
                throw refused(.cannotOpen, "was not restored: \(error)", cause: error)
            }
        }
        // Opening the store checks the live file as every command does (whose it is, what it is).
        var live: IntakeStore?
        if stat(path, &info) == 0 {
            let store: IntakeStore
            do { store = try IntakeStore(path: path, mode: .existing, busyTimeout: busyTimeout) } catch where error.code == .corrupt {
                throw damagedLive(path, cause: error.cause)
            }
            if store.isReadOnly {
                throw StoreError(.readOnly, path: path, "cannot restore into \(path): it is read-only for this user; nothing was replaced")
            }
            live = store
        }
        let pageSize = try live?.read("reading the page size") { db in try db.first("PRAGMA page_size") { row -> Int in row[0] } } ?? nil
        // The live outbox's last change number: the restored history numbers its changes on from it,
        // so a publisher running on (quench-mqtt) sends them all.
        let lastChange = try live?.read("reading the outbox's last change") { db in try Self.lastOutboxChange(db) } ?? nil
        // The live count of changes shown: the restored file's goes past it, or the pages, the publisher and a gateway
        // waiting for a pairing, which wait on that count, may see the same number and miss the whole new history.
        let shownBefore = try live?.read("reading the count of changes shown") { db in
            try db.first("SELECT count FROM shown_change WHERE id = 1") { row -> Int64 in row[0] }
        } ?? nil
        let staging = DatabaseCopy.stagingPath(for: path, purpose: "restore")
        defer { DatabaseCopy.removeWithSideFiles(staging) }
        try DatabaseCopy.createExclusive(staging, purpose: path)
        try copyBytes(from: file, to: staging, refused: refused)

        // The copy, checked and brought to this Quench's schema.
        let version: Int
        let events: Int
        do {
            let candidate = try SQLiteConnection(path: staging, readOnly: false, busyTimeout: busyTimeout)
            do {
                try DatabaseCopy.checkIntegrity(candidate, path: file)
            } catch let error as StoreError {
                throw refused(.corrupt, "is damaged (\(error.message))")
            }
            version = try Schema.appliedCount(candidate)
            if version == 0 {
                throw refused(.notADatabase, "is an SQLite database, but not Quench's (it has no Quench schema version)")
            }
            if version > Schema.migrations.count {
                throw refused(.schemaTooNew, "was written by a newer Quench (schema v\(version); this one knows up to v\(Schema.migrations.count))")
            }
            if let problem = try Schema.shapeProblem(candidate, version: version) {
                throw refused(.notADatabase, "says it is Quench's schema v\(version), but \(problem)")
            }
            try Schema.migrate(candidate)
            // A history restored is another history to whoever counts its changes (a hub, any
            // consumer keyed on database_id and seq): its change numbers start again from the
            // backup's, so it gets a database id of its own (docs/hub.md).
            // Nor does it publish as the node it did (restored as a hub, the old Pi may go on as that gateway).
            try candidate.execute("""
                UPDATE mqtt_identity SET database_id = lower(hex(randomblob(8))), published_node = NULL WHERE id = 1; DELETE FROM mqtt_published
                """)
            if let lastChange {
                try candidate.run("DELETE FROM sqlite_sequence WHERE name = 'mqtt_outbox'")
                try candidate.run("INSERT INTO sqlite_sequence (name, seq) VALUES ('mqtt_outbox', max(?, (SELECT coalesce(max(seq), 0) FROM mqtt_outbox)))",
                                  [lastChange])
            }
            // (Well past it: the live history can still count a few changes in the seconds the restore takes.)
            try candidate.run("UPDATE shown_change SET count = max(count, ?) + 1000 WHERE id = 1", [shownBefore ?? 0])
            if let pageSize { try matchPageSize(candidate, to: pageSize) }
            events = try candidate.first("SELECT count(*) FROM intake_event") { row -> Int in row[0] } ?? 0
            // One file again: a restore into a new place is this file, renamed.
            try candidate.execute("PRAGMA journal_mode = DELETE")
        } catch let error as StoreError {
            throw error
        } catch let error as SQLiteError where error.primaryCode == SQLITE_NOTADB {
            throw refused(.notADatabase, "is not an SQLite database (an export goes back in with `quench import`)")
        } catch let error as SQLiteError where error.primaryCode == SQLITE_CORRUPT {
            throw refused(.corrupt, "is damaged", cause: error)
        } catch {
            throw refused(.other, "could not be checked", cause: error)
        }

        guard let live else {
            // No database yet: the checked copy becomes it.
            try DatabaseCopy.sync(staging, path: path)
            guard rename(staging, path) == 0 else {
                throw StoreError(.io, path: path, "cannot rename the restored copy into \(path); nothing was replaced",
                                 cause: DatabaseCopy.posixError(errno))
            }
            DatabaseCopy.syncFolder(of: path)
            return RestoreOutcome(backupVersion: version, events: events, keptPath: nil, replacedEvents: nil)
        }

        let kept = folder.isEmpty ? "" : folder + "/"
        let keptPath = DatabaseCopy.freePath(kept + BackupSet.stem(of: name) + "-replaced-" + time.compactStamp)
        let replaced: DatabaseCopy.Written
        do {
            replaced = try live.withConnection { liveReader in
                let source = try SQLiteConnection(path: staging, readOnly: true, busyTimeout: busyTimeout)
                let writer = try SQLiteConnection(path: path, readOnly: false, busyTimeout: busyTimeout)
                let backup = try DatabaseCopy.start(from: source, into: writer)
                // The write lock first: from here nobody else can commit.
                do {
                    try DatabaseCopy.step(backup, pages: 0, destination: writer, busyTimeout: busyTimeout)
                } catch {
                    throw StoreError.wrap(error, path: path, doing: "restoring")
                }
                let copy: DatabaseCopy.Written
                do {
                    copy = try DatabaseCopy.write(from: liveReader, to: keptPath, owner: owner(of: path), busyTimeout: busyTimeout)
                } catch {
                    sqlite3_backup_finish(backup)  // rolls back: nothing replaced
                    throw error
                }
                do {
                    try DatabaseCopy.step(backup, pages: -1, destination: writer, busyTimeout: busyTimeout)
                    try DatabaseCopy.finish(backup, destination: writer)
                } catch {
                    unlink(copy.path)  // nothing was replaced: nothing to keep
                    throw error
                }
                return copy
            }
        } catch let error as StoreError {
            // The copy of the history it replaces is checked: its damage is the history's own.
            if error.code == .corrupt, (try? live.damage()) != nil { throw damagedLive(path, cause: error.cause) }
            throw StoreError(error.code, path: path, "restoring \(file) into \(path) failed: \(error.message); nothing was replaced",
                             cause: error.cause)
        } catch {
            let wrapped = StoreError.wrap(error, path: path, doing: "restoring \(file)")
            throw StoreError(wrapped.code, path: path, "\(wrapped.message); nothing was replaced", cause: wrapped.cause)
        }
        return RestoreOutcome(backupVersion: version, events: events, keptPath: replaced.path, replacedEvents: replaced.events)
    }

    /// A restore keeps the history it replaces by copying it, which a damaged file cannot be: the way round is said.
    private static func damagedLive(_ path: String, cause: (any Error)?) -> StoreError {
        // Its -wal may be merged into it when the last connection closes (this one's, after the error is said):
        // named, not given a command that would then fail.
        StoreError(.corrupt, path: path, "cannot restore into \(path): it is damaged, and a restore keeps what it replaces by "
                   + "copying it. Stop what uses it, move it aside (mv \(path.quotedForShell) \((path + ".damaged").quotedForShell), and its "
                   + "-wal and -shm the same way where they are), and restore again: a restore where there is no database makes one; "
                   + "nothing was replaced", cause: cause)
    }

    /// The backup's bytes into the new file `staging`.
    private static func copyBytes(from file: String, to staging: String,
                                  refused: (StoreError.Code, String, (any Error)?) -> StoreError) throws(StoreError) {
        let input = open(file, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw refused(.cannotOpen, "cannot be read: \(errnoDescription(errno))", nil) }
        defer { close(input) }
        let output = open(staging, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC)
        guard output >= 0 else {
            throw refused(.cannotOpen, "could not be copied to \(staging): \(errnoDescription(errno))", nil)
        }
        defer { close(output) }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(input, $0.baseAddress, $0.count) }
            if n == 0 { break }
            if n < 0 {
                if errno == EINTR { continue }
                throw refused(.io, "cannot be read: \(errnoDescription(errno))", nil)
            }
            do {
                try writeFully(buffer[0..<n], to: output)
            } catch {
                throw refused(error.code == ENOSPC ? .diskFull : .io, "could not be copied to \(staging): \(error)", nil)
            }
        }
    }

    /// SQLite copies pages as they are: into a WAL database only at its own
    /// page size. A backup of another page size is rewritten at the live one.
    private static func matchPageSize(_ candidate: SQLiteConnection, to wanted: Int) throws {
        let size = try candidate.first("PRAGMA page_size") { row -> Int in row[0] } ?? 4096
        guard wanted != size else { return }
        try candidate.execute("PRAGMA journal_mode = DELETE; PRAGMA page_size = \(wanted); VACUUM")
    }
}

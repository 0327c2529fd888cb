import QuenchCore
import Threading
#if canImport(Glibc)
import Glibc
#endif

/// The backups of one database in one folder: `STEM-YYYYMMDDTHHMMSSZ.sqlite`
/// (the database's name without `.sqlite`, and when the copy was taken, UTC),
/// each a whole database in one file, checked when it was written. Only names
/// of exactly that form are listed and rotated: anything else in the folder (a
/// USB stick's other files) is never touched.
public struct BackupSet: Sendable {
    public var folder: String
    public var stem: String

    public init(folder: String, database: String) {
        self.folder = folder
        self.stem = Self.stem(of: DatabaseCopy.split(database).name)
    }

    init(folder: String, stem: String) {
        self.folder = folder
        self.stem = stem
    }

    /// `backups` beside the database: `/var/lib/quench/backups` for the service.
    public static func defaultFolder(forDatabase database: String) -> String {
        let folder = DatabaseCopy.split(database).folder
        return (folder.isEmpty ? "." : folder) + "/backups"
    }

    static func stem(of name: String) -> String {
        name.hasSuffix(".sqlite") && name.count > 7 ? String(name.dropLast(7)) : name
    }

    public struct Entry: Sendable, Equatable {
        public var path: String
        public var takenAt: Timestamp
        /// 1, or N for the Nth backup taken within the same second.
        public var sequence: Int = 1
    }

    /// Makes the folder (0700) when it is missing, handed to the database's
    /// owner when made as root; its parent must exist.
    public func createFolder(likeDatabase database: String) throws(StoreError) {
        var info = stat()
        if stat(folder, &info) == 0 { return }
        do {
            try OwnerOnlyFolder.make(folder, parents: false)
        } catch {
            throw StoreError(error.code == EACCES || error.code == EROFS ? .readOnly : .cannotOpen, path: folder,
                             "cannot create the backup folder \(folder)", cause: DatabaseCopy.posixError(error.code))
        }
        if geteuid() == 0, let owner = IntakeStore.owner(of: database) { _ = chown(folder, owner.uid, owner.gid) }
    }

    /// The file a backup taken at `time` goes to: `STEM-STAMP.sqlite`, or, when
    /// one was already taken that second, `STEM-STAMP-N.sqlite` with N above
    /// any of that second's left (a name the rotation freed is not reused: the
    /// new one must sort as the newest).
    public func path(at time: Timestamp) -> String {
        let base = folder + "/" + stem + "-" + time.compactStamp
        let second = Timestamp(secondsSince1970: time.secondsSince1970.rounded(.down))
        let taken = (list() ?? []).filter { $0.takenAt == second }.map(\.sequence).max()
        var info = stat()
        var n = taken.map { $0 + 1 } ?? 1
        var candidate = n == 1 ? base + ".sqlite" : base + "-\(n).sqlite"
        while lstat(candidate, &info) == 0, n < 9999 {
            n += 1
            candidate = base + "-\(n).sqlite"
        }
        return candidate
    }

    /// The backups in the folder, newest first; nil when the folder cannot be read.
    /// Only regular files (no links) owned by this user, root or the folder's
    /// owner count: a file someone else put in a shared folder is neither
    /// taken for a backup nor removed.
    public func list() -> [Entry]? {
        var folderInfo = stat()
        guard stat(folder, &folderInfo) == 0, let directory = opendir(folder) else { return nil }
        defer { closedir(directory) }
        let owners: Set<uid_t> = [geteuid(), 0, folderInfo.st_uid]
        var entries: [Entry] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name.hasPrefix(stem + "-"), name.hasSuffix(".sqlite") else { continue }
            let rest = name.dropFirst(stem.count + 1).dropLast(7)
            let stamp = rest.prefix(16)
            let count = rest.dropFirst(16)
            // `-N` after the stamp: the Nth backup of that second.
            var sequence = 1
            if !count.isEmpty {
                guard count.first == "-", count.count <= 5, let n = Int(count.dropFirst()), n >= 2 else { continue }
                sequence = n
            }
            guard let time = Timestamp(compactStamp: stamp) else { continue }
            var info = stat()
            guard lstat(folder + "/" + name, &info) == 0, info.st_mode & S_IFMT == S_IFREG, owners.contains(info.st_uid) else { continue }
            entries.append(Entry(path: folder + "/" + name, takenAt: time, sequence: sequence))
        }
        return entries.sorted { ($0.takenAt, $0.sequence) > ($1.takenAt, $1.sequence) }
    }

    /// How many backups to keep: the newest of each of the last `daily` days
    /// that have one, and, before those, the newest of each of the `weekly`
    /// weeks before (Monday to Sunday; days and weeks in UTC, as the names).
    /// A week that holds a daily one needs no weekly one.
    public struct Policy: Sendable, Equatable {
        public var daily: Int
        public var weekly: Int
        public static let standard = Policy(daily: 7, weekly: 4)
        public init(daily: Int, weekly: Int) {
            self.daily = daily
            self.weekly = weekly
        }
    }

    /// Which of `times` (any order; of equal times, the earlier in the list
    /// counts as the newer, as `list` gives them) `policy` keeps, by index. Pure.
    public static func kept(_ times: [Timestamp], policy: Policy) -> Set<Int> {
        let order = times.indices.sorted { times[$0] != times[$1] ? times[$0] > times[$1] : $0 < $1 }
        var kept = Set<Int>()
        var days: [Int] = []
        var coveredWeeks = Set<Int>()
        var weeks = 0
        for index in order {
            let day = Self.day(of: times[index])
            let week = Self.week(ofDay: day)
            if days.last == day { continue }  // an older one of a day already kept
            if days.count < policy.daily {
                days.append(day)
                kept.insert(index)
                coveredWeeks.insert(week)
            } else if weeks < policy.weekly, !coveredWeeks.contains(week) {
                coveredWeeks.insert(week)
                weeks += 1
                kept.insert(index)
            }
        }
        return kept
    }

    /// Days since 1970-01-01, UTC.
    static func day(of time: Timestamp) -> Int {
        Int((time.secondsSince1970 / 86_400).rounded(.down))
    }

    /// Weeks from Monday 1969-12-29: 1970-01-01 was a Thursday.
    static func week(ofDay day: Int) -> Int {
        let shifted = day + 3
        return shifted >= 0 ? shifted / 7 : (shifted - 6) / 7
    }
}

/// What `IntakeStore.backUp` did.
public struct BackupOutcome: Sendable {
    public var path: String
    public var bytes: Int64
    public var events: Int
    public var schemaVersion: Int
    /// The backups left in the folder, newest first (the new one among them).
    public var kept: [BackupSet.Entry]
    /// The older backups the policy removed.
    public var removed: [BackupSet.Entry]
}

/// What `IntakeStore.restore` did.
public struct RestoreOutcome: Sendable {
    /// The schema version the backup was at (upgraded to the current one on the way in).
    public var backupVersion: Int
    public var events: Int
    /// Where the history it replaced is kept; nil when there was no database before.
    public var keptPath: String?
    public var replacedEvents: Int?
}

extension IntakeStore {
    /// The schema version this Quench writes (the number of migrations).
    public static var schemaVersion: Int { Schema.migrations.count }

    /// A backup of the whole database into `set`'s folder (which must exist),
    /// consistent while other processes write (one snapshot: `DatabaseCopy`),
    /// then the older backups `policy` does not keep are removed.
    public func backUp(into set: BackupSet, policy: BackupSet.Policy, at time: Timestamp) throws(StoreError) -> BackupOutcome {
        var info = stat()
        guard stat(set.folder, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw StoreError(.cannotOpen, path: path, "the backup folder \(set.folder) does not exist (is the disk mounted?); no backup was taken")
        }
        let target = set.path(at: time)
        let written: DatabaseCopy.Written
        do {
            written = try withConnection { db in
                try DatabaseCopy.write(from: db, to: target, owner: Self.owner(of: path), busyTimeout: IntakeStore.longestWrite)
            }
        } catch {
            let cause = StoreError.wrap(error, path: target, doing: "the backup")
            // The copy is page for page: its damage is the history's own, which is what to say (a Pi trial's
            // error named the copy, and pointed at the USB stick).
            if cause.code == .corrupt, let damage = try? self.damage() {
                throw StoreError(.corrupt, path: path, "the database \(path) is damaged (\(damage)): no backup was taken, and the backups "
                                 + "before it in \(set.folder) are kept")
            }
            throw StoreError(cause.code, path: path, "the backup of \(path) into \(target) failed: \(cause.message)", cause: cause.cause)
        }
        var removed: [BackupSet.Entry] = []
        var kept: [BackupSet.Entry] = []
        let entries = set.list() ?? []
        let keep = BackupSet.kept(entries.map(\.takenAt), policy: policy)
        for (index, entry) in entries.enumerated() {
            // The one just written is always kept, whatever the clock says of the others.
            if keep.contains(index) || entry.path == target {
                kept.append(entry)
            } else if unlink(entry.path) == 0 {
                removed.append(entry)
            } else {
                kept.append(entry)
            }
        }
        if !removed.isEmpty { DatabaseCopy.syncFolder(of: target) }
        return BackupOutcome(path: written.path, bytes: written.bytes, events: written.events, schemaVersion: written.schemaVersion,
                             kept: kept, removed: removed)
    }

    /// The owner of the file at `path`, which copies made as root are given.
    static func owner(of path: String) -> (uid: uid_t, gid: gid_t)? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return (info.st_uid, info.st_gid)
    }

    /// The copy kept before an upgrade from `version`: `STEM-schema-vN-STAMP.sqlite`
    /// in `folder` (by default beside the database). If it cannot be written,
    /// the upgrade does not happen. Returns the copy's path.
    @discardableResult
    static func backUpBeforeUpgrade(path: String, version: Int, folder: String?, busyTimeout: Double) throws(StoreError) -> String {
        let (databaseFolder, name) = DatabaseCopy.split(path)
        let place = folder ?? (databaseFolder.isEmpty ? "." : databaseFolder)
        let target = DatabaseCopy.freePath(place + "/" + BackupSet.stem(of: name) + "-schema-v\(version)-" + Timestamp.wallClockNow.compactStamp)
        do {
            // A second connection reads the file while this one holds the write lock: nothing changes in between.
            let reader = try SQLiteConnection(path: path, readOnly: false, busyTimeout: busyTimeout)
            _ = try DatabaseCopy.write(from: reader, to: target, owner: owner(of: path), busyTimeout: busyTimeout)
            return target
        } catch {
            let cause = StoreError.wrap(error, path: target, doing: "the copy before the upgrade")
            throw StoreError(cause.code, path: path,
                             "the database \(path) needs an upgrade from schema v\(version) to v\(Schema.migrations.count), "
                                + "and the copy of it to keep first could not be written to \(target): \(cause.message); nothing was changed",
                             cause: cause.cause)
        }
    }
}

extension IntakeStore {
    /// How long the copies earlier upgrades kept are kept: a new version has proved itself by then, and each
    /// upgrade left a whole copy of the history beside it for good, on a Pi's SD card.
    static let upgradeCopiesKeptSeconds = 30.0 * 86_400

    /// Removes the copies earlier upgrades kept beside `copy` (`STEM-schema-vN-STAMP.sqlite`, as `BackupSet`
    /// lists them: regular files of this user, root or the folder's owner) taken before `time`, but never `copy`,
    /// the one the upgrade just made, once that upgrade has committed (a failed one keeps them all). Nothing else is
    /// touched. The paths removed.
    @discardableResult
    static func removeUpgradeCopies(of database: String, besides copy: String, olderThan time: Timestamp) -> [String] {
        let folder = DatabaseCopy.split(copy).folder
        return removeUpgradeCopies(in: folder.isEmpty ? "." : folder, stem: BackupSet.stem(of: DatabaseCopy.split(database).name),
                                   olderThan: time, except: copy)
    }

    static func removeUpgradeCopies(in folder: String, stem: String, olderThan time: Timestamp, except kept: String) -> [String] {
        var removed: [String] = []
        for version in 1..<Schema.migrations.count {
            for entry in BackupSet(folder: folder, stem: "\(stem)-schema-v\(version)").list() ?? []
            where entry.path != kept && entry.takenAt < time && unlink(entry.path) == 0 {
                removed.append(entry.path)
            }
        }
        if !removed.isEmpty { DatabaseCopy.syncFolder(of: kept) }
        return removed
    }
}

extension Timestamp {
    /// `20261128T063012Z`: the time to the second, UTC, as backup names carry it.
    public var compactStamp: String {
        let iso = Timestamp(secondsSince1970: secondsSince1970.rounded(.down)).iso8601
        return String(iso.filter { $0 != "-" && $0 != ":" })
    }

    /// The reverse of `compactStamp`; nil for anything else.
    init?(compactStamp text: Substring) {
        let b = Array(text.utf8)
        guard b.count == 16, b[8] == UInt8(ascii: "T"), b[15] == UInt8(ascii: "Z"),
              b[0..<8].allSatisfy({ $0 &- 48 < 10 }), b[9..<15].allSatisfy({ $0 &- 48 < 10 })
        else { return nil }
        let s = String(decoding: b, as: UTF8.self)
        func part(_ from: Int, _ count: Int) -> Substring {
            let start = s.index(s.startIndex, offsetBy: from)
            return s[start..<s.index(start, offsetBy: count)]
        }
        let iso = "\(part(0, 4))-\(part(4, 2))-\(part(6, 2))T\(part(9, 2)):\(part(11, 2)):\(part(13, 2))Z"
        self.init(iso8601: iso)
    }
}

import QuenchCore
import QuenchStore
import Threading
#if canImport(Glibc)
import Glibc
#endif

/// `quench backup` and `quench restore FILE`: the words around the store's
/// backup and restore (`IntakeStore.backUp`, `IntakeStore.restore`).
extension History {
    /// The rotation's bounds, for the options as for the configuration's keys.
    public static let keepDailyRange = 1...1000
    public static let keepWeeklyRange = 0...1000

    /// `quench backup`: a copy of the whole database into `folder` (nil: the
    /// default, `backups` beside the database, made when missing; a folder named
    /// must exist, so an unmounted USB stick is an error, not a folder on the SD card),
    /// then the rotation.
    public static func backup(_ environment: HistoryEnvironment, folder: String?, keepDaily: Int, keepWeekly: Int,
                              json: Bool) throws(HistoryError) -> String {
        guard keepDailyRange.contains(keepDaily) else {
            throw .inOption("--keep-daily", .invalidArgument("expected a whole number from 1 to 1000, got \(keepDaily)"))
        }
        guard keepWeeklyRange.contains(keepWeekly) else {
            throw .inOption("--keep-weekly", .invalidArgument("expected a whole number from 0 to 1000, got \(keepWeekly)"))
        }
        let store = try environment.openStore(creating: false)
        let set = BackupSet(folder: folder ?? BackupSet.defaultFolder(forDatabase: environment.databasePath),
                            database: environment.databasePath)
        let outcome = try HistoryContext.run { () throws(StoreError) in
            if folder == nil { try set.createFolder(likeDatabase: environment.databasePath) }
            return try store.backUp(into: set, policy: BackupSet.Policy(daily: keepDaily, weekly: keepWeekly), at: environment.now)
        }
        if json {
            return JSONOutput.encode(BackupReport(
                database: environment.databasePath, backup: outcome.path, bytes: outcome.bytes, events: outcome.events,
                schemaVersion: outcome.schemaVersion, kept: outcome.kept.map(\.path), removed: outcome.removed.map(\.path)))
        }
        var text = "Backed up \(environment.databasePath) (schema v\(outcome.schemaVersion), \(events(outcome.events)), "
            + "\(megabytes(outcome.bytes))) to \(outcome.path)."
        if let oldest = outcome.kept.last {
            text += "\n\(outcome.kept.count) backup\(outcome.kept.count == 1 ? "" : "s") kept in \(set.folder), "
                + "the oldest from \(oldest.takenAt.iso8601) (\(keepDaily) daily, \(keepWeekly) weekly)."
        }
        if !outcome.removed.isEmpty {
            text += "\nRemoved \(outcome.removed.count): " + outcome.removed.map { DatabaseName.file($0.path) }.joined(separator: ", ") + "."
        }
        return text
    }

    /// `quench restore FILE`: the backup in place of the database, the history
    /// it replaces kept beside it (`IntakeStore.restore`).
    public static func restoreBackup(_ environment: HistoryEnvironment, file: String, json: Bool) throws(HistoryError) -> String {
        // The demo's day is never anyone's intake (README), and would have replaced a real history.
        if access(file, F_OK) == 0, OutputDestination.sameFile(file, StoreLocation.demoPath(environment: environment.variables)) {
            throw .invalidArgument("\(file) is the demo's database (a simulated day), not a backup; nothing was replaced")
        }
        let outcome = try HistoryContext.run { () throws(StoreError) in
            try IntakeStore.restore(backup: file, into: environment.databasePath, at: environment.now,
                                    makingFolder: StoreLocation.creationMode(for: environment.databasePath, environment: environment.variables) == .createWithFolder)
        }
        if json {
            return JSONOutput.encode(RestoreReport(
                database: environment.databasePath, restored: file, backupSchemaVersion: outcome.backupVersion, events: outcome.events,
                replacedKeptIn: outcome.keptPath, replacedEvents: outcome.replacedEvents))
        }
        let upgraded = outcome.backupVersion < IntakeStore.schemaVersion ? ", upgraded to v\(IntakeStore.schemaVersion)" : ""
        var text = "Restored \(file) (schema v\(outcome.backupVersion)\(upgraded), \(events(outcome.events))) "
            + "into \(environment.databasePath)."
        if let kept = outcome.keptPath {
            text += "\nThe history it replaced (\(events(outcome.replacedEvents ?? 0))) is kept in \(kept)."
        }
        return text
    }

    private static func events(_ n: Int) -> String { n == 1 ? "1 event" : "\(Format.grouped(n)) events" }

    static func megabytes(_ bytes: Int64) -> String {
        guard bytes >= 1_000_000 else { return "\(Format.grouped(Int(bytes / 1000))) kB" }
        return "\((Double(bytes) / 100_000).rounded() / 10) MB"
    }
}

private enum DatabaseName {
    static func file(_ path: String) -> String {
        path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
    }
}

struct BackupReport: Encodable {
    var database: String
    var backup: String
    var bytes: Int64
    var events: Int
    var schemaVersion: Int
    var kept: [String]
    var removed: [String]
}

struct RestoreReport: Encodable {
    var database: String
    var restored: String
    var backupSchemaVersion: Int
    var events: Int
    var replacedKeptIn: String?
    var replacedEvents: Int?
}

#if os(Linux)
import Glibc
import QuenchCore
import QuenchStore

extension Doctor {
    /// A backup older than this (a day's timer run missed, with an hour's slack) is worth a warning.
    static let staleBackup = 49.0 * 3600
    /// Clocks a few minutes apart (this machine's and the one that took a copy) are not "the future".
    static let clockSlack = 600.0

    /// When the last backup of the database was taken, from the names in its
    /// backup folder (`BackupSet`); a warning when there is none or it is old.
    /// Kept apart from `run` so that it can be added to any report.
    /// `databaseExists`: false on a new machine, with nothing to back up yet (`quench backup` would refuse).
    public static func lastBackup(_ set: BackupSet, now: Timestamp, databaseExists: Bool = true) -> Check {
        guard databaseExists else {
            return Check(name: "backup", status: .info, detail: "nothing to back up yet: the first drink recorded makes the database", fix: nil)
        }
        let fix = "sudo systemctl enable --now quench-backup.timer (daily), or `quench backup` now; docs/backup.md"
        guard let backups = set.list() else {
            // A folder on a USB disk that is not mounted is the likely one: the timer was never the problem (a Pi trial).
            var info = stat()
            let missing = stat(set.folder, &info) != 0 && errno == ENOENT
            return Check(name: "backup", status: .warning,
                         detail: "no backup yet: the folder \(set.folder) " + (missing ? "does not exist" : "cannot be read by this user"),
                         fix: missing ? "if it is on a disk, is the disk mounted? (findmnt -T \"\(set.folder)\"); else " + fix : Self.sudoDoctor)
        }
        guard let newest = backups.first else {
            return Check(name: "backup", status: .warning, detail: "no backup yet in \(set.folder)", fix: fix)
        }
        // A copy taken while the clock ran ahead is not a recent backup: it said "ok" for as long as real ones
        // failed, and it takes one of the kept days' places until its date comes.
        if newest.takenAt.secondsSince1970 > now.secondsSince1970 + Self.clockSlack {
            let before = backups.first { $0.takenAt.secondsSince1970 <= now.secondsSince1970 + Self.clockSlack }
            let last = before.map { "the last before now \($0.takenAt.iso8601) (\(agoText(now.secondsSince1970 - $0.takenAt.secondsSince1970)))" }
                ?? "none before now"
            return Check(name: "backup", status: .warning,
                         detail: "a backup dated \(newest.takenAt.iso8601), in the future, was taken while the clock ran ahead; \(last), "
                            + "\(backups.count) kept in \(set.folder)",
                         fix: "timedatectl (is the clock synchronised?); then move the misdated copy aside: mv \"\(newest.path)\" ~/")
        }
        let ago = now.secondsSince1970 - newest.takenAt.secondsSince1970
        let when = "last backup \(newest.takenAt.iso8601) (\(agoText(ago))), \(backups.count) kept in \(set.folder)"
        guard ago <= staleBackup else {
            return Check(name: "backup", status: .warning, detail: when,
                         fix: "journalctl -u quench-backup says why the daily one did not run; `quench backup` takes one now")
        }
        return Check(name: "backup", status: .ok, detail: when, fix: nil)
    }

    static func agoText(_ seconds: Double) -> String {
        if seconds < 0 { return "in the future: check the clock" }
        if seconds < 3600 { return "\(Int(seconds / 60)) min ago" }
        if seconds < 2 * 86_400 { return "\(Int(seconds / 3600)) h ago" }
        return "\(Int(seconds / 86_400)) days ago"
    }
}
#endif

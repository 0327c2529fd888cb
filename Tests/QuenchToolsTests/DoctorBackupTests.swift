import Foundation
import QuenchCore
import QuenchStore
import QuenchTestSupport
import Testing
@testable import QuenchTools

/// `quench doctor`'s word on backups: when the last one was, from the backup folder's names.
@Suite struct DoctorBackupTests {
    static let now = Timestamp(iso8601: "2026-11-28T09:00:00Z")!

    @Test func saysWhenTheLastBackupWasAndWarnsWhenThereIsNoneOrItIsOld() throws {
        let folder = try TemporaryFolder("doctor-backup")
        let database = folder.file("quench.sqlite")
        let backups = folder.file("backups")
        let set = BackupSet(folder: backups, database: database)

        // A new machine: nothing recorded, nothing to back up (`quench backup` would refuse), so no warning.
        let newMachine = Doctor.lastBackup(set, now: Self.now, databaseExists: false)
        #expect(newMachine.status == .info && newMachine.fix == nil && newMachine.detail.hasPrefix("nothing to back up yet"), "\(newMachine)")
        let missing = Doctor.lastBackup(set, now: Self.now)
        #expect(missing.status == .warning && missing.detail.contains("\(backups) does not exist"), "\(missing)")
        #expect(missing.fix?.contains("quench-backup.timer") == true)

        try FileManager.default.createDirectory(atPath: backups, withIntermediateDirectories: false)
        let none = Doctor.lastBackup(set, now: Self.now)
        #expect(none.status == .warning && none.detail == "no backup yet in \(backups)", "\(none)")

        // Only names of the backup form count; the newest is the one said.
        for name in ["quench-20261120T033000Z.sqlite", "quench-20261128T033000Z.sqlite", "quench-latest.sqlite", "notes.txt"] {
            _ = FileManager.default.createFile(atPath: backups + "/" + name, contents: Data("x".utf8))
        }
        let fresh = Doctor.lastBackup(set, now: Self.now)
        #expect(fresh.status == .ok, "\(fresh)")
        #expect(fresh.detail == "last backup 2026-11-28T03:30:00Z (5 h ago), 2 kept in \(backups)")

        let stale = Doctor.lastBackup(set, now: Self.now.adding(3 * 86_400))
        #expect(stale.status == .warning && stale.detail.hasPrefix("last backup 2026-11-28T03:30:00Z (3 days ago)"), "\(stale)")
        #expect(stale.fix?.contains("journalctl -u quench-backup") == true)

        // A copy taken while the clock ran a year ahead said "ok (in the future: check the clock)" for as
        // long as the real ones failed (an operator's trial): a warning, naming the last real one.
        _ = FileManager.default.createFile(atPath: backups + "/quench-20271201T033000Z.sqlite", contents: Data("x".utf8))
        let ahead = Doctor.lastBackup(set, now: Self.now)
        #expect(ahead.status == .warning, "\(ahead)")
        #expect(ahead.detail == "a backup dated 2027-12-01T03:30:00Z, in the future, was taken while the clock ran ahead; "
                + "the last before now 2026-11-28T03:30:00Z (5 h ago), 3 kept in \(backups)", "\(ahead)")
        #expect(ahead.fix?.contains("mv \"\(backups)/quench-20271201T033000Z.sqlite\"") == true, "\(ahead)")
    }
}

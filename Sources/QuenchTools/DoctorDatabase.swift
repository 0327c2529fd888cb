#if os(Linux)
import Glibc
import QuenchCore
import QuenchStore
import Threading

/// `quench doctor`'s words for a database it cannot use: each with the command that fixes it.
extension Doctor {
    /// Run as root, the doctor reads the service's private state folder.
    static let sudoDoctor = "sudo quench doctor  (root reads the service's database; or `sudo -u quench quench doctor`, as its owner)"

    /// When the adapters cannot be listed for a reason other than the kernel or the privileges.
    static let adapterListFix = "sudo btmgmt info (what the kernel's management interface says); dmesg | grep -i -e bluetooth -e hci"

    /// The database is behind a folder this user may not enter: likely the service's (/var/lib/quench, mode 0700).
    static func unreadableDatabase(_ path: String) -> Check {
        Check(name: "database", status: .warning,
              detail: IntakeStore.noAccess(path).message + "; the database and device checks need it", fix: sudoDoctor)
    }

    /// A database that is there but cannot be used, and what to type about it.
    static func databaseProblem(_ error: StoreError, path: String) -> Check {
        let quoted = "\"\(path)\""
        let fix: String
        switch error.code {
        case .noAccess:
            return unreadableDatabase(path)
        case .notADatabase, .emptyFile:
            fix = "it is not a Quench database: move it aside (mv \(quoted) \(quoted).not-quench), then `quench add` or the service makes a new one; "
                + "or point QUENCH_DB / --db at the right file"
        case .corrupt:
            let (file, aside) = (path.quotedForShell, (path + ".damaged").quotedForShell)
            fix = "stop the services (sudo systemctl stop quench quench-web), move it aside (mv \(file) \(aside), and its -wal and -shm the "
                + "same way where they are), then `quench restore BACKUP --db \(file)` with the newest backup, if there is one (docs/backup.md); "
                + "keep the damaged copy: `sqlite3 \(aside) .recover` can often save the rows written since"
        case .schemaTooNew:
            fix = "a newer Quench wrote it: install that version (`quench --version` says which this is)"
        case .upgradeFailed:
            fix = "keep the file as it is (nothing was changed), put the version that wrote it back, and report the message above"
        case .needsMigration:
            fix = "it needs an upgrade this user cannot write: sudo systemctl restart quench (the service upgrades it), or run this as its owner"
        case .untrusted:
            // The file itself is the "database file" line's, with its fix: said once. A side file (-wal) is said here.
            if FileTrust.check(path, folderOwnersData: true) != nil {
                return Check(name: "database", status: .problem, detail: "\(path): not opened, since another user could have written it (see the database file line)", fix: nil)
            }
            fix = "chmod go-w \(quoted)-wal \(quoted)-shm, or move them aside if they are not this user's"
        case .busy:
            fix = "another process holds it locked: `fuser -v \(quoted)` names it; try again"
        case .diskFull:
            fix = "free some space on its disk: df -h \(quoted)"
        default:
            fix = "ls -l \(quoted)*: the file and its -wal/-shm must belong to the user that runs the service (sudo chown quench: \(quoted)*)"
        }
        return Check(name: "database", status: .problem, detail: "\(error)", fix: fix)
    }
}
#endif

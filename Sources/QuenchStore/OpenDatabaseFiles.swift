import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The database files this process holds open through SQLite, with how many
/// connections hold each.
///
/// POSIX locks belong to the process: closing any descriptor of a file drops
/// every lock the process holds on it. A store that read the header (open,
/// read, close) while another connection of the same process had the file
/// open would silently drop that connection's WAL lock; another process closing
/// its connection would then think itself the last, delete the -shm file under
/// it, and every write here would fail with "disk I/O error" from then on
/// (`quench serve` opens a store per request beside its long-lived one; so does
/// a gateway publishing to MQTT). A file already held here has been checked: it
/// is not read again.
enum OpenDatabaseFiles {
    struct FileID: Hashable {
        var device: UInt64
        var inode: UInt64
    }

    fileprivate static let counts = Mutex<[FileID: Int]>([:])

    /// One connection's claim; released when the connection (which owns it) is gone.
    final class Hold: Sendable {
        let file: FileID
        init(_ file: FileID) { self.file = file }
        deinit {
            OpenDatabaseFiles.counts.withLock { counts in
                counts[file, default: 1] -= 1
                if counts[file] == 0 { counts.removeValue(forKey: file) }
            }
        }
    }

    /// Claims the file of `info`, first running `check` (which may open and
    /// close it) when nothing in this process holds it, all under one lock so
    /// no connection opens in between.
    static func hold(_ info: stat, check: () throws(StoreError) -> Void) throws(StoreError) -> Hold {
        let file = FileID(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        try counts.withLock { (counts: inout [FileID: Int]) throws(StoreError) in
            if counts[file, default: 0] == 0 { try check() }
            counts[file, default: 0] += 1
        }
        return Hold(file)
    }
}

extension OpenDatabaseFiles {
    /// How many connections of this process hold the file at `path` (tests).
    static func heldCount(path: String) -> Int {
        var info = stat()
        guard stat(path, &info) == 0 else { return 0 }
        return counts.withLock { $0[FileID(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)), default: 0] }
    }
}

import Foundation
import QuenchCore
import QuenchTestSupport
@testable import QuenchStore
import Testing

/// Several stores of one process on one file (`quench serve`: one per request
/// beside its watcher; the gateway with its MQTT publisher), with other
/// processes opening and closing it: POSIX locks are per process, and one
/// careless close() would drop them all.
@Suite(.enabled(if: quenchBinary != nil, "SKIPPED: quench is not built (swift build)"))
struct SharedFileTests {
    @Test func anotherProcessClosingNeverPullsTheWALFromUnderAStoreHere() throws {
        let folder = try TemporaryFolder("shared-file")
        let path = folder.file("q.sqlite")
        let longLived = try IntakeStore(path: path)
        _ = try longLived.addManual(ml: 100, at: .wallClockNow, note: nil, identity: "manual|first")
        for round in 0..<3 {
            // A store opened and closed beside it (it used to read the header: open, read, close).
            do {
                let brief = try IntakeStore(path: path, mode: .existing)
                _ = try brief.settings()
            }
            // Another process opens, reads and closes: it must not think itself the last.
            let other = try runQuench(["today", "--json", "--db", path])
            #expect(other.status == 0, "\(other.stderr)")
            #expect(FileManager.default.fileExists(atPath: path + "-shm"), "round \(round): the -shm file is still there")
            _ = try longLived.addManual(ml: 10, at: .wallClockNow, note: nil, identity: "manual|round-\(round)")
            let brief = try IntakeStore(path: path, mode: .existing)
            _ = try brief.addManual(ml: 1, at: .wallClockNow, note: nil, identity: "manual|brief-\(round)")
        }
        #expect(try longLived.events().count == 7)
        #expect(OpenDatabaseFiles.heldCount(path: path) == 1, "only the long-lived store holds it now")
    }
}

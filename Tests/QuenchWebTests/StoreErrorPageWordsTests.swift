import Foundation
import QuenchCore
import QuenchHistory
@testable import QuenchStore
import QuenchTestSupport
@testable import QuenchWeb
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 24: the page says a store's failure in its own words: what is true
/// and whether anything was saved, never SQLite's text or codes, and never a
/// command or an option of the command line (the server's log has it all).
@Suite(.serialized, .enabled(if: quenchBinary != nil, "SKIPPED: quench is not built (swift build)"))
struct StoreErrorPageWordsTests {
    static func expectPageWords(_ answer: HTTPTestClient.Answer, status: Int, _ text: String,
                                sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(answer.status == status, "\(answer.body)", sourceLocation: sourceLocation)
        let object = answer.json as? [String: Any]
        let said = object?["error"] as? String ?? ""
        #expect(object?.count == 1 && said == text, "\(answer.body) is not {\"error\":\"\(text)\"}", sourceLocation: sourceLocation)
        for word in ["SQLite", "code", "quench ", "--"] {
            #expect(!said.contains(word), "'\(word)' in \(said)", sourceLocation: sourceLocation)
        }
    }

    @Test func aMissingEventAReadOnlyAndACorruptDatabaseInThePagesWords() async throws {
        let fixture = try WebFixture(days: 2)
        let server = try await ServerProcess(database: fixture.database)
        defer { _ = server.stop() }

        Self.expectPageWords(try await server.client.postJSON("/api/delete", ["id": 999_999]), status: 404, "There is no drink 999999")

        // A database nobody may write (`chmod a-w`): said so, and nothing saved.
        let before = try fixture.quench(["log", "--csv"])
        #expect(chmod(fixture.database, 0o400) == 0)
        Self.expectPageWords(try await server.client.postJSON("/api/add", ["amount": "250ml"]), status: 500,
                             "The history cannot be written on the server (it is read-only); nothing was saved")
        #expect(chmod(fixture.database, 0o600) == 0)
        #expect(try fixture.quench(["log", "--csv"]) == before, "nothing was written")

        // The first page's b-tree header overwritten: SQLite finds the file damaged.
        let file = try #require(FileHandle(forUpdatingAtPath: fixture.database))
        try file.seek(toOffset: 100)
        try file.write(contentsOf: Data(repeating: 0xFF, count: 100))
        try file.close()
        Self.expectPageWords(try await server.client.get("/api/today"), status: 500, "The history cannot be read; the server's log says why")
        #expect(server.stop() == 0)
        // The server's log says why, in full: SQLite's words and the file.
        let log = try String(contentsOfFile: server.log, encoding: .utf8)
        #expect(log.contains("request failed") && log.contains("/api/today") && log.contains("SQLite") && log.contains(fixture.database), "\(log)")
    }

    /// A write waiting on another process's lock past the timeout (the server's
    /// is minutes long, so the store's real error is made here with a short one).
    @Test func aBusyDatabaseInThePagesWords() throws {
        let dir = try TemporaryFolder.create("quench-web-busy")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/quench.sqlite"
        let store = try IntakeStore(path: path, busyTimeout: 0.2)
        let other = try SQLiteConnection(path: path, readOnly: false, busyTimeout: 1)
        try other.execute("BEGIN EXCLUSIVE")
        defer { try? other.execute("ROLLBACK") }
        do {
            _ = try store.addManual(ml: 250, at: .wallClockNow, note: nil, identity: "manual|busy")
            Issue.record("written past another's lock")
        } catch {
            #expect(error.code == .busy && error.cause is SQLiteError && error.description.contains("SQLite"), "\(error)")
            expectNoCommandLineText(error.message)
            let history = HistoryError.store(error)
            #expect(Responses.status(for: history) == .serviceUnavailable)
            #expect(Responses.message(for: history) == "The history is busy; try again in a moment")
        }
    }
}

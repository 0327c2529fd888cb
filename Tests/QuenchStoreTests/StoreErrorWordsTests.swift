import CSQLite
import Foundation
import QuenchCore
@testable import QuenchStore
import QuenchTestSupport
import Testing

/// Issue 24: a store error says the fact and carries the data; the command
/// line and the page each add their own advice, so the store's words name no
/// program, option or environment variable.
@Suite("store errors name no command, option or variable")
struct StoreErrorWordsTests {
    @Test func theStoresOwnErrorsSayTheFactAndCarryTheData() throws {
        let dir = try TemporaryFolder.create("quench-store-words")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var errors: [StoreError] = []

        let missing = dir + "/missing.sqlite"
        do { _ = try IntakeStore(path: missing, mode: .existing); Issue.record("opened a missing database") } catch {
            #expect(error.code == .notFound && error.path == missing)
            errors.append(error)
        }
        let empty = dir + "/empty.sqlite"
        #expect(FileManager.default.createFile(atPath: empty, contents: Data(), attributes: [.posixPermissions: 0o644]))
        do { _ = try IntakeStore(path: empty); Issue.record("opened an empty file") } catch {
            #expect(error.code == .emptyFile)
            errors.append(error)
        }
        let store = try IntakeStore(path: dir + "/quench.sqlite")
        do { try store.setDeleted(id: 999, true); Issue.record("deleted a missing event") } catch {
            #expect(error.code == .noSuchEvent && error.eventID == 999)
            errors.append(error)
        }
        var settings = ReminderSettings.defaults
        settings.afterMinutes = 5000
        do { try store.saveReminderSettings(settings, person: nil); Issue.record("saved --after 5000") } catch {
            #expect(error.code == .invalidValue)
            errors.append(error)
        }
        // Each of SQLite's failures, as the store classifies it.
        for code in [SQLITE_NOTADB, SQLITE_CORRUPT, SQLITE_READONLY, SQLITE_FULL, SQLITE_BUSY, SQLITE_CANTOPEN, SQLITE_CONSTRAINT, SQLITE_IOERR] {
            errors.append(StoreError.wrap(SQLiteError(extendedCode: code, message: "sqlite says"), path: dir + "/q.sqlite", doing: "adding"))
        }
        #expect(errors.count == 12)
        for error in errors { expectNoCommandLineText(error.description) }
    }

    @Test func reminderProblemsNameNoOption() {
        let problems: [ReminderSettings.Problem] = [.window, .slack(maxML: 100_000), .after(0...1440), .every(1...1440)]
        for problem in problems { expectNoCommandLineText(problem.description) }
        var settings = ReminderSettings.defaults
        settings.everyMinutes = 0
        #expect(settings.problem == .every(1...1440))
    }
}

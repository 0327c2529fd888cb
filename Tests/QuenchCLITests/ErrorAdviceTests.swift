import Foundation
import QuenchTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 24: the libraries say the fact; the command line adds what to type
/// about it in its own words (the page, in its words, says neither).
@Suite("the command line's advice on store and device errors", .enabled(if: quenchBinary != nil, "SKIPPED: quench is not built next to the tests (run `swift build`)"))
struct ErrorAdviceTests {
    @Test func theSameConditionsAsThePageGiveTheCommandLinesAdvice() throws {
        let dir = try TemporaryFolder.create("quench-advice")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        func failure(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
            let run = try runQuench(arguments)
            #expect(run.status == 1, "\(arguments): status \(run.status): \(run.stderr)", sourceLocation: sourceLocation)
            return run.stderr
        }
        let missing = dir + "/missing.sqlite"
        #expect(try failure(["today", "--db", missing])
                == "quench: error: no database at \(missing) (nothing recorded yet: `quench add 250ml` creates it; --db or QUENCH_DB choose another)\n")

        let db = dir + "/quench.sqlite"
        #expect(try runQuench(["add", "250ml", "--db", db]).status == 0)
        #expect(try failure(["delete", "999999", "--db", db]) == "quench: error: there is no event 999999 (see `quench log`)\n")
        #expect(try failure(["restore", "999999", "--db", db]) == "quench: error: there is no event 999999 (see `quench log`)\n")

        let garbage = dir + "/garbage.sqlite"
        #expect(FileManager.default.createFile(atPath: garbage, contents: Data(repeating: 0xFF, count: 4096), attributes: [.posixPermissions: 0o600]))
        #expect(try failure(["today", "--db", garbage])
                == "quench: error: \(garbage) is not a Quench database (not an SQLite database); nothing was changed\n")
        let empty = dir + "/empty.sqlite"
        #expect(FileManager.default.createFile(atPath: empty, contents: Data(), attributes: [.posixPermissions: 0o644]))
        #expect(try failure(["today", "--db", empty])
                == "quench: error: \(empty) is an empty file, not a Quench database; nothing was changed (remove it, or choose another --db)\n")

        // A reminder setting out of bounds is said by its option.
        #expect(try failure(["remind", "set", "--after", "2000min", "--db", db]).contains("--after must be 0 to 1440 minutes"))
    }
}

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

        // Devices and traces: the gateway says the fact, the command line which command or option.
        #if os(Linux)
        #expect(try failure(["calibrate", "F0:00:00:00:00:09", "--point", "0:0", "--point", "100:500", "--db", db])
                == "quench: error: no paired device F0:00:00:00:00:09 (see `quench devices`)\n")
        #expect(try failure(["run", "--seconds", "1", "--db", db]) == "quench: error: no paired devices: pair one with `quench pair ADDRESS`\n")
        // The service's daemon says the same in the journal, and waits for the pairing.
        if let quenchd = builtExecutable("quenchd") {
            let run = try runQuench(["--seconds", "1", "--db", db], executable: quenchd)
            #expect(run.status == 0 && run.stderr.contains("waiting for a pairing: no paired devices: pair one with `quench pair ADDRESS`\n"), "\(run.stderr)")
        } else {
            Issue.record("quenchd is not built (swift build)")
        }
        #endif
        let noUnit = dir + "/no-unit.trace", noCurve = dir + "/no-curve.trace"
        try "# quench trace v1\nt,value\n0.0,1.0\n".write(toFile: noUnit, atomically: true, encoding: .utf8)
        try "# quench trace v1\n# unit: mm\nt,value\n0.0,1.0\n".write(toFile: noCurve, atomically: true, encoding: .utf8)
        #expect(try failure(["replay", noUnit, "--db", db])
                == "quench: error: \(noUnit): the header gives no '# unit:' (use --unit g|kg|lb|oz|mm|percent|raw)\n")
        #expect(try failure(["replay", noCurve, "--db", db])
                == "quench: error: \(noCurve): a level sensor in mm needs a level curve (--level-curve LEVEL:ML,LEVEL:ML,...)\n")
        // A curve for a scale's trace was ignored in silence: a wrong trace, or a wrong option.
        let grams = dir + "/grams.trace"
        try "# quench trace v1\n# unit: g\nt,value\n0.0,500.0\n".write(toFile: grams, atomically: true, encoding: .utf8)
        #expect(try failure(["replay", grams, "--level-curve", "0:0,100:500", "--db", db])
                == "quench: error: \(grams): a level curve is for a level sensor, and unit g is a scale's (weight): leave out --level-curve "
                + "(or the header's `# level-curve:`), or, if the trace is a level sensor's, say so with --unit mm|percent|raw\n")
        // In the header as well (it was ignored): said at the line of the second of the two.
        let gramsWithCurve = dir + "/grams-curve.trace"
        try "# quench trace v1\n# unit: g\n# level-curve: 0:0,100:500\nt,value\n0.0,500.0\n".write(toFile: gramsWithCurve, atomically: true, encoding: .utf8)
        #expect(try failure(["replay", gramsWithCurve, "--db", db])
                == "quench: error: \(gramsWithCurve):3: level-curve: a level curve is for a level sensor, and unit g is a scale's (weight)\n")
        // A calibration option is named as the option, not blamed on the trace.
        for (option, value, message) in [("--density", "5", "--density must be from 0.5 to 2 g/mL, not 5"),
                                         ("--capacity", "0", "--capacity must be from 1 to 100000 mL, not 0"),
                                         ("--tare", "-1", "--tare must be from 0 to 100000 g, not -1")] {
            let run = try runQuench(["replay", grams, option, value, "--db", db])
            #expect(run.status == 64 && run.stderr.hasPrefix("quench: error: \(message)"), "\(option): \(run.status) \(run.stderr)")
        }

        // A reminder setting out of bounds is said by its option.
        // Its bounds said one way however far out (0min said "1 to 1440 minutes", 2000min "between 0 and 24 h").
        #expect(try failure(["remind", "set", "--every", "0min", "--db", db]) == "quench: error: --every: invalid amount '0min': between 1 min and 24 h, please\n")
        #expect(try failure(["remind", "set", "--every", "2000min", "--db", db]) == "quench: error: --every: invalid amount '2000min': between 1 min and 24 h, please\n")
        #expect(try failure(["remind", "set", "--after", "25h", "--db", db]) == "quench: error: --after: invalid amount '25h': between 0 and 24 h, please\n")
    }
}

import Foundation
import QuenchTestSupport
import Testing

/// `quenchd`, the gateway binary the service runs: its arguments and its
/// errors, as a process (its Bluetooth work is covered by the live and VM tests).
@Suite struct QuenchdTests {
    static let quenchd = builtExecutable("quenchd")

    func run(_ arguments: [String]) throws -> ProcessResult {
        // Every test here is enabled only when quenchd was found.
        try runQuench(arguments, executable: Self.quenchd)
    }

    @Test(.enabled(if: quenchd != nil, "no quenchd beside the test binary (swift build first)"))
    func badArgumentsExit64() throws {
        let unknown = try run(["--frobnicate"])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.contains("unknown argument '--frobnicate'"))
        let missing = try run(["--db"])
        #expect(missing.status == 64 && missing.stderr.contains("--db needs a value"))
        let negative = try run(["--seconds", "-3"])
        #expect(negative.status == 64 && negative.stderr.contains("'-3' is not a positive number"))
    }

    @Test(.enabled(if: quenchd != nil, "no quenchd beside the test binary (swift build first)"))
    func nothingPairedIsAClearError() throws {
        let dir = try TemporaryFolder.create("quenchd")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let result = try run(["--db", dir + "/q.sqlite", "--seconds", "1"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("no paired devices"), "\(result.stderr)")
    }
}

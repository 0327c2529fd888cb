import Foundation
import QuenchTestSupport
import Testing

extension RegressionManifest.Case: CustomTestStringConvertible {}

/// Every input that once crashed Quench or left a history half-written, kept
/// as a file under Tests/Fixtures/regressions with what it must do now
/// (MANIFEST.tsv): the exit status, the message, and never a signal.
@Suite struct RegressionFileTests {
    static let cases = RegressionManifest.cases.filter { !$0.isWebRequest }

    @Test func theManifestListsEveryFileAndIsWellFormed() throws {
        #expect(Self.cases.count >= 15, "MANIFEST.tsv is missing or short")
        for c in RegressionManifest.cases {
            #expect(c.status >= 0 && !c.arguments.isEmpty, "MANIFEST.tsv line \(c.line) is malformed")
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: RegressionManifest.folder).filter { $0 != "MANIFEST.tsv" }
        for file in files where ["import-", "replay-", "profile-", "date-", "config-"].contains(where: file.hasPrefix) {
            #expect(RegressionManifest.cases.contains { $0.file == file }, "\(file) has no line in MANIFEST.tsv")
        }
    }

    @Test(arguments: cases.filter { $0.arguments != "config" })
    func regressionInput(_ c: RegressionManifest.Case) throws {
        let scratch = try TemporaryFolder()
        let db = scratch.path + "/q.sqlite"
        let history = scratch.path + "/history.sqlite"
        if c.arguments.contains("{history}") {
            let seeded = try runQuench(["add", "250ml", "--db", history])
            #expect(seeded.status == 0, "\(seeded.stderr)")
        }
        let contents = c.arguments.contains("{contents}") ? try c.contents() : ""
        // Split first: a file's contents are one argument whatever they hold.
        let arguments = c.arguments.split(separator: " ").map {
            $0.replacingOccurrences(of: "{file}", with: RegressionManifest.folder + "/" + c.file)
                .replacingOccurrences(of: "{db}", with: db).replacingOccurrences(of: "{folder}", with: scratch.path)
                .replacingOccurrences(of: "{history}", with: history).replacingOccurrences(of: "{contents}", with: contents)
        }
        let r = try runQuench(arguments)
        #expect(r.status == c.status, "exit \(r.status) (a trap is 132/134, a signal is above 128): \(r.stderr)")
        if let message = c.message {
            #expect(r.stderr.contains(message), "\(r.stderr)")
            #expect(r.stderr.contains("quench: "), "one error style: \(r.stderr)")
        }
        #expect(!r.stderr.contains("Fatal error") && !r.stderr.contains("\u{1B}"), "\(r.stderr)")
        // A refused import or pair leaves no database behind it did not find there.
        if c.status != 0, c.arguments.hasPrefix("import") || c.arguments.hasPrefix("pair") {
            #expect(!FileManager.default.fileExists(atPath: db), "a refused \(arguments[0]) left \(db) behind")
        }
    }

    /// A configuration file that once aborted all three programs (toml++'s
    /// assertion, exit 134, which systemd restarts forever): each now stops with
    /// the configuration status, 78, which the units do not restart on, and the
    /// file's place.
    @Test(arguments: cases.filter { $0.arguments == "config" })
    func configurationRegressionInput(_ c: RegressionManifest.Case) throws {
        let scratch = try TemporaryFolder()
        let file = RegressionManifest.folder + "/" + c.file
        let environment = ["QUENCH_CONFIG": file, "HOME": scratch.path, "QUENCH_DB": scratch.file("q.sqlite")]
        let programs: [(name: String, executable: String?, arguments: [String])] = [
            ("quench", quenchBinary, ["serve"]),
            ("quenchd", builtExecutable("quenchd"), ["--config", file, "--seconds", "0.1"]),
            ("quench-web", builtExecutable("quench-web"), []),
        ]
        for program in programs {
            guard let executable = program.executable else {
                Issue.record("\(program.name) is not built (swift build)")
                continue
            }
            let r = try runQuench(program.arguments, environment: environment, executable: executable)
            #expect(r.status == c.status, "\(program.name): exit \(r.status) (an abort is 134, a signal above 128): \(r.stderr)")
            let message = (c.message ?? "").replacingOccurrences(of: "{file}", with: file)
            #expect(r.stderr.contains(message) && r.stderr.hasPrefix(program.name + ": "), "\(program.name): \(r.stderr)")
        }
    }
}

import Foundation
import QuenchTestSupport
import Testing

/// Every input that once crashed Quench or left a history half-written, kept
/// as a file under Tests/Fixtures/regressions with what it must do now
/// (MANIFEST.tsv): the exit status, the message, and never a signal.
@Suite struct RegressionFileTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var line: Int
        var file: String
        var arguments: String
        var status: Int32
        var message: String?
        var testDescription: String { "\(file): quench \(arguments)" }
    }

    static let folder = TestPackage.fixtures.appendingPathComponent("regressions").path

    static let cases: [Case] = {
        guard let text = try? String(contentsOfFile: folder + "/MANIFEST.tsv", encoding: .utf8) else { return [] }
        var cases: [Case] = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
        where !line.hasPrefix("#") && !line.isEmpty {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            cases.append(Case(line: index + 1, file: fields[0], arguments: fields.count > 1 ? fields[1] : "",
                              status: fields.count > 2 ? Int32(fields[2]) ?? -1 : -1,
                              message: fields.count > 3 && fields[3] != "-" ? fields[3] : nil))
        }
        return cases
    }()

    @Test func theManifestListsEveryFileAndIsWellFormed() throws {
        #expect(Self.cases.count >= 15, "MANIFEST.tsv is missing or short")
        for c in Self.cases {
            #expect(c.status >= 0 && !c.arguments.isEmpty, "MANIFEST.tsv line \(c.line) is malformed")
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.folder).filter { $0 != "MANIFEST.tsv" }
        for file in files where ["import-", "replay-", "profile-", "config-"].contains(where: { file.hasPrefix($0) }) {
            #expect(Self.cases.contains { $0.file == file }, "\(file) has no line in MANIFEST.tsv")
        }
    }

    @Test(arguments: cases.filter { $0.arguments != "config" })
    func regressionInput(_ c: Case) throws {
        let scratch = try TemporaryFolder()
        let db = scratch.path + "/q.sqlite"
        let arguments = c.arguments.split(separator: " ").map {
            $0.replacingOccurrences(of: "{file}", with: Self.folder + "/" + c.file)
                .replacingOccurrences(of: "{db}", with: db).replacingOccurrences(of: "{folder}", with: scratch.path)
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
    func configurationRegressionInput(_ c: Case) throws {
        let scratch = try TemporaryFolder()
        let file = Self.folder + "/" + c.file
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

import Foundation

/// Tests/Fixtures/regressions/MANIFEST.tsv: each input that once crashed Quench
/// or left a history half-written, and what it must do now. Read by the CLI's
/// RegressionFileTests (QuenchGatewayTests) and the web's WebRegressionTests
/// (QuenchWebTests, the lines that are `GET` requests).
public enum RegressionManifest {
    public struct Case: Sendable {
        /// The line in MANIFEST.tsv.
        public var line: Int
        public var file: String
        /// A `quench` command line, or `GET /path?query` for the web server.
        public var arguments: String
        /// The exit status, or the HTTP status of a request.
        public var status: Int32
        /// Text the error must contain; nil: none expected.
        public var message: String?

        public var isWebRequest: Bool { arguments.hasPrefix("GET ") }
        /// How a test names it (the test targets make it `CustomTestStringConvertible`).
        public var testDescription: String { "\(file): \(isWebRequest ? "" : "quench ")\(arguments)" }

        /// The file's text without its final newline: an input that is an option's value.
        public func contents() throws -> String {
            try String(contentsOfFile: RegressionManifest.folder + "/" + file, encoding: .utf8).trimmingCharacters(in: .newlines)
        }
    }

    public static let folder = TestPackage.fixtures.appendingPathComponent("regressions").path

    public static let cases: [Case] = {
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
}

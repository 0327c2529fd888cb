import Foundation
import QuenchTestSupport
import Testing

/// The Markdown files whose samples and links are checked, relative to the package root.
enum DocFiles {
    static let markdown: [String] = {
        let docs = (try? FileManager.default.contentsOfDirectory(atPath: TestPackage.root.appendingPathComponent("docs").path)) ?? []
        return ["README.md", "CONTRIBUTING.md"] + docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    }()

    static func lines(_ file: String) throws -> [String] {
        let text = try String(contentsOf: TestPackage.root.appendingPathComponent(file), encoding: .utf8)
        return text.components(separatedBy: "\n")
    }
}

/// Every marked sample in the docs is run with the built `quench` and must print
/// what the document says. `UPDATE_DOC_SAMPLES=1` writes the new output into the
/// document instead (then read the diff before committing it).
@Suite(.serialized, .enabled(if: quenchBinary != nil, "SKIPPED: the quench executable is not built next to the tests (run `swift build` first)"))
struct DocSamplesTests {
    static let updating = ProcessInfo.processInfo.environment["UPDATE_DOC_SAMPLES"] == "1"

    @Test(arguments: DocFiles.markdown)
    func samplesMatchARealRun(file: String) throws {
        var lines = try DocFiles.lines(file)
        let samples = try DocSampleParser.samples(file: file, lines: lines)
        guard !samples.isEmpty else { return }
        var sandbox = try Sandbox()
        var replacements: [(DocSample, [String])] = []
        for sample in samples {
            if sample.fresh { sandbox = try Sandbox() }
            if let writes = sample.writes {
                try sandbox.write(writes.text, to: writes.path)
                continue
            }
            var body: [String] = []
            var changed = false
            for step in sample.steps {
                let actual = try sandbox.run(step.command, environment: sample.environment, file: file, line: step.line)
                let expected = sample.masks.reduce(step.expected.joined(separator: "\n")) { $1.apply($0) }
                let masked = sample.masks.reduce(actual.joined(separator: "\n")) { $1.apply($0) }
                let matches = Self.matches(expected: expected.components(separatedBy: "\n"), actual: masked.components(separatedBy: "\n"))
                if !matches {
                    changed = true
                    if !Self.updating {
                        Issue.record("""
                            \(file):\(step.line): `\(step.command)` printed something else \
                            (UPDATE_DOC_SAMPLES=1 writes it into the file):
                            \(try Self.unifiedDiff(step.expected, actual, label: "\(file):\(step.line)"))
                            """)
                    }
                }
                if !body.isEmpty { body.append("") }
                body.append("$ " + step.command)
                body += matches ? step.expected : Self.keepingElisions(of: step.expected, actual)
            }
            if changed { replacements.append((sample, body)) }
        }
        if Self.updating, !replacements.isEmpty {
            for (sample, body) in replacements.reversed() { lines.replaceSubrange(sample.bodyStart..<sample.bodyEnd, with: body) }
            try lines.joined(separator: "\n").write(to: TestPackage.root.appendingPathComponent(file), atomically: true, encoding: .utf8)
            print("\(file): rewrote \(replacements.count) sample(s) from this run")
        }
    }

    @Test func elisionsMasksAndMarkersMeanWhatCONTRIBUTINGSays() throws {
        #expect(Self.matches(expected: ["a", "…", "z"], actual: ["a", "b", "c", "z"]))
        #expect(Self.matches(expected: ["a", "…", "z"], actual: ["a", "z"]))
        #expect(!Self.matches(expected: ["a", "…", "z"], actual: ["a", "b", "y"]))
        #expect(!Self.matches(expected: ["a", "…", "c", "…", "z"], actual: ["a", "b", "z"]))
        #expect(Self.matches(expected: ["a", "…", "c", "…", "z"], actual: ["a", "b", "c", "d", "z"]))
        #expect(Self.keepingElisions(of: ["a", "…", "z"], ["1", "2", "3", "4"]) == ["1", "…", "4"])
        #expect(DocSample.Mask.uuid.apply("manual|d17fd098-8dad-43ce-b1d6-a7a749d4daf7,") == "manual|<uuid>,")
        #expect(DocSample.Mask.time.apply("at 2026-11-23T08:15:12.103Z and 2026-11-22T01:58:57+00:00.") == "at <time> and <time>.")
        let lines = ["<!-- sample-env: TZ=Europe/London QUENCH_NOW=2026-11-22T01:58:57Z -->", "<!-- sample: fresh mask=uuid -->", "```console",
                     "$ QUENCH_PERSON=ann quench add 250ml --note 'green tea'", "Added #1", "", "$ quench today", "```",
                     "````markdown", "<!-- sample -->", "```console", "$ quench not-run", "```", "````"]
        let samples = try DocSampleParser.samples(file: "x.md", lines: lines)
        #expect(samples.count == 1)
        #expect(samples.first?.environment == ["TZ": "Europe/London", "QUENCH_NOW": "2026-11-22T01:58:57Z"])
        #expect(samples.first?.fresh == true && samples.first?.masks == [.uuid])
        #expect(samples.first?.steps.map(\.command) == ["QUENCH_PERSON=ann quench add 250ml --note 'green tea'", "quench today"])
        #expect(samples.first?.steps.map(\.line) == [4, 7])
        #expect(samples.first?.steps.first?.expected == ["Added #1"])
        #expect(try DocSampleParser.words("a 'b c' \"d\"e", file: "x.md", line: 1) == ["a", "b c", "de"])
        #expect(throws: DocSampleError.self) { try DocSampleParser.samples(file: "x.md", lines: ["<!-- sample: mask=colour -->", "```", "$ quench", "```"]) }
        #expect(throws: DocSampleError.self) { try DocSampleParser.samples(file: "x.md", lines: ["<!-- sample -->", "no fence"]) }
    }

    /// QUENCH_NOW, the samples' clock, is bounded like any other input: a bad one is an error, not the wall clock.
    @Test func aBadClockIsRefused() throws {
        let folder = try TemporaryFolder("quench-doc-now")
        for bad in ["yesterday", "2026-11-22 01:58", "2026-13-40T00:00:00Z", String(repeating: "9", count: 500)] {
            let result = try runQuench(["add", "250ml", "--db", folder.file("q.sqlite")], environment: ["QUENCH_NOW": bad])
            #expect(result.status == 1, "\(bad)")
            #expect(result.stderr.contains("$QUENCH_NOW: expected an ISO 8601 time with a zone"), "\(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.file("q.sqlite")))
        let good = try runQuench(["add", "250ml", "--db", folder.file("q.sqlite")], environment: ["QUENCH_NOW": "2026-11-22T01:58:00Z"])
        #expect(good.status == 0 && good.stdout.contains("at 2026-11-22 01:58"), "\(good.stdout)\(good.stderr)")
    }

    /// Whether `actual` is `expected`, where a line `…` in `expected` stands for any number of lines.
    static func matches(expected: [String], actual: [String]) -> Bool {
        let segments = expected.split(separator: DocSample.elision, omittingEmptySubsequences: false).map(Array.init)
        guard segments.count > 1 else { return expected == actual }
        let head = segments[0], tail = segments[segments.count - 1]
        guard actual.count >= head.count + tail.count, Array(actual.prefix(head.count)) == head,
              Array(actual.suffix(tail.count)) == tail else { return false }
        var rest = Array(actual[head.count..<(actual.count - tail.count)])
        for middle in segments.dropFirst().dropLast() where !middle.isEmpty {
            guard let at = (0...max(0, rest.count - middle.count)).first(where: { rest.count >= middle.count && Array(rest[$0..<($0 + middle.count)]) == middle }) else { return false }
            rest = Array(rest[(at + middle.count)...])
        }
        return true
    }

    /// `actual`, cut as `expected` is: as many lines before its first `…` and after its last.
    static func keepingElisions(of expected: [String], _ actual: [String]) -> [String] {
        guard let first = expected.firstIndex(of: DocSample.elision), let last = expected.lastIndex(of: DocSample.elision) else { return actual }
        let tail = expected.count - last - 1
        guard actual.count > first + tail else { return actual }
        return Array(actual.prefix(first)) + [DocSample.elision] + Array(actual.suffix(tail))
    }

    static func unifiedDiff(_ expected: [String], _ actual: [String], label: String) throws -> String {
        let folder = try TemporaryFolder("quench-doc-diff")
        try (expected.joined(separator: "\n") + "\n").write(toFile: folder.file("expected"), atomically: true, encoding: .utf8)
        try (actual.joined(separator: "\n") + "\n").write(toFile: folder.file("actual"), atomically: true, encoding: .utf8)
        let diff = try runProgram("/usr/bin/diff", ["-u", "--label", label, "--label", "this run", folder.file("expected"), folder.file("actual")])
        return diff.stdout
    }
}

/// Where a document's samples run: a folder standing for `/`, with the home
/// `/home/pi` (the working directory and `HOME`) and `/home/shared`, a link to
/// `../shared` (so `../shared/traces/...` works as from the package root). The
/// folder's path is removed from what the commands print, so they show `/home/pi/...`.
struct Sandbox {
    let root: TemporaryFolder
    var home: String { root.path + "/home/pi" }

    init() throws {
        root = try TemporaryFolder("quench-doc-sample")
        try FileManager.default.createDirectory(atPath: root.path + "/home/pi", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: root.path + "/home/shared", withDestinationPath: TestPackage.shared.path)
    }

    /// A `sample-file` block's text, written under the home (owner-only, as Quench wants its files).
    func write(_ text: [String], to path: String) throws {
        let url = URL(fileURLWithPath: home + "/" + path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try (text.joined(separator: "\n") + "\n").write(to: url, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
    }

    /// The environment every command starts from, before the sample's and the command's own.
    func baseEnvironment() -> [String: String] {
        ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "HOME": home, "NO_COLOR": "1", "TZ": "UTC", "LANG": "C.UTF-8"]
    }

    /// Runs one `$ ` line: `[NAME=value ...] quench ARGS [> FILE]`, and returns what
    /// it printed (standard output, then standard error, then `(exit status N)` when not 0).
    func run(_ command: String, environment: [String: String], file: String, line: Int) throws -> [String] {
        var words = try DocSampleParser.words(command, file: file, line: line)
        var env = baseEnvironment().merging(environment) { $1 }
        while let first = words.first, let eq = first.firstIndex(of: "="), first[..<eq].allSatisfy({ $0.isUppercase || $0 == "_" || $0.isNumber }) {
            env[String(first[..<eq])] = String(first[first.index(after: eq)...])
            words.removeFirst()
        }
        var redirect: String?
        if words.count >= 3, words[words.count - 2] == ">" {
            redirect = words.removeLast()
            words.removeLast()
        }
        guard words.first == "quench", let binary = quenchBinary else {
            throw DocSampleError.malformed(file: file, line: line, "a sample runs only `quench` (with NAME=value before it and `> FILE` after): \(command)")
        }
        // env -i: nothing of the test's own environment (QUENCH_*, XDG_*) reaches the command.
        let arguments = ["-i", "-C", home] + env.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" } + [binary] + words.dropFirst()
        let result = try runProgram("/usr/bin/env", arguments)
        var printed = ""
        if let redirect {
            try result.stdout.write(toFile: home + "/" + redirect, atomically: true, encoding: .utf8)
        } else {
            printed = result.stdout
        }
        if !result.stderr.isEmpty {
            if !printed.isEmpty, !printed.hasSuffix("\n") { printed += "\n" }
            printed += result.stderr
        }
        var lines = DocSampleParser.trimmed(printed.replacingOccurrences(of: root.path, with: "").components(separatedBy: "\n"))
        if result.status != 0 { lines.append("(exit status \(result.status))") }
        return lines
    }
}

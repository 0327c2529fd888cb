import Foundation
import QuenchGateway
import QuenchTestSupport
import Testing

/// `simulate --out` and `record --out` write through a partial file: created
/// exclusively, never through a symlink someone planted under its name.
@Suite struct OutputFileTests {
    @Test func plantedSymlinkIsNotFollowed() throws {
        let dir = try TemporaryFolder("quench-output")
        let victim = dir.file("victim.txt")
        try "precious".write(toFile: victim, atomically: true, encoding: .utf8)
        let out = dir.file("trace.csv")
        // What an attacker would plant for this process's partial name.
        try FileManager.default.createSymbolicLink(atPath: out + ".partial-\(getpid())", withDestinationPath: victim)
        let file = try OutputFile(path: out)
        try file.write("t,value\n0,1\n")
        try file.commit()
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
        #expect(try String(contentsOfFile: out, encoding: .utf8) == "t,value\n0,1\n")
        // The planted link is left as it was; no partial file of ours remains.
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        #expect(left == ["trace.csv", "trace.csv.partial-\(getpid())", "victim.txt"])
    }
}

import Foundation
import Testing
import Threading

/// The MQTT password and the push token are read the same way: the first line,
/// without a Windows line ending; an empty first line or a missing file is a reason.
@Suite struct SecretFileTests {
    func file(_ contents: String) throws -> String {
        let path = NSTemporaryDirectory() + "secret-" + UUID().uuidString
        try contents.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func theFirstLineWithoutItsEnding() throws {
        let unix = try file("s3cret\nsecond line\n"), windows = try file("s3cret\r\n"), bare = try file("s3 cret")
        defer { for p in [unix, windows, bare] { unlink(p) } }
        #expect(SecretFile.firstLine(unix) == .success("s3cret"))
        #expect(SecretFile.firstLine(windows) == .success("s3cret"))
        #expect(SecretFile.firstLine(bare) == .success("s3 cret"), "spaces inside are the caller's to judge")
    }

    @Test func anEmptyFirstLineOrNoFileIsAReason() throws {
        let empty = try file("\nafter"), nothing = try file("")
        defer { for p in [empty, nothing] { unlink(p) } }
        #expect(SecretFile.firstLine(empty) == .failure(.init(reason: "its first line is empty")))
        #expect(SecretFile.firstLine(nothing) == .failure(.init(reason: "its first line is empty")))
        #expect(SecretFile.firstLine("/nonexistent/secret") == .failure(.init(reason: "No such file or directory")))
    }
}

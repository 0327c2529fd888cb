import Foundation
import Testing
import Threading

/// The one way Quench makes its folders: owner-only whatever the umask, each
/// missing parent too when asked, an existing folder left alone.
struct OwnerOnlyFolderTests {
    func scratch() throws -> String {
        let path = NSTemporaryDirectory() + "owner-only-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        return path
    }

    func mode(_ path: String) -> mode_t? {
        var info = stat()
        return stat(path, &info) == 0 ? info.st_mode & 0o7777 : nil
    }

    @Test func eachMissingFolderIsMadeOwnerOnly() throws {
        let root = try scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let old = umask(0o022)
        defer { umask(old) }
        try OwnerOnlyFolder.make(root + "/a/b/c", parents: true)
        #expect(mode(root + "/a") == 0o700)
        #expect(mode(root + "/a/b") == 0o700)
        #expect(mode(root + "/a/b/c") == 0o700)
        #expect(mode(root) == 0o755, "a folder already there is left as it was")
    }

    @Test func withoutParentsOnlyTheLastIsMade() throws {
        let root = try scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try OwnerOnlyFolder.make(root + "/backups", parents: false)
        #expect(mode(root + "/backups") == 0o700)
        try OwnerOnlyFolder.make(root + "/trailing/", parents: false)
        #expect(mode(root + "/trailing") == 0o700, "a trailing slash names the same folder")
        #expect(throws: OwnerOnlyFolder.Failure(folder: root + "/x/backups", code: ENOENT)) {
            try OwnerOnlyFolder.make(root + "/x/backups", parents: false)
        }
        #expect(mode(root + "/x") == nil)
    }

    @Test func theFailureNamesTheFolderThatCouldNotBeMade() throws {
        let root = try scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(FileManager.default.createFile(atPath: root + "/file", contents: Data()))
        let failure = #expect(throws: OwnerOnlyFolder.Failure.self) {
            try OwnerOnlyFolder.make(root + "/file/inside/deeper", parents: true)
        }
        #expect(failure?.folder == root + "/file/inside")
        #expect(failure?.description.contains("Not a directory (errno 20)") == true, "\(String(describing: failure))")
    }

    @Test func theFolderOfAFile() {
        #expect(OwnerOnlyFolder.folder(of: "/var/lib/quench/intake.sqlite") == "/var/lib/quench")
        #expect(OwnerOnlyFolder.folder(of: "/intake.sqlite") == "/")
        #expect(OwnerOnlyFolder.folder(of: "intake.sqlite") == "")
        #expect(OwnerOnlyFolder.folder(of: "data/intake.sqlite") == "data")
    }
}

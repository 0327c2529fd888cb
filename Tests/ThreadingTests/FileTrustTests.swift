import Foundation
import Testing
import Threading

/// FileTrust's rule, on real files made another user's: the owner must be root
/// or us, and nobody else may write the file or a folder above it (a sticky
/// folder of root's, like /tmp, excepted).
@Suite(.enabled(if: geteuid() == 0, "SKIPPED: giving files to another user needs root (CI runs as root): sudo swift test --filter FileTrustTests"))
struct FileTrustTests {
    static let nobody: uid_t = 65534

    /// A fresh folder in /tmp, 0755, root's.
    func folder() throws -> String {
        let path = NSTemporaryDirectory() + "trust-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        return path
    }

    func file(_ path: String, mode: mode_t = 0o644, owner: uid_t = 0) throws -> String {
        #expect(FileManager.default.createFile(atPath: path, contents: Data("x\n".utf8)))
        // The test can give files away, or it says so and stops.
        try #require(chown(path, owner, owner) == 0 && chmod(path, mode) == 0, "cannot chown/chmod \(path): errno \(errno)")
        return path
    }

    @Test func ourOwnFileInOurFoldersIsTrusted() throws {
        let dir = try folder()
        #expect(FileTrust.check(try file(dir + "/q.toml")) == nil)
        #expect(FileTrust.check(dir + "/not-yet.sqlite") == nil, "a file to be made: its folders are checked")
        #expect(FileTrust.check("/etc/passwd") == nil)
    }

    @Test func anotherUsersFileIsRefusedWithChown() throws {
        let path = try file(try folder() + "/q.toml", mode: 0o644, owner: Self.nobody)
        let problem = try #require(FileTrust.check(path))
        #expect(problem.path == path && problem.owner == Self.nobody && problem.wrongOwner && !problem.othersWrite)
        #expect(problem.fix == "chown root '\(path)'")
        #expect(problem.description == "\(path): refused: it is owned by nobody (uid 65534), mode 0644, so another user could have written it "
                + "(fix: chown root '\(path)')")
    }

    @Test func aFileOthersCanWriteIsRefusedWithChmod() throws {
        let dir = try folder()
        let world = try file(dir + "/world.toml", mode: 0o666)
        #expect(FileTrust.check(world)?.fix == "chmod go-w '\(world)'")
        let group = try file(dir + "/group.toml", mode: 0o664)
        #expect(FileTrust.check(group)?.othersWrite == true)
        let both = try file(dir + "/both.toml", mode: 0o666, owner: Self.nobody)
        #expect(FileTrust.check(both)?.fix == "chown root '\(both)' && chmod go-w '\(both)'")
    }

    @Test func aFolderAboveThatOthersCanWriteIsRefused() throws {
        let outer = try folder()
        let inner = outer + "/open"
        try FileManager.default.createDirectory(atPath: inner, withIntermediateDirectories: false)
        let path = try file(inner + "/deeper.toml")
        #expect(chmod(inner, 0o777) == 0)
        let problem = try #require(FileTrust.check(path))
        #expect(problem.path == inner && problem.file == path && problem.isFolder && problem.fix == "chmod go-w '\(inner)'")
        #expect(problem.description.hasPrefix("\(path): refused: its folder \(inner) is owned by root (uid 0), mode 0777"))
        #expect(FileTrust.check(inner + "/not-yet.sqlite")?.path == inner, "a file to be made there is refused too")
        // Sticky and root's, like /tmp: others may add files but not replace ours.
        #expect(chmod(inner, 0o1777) == 0)
        #expect(FileTrust.check(path) == nil)
        #expect(chown(inner, Self.nobody, Self.nobody) == 0)
        #expect(FileTrust.check(path)?.path == inner, "sticky but another user's")
    }

    @Test func aSymlinkIsFollowedAndBothPathsChecked() throws {
        let dir = try folder()
        let theirs = try file(dir + "/theirs.toml", owner: Self.nobody)
        #expect(symlink(theirs, dir + "/link.toml") == 0)
        // Named as given; `chown` follows the link to the file it fixes.
        #expect(FileTrust.check(dir + "/link.toml").map { ($0.path, $0.owner) } ?? ("", 0) == (dir + "/link.toml", Self.nobody))
        let open = dir + "/open"
        try FileManager.default.createDirectory(atPath: open, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o777])
        #expect(chmod(open, 0o777) == 0)
        let ours = try file(dir + "/ours.toml")
        #expect(symlink(ours, open + "/link.toml") == 0)
        #expect(FileTrust.check(open + "/link.toml")?.path == open, "a link others could swap")
    }

    /// Root reads a service's data in its state folder (`sudo quench today` on
    /// /var/lib/quench, the quench user's); never a file others can write.
    @Test func rootTrustsTheFolderOwnersDataOnlyWhenAsked() throws {
        let state = try folder()
        let database = try file(state + "/quench.sqlite", mode: 0o600, owner: Self.nobody)
        #expect(chown(state, Self.nobody, Self.nobody) == 0 && chmod(state, 0o700) == 0)
        #expect(FileTrust.check(database)?.path == database)
        #expect(FileTrust.check(database, folderOwnersData: true) == nil)
        #expect(chmod(database, 0o666) == 0)
        #expect(FileTrust.check(database, folderOwnersData: true)?.othersWrite == true)
        // A planted file in root's folder is not the folder owner's.
        let planted = try file(try folder() + "/web-token", mode: 0o600, owner: Self.nobody)
        #expect(FileTrust.check(planted, folderOwnersData: true)?.wrongOwner == true)
    }
}

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

    /// A folder inside `parent`, 0755, owned by `owner`.
    func subfolder(_ parent: String, _ name: String, owner: uid_t = 0) throws -> String {
        let path = parent + "/" + name
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        try #require(chown(path, owner, owner) == 0, "cannot chown \(path): errno \(errno)")
        return path
    }

    /// safe/notify -> evil/notify -> real/other: whoever owns `evil` chooses what
    /// runs, though the path as given and the file it ends at are both root's.
    @Test func aLinkInTheMiddleOfAChainHasItsFolderChecked() throws {
        let top = try folder()
        let safe = try subfolder(top, "safe"), evil = try subfolder(top, "evil", owner: Self.nobody), real = try subfolder(top, "real")
        let other = try file(real + "/other", mode: 0o755)
        #expect(symlink(other, evil + "/notify") == 0 && symlink(evil + "/notify", safe + "/notify") == 0)
        let problem = try #require(FileTrust.check(safe + "/notify"), "the hop through \(evil) was not checked")
        #expect(problem.path == evil && problem.isFolder && problem.wrongOwner)
        #expect(problem.description.hasPrefix("\(safe)/notify: refused: its folder \(evil) is owned by nobody (uid 65534), mode 0755"), "\(problem)")
        // A linked folder in the middle leads there too.
        #expect(symlink(evil, safe + "/dir") == 0)
        #expect(FileTrust.check(safe + "/dir/notify")?.path == evil)
        // Every hop through trusted folders: accepted.
        #expect(chown(evil, 0, 0) == 0)
        #expect(FileTrust.check(safe + "/notify") == nil)
        #expect(FileTrust.check(safe + "/dir/notify") == nil)
    }

    @Test func aRelativeLinkIsResolvedFromItsOwnFolder() throws {
        let top = try folder()
        let safe = try subfolder(top, "safe"), evil = try subfolder(top, "evil", owner: Self.nobody)
        _ = try file(evil + "/notify", mode: 0o755)
        #expect(symlink("../evil/notify", safe + "/notify") == 0)
        #expect(FileTrust.check(safe + "/notify")?.path == evil)
        #expect(chown(evil, 0, 0) == 0)
        #expect(FileTrust.check(safe + "/notify") == nil)
        // Ends at another user's file: named as given, "it is".
        let theirs = try file(evil + "/theirs", owner: Self.nobody)
        #expect(symlink("../evil/theirs", safe + "/theirs") == 0)
        let problem = try #require(FileTrust.check(safe + "/theirs"), "\(theirs) not checked")
        #expect(problem.description.hasPrefix("\(safe)/theirs: refused: it is owned by nobody (uid 65534)"), "\(problem)")
    }

    @Test func aLinkLoopIsRefusedAfterFortyHops() throws {
        let dir = try folder()
        #expect(symlink(dir + "/b", dir + "/a") == 0 && symlink("a", dir + "/b") == 0)
        let problem = try #require(FileTrust.check(dir + "/a"), "a loop was let through")
        #expect(problem.tooManyLinks && [dir + "/a", dir + "/b"].contains(problem.path))
        #expect(problem.description.hasPrefix("\(dir)/a: refused: more than 40 symlinks to follow at "), "\(problem)")
        #expect(FileTrust.check(dir + "/a/under/it")?.tooManyLinks == true)
    }

    /// The file itself is "it", however its path is spelled (it once read "its folder DIR/n.db").
    @Test func theFileItselfIsNeverCalledItsFolder() throws {
        let dir = try folder()
        _ = try file(dir + "/n.db", mode: 0o600, owner: Self.nobody)
        for spelled in [dir + "/./n.db", dir + "//n.db", dir + "/../" + (dir as NSString).lastPathComponent + "/n.db"] {
            let problem = try #require(FileTrust.check(spelled))
            #expect(problem.description.hasPrefix("\(spelled): refused: it is owned by nobody (uid 65534), mode 0600"), "\(problem)")
        }
    }
}

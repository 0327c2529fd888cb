#if canImport(Glibc)
import Glibc
#endif

/// Whether a file could have been written by someone other than this user or
/// root, decided as OpenSSH's `safe_path` (StrictModes) and sudo's checks do:
/// for the file and each folder above it, up to `/`,
/// - the owner is root, this process's effective user, or `alsoTrusting`;
/// - nobody else may write it: no group or world write bit, except on a folder
///   that is sticky and root's (`/tmp`, mode 1777), where others can add
///   files but not replace or rename ours.
/// Symlinks are followed one at a time (at most 40, as the kernel's ELOOP),
/// and the folders of each link on the way are checked as well as the file's. A file that is not there yet has its
/// folders checked (the deepest that exist): what Quench creates there is
/// no safer than they are. One rule for every door: the configuration files,
/// the web token, the MQTT password and CA files, the database, the reminder's
/// command.
public enum FileTrust {
    /// The first problem on the way from the file up to `/`; nil when nobody
    /// else could have written it.
    ///
    /// `folderOwnersData`: for data rather than instructions (the database,
    /// the web token), root also trusts the owner of the file's own folder: a
    /// service's state folder (/var/lib/quench, the quench user's) holds that
    /// user's files, and `sudo quench today` reads them. Nobody else gains
    /// from it: the folder's owner could replace the file anyway.
    public static func check(_ path: String, folderOwnersData: Bool = false) -> UntrustedFile? {
        guard !path.isEmpty else { return nil }
        let me = geteuid()
        let absolute = path.hasPrefix("/") ? path : currentDirectory() + "/" + path
        let given = components(absolute)
        var extra: uid_t?
        var folderInfo = stat()
        if folderOwnersData, me == 0, stat(given.count > 1 ? given[given.count - 2] : "/", &folderInfo) == 0 {
            extra = folderInfo.st_uid
        }
        func problem(_ component: String, _ info: stat, isFile: Bool = false) -> UntrustedFile? {
            let isFolder = info.st_mode & S_IFMT == S_IFDIR
            let ownerTrusted = info.st_uid == 0 || info.st_uid == me || info.st_uid == extra
            let othersWrite = info.st_mode & (S_IWGRP | S_IWOTH) != 0
            let stickyRoot = isFolder && info.st_mode & S_ISVTX != 0 && info.st_uid == 0
            guard !ownerTrusted || (othersWrite && !stickyRoot) else { return nil }
            // The file itself is named as given: `chown` and `chmod` follow its links.
            return UntrustedFile(file: path, path: isFile ? path : component, owner: info.st_uid, mode: info.st_mode & 0o7777,
                                 isFolder: isFolder && !isFile, wrongOwner: !ownerTrusted, othersWrite: othersWrite && !stickyRoot, user: me)
        }
        /// `folder` and each folder above it (no links in it: `resolve` made it).
        func checkFolders(_ folder: String) -> UntrustedFile? {
            for component in components(folder).reversed() {
                var info = stat()
                guard lstat(component, &info) == 0 else { continue }
                if let found = problem(component, info) { return found }
            }
            return nil
        }
        // Resolved one part and one link at a time, as the kernel does: the
        // folder of every link on the way must be trusted too, or whoever can
        // write it chooses where the rest of the path leads (a link in a safe
        // folder pointing into an unsafe one).
        var resolved = "/"
        var remaining = Array(absolute.split(separator: "/").reversed().map(String.init))
        var hops = 0
        var exists = true
        while let name = remaining.popLast() {
            if name == "." { continue }
            if name == ".." { resolved = components(resolved).dropLast().last ?? "/"; continue }
            let next = resolved == "/" ? "/" + name : resolved + "/" + name
            var info = stat()
            guard lstat(next, &info) == 0 else { exists = false; break }  // not made yet: its folders are checked
            guard info.st_mode & S_IFMT == S_IFLNK else { resolved = next; continue }
            if let found = checkFolders(resolved) { return found }
            hops += 1
            guard hops <= maxLinks, let target = linkTarget(next) else {
                return UntrustedFile(file: path, path: next, owner: info.st_uid, mode: info.st_mode & 0o7777, isFolder: false,
                                     wrongOwner: false, othersWrite: false, user: me, tooManyLinks: true)
            }
            if target.hasPrefix("/") { resolved = "/" }
            remaining += target.split(separator: "/").reversed().map(String.init)
        }
        guard exists, remaining.isEmpty, resolved != "/" else { return checkFolders(resolved) }
        var info = stat()
        guard lstat(resolved, &info) == 0 else { return checkFolders(resolved) }
        return problem(resolved, info, isFile: true) ?? checkFolders(components(resolved).dropLast().last ?? "/")
    }

    /// Links followed before giving up, as the kernel's ELOOP (40).
    static let maxLinks = 40

    static func linkTarget(_ link: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(link, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `/a/b/c` as `["/", "/a", "/a/b", "/a/b/c"]`, `.` and `..` taken lexically.
    static func components(_ path: String) -> [String] {
        var parts: [Substring] = []
        for part in path.split(separator: "/") where part != "." {
            if part == ".." { _ = parts.popLast() } else { parts.append(part) }
        }
        var out = ["/"]
        var prefix = ""
        for part in parts {
            prefix += "/" + part
            out.append(prefix)
        }
        return out
    }

    static func currentDirectory() -> String { workingDirectory() ?? "/" }

    /// The user's name; nil when the uid has none. getpwuid_r, not getpwuid: a server's threads ask at once.
    public static func accountName(_ uid: uid_t) -> String? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwuid_r(uid, &entry, &buffer, buffer.count, &result) == 0, result != nil, let name = entry.pw_name else { return nil }
        return String(cString: name)
    }
}

/// A file another user could have written, and the command that fixes it.
public struct UntrustedFile: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file asked about.
    public var file: String
    /// What is wrong: the file itself, or a folder above it.
    public var path: String
    public var owner: uid_t
    /// Permission bits, as `ls -l` shows them in octal.
    public var mode: mode_t
    public var isFolder: Bool
    public var wrongOwner: Bool
    public var othersWrite: Bool
    /// Who ran the check (the effective user).
    public var user: uid_t
    /// `path` is a link past the 40th followed (a loop, most likely): where it leads is nobody's guess.
    public var tooManyLinks = false

    /// `chmod go-w PATH`, `sudo chown alice PATH`, or both.
    public var fix: String {
        let quoted = "'" + path.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
        var steps: [String] = []
        if tooManyLinks { return "point '\(file)' at the file itself" }
        if wrongOwner { steps.append((user == 0 ? "chown " : "sudo chown ") + Self.userName(user) + " " + quoted) }
        if othersWrite { steps.append((wrongOwner && user != 0 ? "sudo " : "") + "chmod go-w " + quoted) }
        return steps.joined(separator: " && ")
    }

    public var description: String { fact + " (fix: \(fix))" }

    /// What is wrong, without the fix (`quench doctor` says the fix on a line of its own).
    public var fact: String {
        if tooManyLinks {
            return "\(file): refused: more than \(FileTrust.maxLinks) symlinks to follow at \(path), a loop"
        }
        let what = path == file || !isFolder ? "it is" : "its folder \(path) is"
        let mode = "0" + String(mode, radix: 8)
        return "\(file): refused: \(what) owned by \(Self.userName(owner)) (uid \(owner)), mode \(mode), "
            + "so \(wrongOwner ? "another user" : "a user other than its owner") could have written it"
    }

    /// The user's name, or the uid when it has none.
    static func userName(_ uid: uid_t) -> String { FileTrust.accountName(uid) ?? "\(uid)" }
}

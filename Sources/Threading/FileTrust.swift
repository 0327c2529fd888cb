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
/// A symlink is followed, and the folders of both the path as given and the
/// path it resolves to are checked. A file that is not there yet has its
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
        var chains = [components(absolute)]
        let folder = chains[0].count > 1 ? chains[0][chains[0].count - 2] : "/"
        var extra: uid_t?
        var folderInfo = stat()
        if folderOwnersData, me == 0, stat(folder, &folderInfo) == 0 { extra = folderInfo.st_uid }
        // Where a symlink leads: the file's own path, else (not made yet) its folder's.
        if let real = realpath(absolute, nil) ?? realpath(folder, nil) {
            chains.append(components(String(cString: real)))
            free(real)
        }
        for chain in chains {
            // The file first, then its folders; a part not there yet is skipped.
            for component in chain.reversed() {
                var info = stat()
                guard stat(component, &info) == 0 else { continue }
                let isFolder = info.st_mode & S_IFMT == S_IFDIR
                let ownerTrusted = info.st_uid == 0 || info.st_uid == me || info.st_uid == extra
                let othersWrite = info.st_mode & (S_IWGRP | S_IWOTH) != 0
                let stickyRoot = isFolder && info.st_mode & S_ISVTX != 0 && info.st_uid == 0
                if !ownerTrusted || (othersWrite && !stickyRoot) {
                    return UntrustedFile(file: path, path: component, owner: info.st_uid, mode: info.st_mode & 0o7777,
                                         isFolder: isFolder, wrongOwner: !ownerTrusted, othersWrite: othersWrite && !stickyRoot, user: me)
                }
            }
        }
        return nil
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

    static func currentDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return "/" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
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

    /// `chmod go-w PATH`, `sudo chown alice PATH`, or both.
    public var fix: String {
        let quoted = "'" + path.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
        var steps: [String] = []
        if wrongOwner { steps.append((user == 0 ? "chown " : "sudo chown ") + Self.userName(user) + " " + quoted) }
        if othersWrite { steps.append((wrongOwner && user != 0 ? "sudo " : "") + "chmod go-w " + quoted) }
        return steps.joined(separator: " && ")
    }

    public var description: String {
        let what = path == file ? "it is" : "its folder \(path) is"
        let mode = "0" + String(mode, radix: 8)
        return "\(file): refused: \(what) owned by \(Self.userName(owner)) (uid \(owner)), mode \(mode), "
            + "so \(wrongOwner ? "another user" : "a user other than its owner") could have written it (fix: \(fix))"
    }

    /// The user's name, or the uid when it has none.
    static func userName(_ uid: uid_t) -> String {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwuid_r(uid, &entry, &buffer, buffer.count, &result) == 0, result != nil, let name = entry.pw_name else { return "\(uid)" }
        return String(cString: name)
    }
}

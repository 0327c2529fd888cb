#if canImport(Glibc)
import Glibc

/// Folders made for Quench's own files (the database, its backups, the web
/// page's token): owner-only, as `mkdir -p -m 700` makes them, since what goes
/// in them is the person's history or a secret. The one place they are made.
public enum OwnerOnlyFolder {
    /// A folder that could not be made: which, and why.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public let folder: String
        public let code: Int32
        public init(folder: String, code: Int32) {
            self.folder = folder
            self.code = code
        }

        public var description: String { "cannot make the folder \(folder): \(errnoDescription(code))" }
    }

    /// Makes `path` (0700) when it is missing, and with `parents` each missing
    /// folder above it too; a folder already there is left as it is, whoever made it.
    public static func make(_ path: String, parents: Bool) throws(Failure) {
        var parts = path.split(separator: "/", omittingEmptySubsequences: false)[...]
        while parts.count > 1, parts.last?.isEmpty == true { parts = parts.dropLast() }  // `backups/`: backups
        let first = parents ? parts.startIndex : parts.index(before: parts.endIndex)
        for end in parts.indices where end >= first && !parts[end].isEmpty {
            let folder = parts[...end].joined(separator: "/")
            if mkdir(folder, 0o700) != 0 && errno != EEXIST { throw Failure(folder: folder, code: errno) }
        }
    }

    /// The folder a file's path names: "" for a bare name, "/" for one at the root.
    public static func folder(of file: String) -> String {
        guard let slash = file.lastIndex(of: "/") else { return "" }
        return slash == file.startIndex ? "/" : String(file[..<slash])
    }
}
#endif

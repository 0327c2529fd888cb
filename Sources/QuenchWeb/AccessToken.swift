#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import Threading

/// The secret a phone on the home network shows once (in a link), then keeps as
/// a cookie: intake is health data, so nothing is readable from the network
/// without it. Kept in a file only its owner can read (0600), beside the
/// database, made on first use.
public struct AccessToken: Sendable, Equatable {
    public let value: String

    /// 32 random bytes, hex: 256 bits, and safe in a URL, a cookie and a header.
    static let byteCount = 32

    init(value: String) { self.value = value }

    /// The token in `path`, created (O_EXCL, 0600) when missing; two processes
    /// racing to create it both end up with the one that won. With
    /// `creatingFolder` (the default place, beside a database not made yet) a
    /// missing folder is made owner-only, as the database's would be.
    public static func loadOrCreate(at path: String, creatingFolder: Bool = false) throws(WebError) -> AccessToken {
        if let existing = try load(at: path) { return existing }
        if creatingFolder {
            do {
                try OwnerOnlyFolder.make(OwnerOnlyFolder.folder(of: path), parents: true)
            } catch {
                throw .tokenFile(path: path, errno: error.code, doing: "making the folder of")
            }
        }
        // Made where another user could swap it: they would know the token.
        if let problem = FileTrust.check(path, folderOwnersData: true) { throw .untrustedTokenFile(problem) }
        let token = AccessToken(value: randomHex(byteCount))
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd < 0 {
            if errno == EEXIST, let existing = try load(at: path) { return existing }
            throw .tokenFile(path: path, errno: errno, doing: "creating")
        }
        defer { close(fd) }
        let line = Array((token.value + "\n").utf8)
        let written = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == line.count, fsync(fd) == 0 else {
            let code = errno
            unlink(path)
            throw .tokenFile(path: path, errno: code, doing: "writing")
        }
        return token
    }

    /// A new token replacing the old one: every phone must open a new link.
    public static func rotate(at path: String, creatingFolder: Bool = false) throws(WebError) -> AccessToken {
        if unlink(path) != 0 && errno != ENOENT { throw .tokenFile(path: path, errno: errno, doing: "removing") }
        return try loadOrCreate(at: path, creatingFolder: creatingFolder)
    }

    /// The token in `path`; nil when there is none. A file another user could
    /// have written (a token they planted, so they know it) is refused.
    static func load(at path: String) throws(WebError) -> AccessToken? {
        let fd: Int32
        switch RegularFile.openForReading(path) {
        case .success(let opened): fd = opened
        case .failure(.errno(let code)):
            if code == ENOENT { return nil }
            throw .tokenFile(path: path, errno: code, doing: "reading")
        case .failure(.notRegular): throw .tokenNotAFile(path: path)
        }
        guard let file = fdopen(fd, "r") else {
            let code = errno
            close(fd)
            throw .tokenFile(path: path, errno: code, doing: "reading")
        }
        defer { fclose(file) }
        if let problem = FileTrust.check(path, folderOwnersData: true) { throw .untrustedTokenFile(problem) }
        // The file itself as opened: a secret others can read is no secret.
        var info = stat()
        guard fstat(fileno(file), &info) == 0 else { throw .tokenFile(path: path, errno: errno, doing: "reading") }
        guard info.st_mode & 0o077 == 0 else { throw .exposedTokenFile(path: path, mode: info.st_mode) }
        var buffer = [CChar](repeating: 0, count: 256)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { throw .badTokenFile(path: path) }
        let text = String(nulTerminated: buffer)
            .trimmingWhitespace()
        guard text.count == byteCount * 2, text.allSatisfy(\.isHexDigit) else { throw .badTokenFile(path: path) }
        return AccessToken(value: text)
    }

    /// Compares in time independent of where the first difference lies, so the
    /// token cannot be guessed a character at a time from response times.
    public func matches(_ candidate: some StringProtocol) -> Bool {
        let a = Array(value.utf8)
        let b = Array(candidate.utf8)
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for i in a.indices { difference |= a[i] ^ b[i] }
        return difference == 0
    }

    /// From the system's generator: getrandom(2) on Linux, the kernel's CSPRNG.
    static func randomHex(_ count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef".utf8)
        let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }, as: UTF8.self)
    }

    /// Run as root (`sudo quench serve token`), a new token file is given to
    /// the database's owner (the `quench` user on a Pi), or the service could
    /// not read it and would refuse to start.
    public static func giveToDatabaseOwner(_ path: String, database: String) throws(WebError) {
        guard geteuid() == 0 else { return }
        var db = stat(), token = stat()
        guard stat(database, &db) == 0, stat(path, &token) == 0, token.st_uid != db.st_uid || token.st_gid != db.st_gid else { return }
        if chown(path, db.st_uid, db.st_gid) != 0 { throw .tokenFile(path: path, errno: errno, doing: "handing to the database's owner") }
    }

    /// Where the token lives: beside the database (the service's state folder on a Pi).
    public static func defaultPath(forDatabase database: String) -> String {
        guard let slash = database.lastIndex(of: "/") else { return "web-token" }
        return String(database[...slash]) + "web-token"
    }
}

extension String {
    func trimmingWhitespace() -> String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}

/// The token as its file holds it now, so `quench serve token --rotate` takes
/// effect at once (the old link and cookies stop working) without a restart:
/// one stat(2) per request, the file read again only when it changed.
public final class TokenFile: Sendable {
    public let path: String
    private struct Seen {
        var inode: UInt64
        /// The inode's change time (seconds, nanoseconds).
        var changed: Int64
        var nanoseconds: Int64
        var token: AccessToken
    }
    private let seen: Mutex<Seen?>
    /// The last problem logged, so a refused file is said once (each request meets it), not per request.
    private let said = Mutex<String?>(nil)

    /// Whether `problem` is new since the last one said (nil: the file is good again).
    public func isNew(problem: String?) -> Bool {
        said.withLock { last in
            defer { last = problem }
            return problem != nil && problem != last
        }
    }

    /// Makes the token when there is none yet.
    public init(path: String) throws(WebError) {
        self.path = path
        _ = try AccessToken.loadOrCreate(at: path)
        seen = Mutex(nil)
    }

    /// The token now; nil when the file is gone or refused (then nothing is let in), with why in `problem`.
    public func current() -> AccessToken? {
        if case .success(let token) = currentOrProblem() { token } else { nil }
    }

    /// The token now, or why there is none: gone, unreadable, or refused for its mode or owner (the
    /// page said only "cannot be read" of a file made readable to others, which `quench serve token` then
    /// refused in its own words: the service trial).
    public func currentOrProblem() -> Result<AccessToken, WebError> {
        var info = stat()
        guard stat(path, &info) == 0 else { return .failure(.tokenMissing(path: path)) }
        // The inode's change time, not its modification time: a chmod or chown changes only the former,
        // and a token file made readable to others while the server ran was still obeyed.
        let stamp = (UInt64(info.st_ino), Int64(info.st_ctim.tv_sec), Int64(info.st_ctim.tv_nsec))
        return seen.withLock { seen in
            if let s = seen, (s.inode, s.changed, s.nanoseconds) == stamp { return .success(s.token) }
            do throws(WebError) {
                guard let token = try AccessToken.load(at: path) else { return .failure(.tokenMissing(path: path)) }
                seen = Seen(inode: stamp.0, changed: stamp.1, nanoseconds: stamp.2, token: token)
                return .success(token)
            } catch {
                return .failure(error)
            }
        }
    }
}

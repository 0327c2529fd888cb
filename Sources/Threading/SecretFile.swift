#if canImport(Glibc)
import Glibc
#endif

/// A secret kept in a file of its own (the MQTT password, a push service's
/// token): its first line, as `mosquitto_passwd`-style tools and `ntfy` write
/// them. At most 4 KiB is read; a trailing `\r` (a file saved on Windows) is
/// not part of the secret. Whether the file can be trusted is FileTrust's
/// question, asked before this one.
public enum SecretFile {
    /// The first line, without its line ending; the reason in words when the
    /// file cannot be read or its first line is empty.
    public static func firstLine(_ path: String) -> Result<String, Problem> {
        let fd: Int32
        switch RegularFile.openForReading(path) {
        case .success(let opened): fd = opened
        case .failure(.errno(let code)): return .failure(Problem(reason: String(cString: strerror(code))))
        case .failure(.notRegular): return .failure(Problem(reason: "it is not a regular file (a folder, a pipe or a device)"))
        }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 4096)
        let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard n >= 0 else { return .failure(Problem(reason: String(cString: strerror(errno)))) }
        // Split as bytes: in a String, "\r\n" is one Character, which neither "\n" nor "\r" matches.
        var line = bytes.prefix(n).prefix { $0 != UInt8(ascii: "\n") }
        if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
        let secret = String(decoding: line, as: UTF8.self)
        guard !secret.isEmpty else { return .failure(Problem(reason: "its first line is empty")) }
        return .success(secret)
    }

    /// Why a secret could not be read, in words for the caller's own error.
    public struct Problem: Error, Sendable, Equatable {
        public var reason: String
        public init(reason: String) { self.reason = reason }
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// An errno as people read it: `strerror`'s text and the number, e.g.
/// "Connection reset by peer (errno 104)". The one formatter every layer uses.
public func errnoDescription(_ code: Int32) -> String {
    #if canImport(Glibc)
    if let text = strerror(code) { return "\(String(cString: text)) (errno \(code))" }
    #endif
    return "errno \(code)"
}

#if canImport(Glibc)
/// A `write(2)` that failed: its errno.
public struct WriteFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public let code: Int32
    public var description: String { errnoDescription(code) }
}

/// Writes all of `bytes` to `fd`, resuming after short writes and EINTR. The one
/// such loop: the gateway's output files, a restore's copy and `--out` into a device.
public func writeFully(_ bytes: [UInt8], to fd: Int32) throws(WriteFailure) {
    if let code = bytes.withUnsafeBytes({ unwritten($0, to: fd) }) { throw WriteFailure(code: code) }
}

/// `writeFully` for part of a buffer.
public func writeFully(_ bytes: ArraySlice<UInt8>, to fd: Int32) throws(WriteFailure) {
    if let code = bytes.withUnsafeBytes({ unwritten($0, to: fd) }) { throw WriteFailure(code: code) }
}

/// Nil once all of `bytes` is written, else the errno it failed with.
private func unwritten(_ bytes: UnsafeRawBufferPointer, to fd: Int32) -> Int32? {
    guard let base = bytes.baseAddress else { return nil }
    var offset = 0
    while offset < bytes.count {
        let n = Glibc.write(fd, base + offset, bytes.count - offset)
        if n < 0 {
            if errno == EINTR { continue }
            return errno
        }
        offset += n
    }
    return nil
}
#endif

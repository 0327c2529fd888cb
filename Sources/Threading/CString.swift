#if canImport(Glibc)
import Glibc
#endif

extension String {
    /// What a C call wrote into `buffer`: up to its NUL (all of it without one), as UTF-8
    /// (`String(cString:)` on an array is deprecated, and reads past the end without a NUL).
    public init(nulTerminated buffer: [CChar]) {
        self.init(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

#if canImport(Glibc)
/// This process's working directory (`getcwd`), nil when it cannot be said (removed, too long).
public func workingDirectory() -> String? {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    return getcwd(&buffer, buffer.count) != nil ? String(nulTerminated: buffer) : nil
}
#endif

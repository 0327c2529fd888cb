#if canImport(Glibc)
import Glibc
#endif
import Threading

extension ConfigInputs {
    /// This process's environment and the real files. Glibc only, so quenchd
    /// can read its configuration without Foundation.
    public static func process() -> ConfigInputs {
        var variables: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "=") {
                variables[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            entry += 1
        }
        return ConfigInputs(variables: variables, workingDirectory: Threading.workingDirectory(), read: readFile)
    }

    /// A configuration file is a few lines: anything larger is a mistake.
    static let largestFile = 1 << 20

    /// The file's bytes; `.absent` when there is none (nor the folder it would be in).
    static func readFile(_ path: String) -> FileRead {
        let fd: Int32
        switch RegularFile.openForReading(path) {
        case .success(let opened): fd = opened
        case .failure(.errno(let code)): return code == ENOENT || code == ENOTDIR ? .absent : .problem(.errno(code))
        case .failure(.notRegular): return .problem(.notAFile)
        }
        defer { close(fd) }
        // A file another user could have written is not obeyed: it may name a command run as root.
        if let problem = FileTrust.check(path) { return .untrusted(problem) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while bytes.count <= largestFile {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            guard n != 0 else { return .contents(bytes) }
            guard n > 0 else {
                if errno == EINTR { continue }
                return .problem(.errno(errno))
            }
            bytes += chunk[..<n]
        }
        return .problem(.tooLarge(limit: largestFile))
    }
}

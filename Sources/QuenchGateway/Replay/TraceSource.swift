#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import QuenchCore
import Threading

/// Where a trace comes from: a file, or standard input (`-`).
public enum TraceSource: Sendable, Hashable, CustomStringConvertible {
    case file(String)
    case standardInput

    public init(argument: String) {
        self = argument == "-" ? .standardInput : .file(argument)
    }

    public var description: String {
        switch self {
        case .file(let path): path
        case .standardInput: "<stdin>"
        }
    }
}

/// A system call that failed, with the errno it failed with.
public struct SystemError: Error, Sendable, Hashable, CustomStringConvertible {
    public var operation: String
    public var errno: Int32

    public init(_ operation: String, errno: Int32) {
        self.operation = operation
        self.errno = errno
    }

    public var description: String { "\(operation): \(errnoDescription(errno))" }
}

/// Reads a source in fixed-size chunks, so memory does not depend on its size.
public struct ChunkedInput {
    public let source: TraceSource
    public let chunkSize: Int

    public init(_ source: TraceSource, chunkSize: Int = 1 << 16) {
        precondition(chunkSize > 0)
        self.source = source
        self.chunkSize = chunkSize
    }

    /// Calls `onChunk` with each chunk read, in order, until the end of the input.
    public func forEachChunk(_ onChunk: (UnsafeRawBufferPointer) throws -> Void) throws {
        let fd: Int32
        switch source {
        case .standardInput:
            fd = 0
        case .file(let path):
            fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw ReplayError.cannotOpen(path: path, SystemError("open", errno: errno)) }
        }
        defer { if fd != 0 { close(fd) } }

        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n = Glibc.read(fd, buffer.baseAddress, chunkSize)
            if n < 0 {
                if errno == EINTR { continue }
                throw ReplayError.cannotRead(path: source.description, SystemError("read", errno: errno))
            }
            if n == 0 { return }
            try onChunk(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
        }
    }
}

extension ChunkedInput {
    /// Reads a trace chunk by chunk and streams its readings, so memory does
    /// not grow with the trace's length.
    /// Calls `onChunk` with the header (once the `t,value` line is read) and each
    /// batch of readings; returns the header.
    @discardableResult
    public func readTrace(_ onChunk: (TraceHeader, [Reading]) throws -> Void) throws -> TraceHeader {
        var parser = TraceParser()
        var batch: [Reading] = []
        batch.reserveCapacity(chunkSize / 8)
        try forEachChunk { chunk in
            do throws(TraceError) {
                try parser.parse(chunk) { batch.append($0) }
            } catch {
                throw ReplayError.malformedTrace(path: source.description, error)
            }
            if !batch.isEmpty {
                try onChunk(parser.header, batch)
                batch.removeAll(keepingCapacity: true)
            }
        }
        do {
            try parser.finish { batch.append($0) }
        } catch {
            throw ReplayError.malformedTrace(path: source.description, error)
        }
        if !batch.isEmpty { try onChunk(parser.header, batch) }
        return parser.header
    }
}

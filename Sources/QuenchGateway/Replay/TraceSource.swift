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
public struct ChunkedInput: Sendable {
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
                try parser.parse(chunk, into: &batch)
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

extension ChunkedInput {
    /// Batches parsed ahead, at most this many waiting: memory stays a few chunks' worth.
    static let readAhead = 4

    /// `readTrace` with the reading and parsing on a thread of its own, a few
    /// chunks ahead of `onChunk` (the detector), so the two overlap on two
    /// cores. The same batches in the same order, the same errors (a read or
    /// parse error once the batches before it are handled); if `onChunk`
    /// throws, the reader stops and its error is thrown.
    @discardableResult
    public func readTraceAhead(_ onChunk: (TraceHeader, [Reading]) throws -> Void) throws -> TraceHeader {
        struct Ahead {
            var batches: [(TraceHeader, [Reading])] = []
            var end: Result<TraceHeader, any Error>?
            var cancelled = false
        }
        struct Cancelled: Error {}
        let shared = Condition(Ahead())
        let reader = ThreadSlot()
        let input = self
        reader.start(name: "trace reader") {
            let result = Result { () throws -> TraceHeader in
                try input.readTrace { header, batch in
                    let go = shared.wait(until: Deadline(seconds: .infinity)) { s -> Bool? in
                        s.cancelled ? false : s.batches.count < Self.readAhead ? true : nil
                    }
                    guard go == true else { throw Cancelled() }
                    shared.changing { $0.batches.append((header, batch)) }
                }
            }
            shared.changing { $0.end = result }
        }
        defer {
            shared.changing { $0.cancelled = true }
            reader.join()
        }
        while true {
            let next = shared.wait(until: Deadline(seconds: .infinity)) { s -> Result<(TraceHeader, [Reading])?, any Error>? in
                if !s.batches.isEmpty { return .success(s.batches.removeFirst()) }
                switch s.end {
                case .none: return nil
                case .success(let header): return .success((header, []))
                case .failure(let error): return .failure(error)
                }
            }
            guard let (header, batch) = try next?.get() else { continue }
            if batch.isEmpty { return header }  // the end: readTrace never hands over an empty batch
            shared.changing { _ in }  // room for one more: wake the reader
            try onChunk(header, batch)
        }
    }
}

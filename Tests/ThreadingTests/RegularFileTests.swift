import Foundation
import Testing
import Threading

/// Configurations, profiles, secrets and tokens are opened by `RegularFile`: a FIFO is
/// refused at once (open(2) of one blocks until something writes to it), a folder too,
/// and a regular file is read as usual.
@Suite struct RegularFileTests {
    @Test func aFIFOIsRefusedWithoutWaitingForAWriter() throws {
        let folder = NSTemporaryDirectory() + "regular-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let fifo = folder + "/quench.toml"
        #expect(mkfifo(fifo, 0o600) == 0)
        // Should the open block after all, a writer comes after 5 s, so the test fails
        // on the time it took rather than hanging the run.
        let watchdog = Thread {
            Thread.sleep(forTimeInterval: 5)
            let fd = open(fifo, O_WRONLY | O_NONBLOCK)
            if fd >= 0 { close(fd) }
        }
        watchdog.start()
        let started = Date()
        let result = RegularFile.openForReading(fifo)
        #expect(Date().timeIntervalSince(started) < 2, "open waited for a writer")
        #expect(result == .failure(.notRegular))
        #expect(SecretFile.firstLine(fifo) == .failure(.init(reason: "it is not a regular file (a folder, a pipe or a device)")))
        #expect(RegularFile.openForReading(folder) == .failure(.notRegular))
        #expect(RegularFile.openForReading(folder + "/none") == .failure(.errno(ENOENT)))
    }

    @Test func aRegularFileIsReadBlockingAsUsual() throws {
        let path = NSTemporaryDirectory() + "regular-" + UUID().uuidString
        try "units = \"oz\"\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { unlink(path) }
        guard case .success(let fd) = RegularFile.openForReading(path) else {
            Issue.record("a regular file was refused")
            return
        }
        defer { close(fd) }
        #expect(fcntl(fd, F_GETFL) & O_NONBLOCK == 0)
        var bytes = [UInt8](repeating: 0, count: 64)
        let n = read(fd, &bytes, bytes.count)
        #expect(String(decoding: bytes.prefix(max(n, 0)), as: UTF8.self) == "units = \"oz\"\n")
    }
}

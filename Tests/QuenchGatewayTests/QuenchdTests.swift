import Foundation
import Testing

/// `quenchd`, the gateway binary the service runs: its arguments and its
/// errors, as a process (its Bluetooth work is covered by the live and VM tests).
@Suite struct QuenchdTests {
    static var quenchd: String? {
        guard let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return nil }
        var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
        if dir.path.hasSuffix(".xctest/Contents/MacOS") { dir = dir.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent() }
        let path = dir.appendingPathComponent("quenchd").path
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }

    func run(_ arguments: [String]) throws -> (status: Int32, stderr: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(Self.quenchd, "quenchd is built beside the tests by `swift build`"))
        process.arguments = arguments
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test(.enabled(if: quenchd != nil, "no quenchd beside the test binary (swift build first)"))
    func badArgumentsExit64() throws {
        let unknown = try run(["--frobnicate"])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.contains("unknown argument '--frobnicate'"))
        let missing = try run(["--db"])
        #expect(missing.status == 64 && missing.stderr.contains("--db needs a value"))
        let negative = try run(["--seconds", "-3"])
        #expect(negative.status == 64 && negative.stderr.contains("'-3' is not a positive number"))
    }

    @Test(.enabled(if: quenchd != nil, "no quenchd beside the test binary (swift build first)"))
    func nothingPairedIsAClearError() throws {
        let dir = NSTemporaryDirectory() + "quenchd-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let result = try run(["--db", dir + "/q.sqlite", "--seconds", "1"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("no paired devices"), "\(result.stderr)")
    }
}

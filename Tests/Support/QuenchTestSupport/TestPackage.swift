import Foundation

/// Where the tests find things: the package root, `../shared` beside it,
/// and the fixture files in `Tests/Fixtures`.
public enum TestPackage {
    /// The package root: `QUENCH_TEST_ROOT` when set (`.ci/run` builds from a copy of the sources
    /// kept at one path, and runs the tests in the clone), else this file's place in
    /// `Tests/Support/QuenchTestSupport/`.
    public static let root = ProcessInfo.processInfo.environment["QUENCH_TEST_ROOT"].flatMap { $0.isEmpty ? nil : $0 }.map { URL(fileURLWithPath: $0) }
        ?? URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `../shared` beside the package (traces, the VM harness).
    public static let shared = root.deletingLastPathComponent().appendingPathComponent("shared")

    public static let fixtures = root.appendingPathComponent("Tests/Fixtures")

    /// A fixture file's bytes.
    public static func fixture(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: fixtures.appendingPathComponent(name)))
    }
}

/// `"0a 0300"` as bytes (spaces allowed); a test's own literal, so a typo traps.
public func hex(_ s: String) -> [UInt8] {
    let digits = s.filter { !$0.isWhitespace }
    precondition(digits.count % 2 == 0, "odd number of hex digits in \(s)")
    var bytes: [UInt8] = []
    var index = digits.startIndex
    while index < digits.endIndex {
        let next = digits.index(index, offsetBy: 2)
        bytes.append(UInt8(digits[index..<next], radix: 16)!)
        index = next
    }
    return bytes
}

/// A folder of its own under the system's temporary folder, removed with
/// everything in it when the value goes.
public final class TemporaryFolder: Sendable {
    public let path: String

    public init(_ label: String = "quench-test") throws {
        path = try Self.create(label)
    }

    /// A new folder's path, for a test that removes it itself (or leaves it to the system).
    public static func create(_ label: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("\(label)-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A path inside the folder (not created).
    public func file(_ name: String) -> String { path + "/" + name }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// SplitMix64: a fixed-seed generator so every run fuzzes the same inputs.
public struct FuzzRandom: RandomNumberGenerator {
    public var state: UInt64
    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `base` after a few random edits: a byte replaced by one of `alphabet`,
    /// removed, or inserted; with `cutting`, sometimes cut short there.
    public mutating func mutate(_ base: [UInt8], alphabet: [UInt8], edits: ClosedRange<Int> = 1...6, cutting: Bool = false) -> [UInt8] {
        var bytes = base
        for _ in 0..<Int.random(in: edits, using: &self) where !bytes.isEmpty {
            let i = Int.random(in: 0..<bytes.count, using: &self)
            switch Int.random(in: 0..<(cutting ? 4 : 3), using: &self) {
            case 0: bytes[i] = alphabet.randomElement(using: &self)!
            case 1: bytes.remove(at: i)
            case 2: bytes.insert(alphabet.randomElement(using: &self)!, at: i)
            default: bytes.removeSubrange(i...)
            }
        }
        return bytes
    }

    public mutating func bytes(maxCount: Int) -> [UInt8] {
        (0..<Int.random(in: 0...maxCount, using: &self)).map { _ in UInt8.random(in: 0...255, using: &self) }
    }
}

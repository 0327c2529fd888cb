import Foundation
import QuenchTestSupport
import QuenchCore
@testable import QuenchStore

/// A fresh temporary directory, removed when the value is released.
typealias TemporaryDirectory = TemporaryFolder

extension TemporaryFolder {
    /// For tests, where a folder that cannot be made is a broken machine.
    convenience init() { try! self.init("quench-store-tests") }
}

func sips(_ count: Int, every seconds: Double = 60, ml: Double = 20, from offset: Double = 0) -> [DetectedEvent] {
    (0..<count).map { i in
        let start = offset + Double(i) * seconds
        return DetectedEvent(kind: .sip, t: start + 6, start: start, end: start + 5, ml: ml, remainingML: 500 - Double(i % 20) * ml)
    }
}

func count(_ store: IntakeStore) throws -> Int {
    try store.read("counting") { db in try db.first("SELECT COUNT(*) FROM intake_event") { row -> Int in row[0] }! }
}

let t0 = Timestamp(iso8601: "2026-03-02T07:30:00Z")!


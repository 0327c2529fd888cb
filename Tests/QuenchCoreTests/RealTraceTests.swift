import Foundation
import Testing
import QuenchCore

/// The Cambridge coffee pot recordings (real HX711 load cells); expectations
/// from ../shared/traces/README.md.
@Suite struct RealTraceTests {
    static let folder = sharedFolder.appendingPathComponent("traces/real/coffee-pot")
    static let available = FileManager.default.fileExists(atPath: folder.path)

    func events(_ name: String) throws -> [DetectedEvent] {
        let (header, readings) = try loadTrace(Self.folder.appendingPathComponent(name).path)
        let calibration = try BottleCalibration(unit: header.unit ?? .g)
        return detect(readings, calibration: calibration).filter { !$0.kind.isDiagnostic }
    }

    @Test(.enabled(if: available, "../shared/traces/real/coffee-pot is missing"))
    func idlePotHasNoEvents() throws {
        #expect(try events("pot-idle-17min.csv").isEmpty)
    }

    @Test(.enabled(if: available, "../shared/traces/real/coffee-pot is missing"))
    func twoPours() throws {
        let found = try events("pot-two-pours-17min.csv")
        #expect(found.count == 2, "\(found)")
        guard found.count == 2 else { return }
        #expect(found.allSatisfy { $0.kind == .sip })
        #expect(abs(found[0].ml - 164) <= 5, "\(found[0])")
        #expect(abs(found[1].ml - 176) <= 5, "\(found[1])")
        #expect(abs(found[0].start - 369) <= 3)
        #expect(abs(found[1].start - 625) <= 3)
    }

    @Test(.enabled(if: available, "../shared/traces/real/coffee-pot is missing"))
    func liftReplacePour() throws {
        let found = try events("pot-lift-replace-pour-49s.csv")
        #expect(found.count == 1, "\(found)")
        guard let only = found.first else { return }
        #expect(only.kind == .sip)
        #expect(abs(only.ml - 142) <= 8, "\(only)")
    }
}

import Foundation
import QuenchCore
import QuenchProfiles
import QuenchStore
import QuenchTestSupport
import Testing
@testable import QuenchGateway

/// `replay --btsnoop` of a HidrateSpark: captures the ble-vm wrote while
/// `quench pair` and `quench run` drained its emulated bottle (two sips kept
/// from before, one live), with what the emulator logged as the truth.
@Suite struct HidrateSparkCaptureTests {
    struct Truth { var ml: Double; var time: Double }

    // From the emulator's log: pre-buffered sips are at its start + t, the live one when logged.
    static let legacy = [Truth(ml: 45, time: 1_795_509_089.549 - 3600), Truth(ml: 30, time: 1_795_509_089.549 - 60),
                         Truth(ml: 25, time: 1_795_509_109.552)]
    static let modern = [Truth(ml: 60, time: 1_795_509_120.621 - 3600), Truth(ml: 71, time: 1_795_509_120.621 - 60),
                         Truth(ml: 40, time: 1_795_509_140.624)]

    static func capture(_ name: String) -> TraceSource {
        TraceSource(argument: TestPackage.fixtures.appendingPathComponent(name).path)
    }

    @Test(arguments: [("vm-hidrate-spark-legacy.btsnoop", HidrateSparkLayout.legacy, legacy, 0.001),
                      ("vm-hidrate-spark-modern.btsnoop", .modern, modern, 0.005 * HidrateSpark.defaultCapacityML)])
    func sipsComeOutOfTheCaptureOnceWithTheirTimes(_ file: String, _ layout: HidrateSparkLayout, _ truth: [Truth], _ tolerance: Double) throws {
        let result = try HidrateSparkCapture.read(Self.capture(file), device: nil, capacityML: HidrateSpark.defaultCapacityML)
        #expect(result.layout == layout)
        #expect(result.device?.description.hasPrefix("C8:2A:3F:00:3F:") == true)
        // The record `pair` asked for was sent twice (pair, then the gateway's drain): one sip.
        #expect(result.sips.count == truth.count, "\(result.sips.map { "\($0.ml) at \($0.time)" })")
        for (sip, t) in zip(result.sips, truth) {
            #expect(abs(sip.ml - t.ml) <= tolerance, "\(sip.ml) mL for \(t.ml)")
            #expect(abs(sip.time - t.time) <= 2, "at \(sip.time), drunk at \(t.time)")
        }
    }

    @Test func replayingTwiceStoresOnceUnderTheGatewaysIdentities() throws {
        let folder = try TemporaryFolder()
        let db = folder.path + "/q.sqlite"
        let path = TestPackage.fixtures.appendingPathComponent("vm-hidrate-spark-legacy.btsnoop").path
        let first = try runQuench(["replay", "--btsnoop", path, "--store", "--db", db])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("3 sips the bottle sent, 100 mL") && first.stdout.contains("stored: 3 new, 0 already there"), "\(first.stdout)")
        #expect(first.stderr.contains("replaying C8:2A:3F:00:3F:11 as hidrate-spark (legacy frames)"), "\(first.stderr)")
        let again = try runQuench(["replay", "--btsnoop", path, "--store", "--db", db, "--profile", "hidrate-spark"])
        #expect(again.stdout.contains("stored: 0 new, 3 already there"), "\(again.stdout)")
        let log = try runQuench(["log", "--json", "--db", db])
        #expect(log.stdout.split(separator: "\n").allSatisfy { $0.contains("|hidrate-spark|") }, "\(log.stdout)")
    }
}

import QuenchCore
import QuenchGateway
import QuenchStore
import Testing

/// Issue 24: the gateway's errors say the fact and carry the data (the address,
/// the path); the command line adds which command or option to use.
@Suite("gateway errors name no command, option or variable")
struct GatewayErrorWordsTests {
    static func expectNoCommandLineText(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        for word in ["`quench", "--", "QUENCH_"] {
            #expect(!text.contains(word), "'\(word)' in: \(text)", sourceLocation: sourceLocation)
        }
    }

    @Test func liveErrors() throws {
        let uncalibrated = Device(address: "F0:00:00:00:00:01", name: nil, profile: "weight-scale", sensor: .weight, addedAt: .wallClockNow)
        do { _ = try LiveDevice(uncalibrated); Issue.record("a device without calibration was taken") } catch {
            guard case .notCalibrated(let address) = error else { Issue.record("\(error)"); return }
            #expect(address == "F0:00:00:00:00:01")
            Self.expectNoCommandLineText(error.description)
        }
        for error: LiveError in [.unknownDevice("F0:00:00:00:00:09"), .noDevices, .notCalibrated("F0:00:00:00:00:09")] {
            Self.expectNoCommandLineText(error.description)
        }
    }

    @Test func replayErrors() {
        Self.expectNoCommandLineText(ReplayError.missingUnit(path: "a.trace").description)
        Self.expectNoCommandLineText(ReplayError.calibration(path: "a.trace", .missingLevelCurve(.mm)).description)
        Self.expectNoCommandLineText(PipelineStore.Failure.noStartTime(source: "a.trace").description)
        Self.expectNoCommandLineText(BTSnoopReplayError.noReadings(path: "a.btsnoop", device: nil, profile: nil, advertisements: 3, attValues: 0).description)
    }
}

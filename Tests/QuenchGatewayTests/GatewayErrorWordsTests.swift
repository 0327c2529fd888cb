import QuenchCore
import QuenchGateway
import QuenchStore
import QuenchTestSupport
import Testing

/// Issue 24: the gateway's errors say the fact and carry the data (the address,
/// the path); the command line adds which command or option to use.
@Suite("gateway errors name no command, option or variable")
struct GatewayErrorWordsTests {
    @Test func liveErrors() throws {
        let uncalibrated = Device(address: "F0:00:00:00:00:01", name: nil, profile: "weight-scale", sensor: .weight, addedAt: .wallClockNow)
        do { _ = try LiveDevice(uncalibrated); Issue.record("a device without calibration was taken") } catch {
            guard case .notCalibrated(let address) = error else { Issue.record("\(error)"); return }
            #expect(address == "F0:00:00:00:00:01")
            expectNoCommandLineText(error.description)
        }
        for error: LiveError in [.unknownDevice("F0:00:00:00:00:09"), .noDevices, .notCalibrated("F0:00:00:00:00:09")] {
            expectNoCommandLineText(error.description)
        }
    }

    @Test func replayErrors() {
        expectNoCommandLineText(ReplayError.missingUnit(path: "a.trace").description)
        expectNoCommandLineText(ReplayError.calibration(path: "a.trace", .missingLevelCurve(.mm)).description)
        expectNoCommandLineText(PipelineStore.Failure.noStartTime(source: "a.trace").description)
        expectNoCommandLineText(BTSnoopReplayError.noReadings(path: "a.btsnoop", device: nil, profile: nil, advertisements: 3, attValues: 0).description)
    }
}

#if os(Linux)
import BluetoothWire
import Foundation
import Logging
import QuenchCore
import QuenchProfiles
import QuenchSimulatedDevices
import QuenchTools
import QuenchSimulator
import QuenchStore
import QuenchTestSupport
import Testing
@testable import QuenchGateway

/// The live pipeline in process: simulated peripherals speaking ATT over
/// socketpairs (and a fake Mi Scale broadcaster) → the gateway's sessions →
/// one detector per device → the store. Traces run accelerated, and the
/// session clock at the same rate, so detection sees real-time seconds.
@Suite("live pipeline (simulated peripherals)", .serialized)
struct LivePipelineTests {
    typealias F = LiveFixture

    /// Runs a gateway over `peripherals` until each has streamed its trace.
    func runGateway(_ devices: [LiveDevice], _ peripherals: [SimulatedPeripheral], store: IntakeStore,
                    broadcasters: [SimulatedBroadcaster] = [], timeout: Double = 30,
                    connectTimeout: Double = 2) -> Gateway {
        var options = Gateway.Options()
        options.clockRate = F.speed
        options.connectTimeout = connectTimeout
        options.backoff = Backoff(initial: 0.05, factor: 2, maximum: 0.4)
        let b = broadcasters
        let gateway = Gateway(devices: devices, store: store, options: options, logger: F.logger,
                              connector: SimulatedRadio(peripherals),
                              advertisements: { stop throws(LiveError) in b[0].source(stoppedBy: stop) })
        gateway.start()
        for p in peripherals { #expect(p.waitUntilFinished(timeout: timeout), "\(p.profile.identifier) did not finish streaming") }
        let end = ContinuousClock.now + .seconds(timeout)
        while broadcasters.contains(where: { !$0.isFinished }), ContinuousClock.now < end { Thread.sleep(forTimeInterval: 0.05) }
        gateway.stop()
        gateway.wait()
        for p in peripherals { p.shutdown() }
        return gateway
    }

    func peripheral(_ profile: DeviceProfile, _ address: String, _ scenario: Scenario, unit: MeasurementUnit,
                    drops: [(at: Double, seconds: Double)] = []) throws -> (LiveDevice, SimulatedPeripheral, [TruthEvent]) {
        let (readings, truth) = scenario.run()
        let addr = BluetoothAddress(address)!
        let p = SimulatedPeripheral(address: addr, profile: profile, readings: readings, unit: scenario.configuration.unit,
                                    streaming: SimulatedStreaming(speed: F.speed, drops: drops))
        let device = LiveDevice(address: addr, profile: profile, calibration: try F.calibration(scenario, unit: unit))
        return (device, p, truth)
    }

    @Test("weight scale (indications): sips in the store match the simulator's truth")
    func weightScale() throws {
        let store = try F.temporaryStore()
        let (device, p, truth) = try peripheral(.weightScale, "F0:F1:F2:F3:F4:F5", F.weightScenario(), unit: .g)
        let gateway = runGateway([device], [p], store: store)
        #expect(p.sent > 100)
        #expect(gateway.gattSessions[0].counts.connections == 1)
        // 0.005 kg resolution: each sip is known to a few mL.
        F.expectMatches(try F.sips(store, device.address), truth, tolerance: 5)
    }

    @Test("decent scale (notifications) and level bottle at once")
    func twoDevices() throws {
        let store = try F.temporaryStore()
        let (d1, p1, t1) = try peripheral(.decentScale, "F0:F1:F2:F3:F4:F6", F.weightScenario(seed: 9), unit: .g)
        let (d2, p2, t2) = try peripheral(.custom(ProfileRegistry.levelBottle), "C4:11:22:33:44:55", F.levelScenario(), unit: .mm)
        _ = runGateway([d1, d2], [p1, p2], store: store)
        F.expectMatches(try F.sips(store, d1.address), t1, tolerance: 2)
        F.expectMatches(try F.sips(store, d2.address), t2, tolerance: 3)
    }

    @Test("a link dropped in the middle of a sip: reconnected, the sip counted once")
    func dropMidSip() throws {
        let store = try F.temporaryStore()
        let scenario = F.weightScenario(seed: 4)
        let (readings, truth) = scenario.run()
        // Drop from just after the second lift until after it is put back.
        let second = truth.filter { $0.kind == .sip }[1]
        let (device, p, _) = try peripheral(.decentScale, "F0:F1:F2:F3:F4:F7", scenario, unit: .g,
                                            drops: [(at: second.tStart + 0.5, seconds: second.tEnd - second.tStart + 2)])
        _ = readings
        let gateway = runGateway([device], [p], store: store)
        #expect(gateway.gattSessions[0].counts.connections == 2, "reconnected once after the drop")
        #expect(p.lost > 0)
        let sips = try F.sips(store, device.address)
        F.expectMatches(sips, truth, tolerance: 3)
    }

    @Test("mi-scale broadcasts: repeated frames deduplicated, sips stored")
    func miScale() throws {
        let store = try F.temporaryStore()
        let scenario = Scenario(.clean(unit: .g, sampleRate: 4).with(.noise), seed: 6, initialML: 600)
            .idle(8).sip(ml: 50).idle(10).sip(ml: 35).idle(8)
        let (readings, truth) = scenario.run()
        let addr = BluetoothAddress("F0:F1:F2:F3:F4:F8")!
        let b = SimulatedBroadcaster(address: addr, readings: readings, unit: .g, speed: F.speed)
        let device = LiveDevice(address: addr, profile: .miScale, calibration: try F.calibration(scenario, unit: .g))
        let gateway = runGateway([device], [], store: store, broadcasters: [b])
        #expect(b.frames > 50)
        // Each frame came twice (ADV_IND + scan response); each was fed once.
        #expect(gateway.pipelines[0].readingCount <= b.frames)
        F.expectMatches(try F.sips(store, addr), truth, tolerance: 5)
    }

    @Test("a device that never answers: connect times out, retried with backoff, clean stop")
    func neverAnswers() throws {
        let store = try F.temporaryStore()
        let addr = BluetoothAddress("F0:00:00:00:00:01")!
        let device = LiveDevice(address: addr, profile: .weightScale, calibration: try BottleCalibration(unit: .g))
        var options = Gateway.Options()
        options.connectTimeout = 0.2
        options.backoff = Backoff(initial: 0.05, factor: 2, maximum: 0.2)
        let gateway = Gateway(devices: [device], store: store, options: options, logger: F.logger,
                              connector: SimulatedRadio([]), advertisements: { _ throws(LiveError) in throw .stopped })
        let start = ContinuousClock.now
        gateway.start()
        Thread.sleep(forTimeInterval: 1.5)
        gateway.stop()
        gateway.wait()
        #expect(ContinuousClock.now - start < .seconds(3), "stop took too long")
        let session = gateway.gattSessions[0]
        #expect(session.counts.connections == 0)
        #expect((3...8).contains(session.counts.failedAttempts), "attempts: \(session.counts.failedAttempts)")
        #expect(try store.events().isEmpty)
    }

    @Test("backoff grows exponentially with jitter up to the cap")
    func backoff() {
        var b = Backoff(initial: 1, factor: 2, maximum: 30, jitter: 0.2, seed: 7)
        let delays = (0..<8).map { b.delay(attempt: $0) }
        for (i, d) in delays.enumerated() {
            let base = min(30, pow(2, Double(i)))
            #expect(d >= base * 0.8 - 1e-9 && d <= min(30, base * 1.2) + 1e-9, "attempt \(i): \(d)")
        }
        #expect(Set(delays.prefix(4)).count == 4)
    }
}
#endif

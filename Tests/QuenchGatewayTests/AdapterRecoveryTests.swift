#if os(Linux)
import BluetoothLinux
import BluetoothWire
import Foundation
import GATT
import Glibc
import QuenchCore
import QuenchProfiles
import QuenchSimulatedDevices
import QuenchSimulator
import QuenchStore
import QuenchTestSupport
import Synchronization
import Testing
@testable import QuenchGateway

/// A simulated adapter that gets stuck the ways Pi adapters do, under a real
/// gateway with a broadcasting Mi scale: the scan goes silent, discovery is
/// refused, the adapter disappears. Power-cycling it (the ladder's second
/// rung) switches it to `afterPowerCycle`.
final class StuckAdapter: AdapterControl, Sendable {
    enum Mode: Sendable {
        case working
        /// Scanning "works" but nothing is reported (a locked controller).
        case silent
        /// Scanning fails with this error, at start and while running.
        case failing(BluetoothLinuxError)
        /// Unplugged.
        case gone
    }

    private struct State {
        var mode = Mode.working
        var afterPowerCycle = Mode.working
        var powerCycles = 0
        var scansStarted = 0
    }
    private let state = Mutex(State())
    let broadcaster: SimulatedBroadcaster

    init(_ broadcaster: SimulatedBroadcaster) { self.broadcaster = broadcaster }

    func set(_ mode: Mode, afterPowerCycle: Mode = .working) {
        state.withLock { $0.mode = mode; $0.afterPowerCycle = afterPowerCycle }
    }

    var powerCycles: Int { state.withLock { $0.powerCycles } }
    var scansStarted: Int { state.withLock { $0.scansStarted } }
    fileprivate var mode: Mode { state.withLock { $0.mode } }

    func powerCycle() throws(LiveError) {
        let mode = state.withLock { s -> Mode in
            s.powerCycles += 1
            s.mode = s.afterPowerCycle
            return s.mode
        }
        if case .gone = mode { throw .bluetooth(.noAdapter(index: 0)) }
    }

    func scan(_ stop: StopSignal) throws(LiveError) -> any AdvertisementSource {
        switch mode {
        case .failing(let e): throw .bluetooth(e)
        case .gone: throw .bluetooth(.noAdapter(index: 0))
        case .working, .silent:
            state.withLock { $0.scansStarted += 1 }
            return Scan(adapter: self, inner: broadcaster.source(stoppedBy: stop))
        }
    }

    final class Scan: AdvertisementSource {
        let adapter: StuckAdapter
        let inner: SimulatedBroadcaster
        init(adapter: StuckAdapter, inner: SimulatedBroadcaster) { (self.adapter, self.inner) = (adapter, inner) }

        func next(until deadline: ContinuousClock.Instant) throws(LiveError) -> AdvertisingReport? {
            while true {
                // The broadcast goes on in the room whatever the adapter does; a stuck one just does not hear it.
                let report = try inner.next(until: deadline)
                switch adapter.mode {
                case .working: return report
                case .silent: if report == nil { return nil }
                case .failing(let e): throw .bluetooth(e)
                case .gone: throw .bluetooth(.system(BluetoothSocketError(operation: "read(mgmt)", errno: ENODEV)))
                }
            }
        }

        func stop() {}
    }
}

@Suite("adapter recovery (stuck simulated adapters)", .serialized)
struct AdapterRecoveryTests {
    typealias F = LiveFixture
    let address = BluetoothAddress("F0:F1:F2:F3:F4:F8")!

    /// Two sips with a long quiet stretch between them, where the trouble is made.
    func scale() throws -> (StuckAdapter, LiveDevice, [TruthEvent]) {
        let scenario = Scenario(.clean(unit: .g, sampleRate: 4).with(.noise), seed: 6, initialML: 600)
            .idle(8).sip(ml: 50).idle(40).sip(ml: 35).idle(8)
        let (readings, truth) = scenario.run()
        let b = SimulatedBroadcaster(address: address, readings: readings, unit: .g, speed: F.speed)
        let device = LiveDevice(address: address, profile: .miScale, calibration: try F.calibration(scenario, unit: .g))
        return (StuckAdapter(b), device, truth)
    }

    func gateway(_ device: LiveDevice, _ adapter: StuckAdapter, store: IntakeStore,
                 connector: any ATTConnector = SimulatedRadio([])) -> Gateway {
        var options = Gateway.Options()
        options.clockRate = F.speed
        options.backoff = Backoff(initial: 0.05, factor: 2, maximum: 0.2)
        options.recovery.quietLimit = 0.4
        options.recovery.settle = 0.1
        return Gateway(devices: [device], store: store, options: options, logger: F.logger, connector: connector,
                       advertisements: { stop throws(LiveError) in try adapter.scan(stop) }, adapterControl: adapter)
    }

    @Test("a scan gone silent: discovery restarted, then the adapter power-cycled; sips before and after stored")
    func silentScan() throws {
        let store = try F.temporaryStore()
        let (adapter, device, truth) = try scale()
        let g = gateway(device, adapter, store: store)
        g.start()
        #expect(try F.waitFor { try F.sips(store, address).count == 1 }, "the first sip was stored before the trouble")
        adapter.set(.silent, afterPowerCycle: .working)
        #expect(F.waitFor { adapter.powerCycles == 1 }, "power-cycled after restarting discovery did not help")
        #expect(F.waitFor { adapter.broadcaster.isFinished })
        g.stop()
        g.wait()
        let c = g.supervisor.counters
        #expect(c.discoveryRestarts == 1)
        #expect(c.powerCycles == 1)
        #expect(adapter.scansStarted >= 3, "a scan at the start, after the restart and after the power cycle")
        #expect(g.supervisor.gaveUp == nil)
        #expect(g.supervisor.rung == .healthy, "heard again after the power cycle")
        F.expectMatches(try F.sips(store, address), truth, tolerance: 5)
    }

    @Test("discovery refused through every rung: the gateway stops with its own status and keeps what it stored")
    func refusedThroughout() throws {
        let store = try F.temporaryStore()
        let (adapter, device, _) = try scale()
        let g = gateway(device, adapter, store: store)
        g.start()
        #expect(try F.waitFor { try F.sips(store, address).count == 1 })
        let refused = BluetoothLinuxError.management(opcode: .startDiscovery, index: MgmtIndex(0), status: .failed)
        adapter.set(.failing(refused), afterPowerCycle: .failing(refused))
        #expect(F.waitFor { g.supervisor.gaveUp != nil }, "gave up")
        // The supervisor records giving up, then stops the gateway: a moment apart, seen under load.
        #expect(F.waitFor { g.stopSignal.isStopped }, "giving up stops the gateway")
        g.wait()
        #expect(g.supervisor.gaveUp == .discoveryRefused)
        #expect(adapter.powerCycles == 1, "the power cycle was tried before giving up")
        #expect(g.supervisor.counters.discoveryRestarts == 1)
        #expect(try F.sips(store, address).count == 1, "the sip heard before is kept")
        let error = LiveError.adapterGaveUp(.discoveryRefused)
        #expect(error.exitStatus == 75)
        #expect(LiveError.noDevices.exitStatus == 1)
        #expect("\(error)".contains("power-cycling"))
    }

    @Test("a controller that stops answering comes back after the power cycle")
    func notAnswering() throws {
        let store = try F.temporaryStore()
        let (adapter, device, truth) = try scale()
        let g = gateway(device, adapter, store: store)
        g.start()
        #expect(try F.waitFor { try F.sips(store, address).count == 1 })
        adapter.set(.failing(.controllerTimeout(command: "Start Discovery on hci0", seconds: 5)), afterPowerCycle: .working)
        #expect(F.waitFor { adapter.powerCycles == 1 })
        #expect(F.waitFor { adapter.broadcaster.isFinished })
        g.stop()
        g.wait()
        #expect(g.supervisor.gaveUp == nil)
        #expect(g.statusLine().contains("adapter power-cycled 1×"), "\(g.statusLine())")
        F.expectMatches(try F.sips(store, address), truth, tolerance: 5)
    }

    @Test("an adapter that vanishes is waited for and resumed without a restart or a power cycle")
    func vanished() throws {
        let store = try F.temporaryStore()
        let (adapter, device, truth) = try scale()
        let g = gateway(device, adapter, store: store)
        g.start()
        #expect(try F.waitFor { try F.sips(store, address).count == 1 })
        adapter.set(.gone)
        #expect(F.waitFor { g.supervisor.isWaitingForAdapter })
        #expect(g.statusLine().contains("waiting for the Bluetooth adapter"), "\(g.statusLine())")
        Thread.sleep(forTimeInterval: 1)
        adapter.set(.working)
        #expect(F.waitFor { !g.supervisor.isWaitingForAdapter }, "resumed once it came back")
        #expect(F.waitFor { adapter.broadcaster.isFinished })
        g.stop()
        g.wait()
        let c = g.supervisor.counters
        #expect(c.adapterLosses == 1)
        #expect(c.powerCycles == 0 && adapter.powerCycles == 0)
        #expect(c.discoveryRestarts == 0)
        #expect(g.supervisor.gaveUp == nil)
        F.expectMatches(try F.sips(store, address), truth, tolerance: 5)
    }

    /// A bottle that was reset: every connection is refused for the missing key.
    struct LostBondConnector: ATTConnector {
        func connect(to device: LiveDevice, timeout: Double, stop: StopSignal) throws(LiveError) -> any ATTBearer {
            throw .bluetooth(.system(BluetoothSocketError(operation: "connect(L2CAP ATT \(device.address) public)", errno: EBADE)))
        }
    }

    @Test("a lost bond is counted and explained, and never climbs the ladder")
    func lostBond() throws {
        let store = try F.temporaryStore()
        let bottle = LiveDevice(address: BluetoothAddress("F0:F1:F2:F3:F4:F5")!, profile: .weightScale,
                                calibration: try BottleCalibration(unit: .g, capacityML: 600, emptyWeightG: 200))
        let adapter = StuckAdapter(SimulatedBroadcaster(address: address, readings: [], unit: .g))
        let g = gateway(bottle, adapter, store: store, connector: LostBondConnector())
        g.start()
        #expect(F.waitFor { g.supervisor.counters.staleBonds >= 3 })
        g.stop()
        g.wait()
        #expect(g.supervisor.rung == .healthy)
        #expect(adapter.powerCycles == 0)
        #expect(g.statusLine().contains("refused for a lost bond"), "\(g.statusLine())")
    }
}
#endif

#if os(Linux)
import BluetoothWire
import Foundation
import Logging
import QuenchCore
import QuenchGateway
import QuenchProfiles
import QuenchSimulatedDevices
import QuenchSimulator
import QuenchStore
import Threading

/// `quench run`'s pipeline in process with four simulated devices streaming
/// simulated bottles at 10 Hz in real time: a Weight Scale (indications), a
/// Decent scale (notifications), the DIY level bottle (notifications) over
/// socketpairs, and a Mi Scale broadcaster. Measures the process's CPU time
/// (getrusage, peripherals included, so an upper bound for the gateway) as a
/// share of one core, peak RSS, and the time from an event becoming final
/// to its row being committed. Targets (issue 4): < 1 % CPU, < 20 MB, < 1 s.
struct GatewayBenchmark {
    var seconds = 120.0

    init(arguments: [String]) throws {
        for (flag, v) in try StoreBenchmark.options(arguments) {
            switch flag {
            case "--seconds": seconds = Double(v) ?? seconds
            default: throw GatewayBenchError.usage("unknown argument \(flag)")
            }
        }
    }

    enum GatewayBenchError: Error, CustomStringConvertible {
        case usage(String)
        var description: String { switch self { case .usage(let s): s } }
    }

    static func cpuSeconds() -> Double {
        var u = rusage()
        getrusage(RUSAGE_SELF.rawValue, &u)
        return Double(u.ru_utime.tv_sec) + Double(u.ru_utime.tv_usec) / 1e6 + Double(u.ru_stime.tv_sec) + Double(u.ru_stime.tv_usec) / 1e6
    }

    static func peakRSSMB() -> Double {
        var u = rusage()
        getrusage(RUSAGE_SELF.rawValue, &u)
        return Double(u.ru_maxrss) / 1024
    }

    func bottle(_ preset: SimulationConfiguration.Preset, seed: UInt64, rate: Double = 10) -> (SimulationConfiguration, [Reading]) {
        var c = SimulationConfiguration.preset(preset, duration: seconds + 5)
        c.sampleRate = rate
        c.meanIdleSeconds = 30  // plenty of sips in a short run
        return (c, Array(SimulatedBottle(configuration: c, seed: seed)))
    }

    func run() throws {
        let dir = NSTemporaryDirectory() + "quench-bench-gateway-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try IntakeStore(path: dir + "/q.sqlite")

        let (wc, wr) = bottle(.kitchenScale, seed: 1)
        let (dc, dr) = bottle(.kitchenScale, seed: 2)
        let (lc, lr) = bottle(.levelMillimetres, seed: 3)
        let (mc, mr) = bottle(.kitchenScale, seed: 4)
        func weightCal(_ c: SimulationConfiguration) throws -> BottleCalibration {
            try BottleCalibration(unit: .g, capacityML: c.capacityML, emptyWeightG: c.emptyWeightG)
        }
        let a = (BluetoothAddress("F0:F1:F2:F3:F4:F5")!, BluetoothAddress("F0:F1:F2:F3:F4:F6")!,
                 BluetoothAddress("C3:11:22:33:44:55")!, BluetoothAddress("F0:F1:F2:F3:F4:F7")!)
        let peripherals = [
            SimulatedPeripheral(address: a.0, profile: .weightScale, readings: wr, unit: wc.unit),
            SimulatedPeripheral(address: a.1, profile: .decentScale, readings: dr, unit: dc.unit),
            SimulatedPeripheral(address: a.2, profile: .custom(ProfileRegistry.levelBottle), readings: lr, unit: lc.unit),
        ]
        let broadcaster = SimulatedBroadcaster(address: a.3, readings: mr, unit: mc.unit)
        let devices = [
            LiveDevice(address: a.0, profile: .weightScale, calibration: try weightCal(wc)),
            LiveDevice(address: a.1, profile: .decentScale, calibration: try weightCal(dc)),
            LiveDevice(address: a.2, addressType: .leRandom, profile: .custom(ProfileRegistry.levelBottle), calibration: lc.calibration),
            LiveDevice(address: a.3, profile: .miScale, calibration: try weightCal(mc)),
        ]
        var logger = Logger(label: "bench")
        logger.logLevel = .warning
        let gateway = Gateway(devices: devices, store: store, logger: logger, connector: SimulatedRadio(peripherals),
                              advertisements: { stop throws(LiveError) in broadcaster.source(stoppedBy: stop) })
        print("gateway benchmark: 4 devices at 10 Hz for \(Int(seconds)) s (real time)...")
        gateway.start()
        // Skip connection set-up, then measure the steady state.
        Thread.sleep(forTimeInterval: 3)
        let cpu0 = Self.cpuSeconds()
        let t0 = ContinuousClock.now
        Thread.sleep(forTimeInterval: seconds)
        let cpu1 = Self.cpuSeconds()
        let wall = (ContinuousClock.now - t0).seconds
        gateway.stop()
        gateway.wait()
        for p in peripherals { p.shutdown() }
        let readings = gateway.pipelines.reduce(0) { $0 + $1.readingCount }
        let stored = gateway.writer.counts.stored
        let latency = gateway.writer.counts.worstLatency
        let cpu = (cpu1 - cpu0) / wall * 100
        print("readings      \(readings) (\(TraceWriter.fixed(Double(readings) / (wall + 3), places: 1)) a second)")
        print("events stored \(stored)")
        print("CPU           \(TraceWriter.fixed(cpu, places: 2)) % of one core (gateway + simulated peripherals)")
        print("peak RSS      \(TraceWriter.fixed(Self.peakRSSMB(), places: 1)) MB")
        print("event → store \(TraceWriter.fixed(latency * 1000, places: 1)) ms at worst")
    }
}
#endif

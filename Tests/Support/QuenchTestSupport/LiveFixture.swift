import BluetoothWire
import Foundation
import Logging
import QuenchCore
import QuenchSimulator
import QuenchStore
import Testing

/// What the live tests share: a simulated bottle's scenarios, their
/// calibration, a quiet logger, and how stored sips are checked against truth.
/// Traces run accelerated (`speed`), and the session clock at the same rate,
/// so detection sees real-time seconds.
public enum LiveFixture {
    public static let speed = 10.0

    public static func temporaryStore() throws -> IntakeStore {
        try IntakeStore(path: try TemporaryFolder.create("quench-live") + "/q.sqlite")
    }

    /// A weight trace in grams with three sips.
    public static func weightScenario(seed: UInt64 = 3) -> Scenario {
        Scenario(.clean(unit: .g).with(.noise), seed: seed, initialML: 600)
            .idle(8).sip(ml: 30).idle(10).sip(ml: 45).idle(10).sip(ml: 22).idle(6)
    }

    public static func levelScenario() -> Scenario {
        Scenario(.clean(unit: .mm, sampleRate: 5).with(.noise), seed: 5, initialML: 500)
            .idle(8).sip(ml: 40).idle(12).sip(ml: 60).idle(8)
    }

    public static func calibration(_ s: Scenario, unit: MeasurementUnit) throws -> BottleCalibration {
        if unit.sensor == .level { return s.configuration.calibration }
        return try BottleCalibration(unit: .g, capacityML: s.configuration.capacityML, emptyWeightG: s.configuration.emptyWeightG)
    }

    /// The least a test waits for what must happen beside other processes that may starve it: a wait
    /// returns as soon as its condition holds, so this bound only ends a failure. On a slow 2-core CI
    /// machine beside six emulated guests (2026-12-02) a hub's first history took longer than 30 s,
    /// and a rename reached Home Assistant later than 15 s.
    public static let starvedMachineWait: Double = 60

    /// Waits until `condition` holds, at most `seconds`, asking every `interval`; whether it held.
    public static func waitFor(_ seconds: Double = 15, every interval: Double = 0.02,
                               _ condition: () throws -> Bool) rethrows -> Bool {
        let end = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < end {
            if try condition() { return true }
            Thread.sleep(forTimeInterval: interval)
        }
        return try condition()
    }

    public static var logger: Logger {
        var l = Logger(label: "test")
        l.logLevel = .warning
        return l
    }

    /// Sips stored for `device`, oldest first.
    public static func sips(_ store: IntakeStore, _ device: BluetoothAddress) throws -> [IntakeEvent] {
        try store.events(EventQuery(device: device.description, kinds: [.sip], order: .byID))
    }

    /// Every true sip found once, in order, within `tolerance` mL.
    public static func expectMatches(_ stored: [IntakeEvent], _ truth: [TruthEvent], tolerance: Double,
                              sourceLocation: SourceLocation = #_sourceLocation) {
        let trueSips = truth.filter { $0.kind == .sip }
        #expect(stored.map(\.ml).count == trueSips.count, "stored \(stored.map(\.ml)) vs truth \(trueSips.map(\.ml))",
                sourceLocation: sourceLocation)
        for (s, t) in zip(stored, trueSips) {
            #expect(abs(s.ml - t.ml) <= tolerance, "sip of \(t.ml) mL stored as \(s.ml) mL", sourceLocation: sourceLocation)
        }
    }
}


#if os(Linux)
import BluetoothWire
import Foundation
import Logging
import QuenchCore
import QuenchProfiles
import QuenchStore

/// `quench watch`: one line per reading with the detector's view of it.
public enum Watch {
    public static let header = "      t  reading          value  phase        level mL   band mL"

    public static func line(_ r: Reading, raw: ProfileReading, detector: SipDetector, unit: MeasurementUnit) -> String {
        let value = r.value.map { TraceWriter.fixed($0, places: 1) + " " + unit.rawValue } ?? "-"
        let level = detector.level.map { TraceWriter.fixed($0, places: 1) } ?? "-"
        return EventFormat.leftPad(TraceWriter.fixed(r.t, places: 2), 7) + "  " + EventFormat.pad(Pairing.describe(raw), 16)
            + EventFormat.leftPad(value, 10) + "  " + EventFormat.pad(detector.phase.rawValue, 12)
            + EventFormat.leftPad(level, 9) + EventFormat.leftPad(TraceWriter.fixed(detector.band, places: 1), 10)
    }
}

/// `quench record`: a device's readings as a trace v1 file, written to a
/// temporary name and renamed into place when done.
public final class TraceRecorder: @unchecked Sendable {
    private let file: OutputFile
    private let lock = NSLock()
    private var failure: OutputFileError?
    public private(set) var readings = 0

    public init(path: String, device: LiveDevice, started: Timestamp) throws(LiveError) {
        do { file = try OutputFile(path: path) } catch { throw .output(error) }
        var metadata: [TraceHeader.Metadata] = [
            .init(key: "device", value: device.label),
            .init(key: "profile", value: KnownProfiles.identifier(device.profile)),
        ]
        if let name = device.name { metadata.append(.init(key: "name", value: name)) }
        if let curve = device.calibration.levelCurve { metadata.append(.init(key: "level-curve", value: curve.description)) }
        if let c = device.calibration.capacityML { metadata.append(.init(key: "capacity-ml", value: c.compactDescription)) }
        if let e = device.calibration.emptyWeightG { metadata.append(.init(key: "empty-weight-g", value: e.compactDescription)) }
        let header = TraceHeader(sensor: device.calibration.sensor, unit: device.calibration.unit, started: started, metadata: metadata)
        do { try file.write(header.formatted()) } catch { throw .output(error) }
    }

    public func append(_ reading: Reading) {
        lock.lock()
        defer { lock.unlock() }
        guard failure == nil else { return }
        do { try file.write(TraceWriter.row(reading, decimals: 2)); readings += 1 } catch { failure = error }
    }

    public func commit() throws(LiveError) {
        lock.lock()
        defer { lock.unlock() }
        if let failure { throw .output(failure) }
        do { try file.commit() } catch { throw .output(error) }
    }
}

/// `quench calibrate`: settled readings turned into a tare, a capacity or level-curve points.
public enum Calibration {
    /// The median of the readings in the last half of `seconds` of listening.
    public static func measure(_ device: LiveDevice, seconds: Double, logger: Logger) throws(LiveError) -> Double {
        let values = ValueBox()
        _ = LiveSession.run(device, seconds: seconds, observer: LiveObserver(reading: { _, r, _, _ in
            if let v = r.value { values.append(r.t, v) }
        }), logger: logger)
        guard let median = values.settledMedian() else { throw .noReadings(address: device.label, seconds: seconds) }
        return median
    }

    /// A weight calibration from the empty bottle's weight and optionally the full one's (both g).
    public static func weight(_ old: BottleCalibration, emptyG: Double?, fullG: Double?, capacityML: Double?) throws(LiveError) -> BottleCalibration {
        let empty = emptyG ?? old.emptyWeightG
        var capacity = capacityML ?? old.capacityML
        if let fullG, let empty { capacity = (fullG - empty) / old.density }
        do {
            return try BottleCalibration(unit: .g, density: old.density, capacityML: capacity, emptyWeightG: empty)
        } catch {
            throw .calibration(error)
        }
    }

    /// A level curve from measured or given points (at least two).
    public static func level(_ unit: MeasurementUnit, points: [LevelCurve.Point], capacityML: Double?) throws(LiveError) -> BottleCalibration {
        let sorted = points.sorted { $0.level < $1.level }
        do {
            let curve = try LevelCurve(sorted)
            return try BottleCalibration(unit: unit, levelCurve: curve, capacityML: capacityML ?? sorted.last?.ml)
        } catch {
            throw .calibration(error)
        }
    }
}

private final class ValueBox: @unchecked Sendable {
    private let lock = NSLock()
    private var samples: [(t: Double, v: Double)] = []
    func append(_ t: Double, _ v: Double) { lock.lock(); samples.append((t, v)); lock.unlock() }
    func settledMedian() -> Double? {
        lock.lock()
        defer { lock.unlock() }
        guard let first = samples.first, let last = samples.last else { return nil }
        let half = samples.filter { $0.t >= (first.t + last.t) / 2 }.map(\.v).sorted()
        return half.isEmpty ? nil : half[half.count / 2]
    }
}
#endif

import BluetoothWire
import GATT
import QuenchCore
import QuenchProfiles
import QuenchStore
#if os(Linux)
import BluetoothLinux
#endif

/// Why a live operation (scan, pair, run, watch, record, calibrate) failed; causes are kept.
public enum LiveError: Error, Sendable, CustomStringConvertible {
    case badAddress(String)
    case unknownProfile(String, known: [String])
    case badProfileFile(path: String, ProfileFileError)
    case deviceIncomplete(String, String)
    case unknownDevice(String)
    case noDevices
    case calibration(CalibrationError)
    /// Level points that make no curve (listed in order of mL, as checked).
    case levelPoints([LevelCurve.Point], CalibrationError)
    /// `calibrate` was asked for something it cannot do (the reason says what to give instead).
    case calibrationRequest(String)
    case store(StoreError)
    #if os(Linux)
    case bluetooth(BluetoothLinuxError)
    #endif
    case gatt(GATTError)
    /// The device's service or characteristic is not there.
    case characteristicMissing(service: BluetoothUUID, characteristic: BluetoothUUID)
    /// A connection attempt found nobody (simulated devices; real ones report `.bluetooth(.timeout)`).
    case connectTimeout(address: String, seconds: Double)
    /// Nothing was heard from the device in time.
    case noReadings(address: String, seconds: Double)
    /// The device was not seen advertising.
    case notFound(address: String, seconds: Double)
    case decode(DecodeError)
    case output(OutputFileError)
    case stopped

    public var description: String {
        switch self {
        case .badAddress(let a): "'\(a)' is not a Bluetooth address (AA:BB:CC:DD:EE:FF)"
        case .unknownProfile(let p, let known): "unknown profile '\(p)': not one of \(known.joined(separator: ", ")) nor a readable profile file"
        case .badProfileFile(let path, let e): "\(path): \(e)"
        case .deviceIncomplete(let a, let why): "device \(a) cannot be used: \(why)"
        case .unknownDevice(let a): "no paired device \(a) (see `quench devices`)"
        case .noDevices: "no paired devices: pair one with `quench pair ADDRESS`"
        case .calibration(let e): "calibration: \(e)"
        case .levelPoints(let points, let e):
            "level points \(points.map { "\($0.level.compactDescription):\($0.ml.compactDescription)" }.joined(separator: ",")) (in order of mL): \(e)"
        case .calibrationRequest(let why): "calibrate: \(why)"
        case .store(let e): "\(e)"
        #if os(Linux)
        case .bluetooth(let e): "\(e)"
        #endif
        case .gatt(let e): "GATT: \(e)"
        case .characteristicMissing(let s, let c): "the device has no characteristic \(c) in service \(s)"
        case .connectTimeout(let a, let s): "connect(\(a)): no answer within \(TraceWriter.fixed(s, places: 1)) s"
        case .noReadings(let a, let s): "no readings from \(a) within \(TraceWriter.fixed(s, places: 1)) s"
        case .notFound(let a, let s): "\(a) was not seen advertising within \(TraceWriter.fixed(s, places: 1)) s"
        case .decode(let e): "\(e)"
        case .output(let e): "\(e)"
        case .stopped: "stopped"
        }
    }
}

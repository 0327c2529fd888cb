import BluetoothWire
import GATT
import QuenchCore
import QuenchProfiles
import QuenchStore
#if os(Linux)
import BluetoothLinux
#endif

/// Why the gateway could not reach a device or keep its events: what the
/// gateway's own operations (loading devices, connecting, subscribing,
/// storing) throw. The interactive tools wrap it in their own error.
public enum LiveError: Error, Sendable, CustomStringConvertible {
    case badAddress(String)
    case profile(ProfileLookupError)
    /// A saved device lacks what the gateway needs (the reason says what and how to add it).
    case deviceIncomplete(String, String)
    /// A saved device without a calibration (amounts cannot be told from its readings).
    case notCalibrated(String)
    case unknownDevice(String)
    case noDevices
    case store(StoreError)
    #if os(Linux)
    case bluetooth(BluetoothLinuxError)
    #endif
    case gatt(GATTError)
    /// The device's service or characteristic is not there.
    case characteristicMissing(service: BluetoothUUID, characteristic: BluetoothUUID)
    /// A connection attempt found nobody (simulated devices; real ones report `.bluetooth(.timeout)`).
    case connectTimeout(address: String, seconds: Double)
    /// A device asked for something (a bottle asked for its next sip) did not answer.
    case noAnswer(seconds: Double)
    /// A record the device keeps until acknowledged could not be stored, so it was not acknowledged.
    case notStored
    case stopped
    /// The adapter stayed stuck through every rung of the recovery ladder.
    case adapterGaveUp(AdapterFault)

    /// The process's exit status for this error: the service manager restarts on
    /// any failure; a stuck adapter has a status of its own so `doctor` and the
    /// journal can tell it apart (EX_TEMPFAIL, sysexits.h).
    public var exitStatus: Int32 {
        if case .adapterGaveUp = self { return 75 }
        // EX_CONFIG: a database another user could write, a damaged file, one that is not a database (or is
        // a newer Quench's) stays so until someone fixes it; a restart cannot, so none is asked for.
        if case .store(let e) = self, e.restartCannotMend { return 78 }
        return 1
    }

    public var description: String {
        switch self {
        case .badAddress(let a): "'\(a.shownSafely())' is not a Bluetooth address (AA:BB:CC:DD:EE:FF)"
        case .profile(let e): "\(e)"
        case .deviceIncomplete(let a, let why): "device \(a) cannot be used: \(why)"
        case .notCalibrated(let a): "device \(a) cannot be used: no calibration"
        case .unknownDevice(let a): "no paired device \(a)"
        case .noDevices: "no paired devices"
        case .store(let e): "\(e)"
        #if os(Linux)
        case .bluetooth(let e): "\(e)"
        #endif
        case .gatt(let e): "GATT: \(e)"
        case .characteristicMissing(let s, let c): "the device has no characteristic \(c) in service \(s)"
        case .connectTimeout(let a, let s): "connect(\(a)): no answer within \(TraceWriter.fixed(s, places: 1)) s"
        case .noAnswer(let s): "the device did not answer within \(TraceWriter.fixed(s, places: 1)) s"
        case .notStored: "a record could not be stored, so it was not acknowledged (the device keeps it and sends it again)"
        case .stopped: "stopped"
        case .adapterGaveUp(let fault): "\(fault), and neither restarting discovery nor power-cycling the adapter helped; exiting for a restart"
        }
    }
}

extension LiveError {
    /// A profile's own session ended (`SipReporterSession`): the same cases, nothing lost.
    public init(_ error: ProfileSessionError) {
        switch error {
        case .gatt(let e): self = .gatt(e)
        case .characteristicMissing(let s, let c): self = .characteristicMissing(service: s, characteristic: c)
        case .noAnswer(let s): self = .noAnswer(seconds: s)
        case .notStored: self = .notStored
        }
    }
}

import BluetoothWire
import GATT
import Logging
import QuenchCore

/// The session of a device that detects sips itself and keeps them until a
/// central drains them (`HidrateSparkProfile`): the gateway connects, hands
/// the link over, and gives it a `SipSink` for the sips. Its profile declares
/// it (`ProfileDefinition.sipReporter`); the gateway never asks which device it is.
public protocol SipReporter: Sendable {
    /// The bottle's size when the person gives none (mL).
    var defaultCapacityML: Double { get }

    /// What is known of one bottle, kept across its connections by the device's
    /// thread. `newestStoredIdentity` is the identity of the newest event stored
    /// for it (a running total carries over a restart through it).
    func makeSession(device: String, capacityML: Double, newestStoredIdentity: String?) -> any SipReporterSession

    /// `quench pair`: sets the link up and asks what the bottle keeps, draining
    /// nothing; the line to show, nil when no answer came within `timeout`.
    func confirm(_ bearer: any ATTBearer, timeout: Double, progress: (String) -> Void) throws(ProfileSessionError) -> String?
}

/// One bottle's session across its connections; used on one thread.
public protocol SipReporterSession: AnyObject {
    /// Runs one connection until the link fails (thrown) or `stop`; with
    /// `leaveWhenDrained`, returns once the bottle has nothing left. Calls
    /// `connected` (what to log) once the link is set up, before anything is drained.
    func run(_ bearer: any ATTBearer, sink: any SipSink, stop: any SessionStop, leaveWhenDrained: Bool,
             connected: (Logger.Metadata) -> Void) throws(ProfileSessionError)
}

/// Where a sip reporter's session puts what the bottle says (the gateway's
/// device pipeline).
public protocol SipSink {
    var logger: Logger { get }
    /// Whether sips reach a store: a record the device keeps until acknowledged
    /// is acknowledged only once stored (`watch` only listens).
    var storesEvents: Bool { get }
    /// Stores a sip and returns once committed: whether it was new, nil when not stored.
    func store(_ sip: HidrateSparkSipLog.Sip) -> Bool?
    /// Moves stored sips to better-known times (`reason` says why, for the log).
    func restamp(_ corrections: [HidrateSparkSipLog.Correction], reason: String)
    /// A cap opened (true) or closed (false) message, or one not understood (nil).
    func capChanged(open: Bool?)
    /// What the bottle says of itself, kept with the device.
    func recordStatus(batteryPercent: Int?)
    /// A line for whoever watches.
    func note(_ text: String)
    /// The wall-clock time now, in seconds since 1970 (what a sip received now is stamped with).
    var wallClockNow: Double { get }
}

/// What a session checks to know it should end.
public protocol SessionStop {
    var isStopped: Bool { get }
    /// Whether a stop wakes a blocked bearer (else waits are bounded to a second).
    var canWakeBearers: Bool { get }
}

/// Why a profile's own session ended; the gateway's `LiveError` has the same cases.
public enum ProfileSessionError: Error, Sendable {
    case gatt(GATTError)
    /// The device's service or characteristic is not there.
    case characteristicMissing(service: BluetoothUUID, characteristic: BluetoothUUID)
    /// A device asked for something (a bottle asked for its next sip) did not answer.
    case noAnswer(seconds: Double)
    /// A record the device keeps until acknowledged could not be stored, so it was not acknowledged.
    case notStored
}

import BluetoothWire
import QuenchCore

/// The HidrateSpark smart bottle, which detects sips itself and keeps them in
/// its memory until a central drains them. The protocol is public only through
/// third-party reverse engineering: HidrateSpark-MQTT-bridge
/// `docs/SYNC_AND_PROTOCOL.md` (firmware 80.18, the legacy DATA_POINT
/// characteristic) and HA-HidrateSpark-Bluetooth-Proxy `BleProtocol.kt` (the
/// modern USER_DATA characteristic). Nothing here was checked against a real
/// bottle, so the decoders accept what they do not understand and say what it was.
public enum HidrateSpark {
    /// Advertised and holding DEBUG, SET_POINT and (legacy firmware) DATA_POINT.
    public static let referenceService = BluetoothUUID("45855422-6565-4cd7-a2a9-fe8af41b85e8")!
    /// Write (handshake) and notify (cap opened/closed).
    public static let debugCharacteristic = BluetoothUUID("e3578b0d-caa7-46d6-b7c2-7331c08de044")!
    /// Write only: the rest of the handshake.
    public static let setPointCharacteristic = BluetoothUUID("b44b03f0-b850-4090-86eb-72863fb3618d")!
    /// Legacy firmware's sip characteristic (in the reference service).
    public static let dataPointCharacteristic = BluetoothUUID("016e11b1-6c8a-4074-9e5a-076053f93784")!
    /// Modern firmware's sip characteristic and its own service.
    public static let userDataService = BluetoothUUID("bf2d1ba0-c473-49f2-9571-0ce69036c642")!
    public static let userDataCharacteristic = BluetoothUUID("bf2d1ba1-c473-49f2-9571-0ce69036c642")!
    /// Battery Service 0x180F, Battery Level 0x2A19 (percent).
    public static let batteryService = BluetoothUUID(uuid16: 0x180F)
    public static let batteryLevelCharacteristic = BluetoothUUID(uuid16: 0x2A19)

    /// The 20 oz bottle, assumed when the person gives no size.
    public static let defaultCapacityML = 591.0

    /// Written to the sip characteristic: asks for the oldest sip and, once one
    /// was sent, acknowledges it (the bottle then forgets it).
    public static let drainRequest: [UInt8] = [0x57]

    /// One handshake write: which characteristic, which bytes.
    public struct HandshakeWrite: Sendable, Hashable {
        public enum Target: Sendable, Hashable { case debug, setPoint }
        public var target: Target
        public var bytes: [UInt8]
        public init(target: Target, bytes: [UInt8]) {
            self.target = target
            self.bytes = bytes
        }
    }

    /// The bottle stays silent until these 13 writes arrive in this order; a
    /// wrong one restarts its count, and a link loss forgets it.
    public static let handshake: [HandshakeWrite] = ([
        (.debug, "2100d1"), (.setPoint, "92"), (.debug, "2200f7"),
        (.setPoint, "7700000032d70000"), (.setPoint, "00341b00e0790000"), (.setPoint, "02345200c0a80000"),
        (.setPoint, "03346e0030c00000"), (.setPoint, "04348900a0d70000"), (.setPoint, "0534a50010ef0000"),
        (.setPoint, "0634c00080060100"), (.setPoint, "0734dc00f01d0100"), (.setPoint, "0834000000000000"),
        (.setPoint, "0934000000000000"),
    ] as [(HandshakeWrite.Target, String)]).map { HandshakeWrite(target: $0.0, bytes: [UInt8](hexString: $0.1)!) }

    /// Bottles advertise as `h2o-XXXX` (and the reference service, when the
    /// advertisement has room for it).
    public static func matches(name: String?, services: [BluetoothUUID]) -> Bool {
        if services.contains(referenceService) { return true }
        return name.map { $0.lowercased().hasPrefix("h2o") } ?? false
    }
}

/// The HidrateSpark bottle as a profile: it reports sips, not readings, so it
/// has a session of its own (`HidrateSparkReporter`); the advertised
/// characteristic is legacy firmware's (which one a bottle has is found when it connects).
public struct HidrateSparkProfile: ProfileDefinition {
    public init() {}
    public var identifier: String { "hidrate-spark" }
    public var displayName: String { "HidrateSpark smart bottle" }
    public var transport: ProfileTransport {
        .gatt(service: HidrateSpark.referenceService, characteristic: HidrateSpark.dataPointCharacteristic, delivery: .notify)
    }
    /// Modern firmware reports sips in percent of the bottle; the calibration's curve maps that to mL.
    public var unit: MeasurementUnit { .percent }

    public func matches(advertisement ad: AdvertisingData) -> Bool {
        HidrateSpark.matches(name: ad.name, services: ad.serviceUUIDs)
    }

    /// None: its frames are sips (`HidrateSparkFrame`), not readings.
    public func decode(_ payload: [UInt8]) throws(DecodeError) -> [ProfileReading] { [] }

    public func encode(_ reading: ProfileReading) throws(ProfileEncodingError) -> [UInt8] {
        throw ProfileEncodingError(context: "HidrateSpark", field: "reading", reason: .unsupportedUnit(reading.unit))
    }

    // The bottle glows when its owner falls behind, but the command that makes it
    // glow is not documented publicly (neither reverse-engineered source has it,
    // docs/profiles.md): nothing is invented, so it has no `reminderSignal`.

    public var sipReporter: (any SipReporter)? { HidrateSparkReporter() }

    /// Only its size: modern firmware gives sips in percent of it.
    public func defaultCalibration(levelCurve: LevelCurve?, capacityML: Double?, tareG: Double?,
                                   density: Double) throws(CalibrationError) -> BottleCalibration {
        let capacity = capacityML ?? HidrateSpark.defaultCapacityML
        let percent = try LevelCurve([.init(level: 0, ml: 0), .init(level: 100, ml: capacity)])
        return try BottleCalibration(unit: .percent, density: density, levelCurve: percent, capacityML: capacity)
    }
}

extension DeviceProfile {
    public static let hidrateSpark = DeviceProfile(HidrateSparkProfile())
}

/// Which sip characteristic a bottle offers decides the frame layout.
public enum HidrateSparkLayout: String, Sendable, Hashable, CaseIterable {
    /// DATA_POINT: the sip's mL and the bottle's own Unix time.
    case legacy
    /// USER_DATA: the sip as a percentage of the bottle, and seconds ago.
    case modern

    public var sipCharacteristic: BluetoothUUID {
        self == .legacy ? HidrateSpark.dataPointCharacteristic : HidrateSpark.userDataCharacteristic
    }

    public var sipService: BluetoothUUID {
        self == .legacy ? HidrateSpark.referenceService : HidrateSpark.userDataService
    }
}

/// A legacy frame's type byte (byte 1). Only 0x01 (a sip) is known; other
/// types still decode, so a firmware that sends more is reported, not refused.
public struct HidrateSparkRecordType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let sip = HidrateSparkRecordType(rawValue: 0x01)
    public var description: String { self == .sip ? "sip" : "record type 0x\([rawValue].hexString)" }
}

/// One 20-byte notification of the sip characteristic, big-endian:
/// - legacy: `N(1) type(1) total_ml(2) unix_time(4) ml(2)`, then zeros;
/// - modern: `N(1) percent(1) total_ml(2) 00 seconds_ago(4)`, then zeros.
/// N counts the sips in the bottle's memory, this one included; N = 0 (an
/// all-zero frame) says the memory is empty. `total_ml` is the bottle's running total.
public struct HidrateSparkFrame: Sendable, Hashable {
    public static let length = 20

    public enum Record: Sendable, Hashable {
        /// Legacy: the sip's size and when the bottle's clock (which may be wrong) says it was.
        case legacy(type: HidrateSparkRecordType, bottleTime: UInt32, ml: UInt16)
        /// Modern: the sip as a percentage of the bottle, taken this many seconds before the frame.
        case modern(percent: UInt8, secondsAgo: UInt32)
    }

    /// Sips in the bottle's memory, this one included.
    public var pending: UInt8
    public var totalML: UInt16
    /// Nil when `pending` is 0: nothing left to drain.
    public var record: Record?

    public init(pending: UInt8, totalML: UInt16, record: Record?) {
        self.pending = pending
        self.totalML = totalML
        self.record = record
    }

    /// Decodes a frame of `layout`. Bytes after the fields are padding and are
    /// not checked; a frame too short for its fields fails naming the field.
    public init(decoding bytes: [UInt8], layout: HidrateSparkLayout) throws(DecodeError) {
        var r = ByteReader(bytes, context: "HidrateSpark \(layout.rawValue) frame")
        pending = try r.uint8("pending count")
        switch layout {
        case .legacy:
            let type = HidrateSparkRecordType(rawValue: try r.uint8("record type"))
            totalML = try r.uint16("total mL", bigEndian: true)
            let time = try r.uint32("bottle time", bigEndian: true)
            let ml = try r.uint16("sip mL", bigEndian: true)
            record = pending == 0 ? nil : .legacy(type: type, bottleTime: time, ml: ml)
        case .modern:
            let percent = try r.uint8("percent")
            totalML = try r.uint16("total mL", bigEndian: true)
            _ = try r.uint8("reserved")
            let ago = try r.uint32("seconds ago", bigEndian: true)
            record = pending == 0 ? nil : .modern(percent: percent, secondsAgo: ago)
        }
    }

    public func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: Self.length)
        w.uint8(pending)
        switch record {
        case nil:
            // Both layouts keep the running total at bytes 2-3.
            w.uint8(0)
            w.uint16(totalML, bigEndian: true)
        case .legacy(let type, let time, let ml)?:
            w.uint8(type.rawValue)
            w.uint16(totalML, bigEndian: true)
            w.uint32(time, bigEndian: true)
            w.uint16(ml, bigEndian: true)
        case .modern(let percent, let ago)?:
            w.uint8(percent)
            w.uint16(totalML, bigEndian: true)
            w.uint8(0)
            w.uint32(ago, bigEndian: true)
        }
        return w.bytes + [UInt8](repeating: 0, count: max(0, Self.length - w.bytes.count))
    }

    /// Whether a frame the bottle sent unasked is the sip it has just logged. It
    /// notifies its oldest record, which is the new one only when it keeps no
    /// other: with a backlog (sips logged while no central listened, not yet
    /// drained) it is a sip from before, however live it looks (CI 2026-11-30).
    public var isJustLogged: Bool { pending == 1 }

    /// The sip in mL: legacy frames say it; modern ones give a percentage of
    /// `capacityML` (the bottle's size). Nil for no record or an unknown record type.
    public func sipML(capacityML: Double) -> Double? {
        switch record {
        case nil: nil
        case .legacy(let type, _, let ml)?: type == .sip ? Double(ml) : nil
        case .modern(let percent, _)?: Double(percent) / 100 * capacityML
        }
    }
}

/// A DEBUG notification: the cap opened or closed, or something not yet understood.
public struct HidrateSparkDebugMessage: Sendable, Hashable, CustomStringConvertible {
    public static let capOpened: [UInt8] = [0x81, 0x02, 0x00, 0x00]
    public static let capClosed: [UInt8] = [0x80, 0x02, 0x00, 0x00]

    public var bytes: [UInt8]
    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// True or false for the two cap messages, nil for anything else.
    public var capOpen: Bool? {
        switch bytes {
        case Self.capOpened: true
        case Self.capClosed: false
        default: nil
        }
    }

    public var description: String {
        switch capOpen {
        case true?: "cap opened"
        case false?: "cap closed"
        case nil: "debug message \(bytes.hexString)"
        }
    }
}

/// Turns the frames a bottle sends into sips on our clock, for one device
/// across its connections (pure: the receive time is given).
///
/// - Times: modern frames say "seconds ago", so the sip is that long before the
///   frame arrived. Legacy frames carry the bottle's own clock, which may be
///   off: a sip notified live (as it happens) measures the offset exactly, a
///   drained record dated in our future bounds it from below; times are
///   corrected by the offset known so far, never stored in the future.
/// - Identities make a resent record (the bottle sends the unacknowledged one
///   again after a link loss or a crash) the same row, and keep two real sips
///   of the same size seconds apart two: legacy records by the bottle's own
///   time, size and running total; modern ones by running total and percent,
///   with the ten-minute bucket of their time (and its neighbours as aliases,
///   since "seconds ago" gives the time to a second or so).
/// - The running total shows sips the bottle dropped when its memory was full.
public struct HidrateSparkSipLog: Sendable {
    public struct Sip: Sendable, Hashable {
        /// Seconds since 1970 on our clock.
        public var time: Double
        public var ml: Double
        public var identity: String
        public var aliases: [String]
        public var totalML: UInt16
    }

    /// What a person should hear about, besides the sips.
    public enum Note: Sendable, Hashable, CustomStringConvertible {
        /// The bottle's clock runs this far ahead of ours (negative: behind); `exact` when measured on a live sip.
        case clockOffset(seconds: Double, exact: Bool)
        /// The running total grew by more than the sips received: sips of about this many mL were lost.
        case lost(ml: Double)
        /// A record that is not a sip (an unknown type byte).
        case notASip(String)
        /// The first record seen: the running total says this much was logged before the oldest sip the bottle keeps.
        case loggedBefore(ml: Double)

        public var description: String {
            switch self {
            case .clockOffset(let s, let exact):
                let size = abs(s) >= 120 ? "\(Int(saturating: (abs(s) / 60).rounded())) min" : "\(Int(saturating: abs(s).rounded())) s"
                return exact ? "the bottle's clock is \(size) \(s >= 0 ? "fast" : "slow"); its times are corrected by that"
                    : "the bottle's clock is at least \(size) fast (a sip dated in the future); its times are corrected by that"
            case .lost(let ml):
                return "the bottle dropped about \(Int(saturating: ml.rounded())) mL of sips before they could be drained (its memory was full)"
            case .notASip(let what): return "the bottle sent a \(what), not a sip; skipped"
            case .loggedBefore(let ml):
                return "the bottle logged about \(Int(saturating: ml.rounded())) mL before the oldest sip it still keeps "
                    + "(drained by another gateway or app, or dropped when its memory was full)"
            }
        }
    }

    /// A stored sip's time to change, once the bottle's clock is measured.
    public struct Correction: Sendable, Hashable {
        public var identity: String
        public var time: Double
        public init(identity: String, time: Double) {
            self.identity = identity
            self.time = time
        }
    }

    public let device: String
    public let capacityML: Double
    /// Seconds the bottle's clock runs ahead of ours, as far as known (legacy).
    public private(set) var clockAhead: Double = 0
    public private(set) var clockMeasured = false
    private var lastTotal: UInt16?
    /// A record stored from the frame read back on connecting (its time a guess: a modern frame's
    /// "seconds ago" was counted when it was sent) whose resend has not come yet: the resend re-stamps
    /// it, on this connection or the next (a link lost in between had kept a guess 17 s late, CI 2026-11-28).
    var recoveredAwaitingResend: HidrateSparkFrame?
    /// Legacy sips stored before the clock was measured: their bottle times, to re-stamp them then.
    private var provisional: [(identity: String, bottleTime: Double)] = []

    /// A gap in the bottle's clock this small is not worth a word.
    static let clockSlack = 5.0

    /// - Parameter lastTotal: the running total of the last sip stored from this bottle (`totalML(inIdentity:)`), if any.
    public init(device: String, capacityML: Double, lastTotal: UInt16? = nil) {
        self.device = device
        self.capacityML = capacityML
        self.lastTotal = lastTotal
    }

    /// The running total a stored sip's identity carries (`device|hidrate-spark|TOTAL|…`).
    public static func totalML(inIdentity identity: String) -> UInt16? {
        let parts = identity.split(separator: "|")
        guard let i = parts.firstIndex(of: "hidrate-spark"), i + 1 < parts.count else { return nil }
        return UInt16(parts[i + 1])
    }

    /// The sip in `frame` received at `now` (our clock, seconds since 1970);
    /// `live` when the bottle sent it unasked. Only a live frame that is the sip
    /// just logged (`isJustLogged`) measures the bottle's clock: the oldest of a
    /// backlog, sent unasked, would have read it as slow by the sip's age.
    /// `corrections` re-stamp sips stored earlier under a guessed clock, once a live sip measured it.
    public mutating func sip(from frame: HidrateSparkFrame, receivedAt now: Double, live: Bool)
        -> (sip: Sip?, notes: [Note], corrections: [Correction]) {
        guard let record = frame.record else { return (nil, [], []) }
        var corrections: [Correction] = []
        var notes: [Note] = []
        let ml: Double
        let time: Double
        let identity: String
        var aliases: [String] = []
        switch record {
        case .legacy(let type, let bottleTime, let size):
            guard type == .sip else { return (nil, [.notASip(type.description)], []) }
            ml = Double(size)
            let ahead = Double(bottleTime) - now
            if live, frame.isJustLogged {
                if !clockMeasured || abs(ahead - clockAhead) > Self.clockSlack {
                    if abs(ahead) > Self.clockSlack || clockAhead != 0 { notes.append(.clockOffset(seconds: ahead, exact: true)) }
                }
                clockAhead = ahead
                clockMeasured = true
                corrections = provisional.map { Correction(identity: $0.identity, time: min($0.bottleTime - ahead, now)) }
                provisional = []
            } else if ahead > clockAhead + Self.clockSlack, !clockMeasured {
                clockAhead = ahead
                notes.append(.clockOffset(seconds: ahead, exact: false))
            }
            time = min(Double(bottleTime) - clockAhead, now)
            identity = "\(device)|hidrate-spark|\(frame.totalML)|\(size)ml|t\(bottleTime)"
            if !clockMeasured { provisional.append((identity, Double(bottleTime))) }
        case .modern(let percent, let secondsAgo):
            ml = Double(percent) / 100 * capacityML
            time = now - Double(secondsAgo)
            let bucket = Int(saturating: (time / 600).rounded(.down))
            func id(_ b: Int) -> String { "\(device)|hidrate-spark|\(frame.totalML)|\(percent)pct|b\(b)" }
            identity = id(bucket)
            aliases = [id(bucket - 1), id(bucket + 1)]
        }
        var exact = ml
        if let lastTotal {
            // The running total wraps at 65 536 mL.
            let grown = Double(frame.totalML &- lastTotal)
            let tolerance = 0.006 * capacityML + 1
            if grown > ml + max(tolerance, 1) && grown < 30_000 {
                notes.append(.lost(ml: grown - ml))
            } else if case .modern = record, abs(grown - ml) <= tolerance {
                exact = grown  // the totals give the sip to the mL, the percentage only to 1 %
            }
        } else if Double(frame.totalML) > ml + 0.006 * capacityML + 1 {
            notes.append(.loggedBefore(ml: Double(frame.totalML) - ml))
        }
        lastTotal = frame.totalML
        return (Sip(time: time, ml: exact, identity: identity, aliases: aliases, totalML: frame.totalML), notes, corrections)
    }
}

import FoundationEssentials
import QuenchCore

/// A device's detector checkpoint as read from the store.
public enum StoredCheckpoint: Sendable {
    case none
    case usable(DetectorCheckpoint)
    /// There is one, but it cannot be trusted (why, for the log).
    case unusable(String)
}

// Detector checkpoints (docs/reliability.md#a-restart-in-the-middle-of-a-sip):
// JSON of `DetectorCheckpoint` with its format version beside it.
extension IntakeStore {
    /// Replaces the device's checkpoint.
    public func saveCheckpoint(_ checkpoint: DetectorCheckpoint) throws(StoreError) {
        let text = try Self.encode(checkpoint, path: path)
        try write("saving the detector's checkpoint of \(checkpoint.device)") { db in try Self.save(checkpoint, text, db) }
    }

    /// The device's checkpoint, checked: the right version, a bounded size, JSON
    /// that decodes. (What it says is checked against the device by `DetectorCheckpoint.problem`.)
    public func checkpoint(device: String) throws(StoreError) -> StoredCheckpoint {
        let row = try read("reading the detector's checkpoint of \(device)") { db in
            try db.first("SELECT version, length(CAST(state AS BLOB)), CASE WHEN length(CAST(state AS BLOB)) <= ? THEN state END FROM detector_checkpoint WHERE device = ?",
                         [DetectorCheckpoint.maximumBytes, device]) { row -> (Int, Int, String?) in (row[0], row[1], row[2]) }
        }
        guard let (version, size, text) = row else { return .none }
        guard version == DetectorCheckpoint.formatVersion else {
            return .unusable("format version \(version), not \(DetectorCheckpoint.formatVersion)")
        }
        guard let text else { return .unusable("\(size) bytes, more than \(DetectorCheckpoint.maximumBytes)") }
        do {
            return .usable(try Self.decoder.decode(DetectorCheckpoint.self, from: Data(text.utf8)))
        } catch {
            return .unusable("it does not decode (\(String(describing: error).shownSafely(limit: 160)))")
        }
    }

    /// Forgets a device's checkpoint (`forgetDevice` does too).
    public func removeCheckpoint(device: String) throws(StoreError) {
        try write("removing the detector's checkpoint of \(device)") { db in
            try db.run("DELETE FROM detector_checkpoint WHERE device = ?", [device])
        }
    }

    static func encode(_ checkpoint: DetectorCheckpoint, path: String) throws(StoreError) -> String {
        do {
            return String(decoding: try encoder.encode(checkpoint), as: UTF8.self)
        } catch {
            throw StoreError(.invalidValue, path: path, "cannot encode the detector's checkpoint of \(checkpoint.device)", cause: error)
        }
    }

    static func save(_ checkpoint: DetectorCheckpoint, _ text: String, _ db: SQLiteConnection) throws {
        try db.run("""
            INSERT INTO detector_checkpoint (device, version, saved_at, state) VALUES (?, ?, ?, ?)
            ON CONFLICT (device) DO UPDATE SET version = excluded.version, saved_at = excluded.saved_at, state = excluded.state
            """, [checkpoint.device, DetectorCheckpoint.formatVersion, checkpoint.wall, text])
    }

    /// The detector's state holds infinities (no reading yet) and NaN (no previous sample).
    private static let nonFinite = (positive: "inf", negative: "-inf", nan: "nan")

    private static var encoder: JSONEncoder {
        let e = JSONEncoder()
        e.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: nonFinite.positive,
                                                                negativeInfinity: nonFinite.negative, nan: nonFinite.nan)
        return e
    }

    private static var decoder: JSONDecoder {
        let d = JSONDecoder()
        d.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: nonFinite.positive,
                                                                  negativeInfinity: nonFinite.negative, nan: nonFinite.nan)
        return d
    }
}

import BluetoothWire
import QuenchCore
import QuenchProfiles
import QuenchStore

/// `quench replay --btsnoop` of a HidrateSpark: the sips a bottle sent in a
/// capture (its own drain, or its phone app's), with the identities the live
/// gateway gives them, so replaying a capture and draining the bottle never
/// store a sip twice.
public enum HidrateSparkCapture {
    public struct Result: Sendable {
        public var device: BluetoothAddress?
        public var layout: HidrateSparkLayout?
        /// Each record once (a record the bottle sent again is the same sip), oldest first as sent.
        public var sips: [HidrateSparkSipLog.Sip] = []
        /// What the frames said besides the sips (a fast clock, sips lost before the drain).
        public var notes: [HidrateSparkSipLog.Note] = []
        /// Frames of the sip characteristic that did not decode.
        public var undecodable = 0
    }

    /// Reads the capture; `device` picks one bottle when it holds several.
    public static func read(_ source: TraceSource, device wanted: BluetoothAddress?, capacityML: Double,
                            chunkSize: Int = 1 << 16) throws -> Result {
        var reader = SnoopCaptureReader()
        var result = Result()
        var bottles: Set<BluetoothAddress> = []
        var logs: [BluetoothAddress: HidrateSparkSipLog] = [:]
        var seen: Set<String> = []

        func handle(_ record: SnoopRecord) {
            switch record.kind {
            case .advertisement(let report):
                if bottles.count < BTSnoopReplay.deviceLimit, let ad = try? AdvertisingData(decoding: report.data),
                   HidrateSpark.matches(name: ad.name, services: ad.serviceUUIDs) {
                    bottles.insert(report.address)
                }
            case .attValue(let value):
                guard !value.isIndication, let peer = value.peer ?? result.device ?? wanted else { return }
                if let wanted, peer != wanted { return }
                if let chosen = result.device, chosen != peer { return }
                // The sip characteristic by its UUID when the capture shows the discovery, else a
                // 20-byte notification from a bottle that advertised as one (legacy frames then).
                let layout: HidrateSparkLayout
                switch value.characteristic {
                case HidrateSpark.dataPointCharacteristic?: layout = .legacy
                case HidrateSpark.userDataCharacteristic?: layout = .modern
                case nil where bottles.contains(peer) && value.value.count == HidrateSparkFrame.length: layout = result.layout ?? .legacy
                default: return
                }
                guard let frame = try? HidrateSparkFrame(decoding: value.value, layout: layout) else {
                    result.undecodable += 1
                    return
                }
                result.device = peer
                result.layout = layout
                var log = logs[peer] ?? HidrateSparkSipLog(device: peer.description, capacityML: capacityML)
                let (sip, notes, _) = log.sip(from: frame, receivedAt: record.time, live: false)
                logs[peer] = log
                result.notes += notes
                if let sip, seen.insert(sip.identity).inserted, !sip.aliases.contains(where: seen.contains) {
                    result.sips.append(sip)
                }
            }
        }

        try ChunkedInput(source, chunkSize: chunkSize).forEachChunk { chunk in
            reader.append(chunk)
            while true {
                let record: SnoopRecord?
                do throws(DecodeError) { record = try reader.next() } catch {
                    throw BTSnoopReplayError.malformedCapture(path: source.description, error)
                }
                guard let record else { break }
                handle(record)
            }
        }
        do { try reader.finish() } catch { throw BTSnoopReplayError.malformedCapture(path: source.description, error) }
        return result
    }

    /// The sips as the replay prints them: events on a clock that starts at the first one.
    public static func events(_ sips: [HidrateSparkSipLog.Sip]) -> (started: Timestamp, events: [DetectedEvent]) {
        let started = Timestamp(secondsSince1970: sips.map(\.time).min() ?? 0)
        return (started, sips.map { sip in
            let t = sip.time - started.secondsSince1970
            return DetectedEvent(kind: .sip, t: t, start: t, end: t, ml: sip.ml)
        })
    }

    /// Stores the sips under their bottle identities (one transaction); a sip
    /// already stored by the gateway, or by an earlier replay, is not stored again.
    public static func store(_ sips: [HidrateSparkSipLog.Sip], device: String, into store: IntakeStore) throws(StoreError) -> IngestResult {
        try store.insert(sips.map { sip in
            // The row the gateway would write, under the bottle's identity.
            var row = IntakeEvent.sensor(DetectedEvent(kind: .sip, t: 0, start: 0, end: 0, ml: sip.ml), device: device,
                                         started: Timestamp(secondsSince1970: sip.time))
            row.identity = sip.identity
            row.traceTime = nil
            return (row, sip.aliases)
        })
    }
}

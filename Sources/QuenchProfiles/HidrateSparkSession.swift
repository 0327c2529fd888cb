import BluetoothWire
import GATT
import Logging
import QuenchCore
import Threading

/// A connected, handshaken HidrateSpark: which firmware (by the sip
/// characteristic it offers), its sip and DEBUG characteristics, its battery.
public struct HidrateSparkLink {
    public let client: GATTClient
    public let layout: HidrateSparkLayout
    public let sip: GATTCharacteristic
    public let debug: GATTCharacteristic
    /// Battery Level (percent), when the bottle has the Battery Service.
    public let batteryPercent: Int?
    /// The frame the bottle sent last, read before subscribing (which makes
    /// it send an empty one), nil when unreadable. A bottle still linked to a
    /// central that went away (the kernel keeps an LE link a moment after its
    /// socket closes) may hold a record sent and not yet acknowledged: the
    /// next `57` would acknowledge it unseen.
    public let lastFrame: HidrateSparkFrame?

    /// Exchanges the MTU, finds the characteristics, reads the battery,
    /// subscribes to sips and cap messages, and sends the 13-write handshake
    /// (the bottle is silent until it has it; a link loss forgets it).
    public static func open(_ bearer: any ATTBearer) throws(ProfileSessionError) -> HidrateSparkLink {
        let client = GATTClient(bearer: bearer)
        func gatt<T>(_ body: () throws(GATTError) -> T) throws(ProfileSessionError) -> T {
            do { return try body() } catch { throw .gatt(error) }
        }
        func find(_ uuid: BluetoothUUID, in list: [GATTCharacteristic], service: BluetoothUUID) throws(ProfileSessionError) -> GATTCharacteristic {
            guard let c = list.first(where: { $0.uuid == uuid }) else { throw .characteristicMissing(service: service, characteristic: uuid) }
            return c
        }
        let services = try gatt { () throws(GATTError) in
            try client.exchangeMTU()
            return try client.discoverPrimaryServices()
        }
        guard let reference = services.first(where: { $0.uuid == HidrateSpark.referenceService }) else {
            throw .characteristicMissing(service: HidrateSpark.referenceService, characteristic: HidrateSpark.debugCharacteristic)
        }
        let characteristics = try gatt { () throws(GATTError) in try client.discoverCharacteristics(of: reference) }
        let debug = try find(HidrateSpark.debugCharacteristic, in: characteristics, service: reference.uuid)
        let setPoint = try find(HidrateSpark.setPointCharacteristic, in: characteristics, service: reference.uuid)
        // The firmware is told apart by its sip characteristic: DATA_POINT (legacy) or USER_DATA (modern).
        let layout: HidrateSparkLayout
        let sip: GATTCharacteristic
        if let dataPoint = characteristics.first(where: { $0.uuid == HidrateSpark.dataPointCharacteristic }) {
            (layout, sip) = (.legacy, dataPoint)
        } else if let userService = services.first(where: { $0.uuid == HidrateSpark.userDataService }) {
            let list = try gatt { () throws(GATTError) in try client.discoverCharacteristics(of: userService) }
            (layout, sip) = (.modern, try find(HidrateSpark.userDataCharacteristic, in: list, service: userService.uuid))
        } else {
            throw .characteristicMissing(service: HidrateSpark.referenceService, characteristic: HidrateSpark.dataPointCharacteristic)
        }
        let battery = try gatt { () throws(GATTError) -> Int? in
            guard let service = services.first(where: { $0.uuid == HidrateSpark.batteryService }),
                  let level = try client.discoverCharacteristics(of: service).first(where: { $0.uuid == HidrateSpark.batteryLevelCharacteristic })
            else { return nil }
            return try client.read(handle: level.valueHandle).first.map(Int.init)
        }
        let lastFrame = (try? client.read(handle: sip.valueHandle)).flatMap { try? HidrateSparkFrame(decoding: $0, layout: layout) }
        try gatt { () throws(GATTError) in
            try client.subscribe(to: debug, mode: .notifications)
            try client.subscribe(to: sip, mode: .notifications)
            for write in HidrateSpark.handshake {
                try client.write(handle: write.target == .debug ? debug.valueHandle : setPoint.valueHandle, value: write.bytes)
            }
        }
        return HidrateSparkLink(client: client, layout: layout, sip: sip, debug: debug, batteryPercent: battery, lastFrame: lastFrame)
    }

    /// Asks for the oldest sip; once one was sent, also acknowledges it (the bottle then forgets it).
    public func requestNext() throws(ProfileSessionError) {
        do { try client.write(handle: sip.valueHandle, value: HidrateSpark.drainRequest) } catch { throw .gatt(error) }
    }

    public enum Message: Sendable, Hashable {
        case frame(HidrateSparkFrame)
        case debug(HidrateSparkDebugMessage)
        /// A sip characteristic value that does not decode as a frame.
        case undecodable([UInt8], DecodeError)
    }

    /// The next notification from the bottle; nil when none came within `timeout`.
    public func next(timeout: Double) throws(ProfileSessionError) -> Message? {
        while true {
            let update: ValueUpdate?
            do { update = try client.nextValue(timeout: timeout) } catch { throw .gatt(error) }
            guard let update else { return nil }
            if update.handle == debug.valueHandle { return .debug(HidrateSparkDebugMessage(update.value)) }
            guard update.handle == sip.valueHandle else { continue }
            do { return .frame(try HidrateSparkFrame(decoding: update.value, layout: layout)) } catch {
                return .undecodable(update.value, error)
            }
        }
    }
}

/// Drains a connected bottle and then takes its sips live: each record is
/// stored (and committed) before the `57` that acknowledges it goes back, so
/// a crash or a link loss in between makes the bottle send it again, and its
/// identity makes that harmless.
struct HidrateSparkDrain {
    let link: HidrateSparkLink
    let sink: any SipSink
    let stop: any SessionStop
    /// Periodic mode: return once the bottle says it has nothing left.
    var leaveWhenDrained = false
    /// How long to wait for a frame while something is asked for.
    var answerTimeout = 10.0

    /// Runs until the link fails (thrown) or `stop`; `log` carries what is known of the bottle between connections.
    func run(_ log: inout HidrateSparkSipLog) throws(ProfileSessionError) {
        guard sink.storesEvents else { return try listen(&log) }
        let logger = sink.logger
        // A record that may be in flight from a central that is gone is stored before the first `57`
        // acknowledges it. If it was not in flight, the bottle sends it again and its identity matches.
        var recovered = log.recoveredAwaitingResend
        var drained = 0
        var first: Double?, last: Double?
        func count(_ time: Double?) {
            guard let time else { return }
            drained += 1
            first = min(first ?? time, time)
            last = max(last ?? time, time)
        }
        if let frame = link.lastFrame, frame.record != nil {
            logger.info("the bottle's last frame holds a sip that may await acknowledgement; storing it first")
            count(try handle(frame, live: false, &log))
            recovered = frame
            log.recoveredAwaitingResend = frame
        }
        // The bottle greets a fresh link's subscription with an empty frame; taken before asking, so it is not read as the answer.
        switch try link.next(timeout: 1) {
        case .frame(let f)? where f.pending != 0: count(try handle(f, live: false, &log))
        case .debug(let m)?: debug(m)
        default: break
        }
        /// A frame with a record: stored, a resend of the recovered record as that record (its fresh frame
        /// gives its time better: modern "seconds ago" was stale); counted when drained, not live.
        func store(_ frame: HidrateSparkFrame, live: Bool) throws(ProfileSessionError) {
            let resend = recovered.map { $0.totalML == frame.totalML } ?? false
            recovered = nil
            log.recoveredAwaitingResend = nil
            // A resend is the record read back on connecting, however it came: no measure of the clock.
            let time = try handle(frame, live: live && !resend, &log, restamping: resend)
            if !(live && frame.isJustLogged), !resend { count(time) }
        }
        // What the bottle notified since (a sip logged as the link came up, the cap's messages before it) is
        // taken before the first `57`, which acknowledges a record in flight: stored first, as every record is.
        while let message = try link.next(timeout: 0) {
            switch message {
            case .frame(let f) where f.record != nil: try store(f, live: true)
            case .debug(let m): debug(m)
            default: break
            }
        }
        try link.requestNext()
        var asked = true
        while !stop.isStopped {
            guard let message = try link.next(timeout: asked ? answerTimeout : (stop.canWakeBearers ? .infinity : 1)) else {
                if asked { throw .noAnswer(seconds: answerTimeout) }
                continue
            }
            switch message {
            case .debug(let m):
                debug(m)
            case .undecodable(let bytes, let error):
                logger.warning("sip frame does not decode; acknowledged and skipped", metadata: ["hex": "\(bytes.hexString)", "error": "\(error)"])
                try link.requestNext()
                asked = true
            case .frame(let frame):
                let live = !asked
                asked = false
                guard frame.pending != 0 else {
                    if drained > 0, let first, let last {
                        logger.info("drained \(drained) sip\(drained == 1 ? "" : "s") the bottle kept",
                                    metadata: ["from": "\(Timestamp(secondsSince1970: first).iso8601)", "to": "\(Timestamp(secondsSince1970: last).iso8601)"])
                    }
                    drained = 0
                    if leaveWhenDrained { return }
                    continue
                }
                try store(frame, live: live)
                try link.requestNext()
                asked = true
            }
        }
    }

    /// Without a store (`watch`): shows what the bottle says and sends live,
    /// and never acknowledges, so the bottle keeps every sip for `quench run`.
    private func listen(_ log: inout HidrateSparkSipLog) throws(ProfileSessionError) {
        sink.note("listening only: sips stay in the bottle until `quench run` stores them")
        while !stop.isStopped {
            switch try link.next(timeout: stop.canWakeBearers ? .infinity : 1) {
            case .debug(let m)?: debug(m)
            case .frame(let frame)? where frame.record != nil:
                // Not taken as live: unacknowledged, the bottle notifies its oldest sip, not the one just drunk.
                let (sip, notes, _) = log.sip(from: frame, receivedAt: sink.wallClockNow, live: false)
                for note in notes { sink.note("\(note)") }
                if let sip {
                    sink.note("sip \(TraceWriter.fixed(sip.ml, places: 0)) mL at \(Timestamp(secondsSince1970: sip.time).iso8601); "
                                  + "\(frame.pending) kept in the bottle")
                }
            default: continue
            }
        }
    }

    private func debug(_ m: HidrateSparkDebugMessage) {
        sink.logger.info("\(m)")
        sink.note("\(m)")
        sink.capChanged(open: m.capOpen)
    }

    /// Stores one record and returns its time; throws (so it is not acknowledged) when it could not be stored.
    @discardableResult
    private func handle(_ frame: HidrateSparkFrame, live: Bool, _ log: inout HidrateSparkSipLog, restamping: Bool = false) throws(ProfileSessionError) -> Double? {
        let (sip, notes, corrections) = log.sip(from: frame, receivedAt: sink.wallClockNow, live: live)
        for note in notes { sink.logger.warning("\(note)") }
        guard let sip else { return nil }
        guard let isNew = sink.store(sip) else { throw .notStored }
        if !corrections.isEmpty { sink.restamp(corrections, reason: "stored before the bottle's clock was measured") }
        if restamping, !isNew {
            sink.restamp(([sip.identity] + sip.aliases).map { .init(identity: $0, time: sip.time) },
                             reason: "read back from the bottle's last frame, now that it sent it afresh")
        }
        return sip.time
    }
}

/// HidrateSpark's session (`HidrateSparkProfile.sipReporter`): the handshake,
/// then the drain of what the bottle kept, then its sips live.
struct HidrateSparkReporter: SipReporter {
    var defaultCapacityML: Double { HidrateSpark.defaultCapacityML }

    func makeSession(device: String, capacityML: Double, newestStoredIdentity: String?) -> any SipReporterSession {
        HidrateSparkSession(log: HidrateSparkSipLog(device: device, capacityML: capacityML,
                                                    lastTotal: newestStoredIdentity.flatMap(HidrateSparkSipLog.totalML(inIdentity:))))
    }

    /// The handshake, then one `57`: the answer says how many sips the bottle
    /// keeps. It is not acknowledged, so the bottle keeps them for `quench run`
    /// (which reads the last one back first, should the bottle still count it
    /// as sent when the gateway connects).
    func confirm(_ bearer: any ATTBearer, timeout: Double, progress: (String) -> Void) throws(ProfileSessionError) -> String? {
        let link = try HidrateSparkLink.open(bearer)
        progress("handshake sent (\(link.layout.rawValue) firmware); asking what the bottle keeps...")
        let end = Deadline(seconds: timeout)
        _ = try link.next(timeout: min(1, timeout))  // the greeting, not the answer
        try link.requestNext()
        while !end.hasPassed {
            guard case .frame(let frame)? = try link.next(timeout: end.remaining) else { continue }
            var said = "bottle: \(link.layout.rawValue) firmware, \(frame.pending) sip\(frame.pending == 1 ? "" : "s") kept in it"
                + " (`quench run` stores them with their times)"
            if let battery = link.batteryPercent { said += ", battery \(battery) %" }
            return said
        }
        return nil
    }
}

/// One bottle across its connections: what is known of it (its running total, its clock).
final class HidrateSparkSession: SipReporterSession {
    private var log: HidrateSparkSipLog

    init(log: HidrateSparkSipLog) { self.log = log }

    func run(_ bearer: any ATTBearer, sink: any SipSink, stop: any SessionStop, leaveWhenDrained: Bool,
             connected: (Logger.Metadata) -> Void) throws(ProfileSessionError) {
        let link = try HidrateSparkLink.open(bearer)
        connected(["firmware": "\(link.layout.rawValue)", "battery_percent": "\(link.batteryPercent.map(String.init) ?? "-")"])
        sink.recordStatus(batteryPercent: link.batteryPercent)
        sink.note("\(link.layout.rawValue) firmware" + (link.batteryPercent.map { ", battery \($0) %" } ?? ""))
        try HidrateSparkDrain(link: link, sink: sink, stop: stop, leaveWhenDrained: leaveWhenDrained).run(&log)
    }
}

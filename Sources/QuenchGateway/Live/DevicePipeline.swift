import BluetoothWire
import Synchronization
import Threading
import Logging
import QuenchCore
import QuenchProfiles
import QuenchStore

/// A session's clock: seconds since it started, on the monotonic clock, so a
/// reconnect leaves a gap on the same time line and a wall-clock jump leaves
/// none. Wall times come from a `WallClockAnchor` the gateway moves as it
/// looks at the wall clock. `rate` > 1 runs it faster than real time, for
/// simulated devices streaming an accelerated trace (whose wall times are
/// then `started` + t, and the wall clock is not looked at).
public final class SessionClock: Sendable {
    /// The wall time of t = 0 as it was read at the start (the base for times a device gives itself).
    public let started: Timestamp
    public let rate: Double
    /// The boot the monotonic readings belong to.
    public let bootID: String
    private let origin: ContinuousClock.Instant
    /// CLOCK_BOOTTIME at t = 0.
    private let bootAtOrigin: Double
    private let anchor: Mutex<WallClockAnchor>

    public init(started: Timestamp = .wallClockNow, rate: Double = 1, synchronized: Bool = true,
                sinceBoot: Double = 0, bootID: String = "") {
        self.started = started
        self.rate = rate
        self.bootID = bootID
        origin = .now
        bootAtOrigin = sinceBoot
        anchor = Mutex(WallClockAnchor(t: 0, wall: started.secondsSince1970, synchronized: synchronized))
    }

    public func now() -> Double { (ContinuousClock.now - origin).seconds * rate }

    public var isSynchronized: Bool { anchor.withLock { $0.synchronized } }

    /// The wall time of session time `t`.
    public func wall(at t: Double) -> Timestamp { Timestamp(secondsSince1970: anchor.withLock { $0.wall(at: t) }) }

    /// The `started` to give an event that begins at `t`: its wall time less `t`.
    public func base(forEventAt t: Double) -> Timestamp { wall(at: t).adding(-t) }

    /// Session time of a monotonic reading of this boot.
    public func sessionTime(sinceBoot: Double) -> Double { (sinceBoot - bootAtOrigin) * rate }

    /// The monotonic reading (CLOCK_BOOTTIME) of session time `t`.
    public func sinceBoot(at t: Double) -> Double { bootAtOrigin + t / rate }

    /// The session time of wall time `wall` (seconds since 1970), by the current anchor.
    public func time(atWall wall: Double) -> Double {
        anchor.withLock { $0.t + (wall - $0.wall(at: $0.t)) }
    }

    /// Where an event at `t` lies on the boot's monotonic clock, while the wall clock is not yet synchronised.
    public func unsyncedStamp(at t: Double) -> UnsyncedStamp? {
        isSynchronized ? nil : UnsyncedStamp(bootID: bootID, sinceBoot: bootAtOrigin + t / rate)
    }

    /// A look at the system clock: moves the anchor.
    public func observe(_ reading: ClockReading) -> WallClockAnchor.Change {
        let t = sessionTime(sinceBoot: reading.sinceBoot)
        return anchor.withLock { $0.observe(wall: reading.wall, synchronized: reading.synchronized, at: t) }
    }
}

/// What a session reports as it goes, besides its events (which reach the
/// `EventWriter`'s subscribers). Both optional; called on the device's thread.
public struct LiveObserver: Sendable {
    /// Each reading, with the decoded payload and the detector after it.
    public var reading: (@Sendable (_ device: LiveDevice, _ reading: Reading, _ raw: ProfileReading, _ detector: SipDetector) -> Void)?
    /// Connected and subscribed / link lost.
    public var link: (@Sendable (_ device: LiveDevice, _ up: Bool) -> Void)?
    /// A bottle's cap opened (true) or closed (false); nil for a message not understood.
    public var cap: (@Sendable (_ device: LiveDevice, _ open: Bool?) -> Void)?
    /// What a device said of itself, as a line (a bottle's firmware and battery, its cap).
    public var note: (@Sendable (_ device: LiveDevice, _ text: String) -> Void)?

    public init(reading: (@Sendable (LiveDevice, Reading, ProfileReading, SipDetector) -> Void)? = nil,
                link: (@Sendable (LiveDevice, Bool) -> Void)? = nil,
                cap: (@Sendable (LiveDevice, Bool?) -> Void)? = nil,
                note: (@Sendable (LiveDevice, String) -> Void)? = nil) {
        self.reading = reading
        self.link = link
        self.cap = cap
        self.note = note
    }
}

/// One device's path from payloads to final events: decode, timestamp on the
/// session clock, one detector for the whole session (so a sip across a
/// disconnect is judged once, across the gap); each event, once final, goes
/// to the session's `EventWriter`. Fed by one thread at a time; `finish`
/// may come from another.
public final class DevicePipeline: Sendable {
    public let device: LiveDevice
    public let clock: SessionClock
    private let writer: EventWriter
    private let observer: LiveObserver
    /// The session's logger with this device in its metadata (its session logs with it too).
    public let logger: Logger

    private struct State {
        var detector: SipDetector
        var events: [DetectedEvent] = []
        var finished = false
        /// The detector's time of the last reading: session time + `offset`.
        var lastT = -Double.infinity
        /// The detector's clock ahead of the session's: a detector resumed from
        /// a checkpoint goes on on its own time line (the restart is a link gap on it).
        var offset = 0.0
        /// A checkpoint to resume from, taken up at the first reading.
        var pending: DetectorCheckpoint?
        /// Detector time of the last checkpoint submitted.
        var lastCheckpointT = -Double.infinity
        var readings = 0
        /// Payloads the profile could not read, so far.
        var undecodable = 0
        var reported = 0
        var linkUp = false
    }
    private let state: Mutex<State>

    /// - Parameter checkpoint: the device's detector as the store kept it
    ///   (a restart): resumed at the first reading if it fits the device and is recent.
    public init(device: LiveDevice, clock: SessionClock, writer: EventWriter, detector: DetectorConfiguration = .init(),
                observer: LiveObserver = .init(), logger: Logger, checkpoint: StoredCheckpoint = .none) {
        self.device = device
        self.clock = clock
        self.writer = writer
        self.observer = observer
        var logger = logger
        logger[metadataKey: "device"] = "\(device.label)"
        self.logger = logger
        var initial = State(detector: SipDetector(calibration: device.calibration, configuration: detector))
        switch checkpoint {
        case .none:
            break
        case .unusable(let reason):
            logger.warning("the detector's checkpoint is ignored: \(reason)")
        case .usable(let stored):
            if let problem = stored.problem(device: device.label, calibration: device.calibration, configuration: detector) {
                logger.warning("the detector's checkpoint is ignored: \(problem)")
            } else {
                initial.pending = stored
            }
        }
        state = Mutex(initial)
    }

    /// Readings fed so far.
    public var readingCount: Int { state.withLock { $0.readings } }

    /// Decodes one payload (a characteristic value or a broadcast frame) and feeds its readings.
    public func handle(payload: [UInt8]) {
        let decoded: [ProfileReading]
        do {
            decoded = try device.profile.decode(payload)
        } catch {
            // Told as a repeated problem is: a firmware sending a frame its profile does not read, ten a second,
            // wrote a warning for each (860,000 a day).
            let occurrence = state.withLock { s in
                s.undecodable += 1
                return s.undecodable - 1
            }
            logger.log(level: RepeatedNotice.worthSaying(occurrence: occurrence) ? .warning : .debug, "payload does not decode",
                       metadata: ["error": "\(error)", "hex": "\(payload.hexString)", "count": "\(occurrence + 1)"])
            return
        }
        let t = clock.now()
        for raw in decoded { feed(Reading(t: t, value: device.value(of: raw)), raw: raw) }
    }

    /// Feeds one reading taken now on the session clock (monotonic: never earlier than the last).
    public func feed(_ reading: Reading, raw: ProfileReading) {
        let (final, checkpoint) = state.withLock { s -> ([DetectedEvent], DetectorCheckpoint?) in
            guard !s.finished else { return ([], nil) }
            if let pending = s.pending {
                s.pending = nil
                resume(from: pending, at: reading.t, &s)
            }
            var r = reading
            r.t = max(r.t + s.offset, s.lastT)
            s.lastT = r.t
            s.readings += 1
            let previous = s.detector.phase
            s.detector.process(r, into: &s.events)
            logger.trace("reading", metadata: ["t": "\(TraceWriter.fixed(r.t, places: 2))", "value": "\(r.value.map { "\($0)" } ?? "-")"])
            observer.reading?(device, Reading(t: r.t - s.offset, value: r.value), raw, s.detector)
            let final = Self.take(&s.events, offset: s.offset)
            guard storesEvents, !final.isEmpty || DetectorCheckpoint.isDue(s.detector, previous: previous, t: r.t, last: s.lastCheckpointT)
            else { return (final, nil) }
            s.lastCheckpointT = r.t
            return (final, snapshot(of: s))
        }
        submit(final, checkpoint: checkpoint)
    }

    /// Takes up a stored checkpoint at the first reading (session time `t`),
    /// placing the restart on the detector's time line by the boot's monotonic
    /// clock when it is the same boot, else by the wall clock.
    private func resume(from stored: DetectorCheckpoint, at t: Double, _ s: inout State) {
        let sameBoot = !stored.bootID.isEmpty && stored.bootID == clock.bootID
        let then = sameBoot ? clock.sessionTime(sinceBoot: stored.sinceBoot) : clock.time(atWall: stored.wall)
        let age = t - then
        let ageText = TraceWriter.fixed(age, places: 1)
        guard age <= stored.resumableFor, age >= -WallClockAnchor.jumpLimit else {
            s.detector = s.detector.keepingLearning(of: stored.detector)
            logger.info("the detector's checkpoint is \(ageText) s old: starting afresh, keeping what it learnt of the scale's zero",
                        metadata: ["resume_within_s": "\(stored.resumableFor)"])
            return
        }
        s.detector = stored.detector
        s.offset = stored.t - min(then, t)
        s.lastT = stored.t
        s.lastCheckpointT = stored.t
        logger.info("resuming the detector from its checkpoint of \(ageText) s ago", metadata: ["phase": "\(stored.detector.phase.rawValue)"])
    }

    /// The detector now, to resume from after a restart.
    private func snapshot(of s: State) -> DetectorCheckpoint {
        let t = s.lastT - s.offset
        return DetectorCheckpoint(device: device.label, detector: s.detector, t: s.lastT, wall: clock.wall(at: t).secondsSince1970,
                                  bootID: clock.bootID, sinceBoot: clock.sinceBoot(at: t))
    }

    /// Judges what is pending, then learns the level anew from the next readings (keeping what
    /// was learnt of the scale's zero): a change across the gap before them is not this gateway's
    /// to count. A checkpoint not yet resumed is dropped, and the next reading stores the new detector's.
    public func startAfresh(because reason: String) {
        let final = state.withLock { s -> [DetectedEvent] in
            guard !s.finished else { return [] }
            let learnt = s.pending?.detector ?? s.detector
            s.pending = nil
            s.detector.finish(into: &s.events)
            s.detector = SipDetector(calibration: device.calibration, configuration: s.detector.configuration).keepingLearning(of: learnt)
            s.lastCheckpointT = -.infinity
            return Self.take(&s.events, offset: s.offset)
        }
        logger.info("learning the level afresh: \(reason)")
        submit(final)
    }

    public func linkChanged(up: Bool) {
        let changed = state.withLock { s -> Bool in
            defer { s.linkUp = up }
            return s.linkUp != up
        }
        if changed { writer.recordLink(device, up: up) }
        observer.link?(device, up)
    }

    /// Connected (GATT) right now; broadcast devices are never "connected".
    public var isLinkUp: Bool { state.withLock { $0.linkUp } }

    /// A sip the device detected itself (a HidrateSpark): past the detector,
    /// with the device's identity, into the store; returns once committed, so
    /// the device is acknowledged only for what is stored.
    public func report(_ sip: HidrateSparkSipLog.Sip) -> CommitOutcome {
        let start = sip.time - clock.started.secondsSince1970
        let event = DetectedEvent(kind: .sip, t: start, start: start, end: start, ml: sip.ml)
        logger.info("sip \(TraceWriter.fixed(sip.ml, places: 1)) mL (reported by the bottle)",
                    metadata: ["time": "\(Timestamp(secondsSince1970: sip.time).iso8601)", "total_ml": "\(sip.totalML)"])
        state.withLock { $0.reported += 1 }
        return writer.submitAndWait(FinalEvent(device: device, event: event, started: clock.started,
                                               identity: sip.identity, aliases: sip.aliases))
    }

    /// The identity of this device's newest stored event (a bottle's running
    /// total carries over a restart through it); nil without a store or events.
    public func newestStoredIdentity() -> String? {
        try? writer.store?.events(EventQuery(device: device.label, limit: 1)).first?.identity
    }

    /// Moves stored sips to better-known times (`reason` says why, for the log).
    public func restamp(_ corrections: [HidrateSparkSipLog.Correction], reason: String) {
        let changed = writer.restamp(corrections.map { ($0.identity, Timestamp(secondsSince1970: $0.time)) })
        logger.info("re-stamped \(changed) sip\(changed == 1 ? "" : "s") \(reason)")
    }

    /// A cap opened (true) or closed (false) message, or one not understood (nil).
    public func capChanged(open: Bool?) {
        observer.cap?(device, open)
        if let open { recordStatus(capOpen: open) }
    }

    /// Whether events reach a store: a device that keeps records until
    /// acknowledged is acknowledged only then (`watch` only listens).
    public var storesEvents: Bool { writer.store != nil }

    /// What a smart bottle says of itself, kept with the device for `devices`.
    public func recordStatus(batteryPercent: Int? = nil, capOpen: Bool? = nil) {
        guard let store = writer.store else { return }
        do {
            try store.recordDeviceStatus(address: device.label, batteryPercent: batteryPercent, capOpen: capOpen, seenAt: .wallClockNow)
        } catch {
            logger.warning("cannot record the device's state", metadata: ["error": "\(error)"])
        }
    }

    /// A line for whoever watches (firmware and battery on connecting, the cap).
    public func note(_ text: String) { observer.note?(device, text) }

    /// Sips the device reported itself, this session.
    public var reportedCount: Int { state.withLock { $0.reported } }

    /// Judges what is still pending and submits it with the detector's
    /// checkpoint (a lift in progress is resumed after a restart); later readings are ignored.
    public func finish() {
        let (final, checkpoint) = state.withLock { s -> ([DetectedEvent], DetectorCheckpoint?) in
            guard !s.finished else { return ([], nil) }
            s.finished = true
            s.detector.finish(into: &s.events)
            let final = Self.take(&s.events, offset: s.offset)
            // A session that never read anything leaves the stored checkpoint as it is.
            guard storesEvents, s.pending == nil, s.readings > 0 else { return (final, nil) }
            return (final, snapshot(of: s))
        }
        submit(final, checkpoint: checkpoint)
    }

    /// The detector's state (for `watch`).
    public var detectorState: SipDetector { state.withLock { $0.detector } }

    /// The events that are history (not the detector's diagnostics), emptying
    /// the buffer, on the session's time line.
    private static func take(_ events: inout [DetectedEvent], offset: Double) -> [DetectedEvent] {
        guard !events.isEmpty else { return [] }
        defer { events.removeAll(keepingCapacity: true) }
        return events.compactMap { e in
            e.kind.isDiagnostic ? nil
                : DetectedEvent(kind: e.kind, t: e.t - offset, start: e.start - offset, end: e.end - offset, ml: e.ml, remainingML: e.remainingML)
        }
    }

    private func submit(_ events: [DetectedEvent], checkpoint: DetectorCheckpoint? = nil) {
        writer.submit(events.map {
            FinalEvent(device: device, event: $0, started: clock.base(forEventAt: $0.start), finalAt: .now,
                       unsynced: clock.unsyncedStamp(at: $0.start))
        }, checkpoint: checkpoint)
        guard !events.isEmpty else { return }
        for event in events {
            logger.info("\(event.kind.rawValue) \(TraceWriter.fixed(event.ml, places: 1)) mL",
                        metadata: ["start": "\(clock.wall(at: event.start).iso8601)",
                                   "remaining_ml": "\(event.remainingML.map { TraceWriter.fixed($0, places: 0) } ?? "-")"])
        }
    }
}

/// A bottle's own session stores its sips here (`SipReporterSession`).
extension DevicePipeline: SipSink {
    public func store(_ sip: HidrateSparkSipLog.Sip) -> Bool? {
        guard case .stored(let isNew) = report(sip) else { return nil }
        return isNew
    }

    public func recordStatus(batteryPercent: Int?) { recordStatus(batteryPercent: batteryPercent, capOpen: nil) }

    public var wallClockNow: Double { Timestamp.wallClockNow.secondsSince1970 }
}

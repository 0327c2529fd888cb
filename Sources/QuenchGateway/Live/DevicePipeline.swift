import BluetoothWire
import Threading
import Logging
import QuenchCore
import QuenchProfiles
import QuenchStore

/// A session's clock: seconds since its `started` wall time, on the monotonic
/// clock, so a reconnect leaves a gap on the same time line. `rate` > 1 runs
/// it faster than real time, for simulated devices streaming an accelerated trace.
public struct SessionClock: Sendable {
    public let started: Timestamp
    public let rate: Double
    private let origin: ContinuousClock.Instant

    public init(started: Timestamp = .wallClockNow, rate: Double = 1) {
        self.started = started
        self.rate = rate
        origin = .now
    }

    public func now() -> Double {
        let (s, atto) = (ContinuousClock.now - origin).components
        return (Double(s) + Double(atto) * 1e-18) * rate
    }
}

/// What a session reports as it goes (all optional; called on the device's thread).
public struct LiveObserver: Sendable {
    /// Each reading, with the decoded payload and the detector after it.
    public var reading: (@Sendable (_ device: LiveDevice, _ reading: Reading, _ raw: ProfileReading, _ detector: SipDetector) -> Void)?
    /// Each event once final (and stored, when there is a store).
    public var event: (@Sendable (_ device: LiveDevice, _ event: DetectedEvent, _ started: Timestamp) -> Void)?
    /// Connected and subscribed / link lost.
    public var link: (@Sendable (_ device: LiveDevice, _ up: Bool) -> Void)?

    public init(reading: (@Sendable (LiveDevice, Reading, ProfileReading, SipDetector) -> Void)? = nil,
                event: (@Sendable (LiveDevice, DetectedEvent, Timestamp) -> Void)? = nil,
                link: (@Sendable (LiveDevice, Bool) -> Void)? = nil) {
        self.reading = reading
        self.event = event
        self.link = link
    }
}

/// One device's path from payloads to the store: decode, timestamp on the
/// session clock, one detector for the whole session (so a sip across a
/// disconnect is judged once, across the gap), store each event as soon as it
/// is final. Fed by one thread at a time; the lock makes `finish` safe from another.
public final class DevicePipeline: @unchecked Sendable {
    public let device: LiveDevice
    public let clock: SessionClock
    private let store: IntakeStore?
    private let observer: LiveObserver
    private let logger: Logger
    private let lock = ConditionLock()
    private var detector: SipDetector
    private var events: [DetectedEvent] = []
    /// Events the store refused (busy, disk full): retried with the next ones, so none is lost.
    private var unstored: [DetectedEvent] = []
    private var finished = false
    private var lastT = -Double.infinity
    public private(set) var readingCount = 0
    public private(set) var storedCount = 0
    /// Seconds from an event becoming final to its row being committed, the worst seen.
    public private(set) var worstStoreLatency = 0.0

    public init(device: LiveDevice, clock: SessionClock, store: IntakeStore?, detector: DetectorConfiguration = .init(),
                observer: LiveObserver = .init(), logger: Logger) {
        self.device = device
        self.clock = clock
        self.store = store
        self.observer = observer
        var logger = logger
        logger[metadataKey: "device"] = "\(device.label)"
        self.logger = logger
        self.detector = SipDetector(calibration: device.calibration, configuration: detector)
    }

    /// Decodes one payload (a characteristic value or a broadcast frame) and feeds its readings.
    public func handle(payload: [UInt8]) {
        let decoded: [ProfileReading]
        do {
            decoded = try device.profile.decode(payload)
        } catch {
            logger.warning("payload does not decode", metadata: ["error": "\(error)", "hex": "\(payload.hexString)"])
            return
        }
        let t = clock.now()
        for raw in decoded { feed(Reading(t: t, value: device.value(of: raw)), raw: raw) }
    }

    /// Feeds one reading taken now on the session clock (monotonic: never earlier than the last).
    public func feed(_ reading: Reading, raw: ProfileReading) {
        lock.lock()
        defer { lock.unlock() }
        guard !finished else { return }
        var r = reading
        r.t = max(r.t, lastT)
        lastT = r.t
        readingCount += 1
        detector.process(r, into: &events)
        logger.trace("reading", metadata: ["t": "\(TraceWriter.fixed(r.t, places: 2))", "value": "\(r.value.map { "\($0)" } ?? "-")"])
        observer.reading?(device, r, raw, detector)
        flushLocked()
    }

    public func linkChanged(up: Bool) { observer.link?(device, up) }

    /// Judges what is still pending and stores it; later readings are ignored.
    public func finish() {
        lock.lock()
        defer { lock.unlock() }
        guard !finished else { return }
        finished = true
        detector.finish(into: &events)
        flushLocked()
        if !unstored.isEmpty {
            logger.error("events could not be stored", metadata: ["count": "\(unstored.count)"])
        }
    }

    private func flushLocked() {
        guard !events.isEmpty || !unstored.isEmpty else { return }
        let fresh = events.filter { !$0.kind.isDiagnostic }
        events.removeAll(keepingCapacity: true)
        let batch = unstored + fresh
        guard !batch.isEmpty else { return }
        let finalAt = ContinuousClock.now
        if let store {
            do {
                let result = try store.ingest(batch, device: device.label, started: clock.started)
                storedCount += result.inserted
                unstored.removeAll()
                let (s, atto) = (ContinuousClock.now - finalAt).components
                worstStoreLatency = max(worstStoreLatency, Double(s) + Double(atto) * 1e-18)
            } catch {
                unstored = batch
                logger.error("cannot store events; will retry", metadata: ["error": "\(error)", "pending": "\(batch.count)"])
            }
        }
        for event in fresh {
            logger.info("\(event.kind.rawValue) \(TraceWriter.fixed(event.ml, places: 1)) mL",
                        metadata: ["start": "\(clock.started.adding(event.start).iso8601)",
                                   "remaining_ml": "\(event.remainingML.map { TraceWriter.fixed($0, places: 0) } ?? "-")"])
            observer.event?(device, event, clock.started)
        }
    }

    /// The detector's state (for `watch`).
    public var detectorState: SipDetector {
        lock.lock()
        defer { lock.unlock() }
        return detector
    }
}

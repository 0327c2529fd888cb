import Logging
import QuenchCore
import QuenchStore
import Synchronization
import Threading

/// An event a device's detector made final, on its way to the store.
public struct FinalEvent: Sendable {
    public var device: LiveDevice
    public var event: DetectedEvent
    /// Wall time of the session clock's t = 0.
    public var started: Timestamp
    /// When the detector made it final: the start of the "event → store" latency.
    public var finalAt: ContinuousClock.Instant
    /// The identity to store it under when the device gives one (a sip the
    /// bottle logged, which it sends again until acknowledged); nil: device +
    /// kind + start, as for the detector's events.
    public var identity: String?
    /// Identities the same record may already be stored under (a resend whose
    /// time is known to a second or so): if one is there, this is not stored again.
    public var aliases: [String]
    /// Stamped before the wall clock was synchronised: where, on the boot's monotonic clock.
    public var unsynced: UnsyncedStamp?

    public init(device: LiveDevice, event: DetectedEvent, started: Timestamp, finalAt: ContinuousClock.Instant = .now,
                identity: String? = nil, aliases: [String] = [], unsynced: UnsyncedStamp? = nil) {
        self.device = device
        self.event = event
        self.started = started
        self.finalAt = finalAt
        self.identity = identity
        self.aliases = aliases
        self.unsynced = unsynced
    }
}

/// What became of an event given to `EventWriter.submitAndWait`.
public enum CommitOutcome: Sendable, Hashable {
    /// In the store: new, or already there under its identity (or an alias).
    case stored(isNew: Bool)
    /// Refused by the store as invalid (quarantined and logged), or not stored
    /// before a stop; either way not in the store.
    case notStored
}

/// What subscribers receive, in the order the store committed it.
public struct CommittedEvent: Sendable {
    public var final: FinalEvent
    /// The stored row (with its identity: device + kind + lift time); nil
    /// when the session has no store (`watch`).
    public var row: IntakeEvent?
    /// False when a row with the same identity was already there (the same
    /// sip judged again after a restart): subscribers that count skip it.
    public var isNew: Bool
}

/// Receives committed events on the writer's thread, one at a time, in commit
/// order: the CLI's printer and, as they come, the page, MQTT and reminders.
/// A subscriber must not block for long: the next commit waits for it.
public typealias EventSubscriber = @Sendable (CommittedEvent) -> Void

/// The one place a final event goes: every device's pipeline submits here,
/// one thread writes the store (outside any device's lock, so a slow disk
/// never holds up Bluetooth), and what is committed is handed to each
/// subscriber in commit order.
///
/// Store errors are of two kinds. An event the schema refuses (`invalidValue`)
/// is the event's own fault: it is quarantined (logged whole, so nothing is
/// silently lost) and the events after it go on. Anything else is the
/// database's state (locked by another process, disk full, I/O error,
/// unwritable for now): the event is retried with back-off and later events
/// wait behind it, in order, since they would fail alike.
public final class EventWriter: Sendable {
    public struct Counters: Sendable, Hashable {
        public var stored = 0
        public var alreadyStored = 0
        public var quarantined = 0
        public var retries = 0
        /// Seconds from final to committed, the worst seen.
        public var worstLatency = 0.0
    }

    private struct Queued {
        /// nil: a checkpoint alone.
        var event: FinalEvent?
        /// The device's detector after this event, stored with it (or alone).
        var checkpoint: DetectorCheckpoint?
        /// Set for `submitAndWait`: its outcome is kept for the waiter.
        var ticket: Int?
    }

    private struct Queue {
        var events: [Queued] = []
        var closed = false
        var nextTicket = 0
    }

    let store: IntakeStore?
    private let logger: Logger
    private let retry: Backoff
    /// How long a drain keeps retrying a transient failure before it gives up
    /// and logs what could not be stored.
    private let drainPatience: Double
    private let queue = Condition(Queue())
    /// Outcomes by ticket, until their waiter takes them.
    private let outcomes = Condition([Int: CommitOutcome]())
    private let subscribers = Mutex<[EventSubscriber]>([])
    private let counters = Mutex(Counters())
    private let worker = ThreadSlot()
    /// The writer thread's last sign of life: it beats at least every
    /// `heartbeatInterval` while waiting and before each commit, so a thread
    /// stuck in a commit (a hung disk, a subscriber that never returns) stops beating.
    private let heartbeat = Mutex(ContinuousClock.now)
    static let heartbeatInterval = 2.0

    public init(store: IntakeStore?, logger: Logger, retry: Backoff = Backoff(initial: 0.2, factor: 2, maximum: 30),
                drainPatience: Double = 10) {
        self.store = store
        self.logger = logger
        self.retry = retry
        self.drainPatience = drainPatience
    }

    /// Adds a subscriber; events committed from now on reach it.
    public func subscribe(_ subscriber: @escaping EventSubscriber) {
        subscribers.withLock { $0.append(subscriber) }
    }

    public var counts: Counters { counters.withLock { $0 } }

    /// Whether the writer thread showed life within `seconds` (the service's watchdog asks).
    public func isResponsive(within seconds: Double) -> Bool {
        (ContinuousClock.now - heartbeat.withLock { $0 }).seconds < seconds
    }

    private func beat() { heartbeat.withLock { $0 = .now } }

    /// Starts the writer thread (once).
    public func start() {
        worker.start(name: "store writer") { [self] in run() }
    }

    /// Queues events for the writer; returns at once. `checkpoint`: the
    /// device's detector after them, stored in the last one's transaction (or
    /// alone, when there are none), behind everything queued before it, so a
    /// checkpoint is never in the store before the events that led to it.
    public func submit(_ events: [FinalEvent], checkpoint: DetectorCheckpoint? = nil) {
        guard !events.isEmpty || checkpoint != nil else { return }
        queue.changing { q in
            if q.closed {
                if !events.isEmpty {
                    logger.error("event submitted after the writer was drained; not stored",
                                 metadata: ["events": "\(events.map { Self.describe($0) })"])
                }
            } else if events.isEmpty, let checkpoint {
                // A newer checkpoint replaces the device's older one still queued with no event after it.
                if let older = q.events.lastIndex(where: { $0.event?.device.label == checkpoint.device || $0.checkpoint?.device == checkpoint.device }),
                   q.events[older].event == nil {
                    q.events.remove(at: older)
                }
                q.events.append(Queued(event: nil, checkpoint: checkpoint, ticket: nil))
            } else {
                q.events.append(contentsOf: events.enumerated().map { i, event in
                    Queued(event: event, checkpoint: i == events.count - 1 ? checkpoint : nil, ticket: nil)
                })
            }
        }
    }

    /// Queues one event and returns once it is committed (or cannot be): a
    /// device that keeps a record until acknowledged is acknowledged only
    /// after this says `.stored`, so a crash in between makes it send again.
    public func submitAndWait(_ event: FinalEvent) -> CommitOutcome {
        let ticket = queue.changing { q -> Int? in
            guard !q.closed else { return nil }
            defer { q.nextTicket += 1 }
            q.events.append(Queued(event: event, checkpoint: nil, ticket: q.nextTicket))
            return q.nextTicket
        }
        guard let ticket else {
            logger.warning("event submitted after the writer was drained; not stored, not acknowledged",
                           metadata: ["event": "\(Self.describe(event))"])
            return .notStored
        }
        return outcomes.wait(until: Deadline(seconds: .infinity)) { $0.removeValue(forKey: ticket) } ?? .notStored
    }

    /// Changes the times of stored events (by identity) at once, on the
    /// calling thread; the rows must already be committed (a reported sip is,
    /// once `submitAndWait` returned). Returns how many rows changed.
    public func restamp(_ changes: [(identity: String, time: Timestamp)]) -> Int {
        guard let store else { return 0 }
        do { return try store.restamp(changes) } catch {
            logger.error("cannot re-stamp events", metadata: ["error": "\(error)", "events": "\(changes.count)"])
            return 0
        }
    }

    /// Once the wall clock is synchronised: the events of `clock`'s boot stamped
    /// before it (by this process or an earlier one of the same boot) get their
    /// wall times from the monotonic clock; stamps of earlier boots, which
    /// nothing can correct, are forgotten. Returns (re-stamped, forgotten).
    public func restampUnsynced(_ clock: SessionClock) -> (restamped: Int, forgotten: Int) {
        guard let store else { return (0, 0) }
        do {
            let moved = try store.restampUnsynced(bootID: clock.bootID) { clock.wall(at: clock.sessionTime(sinceBoot: $0)) }
            let forgotten = try store.forgetUnsynced(otherThan: clock.bootID)
            return (moved.count, forgotten)
        } catch {
            logger.error("cannot re-stamp events stamped before the clock was set", metadata: ["error": "\(error)"])
            return (0, 0)
        }
    }

    /// Records a device's link going up or down (for what is published about it).
    public func recordLink(_ device: LiveDevice, up: Bool) {
        guard let store else { return }
        do { try store.recordLink(address: device.label, up: up, at: .wallClockNow) } catch {
            logger.warning("cannot record the link state", metadata: ["device": "\(device.label)", "error": "\(error)"])
        }
    }

    /// Takes no more events, writes every queued one, and returns once the
    /// writer thread has ended: what became final before the stop is stored.
    public func drain() {
        start()
        queue.changing { $0.closed = true }
        worker.join()
    }

    private func run() {
        var closing = false
        while !closing {
            beat()
            let taken = queue.wait(until: Deadline(seconds: Self.heartbeatInterval)) { q -> ([Queued], Bool)? in
                if !q.events.isEmpty {
                    defer { q.events.removeAll(keepingCapacity: true) }
                    return (q.events, q.closed)
                }
                return q.closed ? ([], true) : nil
            }
            guard let (batch, closed) = taken else { continue }  // a quiet while: beat and wait again
            closing = closed
            for item in batch {
                beat()
                guard let event = item.event else {
                    if let checkpoint = item.checkpoint { save(checkpoint) }
                    continue
                }
                let outcome = commit(event, checkpoint: item.checkpoint, draining: closed)
                if let ticket = item.ticket { outcomes.changing { $0[ticket] = outcome } }
            }
        }
        logger.debug("store writer ended")
    }

    /// A checkpoint alone: one try (a newer one follows within seconds, and
    /// events must not wait behind it).
    private func save(_ checkpoint: DetectorCheckpoint) {
        guard let store else { return }
        do { try store.saveCheckpoint(checkpoint) } catch {
            logger.warning("cannot save the detector's checkpoint now", metadata: ["device": "\(checkpoint.device)", "error": "\(error)"])
        }
    }

    private func commit(_ final: FinalEvent, checkpoint: DetectorCheckpoint?, draining: Bool) -> CommitOutcome {
        guard let store else {
            deliver(CommittedEvent(final: final, row: nil, isNew: true))
            return .stored(isNew: true)
        }
        // No person: the store stamps the row with the device's owner in the
        // transaction that writes it, so an event is whoever had the bottle when it
        // was stored, and a later `devices assign` leaves it with them.
        var row = IntakeEvent.sensor(final.event, device: final.device.label, started: final.started)
        if let identity = final.identity { row.identity = identity }
        var backoff = retry
        var attempt = 0
        var givingUp: Deadline?
        while true {
            do throws(StoreError) {
                let result = try store.insert([(row, final.aliases)], unsynced: [final.unsynced], checkpoint: checkpoint)
                let latency = (ContinuousClock.now - final.finalAt).seconds
                counters.withLock { c in
                    if result.inserted > 0 { c.stored += 1 } else { c.alreadyStored += 1 }
                    c.worstLatency = max(c.worstLatency, latency)
                }
                deliver(CommittedEvent(final: final, row: row, isNew: result.inserted > 0))
                return .stored(isNew: result.inserted > 0)
            } catch where !error.isTransient {
                counters.withLock { $0.quarantined += 1 }
                logger.error("event refused by the store; quarantined, later events go on",
                             metadata: ["event": "\(Self.describe(final))", "error": "\(error)"])
                if let checkpoint { save(checkpoint) }
                return .notStored
            } catch {
                // Draining (SIGTERM) bounds the wait; otherwise the event waits as long as the database does.
                if givingUp == nil, draining || queue.withLock({ $0.closed }) { givingUp = Deadline(seconds: drainPatience) }
                if let givingUp, givingUp.hasPassed {
                    logger.critical("cannot store an event before stopping; it is lost unless re-entered",
                                    metadata: ["event": "\(Self.describe(final))", "error": "\(error)"])
                    return .notStored
                }
                let delay = backoff.delay(attempt: attempt)
                attempt += 1
                counters.withLock { $0.retries += 1 }
                logger.warning("cannot store an event now; retrying",
                               metadata: ["error": "\(error)", "retry_in_s": "\(TraceWriter.fixed(delay, places: 1))"])
                // Sleeps, but wakes early when a drain starts, so a stop is not held up by a long back-off;
                // a database that stays locked is waited for, not a stuck writer.
                var left = delay
                while left > 0 {
                    beat()
                    let step = min(left, Self.heartbeatInterval)
                    if queue.wait(until: Deadline(seconds: step), { $0.closed ? () : nil }) != nil { break }
                    left -= step
                }
            }
        }
    }

    private func deliver(_ committed: CommittedEvent) {
        for subscriber in subscribers.withLock({ $0 }) { subscriber(committed) }
    }

    /// One event as a log line can hold it, enough to re-enter it by hand.
    static func describe(_ f: FinalEvent) -> String {
        "\(f.device.label) \(f.event.kind.rawValue) \(TraceWriter.fixed(f.event.ml, places: 1)) mL at \(f.started.adding(f.event.start).iso8601)"
    }
}

extension EventFormat {
    /// A committed live event as `quench run` and `quenchd` print it: a JSON
    /// line, or the device and a table row.
    public static func line(_ committed: CommittedEvent, json: Bool) -> String {
        let f = committed.final
        return json ? jsonLine(f.event, started: f.started, device: f.device.label) : f.device.label + tableRow(f.event, started: f.started)
    }
}

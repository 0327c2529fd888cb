import GATT
import Logging
import QuenchCore
import QuenchProfiles
import QuenchStore
import Synchronization
import Threading

// A bottle's own light or buzzer for a reminder.
//
// One policy decides: `quench remind --notify` (QuenchHistory's ReminderPolicy,
// run by systemd/quench-remind.timer) records each reminder it gives in the
// person's `reminder` row (`last_reminded_at`). The gateway holds the GATT
// links but not the policy (quenchd links neither Foundation nor QuenchHistory),
// so it only watches those rows: when someone's moves forward, each connected
// device of theirs whose profile declares a `ReminderSignal` shows it.

/// Who was reminded since the gateway last looked. Pure: the rows in, the
/// reminders to show out. What the first look finds is the baseline and is
/// never shown, so a restart does not replay an old reminder.
public struct ReminderWatermarks: Sendable, Hashable {
    /// Each person's last reminder seen, by person id; nil before the first look.
    public private(set) var seen: [Int64: Timestamp]?

    public init() {}

    /// The reminders in `rows` that moved forward since the last look (none on the first).
    public mutating func advance(_ rows: [ReminderGiven]) -> [ReminderGiven] {
        guard let before = seen else {
            seen = Dictionary(rows.map { ($0.person, $0.at) }, uniquingKeysWith: max)
            return []
        }
        var now = before
        var fresh: [ReminderGiven] = []
        for r in rows {
            // Someone reminded for the first time (added since, or never reminded before) counts too.
            if let last = before[r.person], r.at <= last { continue }
            fresh.append(r)
            now[r.person] = r.at
        }
        seen = now
        return fresh
    }
}

/// What a device's session says to "show this reminder now".
public enum SignalOutcome: Sendable, Hashable {
    /// The session thread shows it within about a second (`GATTDeviceSession.signalCheckInterval`).
    case requested
    /// No link at this moment: not shown (a reminder is about now; it is not kept for later).
    case notConnected
    /// Connected, but the device lacks what the profile says to write to.
    case unavailable(String)
}

/// Watches the store's reminder rows on the gateway's main loop and hands new
/// reminders to the sessions of the reminded person's devices.
final class ReminderWatch: Sendable {
    /// Older than this when first seen (the store was unreadable for a while), a
    /// reminder is not shown: the timer's next run, five minutes on, decides afresh.
    static let staleAfter = 300.0

    private let store: IntakeStore
    /// The sessions whose devices can show a reminder, by address as the store keeps it.
    private let sessions: [String: GATTDeviceSession]
    private let logger: Logger
    private let watermarks = Mutex(ReminderWatermarks())
    private let now: @Sendable () -> Timestamp

    /// nil when no device could show a reminder: then nothing is watched.
    init?(store: IntakeStore?, sessions: [GATTDeviceSession], logger: Logger, now: @escaping @Sendable () -> Timestamp = { .wallClockNow }) {
        let showing = sessions.filter { $0.reminderSignal != nil }
        guard let store, !showing.isEmpty else { return nil }
        self.store = store
        self.sessions = Dictionary(showing.map { ($0.pipeline.device.label, $0) }, uniquingKeysWith: { a, _ in a })
        self.logger = logger
        self.now = now
    }

    /// One look at the reminder rows (the first only takes the baseline).
    /// A store that cannot be read now is tried again next tick.
    func check() {
        let rows: [ReminderGiven]
        do { rows = try store.remindersGiven() } catch {
            logger.debug("cannot read the reminders given; trying again", metadata: ["error": "\(error)"])
            return
        }
        let fresh = watermarks.withLock { $0.advance(rows) }
        let time = now()
        for reminder in fresh { show(reminder, now: time) }
    }

    private func show(_ reminder: ReminderGiven, now: Timestamp) {
        let name = reminder.name.shownSafely(limit: 40)
        let age = now.secondsSince1970 - reminder.at.secondsSince1970
        guard age <= Self.staleAfter else {
            logger.info("reminder for \(name) from \(reminder.at.iso8601) seen \(Int(age)) s late; no light shown for it")
            return
        }
        for address in reminder.devices {
            // A device this gateway does not run, or whose profile has no light, is not this code's business.
            guard let session = sessions[address] else { continue }
            switch session.showReminder(for: reminder.name, at: reminder.at) {
            case .requested:
                logger.debug("reminder for \(name): asking \(address) to show it")
            case .notConnected:
                logger.notice("reminder for \(name): \(address) not connected, its light not shown")
            case .unavailable(let why):
                logger.warning("reminder for \(name): \(address) cannot show it: \(why)")
            }
        }
    }
}

/// A reminder a session was asked to show.
struct SignalRequest: Sendable {
    var person: String
    var at: Timestamp
    var asked: ContinuousClock.Instant
}

/// What a session knows of its signal, shared with the main loop.
struct SignalState: Sendable {
    /// The value handle of the characteristic to write, while a link is open and has it.
    var handle: UInt16?
    /// Why an open link cannot show it (the characteristic is missing); nil when it can or there is no link.
    var unavailable: String?
    var pending: SignalRequest?
}

/// A signal being shown on the session thread: the next write and when it is due.
/// Between writes the session keeps receiving readings (a pause is not a sleep).
struct SignalInProgress {
    let request: SignalRequest
    let signal: ReminderSignal
    let handle: UInt16
    var next = 0
    var due = Deadline(seconds: 0)

    var isDone: Bool { next >= signal.writes.count }

    /// Writes the next value. An ATT error (the device refusing) or a value too
    /// long for the link ends the signal and is returned; a failing link throws.
    mutating func writeNext(_ client: GATTClient) throws(LiveError) -> GATTError? {
        let value = signal.writes[next]
        do throws(GATTError) {
            if signal.withResponse {
                try client.write(handle: handle, value: value)
            } else {
                try client.writeWithoutResponse(handle: handle, value: value)
            }
        } catch {
            switch error {
            case .attribute, .valueTooLong:
                next = signal.writes.count
                return error
            default:
                throw .gatt(error)
            }
        }
        next += 1
        due = Deadline(seconds: signal.pause)
        return nil
    }
}

extension GATTDeviceSession {
    /// How this device shows a reminder; nil when its profile declares none.
    public var reminderSignal: ReminderSignal? { pipeline.device.profile.reminderSignal }

    /// How long a session whose device has a signal waits on its link before
    /// looking for a reminder to show. The session thread blocks in poll(2) on
    /// its bearer, which only a stop wakes (the stop's eventfd; a second wake
    /// descriptor would change every bearer and connector for this one use), so
    /// these sessions alone wake once a second; the others still wait for ever.
    public static let signalCheckInterval = 1.0

    /// Asks the session thread to show a reminder now. Not connected: nothing
    /// is kept for later (a reminder is about now).
    public func showReminder(for person: String, at: Timestamp) -> SignalOutcome {
        signalState.withLock { s in
            guard s.handle != nil else { return s.unavailable.map(SignalOutcome.unavailable) ?? .notConnected }
            s.pending = SignalRequest(person: person, at: at, asked: .now)
            return .requested
        }
    }

    /// On a new link: finds the signal's characteristic (once per connection, as
    /// handles may change). A device without it still gives its readings.
    func openSignal(_ client: GATTClient) throws(LiveError) {
        guard let signal = reminderSignal else { return }
        let found: GATTCharacteristic?
        do throws(GATTError) {
            found = try client.characteristic(signal.characteristic, inService: signal.service)
        } catch {
            if case .attribute = error { found = nil } else { throw .gatt(error) }
        }
        let why: String? = switch found {
        case nil: "it has no characteristic \(signal.characteristic) in service \(signal.service)"
        case let c? where signal.withResponse && !c.properties.contains(.write):
            "its characteristic \(signal.characteristic) does not take writes with response"
        case let c? where !signal.withResponse && !c.properties.contains(.writeWithoutResponse):
            "its characteristic \(signal.characteristic) does not take writes without response"
        default: nil
        }
        if let why { logger.warning("reminders cannot be shown: \(why)") }
        signalState.withLock { s in
            s.handle = why == nil ? found?.valueHandle : nil
            s.unavailable = why
            s.pending = nil
        }
    }

    /// The link is gone: a reminder asked for and not yet shown is dropped, and said so.
    func closeSignal(showing: SignalInProgress?) {
        let dropped = signalState.withLock { s -> SignalRequest? in
            defer { s = SignalState() }
            return s.pending
        } ?? showing.flatMap { $0.isDone ? nil : $0.request }
        if let dropped {
            logger.notice("reminder for \(dropped.person.shownSafely(limit: 40)): the link went before its light was shown")
        }
    }

    /// The reminder to start showing now, if one was asked for (the newest replaces an older one).
    func takeSignal() -> SignalInProgress? {
        guard let signal = reminderSignal else { return nil }
        return signalState.withLock { s -> SignalInProgress? in
            guard let handle = s.handle, let request = s.pending else { return nil }
            s.pending = nil
            return SignalInProgress(request: request, signal: signal, handle: handle)
        }
    }

    /// Gives the due write of `showing`; nil once it is done (and logged).
    func advance(_ showing: SignalInProgress, _ client: GATTClient) throws(LiveError) -> SignalInProgress? {
        var s = showing
        guard s.due.hasPassed else { return s }
        let name = s.request.person.shownSafely(limit: 40)
        let index = s.next
        if let refused = try s.writeNext(client) {
            logger.warning("reminder for \(name): the device refused write \(index + 1) of \(s.signal.writes.count) of its signal: \(refused)")
            return nil
        }
        guard s.isDone else { return s }
        logger.info("reminder for \(name) shown", metadata: [
            "writes": "\(s.signal.writes.count)", "characteristic": "\(s.signal.characteristic)",
            "reminded_at": "\(s.request.at.iso8601)",
        ])
        return nil
    }
}

import QuenchCore
import QuenchStore

/// When to remind a person to drink: pure, every input given (the clock too),
/// so days can be scripted in tests.
///
/// The pace is the goal spread evenly over the waking window: at 15:00 in an
/// 08:00–22:00 window, half the goal. A person is *behind* when their intake is
/// below the pace by more than the slack. In `pace` mode a reminder comes when
/// they are behind, their last drink is at least `afterMinutes` ago and the last
/// reminder at least `everyMinutes` ago; `hourly` mode drops the first
/// condition. Never outside the waking window, never once the goal is met,
/// never while snoozed; each drink pushes the next reminder back.
public enum ReminderPolicy {
    /// Everything the policy looks at.
    public struct Situation: Sendable {
        public var now: Timestamp
        /// Today's waking window (the caller places it on the local calendar), but for the hours
        /// `asleep` inside it: a night's window across the hour the day begins is the day's morning
        /// and evening, the sleep between them left out.
        public var windowStart: Timestamp
        public var windowEnd: Timestamp
        public var asleep: (start: Timestamp, end: Timestamp)?
        public var intakeML: Double
        public var goalML: Double
        public var lastDrink: Timestamp?
        public var lastReminder: Timestamp?
        public var snoozedUntil: Timestamp?

        public init(now: Timestamp, windowStart: Timestamp, windowEnd: Timestamp, asleep: (start: Timestamp, end: Timestamp)? = nil,
                    intakeML: Double, goalML: Double, lastDrink: Timestamp?, lastReminder: Timestamp?, snoozedUntil: Timestamp?) {
            self.now = now
            self.windowStart = windowStart
            self.windowEnd = windowEnd
            self.asleep = asleep.flatMap { $0.start < $0.end ? $0 : nil }
            self.intakeML = intakeML
            self.goalML = goalML
            self.lastDrink = lastDrink
            self.lastReminder = lastReminder
            self.snoozedUntil = snoozedUntil
        }
    }

    /// Where the person stands, and when the next reminder would come and why.
    public struct Verdict: Sendable, Hashable {
        /// Where the pace says they should be by now.
        public var paceML: Double
        public var behindByML: Double
        public var behind: Bool
        /// A reminder is due now.
        public var due: Bool
        /// When the next one would come, as things stand (nil: not today).
        public var nextAt: Timestamp?
        public var reason: String
    }

    /// `volume` says an amount in the person's unit (the reason is shown to them), `describe` a time.
    public static func judge(_ s: Situation, _ settings: ReminderSettings, volume: (Double) -> String = { VolumeText.volume($0, .ml) },
                             describe: (Timestamp) -> String) -> Verdict {
        let span = max(0, s.windowEnd.secondsSince1970 - s.windowStart.secondsSince1970)
        let sleep = s.asleep.map { $0.end.secondsSince1970 - $0.start.secondsSince1970 } ?? 0
        let window = max(1, span - sleep)
        /// Waking seconds of the window before `t`.
        func waking(before t: Timestamp) -> Double {
            let since = min(max(0, t.secondsSince1970 - s.windowStart.secondsSince1970), span)
            let slept = s.asleep.map { min(max(0, t.secondsSince1970 - $0.start.secondsSince1970), sleep) } ?? 0
            return since - slept
        }
        /// When `seconds` of the window's waking time have passed.
        func instant(afterWaking seconds: Double) -> Timestamp {
            let t = s.windowStart.adding(seconds)
            guard let asleep = s.asleep, t >= asleep.start else { return t }
            return t.adding(sleep)
        }
        func isAsleep(_ t: Timestamp) -> Bool { s.asleep.map { t >= $0.start && t < $0.end } ?? false }
        let elapsed = waking(before: s.now)
        let pace = s.goalML * elapsed / window
        let behindBy = max(0, pace - s.intakeML)
        let behind = s.intakeML < pace - settings.slackML
        func verdict(_ due: Bool, _ next: Timestamp?, _ reason: String) -> Verdict {
            Verdict(paceML: pace, behindByML: behindBy, behind: behind, due: due, nextAt: next, reason: reason)
        }
        switch settings.mode {
        case .off: return verdict(false, nil, "reminders are off")
        case .pace, .hourly: break
        }
        guard s.intakeML < s.goalML else { return verdict(false, nil, "the goal is met") }
        // Its window is over: the next is the next day's, with its own intake and pace.
        guard s.now < s.windowEnd else { return verdict(false, nil, "the waking window closed at \(describe(s.windowEnd))") }

        // The earliest moment every condition holds, and which one holds it back.
        var earliest = s.windowStart
        var why = "the waking window opens at \(describe(s.windowStart))"
        func notBefore(_ t: Timestamp?, _ reason: @autoclosure () -> String) {
            guard let t, t > earliest else { return }
            earliest = t
            why = reason()
        }
        notBefore(s.lastDrink?.adding(settings.afterMinutes * 60),
                  "\(minutes(settings.afterMinutes)) after the last drink, at \(s.lastDrink.map(describe) ?? "-")")
        // One stamped later than now was sent under a clock that ran ahead (a Pi without a real-time clock,
        // a wrong time server): it holds nothing back, or reminders would stay silent until that time came.
        notBefore(s.lastReminder.flatMap { $0 <= s.now ? $0 : nil }?.adding(settings.everyMinutes * 60),
                  "\(minutes(settings.everyMinutes)) after the last reminder, at \(s.lastReminder.map(describe) ?? "-")")
        notBefore(s.snoozedUntil, "snoozed until \(s.snoozedUntil.map(describe) ?? "-")")
        if settings.mode == .pace {
            // The pace passes intake + slack when goal × fraction of the window = intake + slack.
            let needed = s.intakeML + settings.slackML
            guard needed < s.goalML else {
                return verdict(false, nil, "within \(volume(settings.slackML)) of the goal: the pace cannot leave them behind today")
            }
            let behindFrom = instant(afterWaking: needed / s.goalML * window)
            notBefore(behindFrom, "when the pace passes \(volume(needed)) (intake + \(volume(settings.slackML)) slack)")
        }
        // Asleep between a night's two pieces: not before they wake.
        if let asleep = s.asleep, isAsleep(max(earliest, s.now)) {
            earliest = asleep.end
            why = "the waking window opens again at \(describe(asleep.end))"
        }
        if s.now >= earliest, s.now < s.windowEnd {
            let reason = settings.mode == .pace
                ? "behind pace by \(volume(behindBy))" + (s.lastDrink.map { "; last drink \(describe($0))" } ?? "; nothing drunk yet")
                : "every \(minutes(settings.everyMinutes)) in the waking window"
            return verdict(true, s.now, reason)
        }
        guard earliest < s.windowEnd else {
            return verdict(false, nil, "not before the waking window closes at \(describe(s.windowEnd)) (\(why))")
        }
        return verdict(false, earliest, why)
    }

    static func minutes(_ m: Double) -> String {
        m >= 120 && m.truncatingRemainder(dividingBy: 60) == 0 ? "\(Int(saturating: m / 60)) h" : "\(Int(saturating: m.rounded())) min"
    }
}

import QuenchCore
import QuenchStore
import Threading

/// `quench carer`: everyone, the one who has gone longest without a drink first. Time
/// without a drink is counted in the person's waking hours (their reminder window):
/// a night's sleep is not a worry, an afternoon with nothing is.
public struct CarerReport: Sendable, Encodable {
    public struct Entry: Sendable, Encodable, Equatable {
        public var person: String
        public var units: String
        public var intakeMl: Double
        public var goalMl: Double
        /// Their last drink on any day (ISO 8601 with offset); nil when they have none.
        public var lastDrinkAt: String?
        /// Minutes of their waking hours since the last drink (with none, since they were added:
        /// `noDrinkSince`), up to `CarerReport.reach`.
        public var quietMinutes: Int
        /// When they were added (ISO 8601 with offset), when no drink of theirs is recorded: the
        /// time without a drink counts from there, so a person just added is not over at once.
        public var noDrinkSince: String?
        /// The last drink (or their adding) is more than `CarerReport.reach` days ago: `quietMinutes` stopped growing there.
        public var quietBeyondReach = false
        /// `08:00-22:00`: when time without a drink counts.
        public var wakingHours: String
        /// Whether now is inside those hours.
        public var awake: Bool
        /// The carer's threshold (`quench person alert`); nil: not watched.
        public var alertAfterMinutes: Int?
        /// Watched, awake, and without a drink for at least the threshold.
        public var overdue: Bool
        /// The alert of this spell without a drink (ISO 8601 with offset): when it was sent, and
        /// when a carer acknowledged it; nil when none was (`quench carer --notify` sends them).
        public var alertSentAt: String?
        public var alertAcknowledgedAt: String?
        /// How many thresholds it was sent for: 1 when they went over it, 2 when sent again at twice
        /// the threshold while nobody had acknowledged it, and so on; nil when none was sent.
        public var alertSends: Int?
        /// When it was last sent (ISO 8601 with offset): `alertSentAt` until it is sent again.
        public var alertLastSentAt: String?
    }

    /// A hub's gateways whose publisher is gone (node, and since when, ISO 8601 with offset): drinks
    /// logged there are not reaching this history, so time without a drink there may not be what it says.
    public struct Gateway: Sendable, Encodable, Equatable {
        public var node: String
        public var offlineSince: String
        /// Whose drinks came through it in the last `CarerReport.reach` days, by name: whose quiet hours may be its
        /// (a carer reads "Ivy, Mabel", not a node id).
        public var people: [String] = []
    }

    /// When the report was made (ISO 8601 with offset): the page counts on from it.
    public var at: String
    /// How many are overdue.
    public var overdue: Int
    /// Overdue first, then by time without a drink, longest first.
    public var people: [Entry]
    /// At a hub, its gateways offline now; empty elsewhere, and while `hub` says the hub hears none.
    public var gatewaysOffline: [Gateway] = []

    /// A hub's gateway whose publisher runs but whose Bluetooth service does not (`quenchd` stopped, crashed, or
    /// restarting for good), since when the hub heard so, and whose bottles' drinks came through it in the last
    /// `reach` days (typed drinks still arrive).
    public struct BluetoothGateway: Sendable, Encodable, Equatable {
        public var node: String
        public var stoppedSince: String
        public var people: [String] = []
    }
    /// At a hub, its gateways whose Bluetooth service is not running: their bottles' drinks are not recorded.
    /// Empty elsewhere, and while `hub` says the hub hears none.
    public var gatewaysWithoutBluetooth: [BluetoothGateway] = []

    /// At a hub, why nothing logged at the gateways reaches this history now; nil when it does (and elsewhere).
    /// A dead hub left the view showing yesterday's quiet as if current (a carer trial).
    public struct HubProblem: Sendable, Encodable, Equatable {
        /// `stopped`: no `quench hub run` holds this database; `broker_lost`: it runs without the broker.
        public var problem: String
        /// Since when (ISO 8601 with offset), when known: the hub's stop or loss, else the last it heard a gateway.
        public var since: String?
    }
    public var hub: HubProblem? = nil
    /// At a hub where someone is watched, those added in the last `newcomerDays` whose drinks
    /// arrive but who are not (no threshold): a resident added at a gateway comes with none, and
    /// no alert would ever be sent about them (a carer trial). Empty elsewhere: in a household,
    /// who is watched is the carer's own choice (the carer is one of the people).
    public var notWatched: [String] = []

    /// The role a hub process holds on its database (`Hub`), and `HubProblem.problem`'s words.
    public static let hubRole = "hub"
    public static let hubStopped = "stopped"
    public static let hubBrokerLost = "broker_lost"

    /// How far back time without a drink is counted, in days: beyond it the figure stops growing.
    public static let reach = 30
    /// How long someone added is a newcomer whose missing threshold is said (`notWatched`), in days.
    public static let newcomerDays = 14.0
}

/// `quench carer ack NAME --json`.
public struct CarerAcknowledgement: Sendable, Encodable, Equatable {
    public var person: String
    /// When the alert was acknowledged (ISO 8601 with offset): now, or the first time when `already`.
    public var acknowledgedAt: String
    public var already: Bool
}

extension History {
    /// `quench carer [--json]`.
    public static func carer(_ environment: HistoryEnvironment, json: Bool) throws(HistoryError) -> String {
        let report = try carerReport(environment)
        if json { return JSONOutput.encode(report) }
        let rows = report.people.map { e -> [String] in
            let unit = VolumeUnit(rawValue: e.units) ?? .ml
            // Past the reach the figure stopped growing: "420 h" would say 17 days of a drink months ago.
            let quiet = (e.quietBeyondReach ? "over \(CarerReport.reach) days" : Format.span(minutes: e.quietMinutes))
                + (e.noDrinkSince == nil ? "" : ", none yet")
            return [e.person.shownSafely(limit: 40), e.overdue ? quiet + " (over)" : quiet,
                    // Its date and wall-clock time, as written (the household's zone).
                    e.lastDrinkAt.map { $0.prefix(10) + " " + $0.dropFirst(11).prefix(5) } ?? "-",
                    Format.volume(e.intakeMl, unit) + " of " + Format.volume(e.goalMl, unit),
                    e.wakingHours + (e.awake ? "" : " (asleep)"), e.alertAfterMinutes.map { Format.span(minutes: $0) } ?? "-"]
        }
        let table = Format.table(["Person", "Without a drink", "Last drink", "Today", "Waking hours", "Alert after"], rows,
                                 align: [.left, .right, .left, .right, .left, .right])
        // At night nobody is over, yet an alert sent in the day may still be open: said as such, not
        // "Nobody is over their threshold." above "Alert about Dad … not acknowledged." at 23:00.
        let asleepOpen = report.people.filter { !$0.awake && $0.alertSentAt != nil && $0.alertAcknowledgedAt == nil }
            .map { $0.person.shownSafely(limit: 40) }
        let flagged = report.overdue == 0 && !asleepOpen.isEmpty
            ? "Nobody is over their threshold now: it counts in waking hours, and \(asleepOpen.joined(separator: ", ")) "
                + (asleepOpen.count == 1 ? "is" : "are") + " outside theirs (the alert below is still open)."
            : report.overdue == 0 ? "Nobody is over their threshold."
            : report.overdue == 1 ? "1 person is over their threshold." : "\(report.overdue) people are over their threshold."
        // The alerts of the spells going on, as the page shows them: a carer at a terminal sees
        // that one was sent, and that an acknowledgement took.
        let alerts = report.people.compactMap { e -> String? in
            guard let sent = e.alertSentAt else { return nil }
            let again = e.alertLastSentAt.flatMap { $0 == sent ? nil : ", again \(Self.wallClock($0, today: report.at))" } ?? ""
            let seen = e.alertAcknowledgedAt.map { "acknowledged \(Self.wallClock($0, today: report.at))" } ?? "not acknowledged"
            return "Alert about \(e.person.shownSafely(limit: 40)) sent \(Self.wallClock(sent, today: report.at))\(again); \(seen)."
        }
        // At a hub: a corridor's gateway gone quiet, said, or its residents' quiet hours read as theirs.
        func whose(_ people: [String]) -> String {
            people.isEmpty ? "" : " (\(people.map { $0.shownSafely(limit: 40) }.joined(separator: ", ")))"
        }
        let quiet = report.gatewaysOffline.map { g in
            "The gateway \(g.node.shownSafely(limit: 40)) has been offline since \(Self.wallClock(g.offlineSince, today: report.at)): "
                + "drinks logged there\(whose(g.people)) are not reaching this history."
        } + report.gatewaysWithoutBluetooth.map { g in
            "The gateway \(g.node.shownSafely(limit: 40))'s Bluetooth service (quenchd) has not been running since "
                + "\(Self.wallClock(g.stoppedSince, today: report.at)): its bottles' drinks\(whose(g.people)) are not being recorded."
        }
        let hub = report.hub.map { hubLine($0, at: report.at) }
        let unwatched = report.notWatched.isEmpty ? [] : [
            "No alert is set for \(report.notWatched.map { $0.shownSafely(limit: 40) }.joined(separator: ", ")): "
                + "`quench person alert NAME 3h` sets one."]
        return (Array(hub.map { [$0] } ?? []) + [table, flagged] + unwatched + alerts + quiet).joined(separator: "\n")
    }

    public static func carerReport(_ environment: HistoryEnvironment) throws(HistoryError) -> CarerReport {
        let (watches, at) = try carerWatches(environment)
        var entries = watches.map(\.entry)
        // Overdue first; then the longest without a drink; then by name.
        entries.sort { a, b in
            if a.overdue != b.overdue { return a.overdue }
            let (qa, qb) = (a.quietMinutes, b.quietMinutes)
            if qa != qb { return qa > qb }
            return a.person.lowercased() < b.person.lowercased()
        }
        var report = CarerReport(at: at, overdue: entries.count { $0.overdue }, people: entries)
        let c = try environment.household.context(creating: false, everyone: true)
        let atHub = try c.run { (store) throws(StoreError) in try !store.hubGateways().isEmpty }
        if atHub, entries.contains(where: { $0.alertAfterMinutes != nil }) {
            // Newcomers: added in the last two weeks, with a drink. Past that, no threshold was the carers' choice
            // (a family's hub, someone long there), and nobody is told of it for good.
            report.notWatched = watches.filter { w in
                w.entry.alertAfterMinutes == nil && w.entry.lastDrinkAt != nil
                    && c.now.secondsSince1970 - w.addedAt.secondsSince1970 <= CarerReport.newcomerDays * 86_400
            }.map(\.entry.person).sorted { $0.lowercased() < $1.lowercased() }
        }
        // A hub that hears nobody: what it last heard of its gateways is stale, and not read.
        if atHub, let problem = try hubProblem(c) {
            report.hub = problem
            return report
        }
        let since = c.now.adding(-Double(CarerReport.reach) * 86_400)
        func people(_ node: String, sensorsOnly: Bool) throws(HistoryError) -> [String] {
            try c.run { (store) throws(StoreError) in try store.peopleHeard(through: node, since: since, sensorsOnly: sensorsOnly) }
        }
        report.gatewaysOffline = try c.run { (store) throws(StoreError) in try store.offlineGateways() }.map { g throws(HistoryError) in
            CarerReport.Gateway(node: g.node, offlineSince: Format.localISO(g.since, c.calendar), people: try people(g.node, sensorsOnly: false))
        }
        report.gatewaysWithoutBluetooth = try c.run { (store) throws(StoreError) in try store.gatewaysWithoutBluetooth(sensorsSince: since) }
            .map { g throws(HistoryError) in
                CarerReport.BluetoothGateway(node: g.node, stoppedSince: Format.localISO(g.since, c.calendar), people: try people(g.node, sensorsOnly: true))
            }
        return report
    }

    /// What keeps a hub's database from being kept now, in the carer view's words; nil when nothing does
    /// (`quench hub status`' last line).
    public static func hubProblemText(_ environment: HistoryEnvironment) throws(HistoryError) -> String? {
        let c = try environment.household.context(creating: false, everyone: true)
        return try hubProblem(c).map { hubLine($0, at: Format.localISO(c.now, c.calendar)) }
    }

    /// The problem in a line, its time said as of `at` (ISO 8601 with offset).
    private static func hubLine(_ h: CarerReport.HubProblem, at: String) -> String {
        let since = h.since.map { " since " + Self.wallClock($0, today: at) } ?? ""
        return h.problem == CarerReport.hubStopped
            ? "The hub is not running (`quench hub run`, the quench-hub service): nothing logged at the gateways has reached this history\(since)."
            : "The hub has been without the MQTT broker\(since): drinks logged at the gateways are not reaching this history."
    }

    /// Whether the hub's database is being kept now: a hub process holds it (its role, checked by pid and
    /// start time, as `quench mqtt status` checks its publisher) and holds the broker (`IntakeStore.hubLink`).
    static func hubProblem(_ c: HistoryContext) throws(HistoryError) -> CarerReport.HubProblem? {
        let holder = try c.run { (store) throws(StoreError) in try store.roleHolder(CarerReport.hubRole) }
        let link = try c.run { (store) throws(StoreError) in try store.hubLink() }
        if let holder, ProcessIdentity.isRunning(pid: holder.pid, started: holder.started) {
            guard let link, !link.connected else { return nil }
            return CarerReport.HubProblem(problem: CarerReport.hubBrokerLost, since: Format.localISO(link.since, c.calendar))
        }
        // Stopped: when it said so; killed, the last it heard of a gateway.
        let heard = try c.run { (store) throws(StoreError) in try store.hubGateways() }.map(\.seenAt).max()
        let since = link.flatMap { $0.connected ? nil : $0.since } ?? heard
        return CarerReport.HubProblem(problem: CarerReport.hubStopped, since: since.map { Format.localISO($0, c.calendar) })
    }

    /// One person as the carer's view sees them: their entry, and the spell without a drink it is
    /// about (the identity of the drink before it, `CarerAlert.noDrink` for none).
    struct CarerWatch {
        var entry: CarerReport.Entry
        var personID: Int64
        /// When the person was added (a newcomer's missing threshold is said: `CarerReport.notWatched`).
        var addedAt: Timestamp
        var lastDrink: String
        /// The spell's alert, if one was raised.
        var alert: CarerAlert?
        /// When a carer acknowledged the spell's alert, if they did.
        var acknowledgedAt: Timestamp? { alert?.acknowledgedAt }
        /// The acknowledgement was given in waking hours now over (or, given while they slept, in
        /// the ones that followed): it no longer holds.
        var acknowledgementLapsed: Bool
        /// An alert nobody acknowledged was last sent in waking hours now over: the next ones' shift is told at
        /// their start, as of an acknowledged one (the morning heard of the resident already seen to, and not of
        /// the one nobody had seen, until the next threshold's multiple: a carer trial).
        var lastSendLapsed: Bool = false
    }

    /// Everyone's `CarerWatch`, in the order of `people`, and the time they were made at.
    /// - Parameter only: one person's alone (their id).
    static func carerWatches(_ environment: HistoryEnvironment, only: Int64? = nil) throws(HistoryError) -> ([CarerWatch], String) {
        let store = try environment.openStore(creating: false)
        let people = try HistoryContext.run { () throws(StoreError) in try store.people() }
        var watches: [CarerWatch] = []
        var at = ""
        for person in people where only.map({ $0 == person.id }) ?? true {
            var one = environment
            one.person = person.name
            let c = try one.context(creating: false)
            at = Format.localISO(c.now, c.calendar)
            let day = c.today
            let intake = try c.dailyTotals(from: day, through: day)[day.number]?.ml ?? 0
            let goal = try c.goalBook().goal(on: day)
            let settings = try c.run { (store) throws(StoreError) in try store.reminder(person: c.personID) }.settings
            let last = try c.run { (store) throws(StoreError) in try store.lastSip(before: c.now.adding(1), person: c.personID) }
            // With no drink at all, the time without one counts from their adding: "over" the moment a
            // carer adds Gran and sets her threshold would be an alert about nothing but the setting up.
            let quietSince = last?.time ?? person.createdAt
            let quiet = Int(saturating: (wakingSeconds(from: quietSince, until: c.now, settings, c.calendar) / 60).rounded(.down))
            let alert = person.alertAfterMinutes
            let awake = settings.wakingWindow(containing: c.now, c.calendar) != nil
            let beyondReach = quietSince < c.now.adding(-Double(CarerReport.reach) * 86_400)
            var entry = CarerReport.Entry(
                // Unrounded, as `today` gives it: rounded here and again in the text, 750.48 mL read 751 beside today's 750.
                person: person.name, units: c.units.rawValue, intakeMl: intake, goalMl: goal,
                lastDrinkAt: last.map { Format.localISO($0.time, c.calendar) }, quietMinutes: quiet,
                noDrinkSince: last == nil ? Format.localISO(person.createdAt, c.calendar) : nil,
                wakingHours: settings.wakingHours,
                awake: awake, alertAfterMinutes: alert,
                // Only while they are awake: a carer reading "over" at night would go and wake them.
                overdue: awake && alert.map { quiet >= $0 } ?? false)
            entry.quietBeyondReach = beyondReach
            let lastDrink = CarerAlert.spell(after: last)
            let sent = try c.run { (store) throws(StoreError) in try store.carerAlert(person: person.id, lastDrink: lastDrink) }
            if let sent {
                entry.alertSentAt = Format.localISO(sent.raisedAt, c.calendar)
                entry.alertAcknowledgedAt = sent.acknowledgedAt.map { Format.localISO($0, c.calendar) }
                entry.alertSends = sent.sends
                entry.alertLastSentAt = Format.localISO(sent.lastSentAt, c.calendar)
            }
            let lapsed = sent?.acknowledgedAt.map { c.now >= settings.wakingEnd(after: $0, c.calendar) } ?? false
            // New waking hours since it was last sent, after a sleep (a window of the whole day has none: its day start
            // is no change of shift, and told again there, an alert raised at 03:58 came twice in two minutes).
            let sendLapsed = sent.map { alert in
                alert.acknowledgedAt == nil && settings.wakingMinutes < 1440
                    && (settings.wakingWindow(containing: c.now, c.calendar).map { $0.start > alert.lastSentAt } ?? false)
            } ?? false
            watches.append(CarerWatch(entry: entry, personID: person.id, addedAt: person.createdAt, lastDrink: lastDrink, alert: sent,
                                      acknowledgementLapsed: lapsed, lastSendLapsed: sendLapsed))
        }
        return (watches, at)
    }

    /// A carer's alert that `quench carer --notify` sent: to whom it is about, and what it says.
    public struct CarerDelivery: Sendable, Equatable {
        public var person: String
        /// "Gran has had nothing to drink for 3 h 10 min of their waking hours (last drink 10:05; alert after 3 h)".
        public var message: String
        /// The facts, by name: `person`, `quiet_minutes`, `alert_after_minutes`, `last_drink_at` (absent: none),
        /// `sends` (1 the first time; again, how many thresholds have passed).
        public var fields: [String: String]
        /// What was claimed in the database for this sending, to put back if it never arrives.
        let claim: Claim

        struct Claim: Sendable, Equatable {
            var personID: Int64
            var lastDrink: String
            var sends: Int
            var at: Timestamp
            var before: CarerAlert?
        }
    }

    /// A carer's alert whose push failed (the network, the push service down): its sending is put
    /// back as it was, so the next `quench carer --notify` sends it again. Claimed and not put
    /// back, the alert read "sent" while nothing had arrived, and was not sent again for a whole
    /// threshold: the one alert a carer depends on, lost to a minute's outage.
    /// Whether it was put back (false: acknowledged, or claimed by another run, meanwhile).
    public static func carerAlertNotDelivered(_ environment: HistoryEnvironment, _ delivery: CarerDelivery) throws(HistoryError) -> Bool {
        let store = try environment.openStore(creating: false)
        let claim = delivery.claim
        return try HistoryContext.run { () throws(StoreError) in
            try store.releaseCarerAlert(person: claim.personID, lastDrink: claim.lastDrink, sends: claim.sends, at: claim.at, before: claim.before)
        }
    }

    /// `quench carer --notify` (quench-carer.service, which the reminder timer starts, runs it): an alert for each person now over
    /// their threshold whose spell without a drink has none yet; and again, while nobody has
    /// acknowledged it, each time the threshold passes once more (3 h, then 6 h, 9 h... of their
    /// waking hours): a carer who missed the first push is told again, and one who has seen it is
    /// not, for the waking hours they saw it in; still no drink in the next ones, told again. Each
    /// spell's alert is raised once in the database (its key), and each sending again is claimed
    /// there by its count, so two timers, or a hub and a gateway on one file, send each once.
    public static func deliverCarerAlerts(_ environment: HistoryEnvironment) throws(HistoryError) -> [CarerDelivery] {
        let (watches, at) = try carerWatches(environment)
        let store = try environment.openStore(creating: false)
        let now = environment.now
        var deliveries: [CarerDelivery] = []
        for watch in watches where watch.entry.overdue {
            let e = watch.entry
            // How many thresholds have passed.
            let due = max(1, e.alertAfterMinutes.map { e.quietMinutes / max($0, 1) } ?? 1)
            var reopened = false
            let claimed: Int
            if let sent = e.alertSends, let acknowledged = watch.acknowledgedAt {
                // An acknowledgement holds for the waking hours it was given in (or, given while
                // they slept, the next): still no drink in later ones (a dry night into a new day),
                // the carer is told again, and it waits for a new acknowledgement.
                guard watch.acknowledgementLapsed else { continue }
                claimed = max(due, sent, 1)
                let reopens = try HistoryContext.run { () throws(StoreError) in
                    try store.reopenCarerAlert(person: watch.personID, lastDrink: watch.lastDrink, acknowledged: acknowledged, sends: claimed, at: now)
                }
                guard reopens else { continue }
                reopened = true
            } else if let sent = e.alertSends, let alert = watch.alert, watch.lastSendLapsed, due <= sent {
                // New waking hours since it was last sent, no new threshold passed: told at their start, for the thresholds
                // it stood for (the repeats go on at the next), claimed by when it was last sent.
                claimed = sent
                let resent = try HistoryContext.run { () throws(StoreError) in
                    try store.resendCarerAlert(person: watch.personID, lastDrink: watch.lastDrink, sends: sent, lastSent: alert.lastSentAt, at: now)
                }
                guard resent else { continue }
            } else if let sent = e.alertSends {
                claimed = due
                let sendsAgain = try HistoryContext.run { () throws(StoreError) in
                    try store.sendCarerAlertAgain(person: watch.personID, lastDrink: watch.lastDrink, after: sent, for: due, at: now)
                }
                guard sendsAgain else { continue }
            } else {
                // Raised late (a threshold set, or a timer started, long into the spell): sent for
                // every threshold passed, so the next run does not send it again at once.
                claimed = due
                let raised = try HistoryContext.run { () throws(StoreError) in
                    try store.raiseCarerAlert(person: watch.personID, lastDrink: watch.lastDrink, at: now, sends: due)
                }
                guard raised else { continue }
            }
            let name = e.person.shownSafely(limit: 40)
            let limit = e.alertAfterMinutes.map { Format.span(minutes: $0) } ?? "-"
            let repeated = e.alertSends != nil
            let acknowledgement = reopened ? "; acknowledged \(e.alertAcknowledgedAt.map { Self.wallClock($0, today: at) } ?? "-"), before these waking hours"
                : repeated ? "; not acknowledged" : ""
            let last = e.lastDrinkAt.map { "last drink \(Self.wallClock($0, today: at))" }
                ?? "none recorded since they were added \(e.noDrinkSince.map { Self.wallClock($0, today: at) } ?? "-")"
            // Past the reach the count stopped growing: "420 h" of a drink 35 days ago was no figure at all.
            let message = "\(name) has \(repeated ? "still " : "")had nothing to drink for "
                + (e.quietBeyondReach ? "over \(CarerReport.reach) days" : "\(Format.span(minutes: e.quietMinutes)) of their waking hours")
                + " (\(last); alert after \(limit)\(acknowledgement))"
            var fields = ["person": e.person, "alert_after_minutes": e.alertAfterMinutes.map(String.init) ?? "",
                          "sends": String(claimed)]
            fields["quiet_minutes"] = String(e.quietMinutes)
            if let last = e.lastDrinkAt { fields["last_drink_at"] = last }
            let claim = CarerDelivery.Claim(personID: watch.personID, lastDrink: watch.lastDrink, sends: claimed, at: now, before: watch.alert)
            deliveries.append(CarerDelivery(person: e.person, message: message, fields: fields, claim: claim))
        }
        return deliveries
    }

    /// An instant as `carerReport` writes it (ISO 8601 with offset), for a message: its time alone on
    /// the day of `today` (another such instant), its date and time otherwise.
    static func wallClock(_ instant: String, today: String) -> String {
        let time = String(instant.dropFirst(11).prefix(5))
        return instant.prefix(10) == today.prefix(10) ? time : instant.prefix(10) + " " + time
    }

    /// `quench carer ack NAME` (and the page's button): the carer has seen the alert about them.
    /// Once: a second acknowledgement says when the first was. Refused when there is none to acknowledge.
    public static func acknowledgeCarerAlert(_ environment: HistoryEnvironment, name: String, json: Bool) throws(HistoryError) -> String {
        let (watches, _) = try carerWatches(environment)
        let store = try environment.openStore(creating: false)
        // Named as everywhere else: in any case.
        let person = try HistoryContext.run { () throws(StoreError) in try store.person(named: name) }
        guard let person else {
            // As any other name nobody has: the page answers 404, the command line lists who there is.
            throw .unknownPerson(name, people: try HistoryContext.run { () throws(StoreError) in try store.people().map(\.name) })
        }
        let name = person.name
        let shown = name.shownSafely(limit: 40)
        let noAlert = HistoryError.invalidArgument("there is no alert about \(shown) to acknowledge: none was sent since their last drink")
        guard let watch = watches.first(where: { $0.personID == person.id }), watch.entry.alertSentAt != nil else { throw noAlert }
        let now = environment.now
        let alert = try HistoryContext.run { () throws(StoreError) in
            // One given in waking hours now over no longer holds: this takes its place (else the
            // next timer would send it again at once, moments after the carer said they saw it).
            try store.acknowledgeCarerAlert(person: watch.personID, lastDrink: watch.lastDrink, at: now,
                                            lapsed: watch.acknowledgementLapsed ? watch.acknowledgedAt : nil)
        }
        guard let alert, let acknowledgedAt = alert.alert.acknowledgedAt else { throw noAlert }
        var named = environment
        named.person = name
        let calendar = try named.context(creating: false).calendar
        let result = CarerAcknowledgement(person: name, acknowledgedAt: Format.localISO(acknowledgedAt, calendar), already: !alert.acknowledged)
        if json { return JSONOutput.encode(result) }
        return result.already ? "The alert about \(shown) was already acknowledged at \(result.acknowledgedAt.dropFirst(11).prefix(5))."
            : "Acknowledged the alert about \(shown)."
    }

    /// Seconds of waking hours between two instants, counted over at most `CarerReport.reach` days.
    static func wakingSeconds(from: Timestamp, until: Timestamp, _ settings: ReminderSettings, _ calendar: DayCalendar) -> Double {
        let start = max(from, until.adding(-Double(CarerReport.reach) * 86_400))
        guard start < until else { return 0 }
        var total = 0.0
        for (open, close) in settings.wakingWindows(around: calendar.day(of: start).number...calendar.day(of: until).number, calendar) {
            let overlap = min(close, until).secondsSince1970 - max(open, start).secondsSince1970
            if overlap > 0 { total += overlap }
        }
        return total
    }

    /// `quench person alert NAME 3h|off`: how long they may go without a drink in their
    /// waking hours before the carer's view flags them. `off` also acknowledges an alert still open about them.
    public static func setPersonAlert(_ environment: HistoryEnvironment, name: String, after: String, json: Bool) throws(HistoryError) -> String {
        let minutes: Int? = after.lowercased() == "off" ? nil
            : Int(saturating: try HistoryInput.option("after") { () throws(HistoryError) in try HistoryInput.minutes(after, within: Double(Person.alertAfterRange.lowerBound)...Double(Person.alertAfterRange.upperBound)) }.rounded())
        let store = try environment.openStore(creating: false)
        var named = environment
        named.person = name
        let person = try named.selectedPerson(in: store, formerNames: false)
        // Watching no more answers an alert still open about them, in the same write: left, it asked to be
        // acknowledged on the carer's row and on their household card about a person nobody watches.
        let now = environment.now
        let open = minutes != nil ? nil : try carerWatches(named, only: person.id).0.first.flatMap { watch in
            watch.alert.flatMap { $0.acknowledgedAt == nil || watch.acknowledgementLapsed ? (watch, $0) : nil }
        }
        let answered = try HistoryContext.run { () throws(StoreError) in
            try store.setPersonAlert(id: person.id, afterMinutes: minutes, acknowledging: open.map { watch, _ in
                (watch.lastDrink, now, watch.acknowledgementLapsed ? watch.acknowledgedAt : nil)
            })
        }
        let calendar = try named.context(creating: false).calendar
        let sent = open.flatMap { answered ? Self.wallClock(Format.localISO($0.1.raisedAt, calendar), today: Format.localISO(now, calendar)) : nil }
        let text = minutes.map { "The carer's view flags \(person.name.shownSafely(limit: 40)) after \(Format.span(minutes: $0)) without a drink in their waking hours." }
            ?? "The carer's view no longer flags \(person.name.shownSafely(limit: 40))." + (sent.map { " The alert about them sent \($0) is acknowledged." } ?? "")
        return try personChanged(named, PersonChange(action: "alert", person: person.name, detail: minutes.map { String($0) },
                                                     acknowledgedAlert: sent.map { _ in Format.localISO(now, calendar) }),
                                 json: json, text: text)
    }
}

import Foundation
import QuenchCore
import QuenchStore
import QuenchTestSupport
import Testing
@testable import QuenchHistory

/// `quench carer`: time without a drink counted in each person's waking hours, a threshold each,
/// and the order a carer reads them in; on an injected clock.
@Suite struct CarerTests {
    /// 2026-11-24 00:00 UTC.
    static let midnight = 1_795_478_400.0
    static func at(_ hour: Double) -> Timestamp { Timestamp(secondsSince1970: midnight + hour * 3600) }

    static func environment(_ folder: TemporaryFolder, _ hour: Double) -> HistoryEnvironment {
        HistoryEnvironment(databasePath: folder.path + "/q.sqlite", now: at(hour), timeZone: LocalZone(identifier: "UTC")!)
    }

    @Test func aNightsSleepIsNotCountedAnAfternoonIs() throws {
        let settings = ReminderSettings.defaults  // 08:00-22:00
        let calendar = DayCalendar(timeZone: LocalZone(identifier: "UTC")!, dayStartHour: 4)
        func minutes(_ from: Double, _ until: Double) -> Double { History.wakingSeconds(from: Self.at(from), until: Self.at(until), settings, calendar) / 60 }
        #expect(minutes(21.5, 24 + 9) == 90, "21:30 to 22:00, then 08:00 to 09:00")
        #expect(minutes(23, 24 + 7.5) == 0, "asleep throughout")
        #expect(minutes(10, 15) == 300)
        #expect(minutes(10, 24 * 3 + 10) == 3 * 14 * 60, "three waking days")
        #expect(minutes(15, 10) == 0, "a drink after now counts nothing")
        // Counted over at most `reach` days: the figure stops growing, it does not run on forever.
        #expect(minutes(-24 * 400, 12) <= Double(CarerReport.reach + 1) * 14 * 60)
    }

    /// A night shift: awake 20:00-08:00. The carer counts those hours and no others, across midnight
    /// and across the hour the household's days begin (04:00). While the person's days begin at
    /// 04:00 too, the reminders say their pace starts again then, and how to mend it; with days of
    /// their own from 14:00, today, the reminders, the page's state and the carer agree on one day.
    @Test func aNightShiftsWindowRunsPastMidnightAndTheirDaysBeginWhileTheySleep() throws {
        let folder = try TemporaryFolder()
        let store = try IntakeStore(path: folder.path + "/q.sqlite")
        let me = try #require(try store.person(named: "me"))
        _ = try History.setReminders(Self.environment(folder, 12), mode: nil, window: "20-8", after: nil, every: nil, slack: nil, json: true)
        let settings = try store.reminder(person: me.id).settings
        #expect(settings.wakingHours == "20:00-08:00")
        let calendar = DayCalendar(timeZone: LocalZone(identifier: "UTC")!, dayStartHour: 4)
        func minutes(_ from: Double, _ until: Double) -> Double { History.wakingSeconds(from: Self.at(from), until: Self.at(until), settings, calendar) / 60 }
        #expect(minutes(22, 24 + 3) == 300, "22:00 to 03:00, across midnight")
        #expect(minutes(24 + 3, 24 + 6) == 180, "03:00 to 06:00, across the day's start at 04:00")
        #expect(minutes(24 + 7, 24 + 21) == 120, "07:00 to 08:00, asleep, then 20:00 to 21:00")
        #expect(minutes(24 + 9, 24 + 19) == 0, "asleep all day")

        _ = try store.addManual(ml: 400, at: Self.at(21), note: nil, identity: "evening", person: me.id)
        _ = try store.addManual(ml: 300, at: Self.at(24 + 2), note: nil, identity: "night", person: me.id)
        for (hour, awake, quiet) in [(24 + 3.0, true, 60), (24 + 5.0, true, 180), (24 + 12.0, false, 360), (24 + 21.0, true, 420)] {
            let entry = try #require(try History.carerReport(Self.environment(folder, hour)).people.first)
            #expect(entry.awake == awake && entry.quietMinutes == quiet, "\(hour - 24) h: \(entry)")
        }
        let split = try History.remind(Self.environment(folder, 24 + 5), json: false)
        #expect(split.contains("Note       the waking window 20:00-08:00 spans 04:00, when me's days begin, so the pace starts again at 04:00: "
                               + "`quench person day-start me 14` begins them while asleep"), "\(split)")
        // Until then their day from 04:00 holds the window's morning and its evening: at 05:00 one hour of
        // its twelve has passed, and the night's drinks were yesterday's. Reminded still, not left silent.
        let dawn = try History.reminderReport(try Self.environment(folder, 24 + 5).context(creating: false)).0
        #expect(dawn.intakeMl == 0 && abs(dawn.paceMl - 2000.0 / 12) < 0.01 && dawn.due, "\(dawn)")
        let day = try History.reminderReport(try Self.environment(folder, 24 + 9).context(creating: false)).0
        #expect(!day.due && day.nextAt == "2026-11-25T20:00:00+00:00" && day.reason == "the waking window opens again at 20:00", "asleep: \(day)")
        #expect(abs(day.paceMl - 2000.0 * 4 / 12) < 0.01, "the morning's 4 h counted, the sleep not: \(day)")

        // Their days from 14:00: at 05:00 the night's 700 mL is today's everywhere, against 9 h of the 12 h window.
        let said = try History.setPersonDayStart(Self.environment(folder, 24 + 5), name: "ME", hour: "14:00", json: false)
        #expect(said.hasPrefix("me's days now begin at 14:00.\n") && said.contains("Day starts") && said.hasSuffix("14:00"), "\(said)")
        #expect(try store.person(id: me.id)?.dayStartHour == 14)
        let c = try Self.environment(folder, 24 + 5).context(creating: false)
        let (reminder, _) = try History.reminderReport(c)
        let state = try History.personState(c)
        let today = try History.todayReport(c)
        let carer = try #require(try History.carerReport(Self.environment(folder, 24 + 5)).people.first)
        #expect(today.intakeMl == 700 && reminder.intakeMl == 700 && state.intakeMl == 700 && carer.intakeMl == 700)
        #expect(abs(reminder.paceMl - 2000 * 9 / 12) < 0.01 && reminder.behind && state.behind && reminder.note == nil, "\(reminder)")
        // From 08:00 asleep: the window has closed, and no reminder is said to be due at a time past.
        // The state's pace is then the goal itself, not the goal to 10 mL (1,892.7 mL read 63.9 of a 64.0 fl oz goal).
        _ = try History.setGoal(Self.environment(folder, 24 + 9), amount: "64oz", from: nil, json: false)
        let closed = try History.personState(try Self.environment(folder, 24 + 9).context(creating: false))
        #expect(abs(closed.paceMl - closed.goalMl) < 1e-9 && abs(closed.goalMl - 1892.7) < 0.1, "\(closed.paceMl) of \(closed.goalMl)")
        let morning = try History.reminderReport(try Self.environment(folder, 24 + 9).context(creating: false)).0
        #expect(!morning.due && morning.nextAt == nil && morning.reason == "the waking window closed at 08:00", "\(morning)")
        // Their next day began at 14:00: at 21:00 nothing drunk yet, and a reminder due.
        let evening = try History.reminderReport(try Self.environment(folder, 24 + 21).context(creating: false)).0
        #expect(evening.intakeMl == 0 && evening.due, "\(evening)")
        // The household's days, and everyone else's, still begin at 04:00.
        #expect(try History.settings(Self.environment(folder, 24 + 21), units: nil, dayStart: nil, timeZone: nil, json: false).contains("Day starts  04:00"))

        #expect(throws: HistoryError.self) { try History.setPersonDayStart(Self.environment(folder, 12), name: "me", hour: "24", json: false) }
        #expect(throws: HistoryError.self) { try History.setPersonDayStart(Self.environment(folder, 12), name: "me", hour: "2pm", json: false) }
        _ = try History.setPersonDayStart(Self.environment(folder, 12), name: "me", hour: "household", json: true)
        #expect(try store.person(id: me.id)?.dayStartHour == nil)
        // The command it suggests is one a shell takes, whatever the name.
        #expect(settings.dayStartNote(calendar, person: "Ann O'Neil")?.hasSuffix("`quench person day-start 'Ann O'\\''Neil' 14` begins them while asleep") == true)
    }

    /// A window that opens before the day begins (03:00, days from 04:00), and all day: each day's
    /// pace runs over the waking hours inside that day.
    @Test func aWindowThatOpensBeforeTheDayBeginsIsThatDays() throws {
        let folder = try TemporaryFolder()
        let store = try IntakeStore(path: folder.path + "/q.sqlite")
        let me = try #require(try store.person(named: "me"))
        _ = try store.addManual(ml: 500, at: Self.at(3.5), note: nil, identity: "early", person: me.id)
        _ = try History.setReminders(Self.environment(folder, 1), mode: nil, window: "3-21", after: nil, every: nil, slack: nil, json: true)
        let calendar = DayCalendar(timeZone: LocalZone(identifier: "UTC")!, dayStartHour: 4)
        let settings = try store.reminder(person: me.id).settings
        #expect(settings.wakingWindow(containing: Self.at(3.5), calendar) != nil)
        #expect(settings.wakingWindow(containing: Self.at(22), calendar) == nil && settings.wakingWindow(containing: Self.at(2.5), calendar) == nil)
        // The day from 04:00 holds 04:00-21:00 and the next 03:00-04:00: at 12:00, 8 h of its 18; the
        // 03:30 drink was the day before's, as `today` says.
        let noon = try History.reminderReport(try Self.environment(folder, 12).context(creating: false)).0
        #expect(abs(noon.paceMl - 2000.0 * 8 / 18) < 0.01 && noon.intakeMl == 0 && noon.note != nil, "\(noon)")
        _ = try History.setReminders(Self.environment(folder, 12), mode: nil, window: "0-24", after: nil, every: nil, slack: nil, json: true)
        let allDay = try History.reminderReport(try Self.environment(folder, 10).context(creating: false)).0
        #expect(abs(allDay.paceMl - 2000 * 6 / 24) < 0.01 && allDay.note == nil, "from 04:00, not midnight: \(allDay)")
        #expect(try store.reminder(person: me.id).settings.wakingWindow(containing: Self.at(3.9), calendar) != nil)
    }

    /// After the window closes, the next reminder is not said to be due at a time already past.
    @Test func afterTheWindowClosesNoReminderIsDueInThePast() throws {
        let folder = try TemporaryFolder()
        let store = try IntakeStore(path: folder.path + "/q.sqlite")
        let me = try #require(try store.person(named: "me"))
        _ = try store.addManual(ml: 300, at: Self.at(10), note: nil, identity: "morning", person: me.id)
        for hour: Double in [23, 24 + 2] {
            let report = try History.reminderReport(try Self.environment(folder, hour).context(creating: false)).0
            #expect(!report.due && report.nextAt == nil && report.reason.hasPrefix("the waking window closed at ") && report.reason.hasSuffix("22:00"), "\(hour): \(report)")
            #expect(report.intakeMl == 300, "still the day of the 24th")
        }
    }

    @Test func overTheirThresholdFirstThenTheLongestWithoutADrink() throws {
        let folder = try TemporaryFolder()
        let store = try IntakeStore(path: folder.path + "/q.sqlite")
        let gran = try store.addPerson(name: "Gran")
        let ben = try store.addPerson(name: "Ben")
        let me = try #require(try store.person(named: "me"))
        _ = try store.addManual(ml: 200, at: Self.at(9), note: nil, identity: "gran", person: gran.id)
        _ = try store.addManual(ml: 300, at: Self.at(8.5), note: nil, identity: "ben", person: ben.id)
        _ = try store.addManual(ml: 250, at: Self.at(13), note: nil, identity: "me", person: me.id)
        try store.setPersonAlert(id: gran.id, afterMinutes: 180)

        // 14:00: Gran 5 h (over her 3 h), Ben 5 h 30 min (not watched), me 1 h.
        let report = try History.carerReport(Self.environment(folder, 14))
        #expect(report.people.map(\.person) == ["Gran", "Ben", "me"])
        #expect(report.people.map(\.quietMinutes) == [300, 330, 60])
        #expect(report.people.map(\.overdue) == [true, false, false] && report.overdue == 1)
        #expect(report.people[0].alertAfterMinutes == 180 && report.people[0].awake && report.people[0].lastDrinkAt == "2026-11-24T09:00:00+00:00")
        let text = try History.carer(Self.environment(folder, 14), json: false)
        #expect(text.contains("5 h (over)") && text.hasSuffix("1 person is over their threshold."), "\(text)")
        // The carer's view is everyone's: a person a shell names (QUENCH_PERSON), even one nobody is called, is not looked up.
        for name in ["ghost", "Ben"] {
            var shell = Self.environment(folder, 14)
            shell.person = name
            shell.personNamedIn = "$QUENCH_PERSON"
            #expect(try History.carer(shell, json: false) == text, "QUENCH_PERSON=\(name)")
        }
        #expect(report.notWatched.isEmpty, "a household's carer chose whom to watch")
        // At a hub (a gateway's change applied), whoever drinks and is not watched is said: a resident added at
        // a gateway comes without a threshold, and no alert would ever be sent about them (a carer trial).
        _ = try store.applyGatewayChanges([GatewayChange(databaseID: "0123456789abcdef", node: "east", seq: 1, identity: "east|tea",
                                                         event: IntakeEvent(identity: "east|tea", kind: .sip, ml: 100, time: Self.at(6),
                                                                            source: .manual, recordedAt: Self.at(6), person: "Ben"))], at: Self.at(6))
        let atHub = try History.carerReport(Self.environment(folder, 14))
        #expect(atHub.notWatched == ["Ben", "me"], "\(atHub.notWatched)")
        let hubText = try History.carer(Self.environment(folder, 14), json: false)
        #expect(hubText.hasSuffix("\n1 person is over their threshold.\nNo alert is set for Ben, me: `quench person alert NAME 3h` sets one."), "\(hubText)")
        // Rounded once, as `today` rounds it: 250.48 mL is 250 (it read 251, rounded to 250.5 first).
        _ = try store.addManual(ml: 0.48, at: Self.at(13), note: nil, identity: "me-drop", person: me.id)
        let mine = try History.carer(Self.environment(folder, 14), json: false)
        #expect(mine.contains("250 mL of 2,000 mL") && !mine.contains("251 mL"), "\(mine)")

        // Ben watched after 15 minutes: over too, and first (longer without a drink).
        try store.setPersonAlert(id: ben.id, afterMinutes: 15)
        let both = try History.carerReport(Self.environment(folder, 14))
        #expect(both.people.map(\.person) == ["Ben", "Gran", "me"] && both.overdue == 2 && both.notWatched == ["me"])
        // At 23:00 nobody is awake, and the evening still counts to 22:00; nobody is "over" in the night.
        let night = try History.carerReport(Self.environment(folder, 23))
        #expect(night.people.allSatisfy { !$0.awake } && night.people.first { $0.person == "me" }?.quietMinutes == 9 * 60)
        #expect(night.overdue == 0 && night.people.allSatisfy { !$0.overdue })

        // Someone watched with no drink at all counts from their adding: not over the moment they are
        // added and watched, over once the threshold has passed since. The threshold is bounded, in words.
        let ann = try store.addPerson(name: "Ann", at: Self.at(13.5))
        _ = try History.setPersonAlert(Self.environment(folder, 13.5), name: "Ann", after: "1h", json: true)
        let justAdded = try #require(try History.carerReport(Self.environment(folder, 14)).people.first { $0.person == "Ann" })
        #expect(justAdded.quietMinutes == 30 && !justAdded.overdue && justAdded.lastDrinkAt == nil)
        #expect(justAdded.noDrinkSince == "2026-11-24T13:30:00+00:00")
        let withAnn = try History.carerReport(Self.environment(folder, 14.5))
        #expect(withAnn.people.map(\.person) == ["Ben", "Gran", "Ann", "me"] && withAnn.overdue == 3, "overdue, then the longest first")
        #expect(withAnn.people[2].quietMinutes == 60 && withAnn.people[2].overdue)
        #expect(try History.carer(Self.environment(folder, 14.5), json: false).contains("1 h, none yet (over)"))
        #expect(try store.person(id: ann.id)?.alertAfterMinutes == 60)
        #expect(throws: HistoryError.self) { try History.setPersonAlert(Self.environment(folder, 14), name: "Ann", after: "10min", json: true) }
        #expect(throws: HistoryError.self) { try History.setPersonAlert(Self.environment(folder, 14), name: "Ann", after: "25h", json: true) }
        _ = try History.setPersonAlert(Self.environment(folder, 14), name: "Ann", after: "off", json: true)
        #expect(try store.person(id: ann.id)?.alertAfterMinutes == nil)
        // At the hub, someone with no drink at all (Ann now unwatched, a fresh hub's `me`) is not said; nor
        // someone there for two months with no threshold: the carers' choice, not said for good.
        let settled = try store.addPerson(name: "Älva", at: Self.at(14 - 60 * 24))
        _ = try store.addManual(ml: 100, at: Self.at(11), note: nil, identity: "alva", person: settled.id)
        let last = try History.carerReport(Self.environment(folder, 14))
        #expect(last.notWatched == ["me"] && last.people.contains { $0.person == "Älva" }, "\(last.notWatched)")
    }

    /// A history whose one person, `me`, drank 250 mL at `hour` on the 24th and is watched after 3 h.
    static func watchedAfterADrink(at hour: Double) throws -> TemporaryFolder {
        let folder = try TemporaryFolder()
        let store = try IntakeStore(path: folder.path + "/q.sqlite")
        let me = try #require(try store.person(named: "me"))
        _ = try store.addManual(ml: 250, at: at(hour), note: nil, identity: "drink at \(hour)", person: me.id)
        try store.setPersonAlert(id: me.id, afterMinutes: 180)
        return folder
    }

    /// Days without a drink are said in waking hours, not as "2 days 10 h" of them, which a carer
    /// reads as two days of the calendar when the last drink was four days ago.
    @Test func longWithoutADrinkIsSaidInWakingHoursNotDays() throws {
        let folder = try Self.watchedAfterADrink(at: 10)
        // `today`'s time since the last sip in whole seconds: 2 h less a quarter of a second is 7199, not 7199.75.
        let today = try History.todayReport(try Self.environment(folder, 12 - 0.25 / 3600).context(creating: false))
        #expect(today.lastSipAgoSeconds == 7199, "\(String(describing: today.lastSipAgoSeconds))")
        // 10:00 on the 24th to 12:00 on the 28th: 12 + 3 × 14 + 4 = 58 waking hours.
        let text = try History.carer(Self.environment(folder, 4 * 24 + 12), json: false)
        #expect(text.contains("58 h (over)") && !text.contains("days"), "\(text)")
        #expect(text.contains("2026-11-24 10:00"), "the last drink's date says when: \(text)")
        // Past the 30 days the figure is counted over, it says so, not "420 h" of a drink months ago.
        let months = try History.carer(Self.environment(folder, 200 * 24 + 12), json: false)
        #expect(months.contains("over 30 days (over)") && !months.contains("420 h"), "\(months)")
        #expect(try History.carerReport(Self.environment(folder, 200 * 24 + 12)).people.first?.quietBeyondReach == true)
        #expect(try History.carerReport(Self.environment(folder, 4 * 24 + 12)).people.first?.quietBeyondReach == false)
        // The alert says so too (it said "for 420 h of their waking hours" of a drink 200 days ago).
        let sent = try History.deliverCarerAlerts(Self.environment(folder, 200 * 24 + 12))
        #expect(sent.count == 1 && sent[0].message.hasPrefix("me has had nothing to drink for over 30 days (last drink 2026-11-24 10:00"),
                "\(sent.map(\.message))")
    }

    /// At night nobody is over (waking hours 08:00-22:00), yet the day's alert is still open: said so,
    /// not "Nobody is over their threshold." above "Alert about me … not acknowledged.".
    @Test func atNightAnOpenAlertIsNotContradicted() throws {
        let folder = try Self.watchedAfterADrink(at: 9)
        #expect(try History.deliverCarerAlerts(Self.environment(folder, 13)).count == 1)
        let day = try History.carer(Self.environment(folder, 14), json: false)
        #expect(day.contains("1 person is over their threshold."), "\(day)")
        let night = try History.carer(Self.environment(folder, 23), json: false)
        #expect(night.contains("Nobody is over their threshold now: it counts in waking hours, and me is outside theirs (the alert below is still open).")
                && night.contains("Alert about me sent 13:00; not acknowledged."), "\(night)")
    }

    /// A history with `name` alone, who drank 200 mL at 09:00 (identity `name-9`, lower-cased) and is flagged after
    /// 3 h without a drink; and the carer's timer's run at an hour of the test's clock.
    static func watched(_ name: String) throws
        -> (folder: TemporaryFolder, store: IntakeStore, person: Person, deliver: (Double) throws -> [History.CarerDelivery]) {
        let folder = try TemporaryFolder()
        let store = try IntakeStore(path: folder.path + "/q.sqlite")
        let person = try store.addPerson(name: name)
        _ = try store.addManual(ml: 200, at: Self.at(9), note: nil, identity: name.lowercased() + "-9", person: person.id)
        try store.setPersonAlert(id: person.id, afterMinutes: 180)
        return (folder, store, person, { hour in try History.deliverCarerAlerts(Self.environment(folder, hour)) })
    }

    @Test("an alert nobody acknowledges is sent again each time the threshold passes once more, once each; acknowledged, it stops until their next waking hours")
    func anUnacknowledgedAlertIsSentAgain() throws {
        let (folder, store, gran, deliver) = try Self.watched("Gran")

        #expect(try deliver(12.5).first?.fields["sends"] == "1")
        #expect(try deliver(14.9).isEmpty)
        // 15:00: six hours, twice her three, and nobody has said they saw it: told again, once.
        let again = try deliver(15)
        #expect(again.map(\.person) == ["Gran"] && again.first?.fields["sends"] == "2", "\(again)")
        #expect(again.first?.message == "Gran has still had nothing to drink for 6 h of their waking hours (last drink 09:00; alert after 3 h; not acknowledged)",
                "\(again)")
        #expect(try deliver(15.1).isEmpty && deliver(17.9).isEmpty)
        // Two timers on one file: the second finds that sending claimed.
        #expect(try !store.sendCarerAlertAgain(person: gran.id, lastDrink: "gran-9", after: 1, for: 2, at: Self.at(15.2)))
        // The carer's view says when it was first sent and when again.
        let shownAgain = try History.carerReport(Self.environment(folder, 15.2)).people.first
        #expect(shownAgain?.alertSentAt == "2026-11-24T12:30:00+00:00" && shownAgain?.alertLastSentAt == "2026-11-24T15:00:00+00:00", "\(String(describing: shownAgain))")
        // A timer that did not run for hours: one message for the thresholds passed (four by 21:30), not three.
        let late = try deliver(21.5)
        #expect(late.count == 1 && late.first?.fields["sends"] == "4", "\(late)")
        #expect(try deliver(21.6).isEmpty)
        let shownLate = try History.carerReport(Self.environment(folder, 21.6)).people.first
        #expect(shownLate?.alertSends == 4 && shownLate?.alertLastSentAt == "2026-11-24T21:30:00+00:00")
        // Acknowledged: not sent again in those waking hours, nor in the night.
        #expect(try History.carer(Self.environment(folder, 21.65), json: false).hasSuffix("Alert about Gran sent 12:30, again 21:30; not acknowledged."))
        _ = try History.acknowledgeCarerAlert(Self.environment(folder, 21.7), name: "Gran", json: false)
        let seen = try History.carer(Self.environment(folder, 21.8), json: false)
        #expect(seen.hasSuffix("Alert about Gran sent 12:30, again 21:30; acknowledged 21:42."), "the table's reader sees it took: \(seen)")
        #expect(try deliver(21.9).isEmpty && deliver(24 + 7.9).isEmpty)
        #expect(try !store.sendCarerAlertAgain(person: gran.id, lastDrink: "gran-9", after: 4, for: 5, at: Self.at(24 + 7.9)), "acknowledged: nothing to claim")
        // Still nothing when her next waking hours begin: yesterday's acknowledgement does not hide a dry
        // night into a new day. Told again, once, and it waits for a new acknowledgement.
        let morning = try deliver(24 + 8.5)
        #expect(morning.map(\.message) == ["Gran has still had nothing to drink for 13 h 30 min of their waking hours (last drink 2026-11-24 09:00; "
                                            + "alert after 3 h; acknowledged 2026-11-24 21:42, before these waking hours)"], "\(morning)")
        #expect(try deliver(24 + 8.6).isEmpty, "claimed once")
        #expect(try History.carerReport(Self.environment(folder, 24 + 8.6)).people.first { $0.person == "Gran" }?.alertAcknowledgedAt == nil)
        #expect(try !store.reopenCarerAlert(person: gran.id, lastDrink: "gran-9", acknowledged: Self.at(21.7), sends: 4, at: Self.at(24 + 8.7)),
                "a second timer finds it claimed")
        _ = try History.acknowledgeCarerAlert(Self.environment(folder, 24 + 9), name: "Gran", json: false)
        #expect(try deliver(24 + 11).isEmpty, "acknowledged again in these waking hours")
        #expect(try deliver(48 + 8.5).count == 1, "the next morning, still nothing: told again")
        // Seen at night (23:00, asleep): it holds for the waking hours that follow, not past them.
        #expect(try History.acknowledgeCarerAlert(Self.environment(folder, 48 + 23), name: "Gran", json: false) == "Acknowledged the alert about Gran.")
        #expect(try deliver(72 + 9).isEmpty && deliver(72 + 21.9).isEmpty, "23:00's holds through the next day's waking hours")
        #expect(try deliver(96 + 8.5).count == 1)
        // Pressed when new waking hours had begun, before a timer ran: it takes the lapsed one's place, and no push follows.
        _ = try History.acknowledgeCarerAlert(Self.environment(folder, 96 + 9), name: "Gran", json: false)
        #expect(try History.acknowledgeCarerAlert(Self.environment(folder, 120 + 8.02), name: "Gran", json: false) == "Acknowledged the alert about Gran.")
        #expect(try deliver(120 + 8.1).isEmpty)
        #expect(try History.acknowledgeCarerAlert(Self.environment(folder, 120 + 9), name: "Gran", json: false)
                == "The alert about Gran was already acknowledged at 08:01.")

        // A threshold set (or a timer started) long into a spell: the first alert counts the
        // thresholds already passed, and the next run does not send it again at once.
        let ben = try store.addPerson(name: "Ben")
        _ = try store.addManual(ml: 300, at: Self.at(24 + 8), note: nil, identity: "ben-32", person: ben.id)
        try store.setPersonAlert(id: ben.id, afterMinutes: 60)
        let first = try deliver(24 + 11.5)
        #expect(first.map(\.person) == ["Ben"] && first.first?.fields["sends"] == "3", "\(first)")
        #expect(first.first?.message.hasPrefix("Ben has had nothing to drink for 3 h 30 min") == true, "the first is not \"still\": \(first)")
        #expect(try deliver(24 + 11.6).isEmpty && deliver(24 + 11.9).isEmpty)
        #expect(try deliver(24 + 12).first?.fields["sends"] == "4")
    }

    /// An alert nobody acknowledged, the spell going on into the next waking hours: told when they begin, as an acknowledged
    /// one is. (The morning shift heard of the resident already seen to, and not of the one nobody had seen, 17 h without a
    /// drink, until the next multiple of the threshold: a carer trial.) Not counted as a threshold: the repeats go on.
    @Test func anUnacknowledgedAlertIsToldAgainWhenTheNextWakingHoursBegin() throws {
        let (folder, store, _, deliver) = try Self.watched("Bob")
        #expect(try deliver(12.5).first?.fields["sends"] == "1")
        #expect(try deliver(21.5).first?.fields["sends"] == "4")
        #expect(try deliver(24 + 7.9).isEmpty, "asleep")
        let morning = try deliver(24 + 8.5)
        #expect(morning.map(\.message) == ["Bob has still had nothing to drink for 13 h 30 min of their waking hours (last drink 2026-11-24 09:00; "
                                            + "alert after 3 h; not acknowledged)"], "\(morning)")
        #expect(morning.first?.fields["sends"] == "4", "not counted as a threshold")
        #expect(try deliver(24 + 8.6).isEmpty && deliver(24 + 9.9).isEmpty, "claimed once")
        #expect(try deliver(24 + 10).first?.fields["sends"] == "5", "the repeats go on at each threshold: 15 h")

        // Waking hours of the whole day have no morning: an alert raised just before the day start (04:00) is not
        // told again two minutes later (a review: it was, every night of a dry spell).
        let ada = try store.addPerson(name: "Ada")
        _ = try store.addManual(ml: 200, at: Self.at(48 + 0.9), note: nil, identity: "ada-0", person: ada.id)
        try store.setPersonAlert(id: ada.id, afterMinutes: 180)
        var awake = Self.environment(folder, 48 + 1)
        awake.person = "Ada"
        _ = try History.setReminders(awake, mode: nil, window: "0-24", after: nil, every: nil, slack: nil, json: true)
        #expect(try deliver(48 + 3.97).filter { $0.person == "Ada" }.first?.fields["sends"] == "1")
        #expect(try deliver(48 + 4.05).filter { $0.person == "Ada" }.isEmpty, "the day start is no new waking hours")
        #expect(try deliver(48 + 6.95).filter { $0.person == "Ada" }.first?.fields["sends"] == "2")
    }

    @Test("a carer's alert: once a spell without a drink, not in the night, acknowledged once; a drink ends the spell, and the next one alerts again")
    func alertsOnceASpellAcknowledgedOnce() throws {
        let folder = try TemporaryFolder()
        let store = try IntakeStore(path: folder.path + "/q.sqlite")
        let gran = try store.addPerson(name: "Gran")
        let ben = try store.addPerson(name: "Ben")
        _ = try store.addManual(ml: 200, at: Self.at(9), note: nil, identity: "gran-9", person: gran.id)
        _ = try store.addManual(ml: 300, at: Self.at(9), note: nil, identity: "ben-9", person: ben.id)
        try store.setPersonAlert(id: gran.id, afterMinutes: 180)
        func deliver(_ hour: Double) throws -> [History.CarerDelivery] { try History.deliverCarerAlerts(Self.environment(folder, hour)) }

        // 11:00: two hours, under her three: nothing. Ben is not watched: never.
        #expect(try deliver(11).isEmpty)
        #expect(throws: HistoryError.self) { try History.acknowledgeCarerAlert(Self.environment(folder, 11), name: "Gran", json: false) }
        // 12:30: over. One alert, saying how long and since when; the next runs (every five minutes) send none.
        let first = try deliver(12.5)
        #expect(first.map(\.person) == ["Gran"])
        #expect(first.first?.message == "Gran has had nothing to drink for 3 h 30 min of their waking hours (last drink 09:00; alert after 3 h)",
                "\(first)")
        #expect(first.first?.fields["quiet_minutes"] == "210" && first.first?.fields["alert_after_minutes"] == "180")
        #expect(try deliver(12.6).isEmpty && deliver(14.9).isEmpty, "under twice her threshold")
        let shown = try History.carerReport(Self.environment(folder, 13)).people.first { $0.person == "Gran" }
        #expect(shown?.alertSentAt == "2026-11-24T12:30:00+00:00" && shown?.alertAcknowledgedAt == nil)

        // Acknowledged at 13:00, once: a second acknowledgement says when the first was.
        #expect(try History.acknowledgeCarerAlert(Self.environment(folder, 13), name: "Gran", json: false) == "Acknowledged the alert about Gran.")
        // Named in any case, as everywhere: the person's own name in the answer.
        #expect(try History.acknowledgeCarerAlert(Self.environment(folder, 13.5), name: "gRAN", json: false)
                == "The alert about Gran was already acknowledged at 13:00.")
        #expect(try History.carerReport(Self.environment(folder, 14)).people.first { $0.person == "Gran" }?.alertAcknowledgedAt == "2026-11-24T13:00:00+00:00")
        #expect(try deliver(16).isEmpty, "an acknowledged spell is not sent again")
        #expect(throws: HistoryError.self) { try History.acknowledgeCarerAlert(Self.environment(folder, 13), name: "Nobody", json: false) }

        // She drinks at 20:00: the spell is over, and the page shows no alert. The next runs into the
        // night, which does not count: two hours to 22:00, then from 08:00 on; her three hours are up at 09:00.
        _ = try store.addManual(ml: 150, at: Self.at(20), note: nil, identity: "gran-20", person: gran.id)
        #expect(try History.carerReport(Self.environment(folder, 20.5)).people.first { $0.person == "Gran" }?.alertSentAt == nil)
        #expect(try deliver(23).isEmpty && deliver(24 + 7).isEmpty && deliver(24 + 8.5).isEmpty, "asleep, then 2 h 30 min awake")
        let next = try deliver(24 + 9.5)
        #expect(next.map(\.person) == ["Gran"] && next.first?.fields["quiet_minutes"] == "210", "\(next)")
        #expect(next.first?.message.contains("(last drink 2026-11-24 20:00; alert after 3 h)") == true, "another day's drink has its date: \(next)")
        #expect(try History.carerReport(Self.environment(folder, 24 + 10)).people.first { $0.person == "Gran" }?.alertAcknowledgedAt == nil,
                "a new spell's alert waits for its own acknowledgement")
        // Watched no more: the alert still open is answered, not left asking on her row and card.
        let off = try History.setPersonAlert(Self.environment(folder, 24 + 10.5), name: "Gran", after: "off", json: false)
        #expect(off.contains("The carer's view no longer flags Gran. The alert about them sent 09:30 is acknowledged."), "\(off)")
        #expect(try History.carerReport(Self.environment(folder, 24 + 11)).people.first { $0.person == "Gran" }?.alertAcknowledgedAt
                == "2026-11-25T10:30:00+00:00")
        var hers = Self.environment(folder, 24 + 11)
        hers.person = "Gran"
        #expect(try History.personState(try hers.context(creating: false)).carerAlertOpen == false)
        let again = try History.setPersonAlert(Self.environment(folder, 24 + 11), name: "Gran", after: "off", json: false)
        #expect(!again.contains("acknowledged"), "nothing open, nothing said: \(again)")
    }

    /// Someone added and watched with nothing recorded: the time counts from their adding, and the alert says so.
    @Test func noDrinkRecordedCountsFromTheirAdding() throws {
        let folder = try TemporaryFolder()
        let store = try IntakeStore(path: folder.path + "/q.sqlite")
        let ann = try store.addPerson(name: "Ann", at: Self.at(9))
        try store.setPersonAlert(id: ann.id, afterMinutes: 60)
        #expect(try History.deliverCarerAlerts(Self.environment(folder, 9.5)).isEmpty, "half an hour after being added")
        let sent = try History.deliverCarerAlerts(Self.environment(folder, 10.5))
        #expect(sent.map(\.message) == ["Ann has had nothing to drink for 1 h 30 min of their waking hours "
                                        + "(none recorded since they were added 09:00; alert after 1 h)"], "\(sent)")
        #expect(sent.first?.fields["quiet_minutes"] == "90" && sent.first?.fields["last_drink_at"] == nil)
    }
}

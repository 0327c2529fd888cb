import Foundation
import QuenchCore
import QuenchTestSupport
import QuenchStore
import Testing
@testable import QuenchHistory

/// The reminder policy over scripted days, minute by minute, on an injected clock.
@Suite struct ReminderPolicyTests {
    /// 2026-11-24 00:00 UTC; the window is 08:00-22:00 that day.
    static let midnight = 1_795_478_400.0
    static func at(_ hour: Double) -> Timestamp { Timestamp(secondsSince1970: midnight + hour * 3600) }

    struct Day {
        var settings = ReminderSettings.defaults
        var goal = 2000.0
        var sips: [(hour: Double, ml: Double)] = []
        var snoozedUntil: Timestamp?

        /// Steps a minute at a time from 05:00 to 23:59, delivering each due reminder; returns their hours.
        func reminders() -> [Double] {
            var lastReminder: Timestamp?
            var out: [Double] = []
            for minute in (5 * 60)..<(24 * 60) {
                let hour = Double(minute) / 60
                let drunk = sips.filter { $0.hour <= hour }
                let situation = ReminderPolicy.Situation(
                    now: ReminderPolicyTests.at(hour), windowStart: ReminderPolicyTests.at(8), windowEnd: ReminderPolicyTests.at(22),
                    intakeML: drunk.reduce(0) { $0 + $1.ml }, goalML: goal,
                    lastDrink: drunk.last.map { ReminderPolicyTests.at($0.hour) }, lastReminder: lastReminder, snoozedUntil: snoozedUntil)
                let verdict = ReminderPolicy.judge(situation, settings) { "\($0.secondsSince1970)" }
                if verdict.due {
                    out.append(hour)
                    lastReminder = situation.now
                }
            }
            return out
        }
    }

    @Test func someoneWhoSipsSteadilyIsNeverReminded() {
        // 75 mL every half hour from 08:00 to 21:30: on pace all day (2,100 mL).
        let day = Day(sips: stride(from: 8.0, through: 21.5, by: 0.5).map { ($0, 75) })
        #expect(day.reminders().isEmpty)
    }

    @Test func someoneWhoStopsIsRemindedOnceThenEveryM() {
        // On pace until noon, then nothing: behind by more than 150 mL from about 13:15, the last drink at 12:00.
        let day = Day(sips: stride(from: 8.0, through: 12.0, by: 0.5).map { ($0, 75) })
        let times = day.reminders()
        let first = try! #require(times.first)
        #expect(first >= 13 && first < 14, "first reminder at \(first)")
        // Then every 60 minutes, and nothing after the window closes at 22:00.
        for (a, b) in zip(times, times.dropFirst()) { #expect(abs(b - a - 1) < 0.001, "\(times)") }
        #expect(times.allSatisfy { $0 >= 8 && $0 < 22 }, "\(times)")
        #expect(times.count == Int((22 - first).rounded(.up)), "\(times)")
    }

    @Test func aDrinkPushesTheNextReminderBack() {
        // Stops at noon, then drinks a little at 14:30: no reminder before 15:30.
        var day = Day(sips: stride(from: 8.0, through: 12.0, by: 0.5).map { ($0, 75) })
        day.sips.append((14.5, 50))
        let times = day.reminders()
        #expect(times.contains { $0 < 14.5 }, "\(times)")
        #expect(!times.contains { $0 > 14.5 && $0 < 15.5 }, "\(times)")
        #expect(times.contains { $0 >= 15.5 }, "\(times)")
    }

    @Test func neverOnceTheGoalIsMetNorOutsideTheWindowNorWhileSnoozed() {
        #expect(Day(sips: [(9, 2000)]).reminders().isEmpty)
        // Nothing drunk all day: reminders only inside the window.
        let idle = Day().reminders()
        #expect(!idle.isEmpty && idle.allSatisfy { $0 >= 8 && $0 < 22 }, "\(idle)")
        // Snoozed until 18:00: the first comes then.
        var snoozed = Day()
        snoozed.snoozedUntil = Self.at(18)
        #expect(snoozed.reminders().first == 18)
        var off = Day()
        off.settings.mode = .off
        #expect(off.reminders().isEmpty)
    }

    /// A reminder sent while the clock ran ahead (a Pi without a real-time clock) is stamped in the future:
    /// it held every later reminder back until then ("not before … after the last reminder, at 2026-12-02 16:20").
    @Test func aReminderStampedAfterNowHoldsNothingBack() {
        let s = ReminderPolicy.Situation(now: Self.at(15), windowStart: Self.at(8), windowEnd: Self.at(22), intakeML: 250, goalML: 2000,
                                         lastDrink: Self.at(9), lastReminder: Self.at(24 * 2 + 16), snoozedUntil: nil)
        let v = ReminderPolicy.judge(s, .defaults) { _ in "" }
        #expect(v.due && v.reason.hasPrefix("behind pace"), "\(v.reason)")
        // One stamped now, as ever, does.
        var sent = s
        sent.lastReminder = Self.at(14.75)
        #expect(!ReminderPolicy.judge(sent, .defaults) { _ in "" }.due)
    }

    @Test func hourlyModeRemindsEveryMWhateverTheIntake() {
        // 70 mL every half hour: 1,960 mL by 21:30, so the goal is never met.
        var day = Day(sips: stride(from: 8.0, through: 21.5, by: 0.5).map { ($0, 70) })
        day.settings.mode = .hourly
        day.settings.afterMinutes = 0
        #expect(day.reminders() == stride(from: 8.0, to: 22, by: 1).map { $0 })
    }

    @Test func theVerdictSaysWhyAndWhen() {
        let s = ReminderPolicy.Situation(now: Self.at(10), windowStart: Self.at(8), windowEnd: Self.at(22), intakeML: 250, goalML: 2000,
                                         lastDrink: Self.at(9.75), lastReminder: nil, snoozedUntil: nil)
        let v = ReminderPolicy.judge(s, .defaults) { t in "\(Int((t.secondsSince1970 - Self.midnight) / 60))min" }
        // Pace at 10:00 is 2/14 of 2,000 mL; behind from when the pace passes 400 mL: 08:00 + 400/2000 × 14 h = 10:48.
        #expect(abs(v.paceML - 285.714) < 0.01 && !v.behind && !v.due)
        #expect(v.nextAt == Self.at(8 + 0.2 * 14))
        #expect(v.reason == "when the pace passes 400 mL (intake + 150 mL slack)")
        // Met: said once, as `remind` ("Next  none today: the goal is met") and the page show it.
        var met = s
        met.intakeML = 2000
        let done = ReminderPolicy.judge(met, .defaults) { _ in "" }
        #expect(done.reason == "the goal is met" && done.nextAt == nil && !done.due)
        // Said in the person's unit.
        let ounces = ReminderPolicy.judge(s, .defaults, volume: { VolumeText.volume($0, .usFluidOunce) }) { _ in "" }
        #expect(ounces.reason == "when the pace passes 13.5 oz (intake + 5.1 oz slack)", "\(ounces.reason)")
        var late = s
        late.now = Self.at(15)
        let behind = ReminderPolicy.judge(late, .defaults, volume: { VolumeText.volume($0, .usFluidOunce) }) { _ in "09:45" }
        #expect(behind.due && behind.reason.hasPrefix("behind pace by 25.4 oz"), "\(behind.reason)")
    }
}

/// `quench remind --notify`: a reminder delivered when due, to the journal line and the command, then not again too soon.
@Suite struct ReminderDeliveryTests {
    static let midnight = 1_795_478_400.0
    static func at(_ hour: Double) -> Timestamp { Timestamp(secondsSince1970: midnight + hour * 3600) }

    func environment(_ folder: TemporaryFolder, _ hour: Double) -> HistoryEnvironment {
        HistoryEnvironment(databasePath: folder.path + "/q.sqlite", now: Self.at(hour), timeZone: LocalZone(identifier: "UTC")!)
    }

    @Test func deliveredWhenDueWithTheCommandThenNotBeforeEvery() throws {
        let folder = try TemporaryFolder()
        let store = try IntakeStore(path: folder.path + "/q.sqlite")
        _ = try store.addManual(ml: 300, at: Self.at(8), note: nil, identity: "morning")
        let out = folder.path + "/hook.txt"
        let hook = folder.path + "/hook.sh"
        try "#!/bin/sh\nenv | grep '^QUENCH_' | sort > \(out)\n".write(toFile: hook, atomically: true, encoding: .utf8)
        chmod(hook, 0o755)

        let first = try History.deliverReminder(environment(folder, 14), command: hook)
        #expect(first.delivered && first.hookProblem == nil, "\(first)")
        #expect(first.text.hasPrefix("reminder: drink something: 300 mL of 2,000 mL so far, pace 857 mL (behind pace by 557 mL; last drink"), "\(first.text)")
        let variables = try String(contentsOfFile: out, encoding: .utf8)
        #expect(variables.contains("QUENCH_INTAKE_ML=300\n") && variables.contains("QUENCH_GOAL_ML=2000\n")
                && variables.contains("QUENCH_PACE_ML=857\n") && variables.contains("QUENCH_BEHIND_ML=557\n")
                && variables.contains("QUENCH_PERSON=me\n"), "\(variables)")
        // Not again within the hour; again after it.
        #expect(!(try History.deliverReminder(environment(folder, 14.5), command: nil)).delivered)
        #expect(try History.deliverReminder(environment(folder, 15.01), command: nil).delivered)
        let status = try History.remind(environment(folder, 15.5), json: false)
        #expect(status.contains("Next       2026-11-24 16:00: 60 min after the last reminder, at 15:00"), "\(status)")
    }

    @Test func aCommandThatHangsIsStoppedAndSaid() throws {
        let folder = try TemporaryFolder()
        _ = try IntakeStore(path: folder.path + "/q.sqlite")
        let hook = folder.path + "/slow.sh"
        try "#!/bin/sh\nsleep 30\n".write(toFile: hook, atomically: true, encoding: .utf8)
        chmod(hook, 0o755)
        let start = ContinuousClock.now
        let delivery = try History.deliverReminder(environment(folder, 12), command: hook, timeout: 0.5)
        #expect(delivery.delivered)
        #expect(delivery.hookProblem?.contains("did not finish within") == true, "\(String(describing: delivery.hookProblem))")
        #expect(ContinuousClock.now - start < .seconds(5))
        let missing = try History.deliverReminder(environment(folder, 13.5), command: folder.path + "/nope")
        #expect(missing.hookProblem?.contains("cannot run") == true, "\(String(describing: missing.hookProblem))")
    }
}

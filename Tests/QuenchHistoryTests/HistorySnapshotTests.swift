import Foundation
import QuenchCore
import QuenchStore
import QuenchTestSupport
import Testing
@testable import QuenchHistory

/// The commands' text output for a fixed history, clock and zone.
@Suite struct HistorySnapshotTests {
    func check(_ actual: String, _ expected: String, _ name: String) {
        if actual != expected {
            try? actual.write(toFile: NSTemporaryDirectory() + "snapshot-\(name).txt", atomically: true, encoding: .utf8)
        }
        #expect(actual == expected, "snapshot \(name)")
    }

    @Test func today() throws {
        let f = try HistoryFixture()
        check(try History.today(f.environment(), json: false), Snapshots.today, "today")
        check(try History.today(f.environment(units: .usFluidOunce), json: false), Snapshots.todayOz, "today-oz")
    }

    @Test("today --date DAY sums that day's sips, its last sip the last before the day ended")
    func todayOfAnotherDay() throws {
        let f = try HistoryFixture()
        func report(_ date: String) throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(try History.today(f.environment(), date: date, json: true).utf8)) as? [String: Any])
        }
        let second = try report("2026-03-02")  // 1,050 and 1,000 from the scale, 330 added
        #expect(second["date"] as? String == "2026-03-02")
        #expect(second["intake_ml"] as? Double == 2380)
        #expect(second["sips"] as? Int == 3)
        #expect((second["last_sip_at"] as? String)?.hasPrefix("2026-03-02T21:00:00") == true, "\(second)")
        // Yesterday, the 3rd: its day runs to 04:00 on the 4th, so the 01:30 sip is its last.
        let third = try report("yesterday")
        #expect(third["date"] as? String == "2026-03-03")
        #expect(third["intake_ml"] as? Double == 2300)
        #expect((third["last_sip_at"] as? String)?.hasPrefix("2026-03-04T01:30:00") == true, "\(third)")
        #expect(try report("today")["intake_ml"] as? Double == 500)
        let text = try History.today(f.environment(), date: "2026-03-03", json: false)
        #expect(text.hasPrefix("Tuesday 3 March 2026 (day starts 04:00, Europe/London)\n"), "\(text)")
        #expect(throws: HistoryError.self) { try History.today(f.environment(), date: "0999-12-31", json: false) }
        #expect(throws: HistoryError.self) { try History.today(f.environment(), date: "2026-02-30", json: false) }
    }

    @Test func log() throws {
        let f = try HistoryFixture()
        check(try History.log(f.environment(), since: "2026-03-02", until: nil, device: nil, limit: 6,
                              includeDeleted: false, csv: false, json: false), Snapshots.log, "log")
        // All of it shown: nothing said of more.
        let whole = try History.log(f.environment(), since: "2026-03-02", until: nil, device: nil, limit: 100, includeDeleted: false, csv: false, json: false)
        #expect(!whole.contains("shown;") && whole.split(separator: "\n").count > 7, "\(whole)")
        // The next page starts after the ID the footer names, in every form: the rows after it in the whole log.
        // The ids of a table's, a CSV's or JSON lines' rows, in order.
        func ids(_ text: String) -> [Int] {
            text.split(separator: "\n").filter { !$0.contains("shown;") }.compactMap { line in
                let digits = line.contains("\"id\":") ? line.split(separator: "\"id\":")[1] : line.drop { $0 == " " }
                return Int(digits.prefix { $0.isNumber })
            }
        }
        let next = try History.log(f.environment(), since: "2026-03-02", until: nil, device: nil, limit: 2, before: 11,
                                   includeDeleted: false, csv: false, json: false)
        #expect(ids(next) == Array(ids(whole).drop { $0 != 11 }.dropFirst().prefix(2)) && ids(next).count == 2, "\(next)")
        for csv in [true, false] {
            var text = ""
            let last = try History.log(f.environment(), since: nil, until: nil, device: nil, limit: 3, before: 13,
                                       includeDeleted: false, csv: csv, json: !csv, to: &text)
            let all = try History.log(f.environment(), since: nil, until: nil, device: nil, limit: nil,
                                      includeDeleted: false, csv: csv, json: !csv)
            let page = Array(ids(all).drop { $0 != 13 }.dropFirst().prefix(3))
            #expect(ids(text) == page && page.count == 3, "\(text)")
            #expect(last.map(Int.init) == page.last)
        }
        #expect(throws: HistoryError.self) {
            try History.log(f.environment(), since: nil, until: nil, device: nil, limit: 3, before: 999, includeDeleted: false, csv: false, json: true)
        }
    }

    @Test func stats() throws {
        let f = try HistoryFixture()
        check(try History.stats(f.environment(), days: 7, json: false), Snapshots.statsWeek, "stats-week")
        // Back to 1970-01-01 and no further: "Last 30000 days (1944-10-08 to …)" was shown.
        let most = CivilDay(parsing: "2026-03-04")!.number + 1
        #expect(try History.stats(f.environment(), days: most, json: false).contains("(1970-01-01 to 2026-03-04)"))
        let error = #expect(throws: HistoryError.self) { try History.stats(f.environment(), days: most + 1, json: false) }
        #expect(error?.description == "--days \(most + 1) reaches back before 1970-01-01, where a history begins: at most \(Format.grouped(most)) from today")
    }

    @Test func calendar() throws {
        let f = try HistoryFixture()
        check(try History.calendar(f.environment(), month: "2026-02", json: false), Snapshots.calendarFebruary, "calendar")
        let colored = try History.calendar(f.environment(color: true), month: "2026-02", json: false)
        #expect(colored.contains("\u{1B}[32m26#"))
        #expect(colored.contains("\u{1B}[31m28-"))
        // Before the first sip (the 26th), days are blank: not days without a drink, and not counted.
        #expect(colored.contains("\u{1B}[2m 2 \u{1B}"))
        let march = try #require(try JSONSerialization.jsonObject(with: Data(try History.calendar(f.environment(), month: "2026-03", json: true).utf8)) as? [String: Any])
        let marks = (march["days"] as? [[String: Any]] ?? []).compactMap { $0["mark"] as? String }
        #expect(!marks.contains("before") && marks.contains("future"), "March follows the first sip: \(marks)")
        let january = try History.calendar(f.environment(), month: "2026-01", json: false)
        #expect(january.hasPrefix("January 2026          0 mL, before the history begins\n"), "\(january)")
    }

    @Test func goals() throws {
        let f = try HistoryFixture()
        check(try History.showGoal(f.environment(), json: false), Snapshots.goalShow, "goal-show")
        check(try History.recommendGoal(f.environment(), weight: "70kg", exercise: "30min", save: false, json: false),
              Snapshots.recommend, "recommend")
    }

    @Test func editsAndTheirEffectOnTotals() throws {
        let f = try HistoryFixture()
        let env = f.environment()
        check(try History.add(env, amount: "8oz", at: "11:50", note: "coffee", json: false), Snapshots.add, "add")
        check(try History.undo(env, json: false), Snapshots.undo, "undo")
        check(try History.restore(env, id: 18, json: false), Snapshots.restore, "restore")
        let json = try History.today(env, json: true)
        #expect(json.contains("\"intake_ml\":736.5882"))
        // A sum of amounts is said as the amounts add up, not with a double's noise (1201.1599999999999 was on
        // the page and in Home Assistant).
        let noisy = try HistoryFixture()
        let sums = noisy.environment()
        func intake() throws -> String { try #require(try History.today(sums, json: true).firstMatch(of: /"intake_ml":([0-9.]+)/).map { String($0.1) }) }
        let base = try #require(Double(try intake()))
        for amount in ["300.12ml", "901.04ml"] { _ = try History.add(sums, amount: amount, at: "11:55", note: nil, json: false) }
        let summed = try intake()
        #expect(abs((Double(summed) ?? 0) - (base + 1201.16)) < 1e-6 && summed.count <= String(base).count + 3, "\(base) → \(summed)")
        #expect(throws: HistoryError.self) { try History.restore(env, id: 999, json: false) }
        #expect(throws: HistoryError.self) { try History.add(env, amount: "6l", at: nil, note: nil, json: false) }
        #expect(throws: HistoryError.self) { try History.add(env, amount: "250ml", at: "2026-03-05 09:00", note: nil, json: false) }
    }

    @Test func jsonOutputs() throws {
        let f = try HistoryFixture()
        let today = try History.today(f.environment(), json: true)
        let object = try JSONSerialization.jsonObject(with: Data(today.utf8)) as! [String: Any]
        #expect(object["intake_ml"] as? Double == 500)
        #expect(object["sips"] as? Int == 3)
        #expect(object["goal_ml"] as? Double == 2000)
        let stats = try JSONSerialization.jsonObject(with: Data(try History.stats(f.environment(), days: 7, json: true).utf8)) as! [String: Any]
        #expect(stats["current_streak"] as? Int == 3)
        #expect(stats["longest_streak"] as? Int == 3)
        #expect(stats["goal_met_days"] as? Int == 5)
        let log = try History.log(f.environment(), since: nil, until: nil, device: nil, limit: nil, includeDeleted: false, csv: false, json: true)
        #expect(log.split(separator: "\n").count == 17)
    }
}

/// The current streak reaches back past the days a report adds up (a month
/// first, then twice as far each time): its length must not depend on the
/// report's period nor on where one reach ends.
@Suite struct StreakReachTests {
    /// A 600 mL sip at noon every day from 2023-03-01 through yesterday (goal
    /// 500 mL), except the day `gap` days before today; today has none yet.
    func history(gap: Int?) throws -> HistoryFixture {
        let f = try HistoryFixture(populate: false)
        let store = try IntakeStore(path: f.path)
        let first = CivilDay(parsing: "2023-03-01")!
        let today = CivilDay(parsing: "2026-03-04")!
        try store.setGoal(ml: 500, from: first, setAt: HistoryFixture.now)
        var events: [IntakeEvent] = []
        for number in first.number..<today.number where gap.map({ number != today.number - $0 }) ?? true {
            let time = Timestamp(secondsSince1970: Double(number) * 86_400 + 12 * 3600)
            events.append(IntakeEvent(identity: "streak|\(number)", kind: .sip, ml: 600, time: time, source: .manual, recordedAt: time))
        }
        try store.insert(events)
        return f
    }

    func streak(_ f: HistoryFixture, days: Int) throws -> Int? {
        let json = try History.stats(f.environment(), days: days, json: true)
        return (try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])?["current_streak"] as? Int
    }

    @Test(arguments: [1, 2, 8, 31, 32, 33, 62, 63, 64, 100, 366, 367, 400, 800])
    func streakEndingAGapAgo(gap: Int) throws {
        let f = try history(gap: gap)
        for days in [1, 2, 7, 30, 365] {
            #expect(try streak(f, days: days) == gap - 1, "--days \(days), gap \(gap) days ago")
        }
    }

    @Test func streakAsOldAsTheHistory() throws {
        let f = try history(gap: nil)
        let all = CivilDay(parsing: "2026-03-04")!.number - CivilDay(parsing: "2023-03-01")!.number
        for days in [1, 7, 365] { #expect(try streak(f, days: days) == all) }
    }
}

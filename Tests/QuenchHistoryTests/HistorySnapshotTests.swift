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

    @Test func log() throws {
        let f = try HistoryFixture()
        check(try History.log(f.environment(), since: "2026-03-02", until: nil, device: nil, limit: 6,
                              includeDeleted: false, csv: false, json: false), Snapshots.log, "log")
    }

    @Test func stats() throws {
        let f = try HistoryFixture()
        check(try History.stats(f.environment(), days: 7, json: false), Snapshots.statsWeek, "stats-week")
    }

    @Test func calendar() throws {
        let f = try HistoryFixture()
        check(try History.calendar(f.environment(), month: "2026-02", json: false), Snapshots.calendarFebruary, "calendar")
        let colored = try History.calendar(f.environment(color: true), month: "2026-02", json: false)
        #expect(colored.contains("\u{1B}[32m26#"))
        #expect(colored.contains("\u{1B}[31m28-"))
        #expect(colored.contains("\u{1B}[2m 2."))
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

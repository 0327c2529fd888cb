import Foundation
import QuenchCore
import QuenchStore
import QuenchTestSupport
import Testing
@testable import QuenchHistory

/// What a new user found wrong (issue 24), each kept from coming back.
@Suite struct UserReportTests {
    func object(_ json: String) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    }

    @Test("--since D --until D is day D, from its 04:00 start to the next day's, in log and export")
    func aDayGivenToUntilIncludesThatDay() throws {
        let f = try HistoryFixture()
        let log = try History.log(f.environment(), since: "2026-03-03", until: "2026-03-03", device: nil, limit: nil,
                                  includeDeleted: false, csv: false, json: true)
        let times = log.split(separator: "\n").compactMap { try? object(String($0))["at"] as? String }
        // 08:30 on the 3rd, and 01:30 on the 4th (before its 04:00 start), not 08:15 on the 4th.
        #expect(times.sorted() == ["2026-03-03T08:30:00Z", "2026-03-04T01:30:00Z"], "\(log)")
        let yesterday = try History.log(f.environment(), since: "yesterday", until: "yesterday", device: nil, limit: nil,
                                        includeDeleted: false, csv: false, json: true)
        #expect(yesterday == log)
        let csv = try History.export(f.environment(), format: .csv, since: "2026-03-03", until: "2026-03-03")
        #expect(csv.split(separator: "\n").count == 3, "\(csv)")
        // An instant stays exclusive.
        let instant = try History.log(f.environment(), since: "2026-03-03", until: "2026-03-03T08:30:00Z", device: nil, limit: nil,
                                      includeDeleted: false, csv: false, json: true)
        #expect(instant.isEmpty)
        #expect(throws: HistoryError.self) {
            try History.log(f.environment(), since: "2026-03-04", until: "2026-03-03 12:00", device: nil, limit: nil,
                            includeDeleted: false, csv: false, json: true)
        }
    }

    @Test("restoring an event that was not deleted, or deleting one twice, says so and fails as `undo` with nothing to undo")
    func noOpEditsAreRefused() throws {
        let f = try HistoryFixture()
        let env = f.environment()
        #expect { try History.restore(env, id: 3, json: false) } throws: { "\($0)".contains("event 3 is not deleted") }
        _ = try History.delete(env, id: 3, json: false)
        #expect { try History.delete(env, id: 3, json: false) } throws: { "\($0)".contains("event 3 is already deleted") }
        #expect(try History.restore(env, id: 3, json: false).hasPrefix("Restored #3"))
    }
}

/// The longest streak and the stored runs behind the streaks (`met_span`).
extension StreakReachTests {
    func report(_ f: HistoryFixture, days: Int) throws -> (current: Int?, longest: Int?) {
        let json = try History.stats(f.environment(), days: days, json: true)
        let o = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        return (o?["current_streak"] as? Int, o?["longest_streak"] as? Int)
    }

    @Test("the longest streak is at least the current one, and a run crossing the period's start counts in full")
    func longestStreakIsNeverShorterThanTheCurrent() throws {
        let since2023 = CivilDay(parsing: "2026-03-04")!.number - CivilDay(parsing: "2023-03-01")!.number
        for days in [1, 2, 7, 30, 365] {
            // 11 met days after a gap, and before the gap a run from 2023 that periods of 30 days and more reach.
            let eleven = try history(gap: 12)
            #expect(try report(eleven, days: days) == (11, days <= 12 ? 11 : since2023 - 12), "--days \(days)")
            // Broken three days ago: the run before it started in 2023.
            let broken = try history(gap: 3)
            let expected = days <= 3 ? 2 : since2023 - 3
            #expect(try report(broken, days: days) == (2, expected), "--days \(days)")
            let all = try history(gap: nil)
            #expect(try report(all, days: days) == (since2023, since2023), "--days \(days)")
        }
    }

    @Test("a streak added up once is remembered, and forgotten when a sip or a goal of its days changes")
    func rememberedRunsFollowTheHistory() throws {
        let f = try history(gap: nil)
        let all = CivilDay(parsing: "2026-03-04")!.number - CivilDay(parsing: "2023-03-01")!.number
        #expect(try report(f, days: 7) == (all, all))
        let store = try IntakeStore(path: f.path)
        let key = MetDays.calendarKey(DayCalendar(timeZone: LocalZone(identifier: "Europe/London")!, dayStartHour: 4))
        #expect(try store.metSpans(person: 1, calendar: key) == [MetSpan(first: CivilDay(parsing: "2023-03-01")!.number,
                                                                           last: CivilDay(parsing: "2026-03-03")!.number)])
        // Asked again, the same answer (now from the remembered run).
        #expect(try report(f, days: 7) == (all, all))
        // Today's sips are after the run: it stays.
        try store.insert([IntakeEvent(identity: "today", kind: .sip, ml: 100, time: HistoryFixture.now, source: .manual, recordedAt: HistoryFixture.now)])
        #expect(try store.metSpans(person: 1, calendar: key).count == 1)
        // A sip deleted a year ago breaks the streak there.
        let old = try #require(try store.events(EventQuery(since: Timestamp(iso8601: "2025-03-04T00:00:00Z"), until: Timestamp(iso8601: "2025-03-05T00:00:00Z"))).first)
        try store.setDeleted(id: try #require(old.id), true)
        #expect(try store.metSpans(person: 1, calendar: key).isEmpty)
        let sinceThen = CivilDay(parsing: "2026-03-04")!.number - CivilDay(parsing: "2025-03-04")!.number - 1
        #expect(try report(f, days: 7) == (sinceThen, sinceThen))
        #expect(try store.metSpans(person: 1, calendar: key).count == 1)
        // A higher goal from last month: the streak starts after it began.
        try store.setGoal(ml: 700, from: CivilDay(parsing: "2026-02-01")!, setAt: HistoryFixture.now)
        #expect(try store.metSpans(person: 1, calendar: key).isEmpty)
        #expect(try report(f, days: 7) == (0, 0))
    }
}

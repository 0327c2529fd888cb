import Foundation
import QuenchCharts
import QuenchCore
import QuenchStore
import QuenchTestSupport
import Testing
@testable import QuenchHistory

/// The charts' inputs built from the history fixture (London, days from 04:00,
/// now Wednesday 2026-03-04 12:00Z, goal 2,000 mL).
@Suite struct ChartDataTests {
    @Test func aWeekOfBarsIsWhatStatsAndCalendarCount() throws {
        let f = try HistoryFixture()
        let env = f.environment()
        let bars = try History.intakeBars(env, days: 7, endingOn: nil)
        #expect(bars.title == "7 days, 26 February to 4 March 2026")
        #expect(bars.days.map(\.date) == ["2026-02-26", "2026-02-27", "2026-02-28", "2026-03-01", "2026-03-02", "2026-03-03", "2026-03-04"])
        #expect(bars.days.map(\.ml) == [2100, 2000, 900, 2200, 2380, 2300, 500])
        #expect(bars.days.map(\.sips) == [3, 2, 1, 2, 3, 2, 3])
        #expect(bars.days.map(\.label) == ["Thu 26", "Fri 27", "Sat 28", "Sun 1", "Mon 2", "Tue 3", "Wed 4"])
        #expect(bars.days[6].name == "Wednesday 4 March 2026")
        #expect(bars.days.allSatisfy { $0.goalMl == 2000 && !$0.isFuture })
        // The same numbers as `stats --week`.
        let c = try env.context(creating: false)
        let stats = try History.statsReport(c, days: 7)
        #expect(bars.days.reduce(0) { $0 + $1.ml } == stats.totalMl)
        #expect(bars.days.filter(\.met).count == stats.goalMetDays)
        // And as the calendar's days.
        let calendar = try History.calendarReport(c, first: CivilDay(parsing: "2026-03-01")!)
        #expect(Array(calendar.days.prefix(4).map(\.ml)) == Array(bars.days.suffix(4).map(\.ml)))
    }

    @Test func goalsHaveAHistory() throws {
        let f = try HistoryFixture()
        let env = f.environment()
        _ = try History.setGoal(env, amount: "2500ml", from: "2026-03-02", json: false)
        let bars = try History.intakeBars(env, days: 7, endingOn: "2026-03-04")
        #expect(bars.days.map(\.goalMl) == [2000, 2000, 2000, 2000, 2500, 2500, 2500])
        #expect(bars.days.map(\.met) == [true, true, false, true, false, false, false])
        #expect(bars.svg.contains("goal 2,000 to 2,500 mL"))
    }

    /// Only a goal from a later day: it stands for today too, and `goal` says so
    /// rather than "since" a day still to come.
    @Test func aFirstGoalFromALaterDay() throws {
        let f = try HistoryFixture(populate: false)
        let set = try History.setGoal(f.environment(), amount: "2500ml", from: "2026-04-01", json: false)
        #expect(set == "Daily goal set to 2,500 mL from 2026-04-01.\nDaily goal: 2,500 mL, the first goal set (from 2026-04-01, and for the days before it)")
        _ = try History.setGoal(f.environment(), amount: "1800ml", from: "2026-03-04", json: false)
        #expect(try History.showGoal(f.environment(), json: false).hasPrefix("Daily goal: 1,800 mL since 2026-03-04\n"))
    }

    /// A week that began before the first sip: its average is over the days the history
    /// covers, as `stats` and the share card say it (it divided by all seven).
    @Test func aWeekBeforeTheHistoryBeganAveragesItsDays() throws {
        let f = try HistoryFixture()
        let bars = try History.intakeBars(f.environment(), days: 7, endingOn: "2026-02-28")
        #expect(bars.days.count == 7 && bars.days.filter(\.beforeHistory).count == 4)
        #expect(bars.summary.hasSuffix(": 5,000 mL in 3 days, 1,667 mL a day on average; goal met on 2 of 3 days."), "\(bars.summary)")
        // The whole of a week before it has nothing to count (it said "goal met on 0 of 7 days"),
        // and its days say why they have no bar.
        let before = try History.intakeBars(f.environment(), days: 7, endingOn: "2026-02-20")
        #expect(before.summary == "Daily intake, \(before.title): before the history begins.", "\(before.summary)")
        #expect(before.svg.contains("Friday 20 February 2026: before the history begins"), "\(before.svg)")
    }

    @Test func aMonthHasItsDaysToCome() throws {
        let f = try HistoryFixture()
        let bars = try History.monthBars(f.environment(), containing: "2026-03-04")
        #expect(bars.title == "March 2026" && bars.days.count == 31)
        #expect(bars.days.filter(\.isFuture).count == 27)
        #expect(bars.days.map(\.label).prefix(3) == ["1", "2", "3"])
        let february = try History.monthBars(f.environment(), containing: "2026-02-10")
        #expect(february.days.count == 28 && february.days.filter(\.isFuture).isEmpty)
        #expect(february.days.reduce(0) { $0 + $1.ml } == 5000)
        let thirty = try History.intakeBars(f.environment(), days: 30, endingOn: nil)
        #expect(thirty.title == "30 days, 3 February to 4 March 2026" && thirty.days.count == 30)
        #expect(throws: HistoryError.self) { try History.monthBars(f.environment(), containing: "2026-02-30") }
    }

    @Test func aPastDaysSipsFromItsStart() throws {
        let f = try HistoryFixture()
        let day = try History.dayTimeline(f.environment(), date: "2026-03-03")
        #expect(day.title == "Tuesday 3 March 2026")
        #expect(day.lengthSeconds == 86_400 && day.nowOffsetSeconds == nil && day.goalMl == 2000)
        // 08:30 and, after midnight, 01:30, which counts for the 3rd (days start at 04:00).
        let expected: [DayTimeline.Sip] = [DayTimeline.Sip(offsetSeconds: 16_200, ml: 1300, clock: "08:30"),
                                           DayTimeline.Sip(offsetSeconds: 77_400, ml: 1000, clock: "01:30")]
        #expect(day.sips == expected)
        #expect(day.ticks.map(\.label) == ["04:00", "07:00", "10:00", "13:00", "16:00", "19:00", "22:00", "01:00", "04:00"])
        #expect(day.ticks.last?.offsetSeconds == 86_400)
    }

    @Test func todaySoFar() throws {
        let f = try HistoryFixture()
        let day = try History.dayTimeline(f.environment(), date: nil)
        #expect(day.sips.map(\.clock) == ["08:15", "09:40", "11:37"])
        let now = try #require(day.nowOffsetSeconds)
        #expect(now == 28_800, "\(now - 28_800)")
        #expect(day.summary.hasPrefix("Intake over Wednesday 4 March 2026: 500 mL in 3 sips against a 2,000 mL goal (25 %)"))
    }

    @Test func aDayTheClocksGoForwardLasts23Hours() throws {
        let f = try HistoryFixture()
        // London, 2026-03-29 01:00 GMT → 02:00 BST; with days from 04:00 that is in the day of the 28th.
        let day = try History.dayTimeline(f.environment(now: Timestamp(iso8601: "2026-04-01T12:00:00Z")!), date: "2026-03-28")
        #expect(day.lengthSeconds == 23 * 3600)
        #expect(day.sips.isEmpty && day.nowOffsetSeconds == nil)
        let offsets = day.ticks.map(\.offsetSeconds)
        #expect(offsets == offsets.sorted() && Set(offsets).count == offsets.count)
        #expect(day.ticks.first?.label == "04:00" && day.ticks.last?.label == "04:00" && offsets.last == 23 * 3600)
    }

    @Test func shareCardsUseTodayAndStats() throws {
        let f = try HistoryFixture()
        let env = f.environment()
        let day = try History.shareCard(env, period: .day, name: nil)
        #expect(day.content == .day(.init(name: "Wednesday 4 March 2026", intakeMl: 500, goalMl: 2000, sips: 3, streak: 3)))
        let week = try History.shareCard(env, period: .week, name: "Ann")
        guard case .week(let w) = week.content else { Issue.record("not a week: \(week.content)"); return }
        #expect(week.person == "Ann" && week.svg.contains("<title>Ann’s week</title>"))
        #expect(w.name == "26 February to 4 March 2026" && w.days.count == 7)
        #expect(w.totalMl == 12_380 && w.goalMetDays == 5 && abs(w.averageMl - 12_380 / 7) <= 0.005)  // to a hundredth, as stats gives it
    }
}

/// A PNG's width and height from its IHDR chunk, after checking the signature.
func pngSize(_ data: Data) -> (width: Int, height: Int)? {
    let bytes = [UInt8](data.prefix(24))
    guard bytes.count == 24, bytes.prefix(8).elementsEqual([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]),
          bytes[12..<16].elementsEqual(Array("IHDR".utf8)) else { return nil }
    func be(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
    return (be(16), be(20))
}

@Suite struct ShareCommandTests {
    static let rsvg = SVGRasterizer.find()
    static let missing = "SKIPPED: rsvg-convert is not installed: \(SVGRasterizer.installCommand) (the CI's .ci/run does)"

    @Test(.enabled(if: rsvg.executable != nil, Comment(rawValue: missing)))
    func cardsAsPNG() throws {
        let f = try HistoryFixture()
        for period in History.SharePeriod.allCases {
            let out = f.directory + "/card-\(period).png"
            let message = try History.share(f.environment(), period: period, name: "<Ann & \"Bo\">", out: out)
            #expect(message.hasPrefix("Wrote \(out) (1200 × 630): <Ann & \"Bo\">’s \(period)"), "\(message)")
            let size = pngSize(try Data(contentsOf: URL(fileURLWithPath: out)))
            #expect(size?.width == 1200 && size?.height == 630, "\(period): \(String(describing: size))")
        }
        // Nothing left behind but the cards.
        #expect(try FileManager.default.contentsOfDirectory(atPath: f.directory).filter { !$0.hasPrefix("quench.sqlite") }.sorted()
                == ["card-day.png", "card-week.png"])
    }

    @Test func cardAsSVG() throws {
        let f = try HistoryFixture()
        let out = f.directory + "/card.SVG"
        _ = try History.share(f.environment(), period: .week, name: nil, out: out, rasterizer: SVGRasterizer(executable: nil))
        let svg = try String(contentsOfFile: out, encoding: .utf8)
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 1200 630\" width=\"1200\" height=\"630\" role=\"img\""))
        #expect(svg == (try History.shareCard(f.environment(), period: .week, name: nil)).svg)
    }

    @Test func withoutRsvgConvertTheErrorSaysWhatToInstall() throws {
        let f = try HistoryFixture()
        #expect(SVGRasterizer.find(variables: ["PATH": "/nonexistent"]).executable == nil)
        let out = f.directory + "/card.png"
        do {
            _ = try History.share(f.environment(), period: .day, name: nil, out: out, rasterizer: SVGRasterizer(executable: nil))
            Issue.record("no error")
        } catch {
            guard case .rasterizer(.notInstalled) = error else { Issue.record("\(error)"); return }
            #expect(error.description.contains("rsvg-convert is not installed (Debian: apt-get install -y librsvg2-bin fonts-dejavu-core)"))
        }
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    @Test func aWedgedRasterizerIsStopped() throws {
        let f = try HistoryFixture()
        let script = f.directory + "/slow"
        try "#!/bin/sh\nexec sleep 30\n".write(toFile: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script)
        let out = f.directory + "/card.png"
        #expect {
            try SVGRasterizer(executable: script, timeout: 0.3).writePNG(svg: "<svg/>", width: 10, height: 10, to: out)
        } throws: { error in
            guard case RasterError.timedOut = error else { return false }
            return true
        }
        #expect(!FileManager.default.fileExists(atPath: out))
        #expect(try FileManager.default.contentsOfDirectory(atPath: f.directory).filter { !$0.hasPrefix("quench.sqlite") } == ["slow"])
    }

    @Test(arguments: ["card.gif", "card", "-", "card.png.txt"])
    func otherFormatsAreRefused(out: String) throws {
        let f = try HistoryFixture()
        #expect {
            try History.share(f.environment(), period: .day, name: nil, out: f.directory + "/" + out)
        } throws: { error in
            "\(error)".contains("quench share writes a .png or an .svg file, by its extension")
        }
    }

    @Test func chartFiles() throws {
        let f = try HistoryFixture()
        let env = f.environment()
        let out = f.directory + "/week.svg"
        let message = try History.chart(env, kind: .week, date: nil, out: out)
        #expect(message == "Wrote \(out): Daily intake, 7 days, 26 February to 4 March 2026: 12,380 mL in 7 days, "
                + "1,769 mL a day on average; goal met on 5 of 7 days.")
        #expect(try String(contentsOfFile: out, encoding: .utf8) == (try History.intakeBars(env, days: 7, endingOn: nil)).svg)
        let stdout = try History.chart(env, kind: .day, date: "2026-03-03", out: "-")
        #expect(stdout + "\n" == (try History.dayTimeline(env, date: "2026-03-03")).svg)
        #expect(throws: HistoryError.self) { try History.chart(env, kind: .month, date: nil, out: f.directory + "/m.png") }
        #expect(throws: HistoryError.self) { try History.chart(env, kind: .day, date: "2026-13-01", out: "-") }
    }
}

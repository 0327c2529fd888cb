import Foundation
import QuenchCore
import QuenchStore
import QuenchTestSupport
import Testing
@testable import QuenchHistory

@Suite struct HistoryDayTests {
    func utc(_ text: String) -> Timestamp { Timestamp(iso8601: text)! }
    func day(_ text: String) -> CivilDay { CivilDay(parsing: text)! }
    func zone(_ name: String) -> LocalZone { LocalZone(identifier: name)! }

    @Test func earlyMorningCountsForTheEveningBefore() {
        let cal = DayCalendar(timeZone: zone("Europe/London"), dayStartHour: 4)
        #expect(cal.day(of: utc("2026-03-03T01:00:00Z")) == day("2026-03-02"))
        #expect(cal.day(of: utc("2026-03-03T03:59:59Z")) == day("2026-03-02"))
        #expect(cal.day(of: utc("2026-03-03T04:00:00Z")) == day("2026-03-03"))
        #expect(cal.start(of: day("2026-03-03")) == utc("2026-03-03T04:00:00Z"))
        // In summer time 01:00 BST is 00:00Z.
        #expect(cal.day(of: utc("2026-07-01T00:00:00Z")) == day("2026-06-30"))
        #expect(cal.start(of: day("2026-07-01")) == utc("2026-07-01T03:00:00Z"))
    }

    @Test(arguments: [
        // zone, day start hour, the day that contains the change, its length in hours, its start (UTC)
        ("America/New_York", 4, "2026-03-07", 23, "2026-03-07T09:00:00Z"),
        ("America/New_York", 0, "2026-03-08", 23, "2026-03-08T05:00:00Z"),
        ("America/New_York", 4, "2026-10-31", 25, "2026-10-31T08:00:00Z"),
        ("America/New_York", 0, "2026-11-01", 25, "2026-11-01T04:00:00Z"),
        ("Europe/London", 4, "2026-03-28", 23, "2026-03-28T04:00:00Z"),
        ("Europe/London", 0, "2026-03-29", 23, "2026-03-29T00:00:00Z"),
        ("Europe/London", 4, "2026-10-24", 25, "2026-10-24T03:00:00Z"),
        ("Europe/London", 0, "2026-10-25", 25, "2026-10-24T23:00:00Z"),
    ])
    func daylightSavingDaysLast23Or25Hours(zoneName: String, startHour: Int, date: String, hours: Int, start: String) {
        let cal = DayCalendar(timeZone: zone(zoneName), dayStartHour: startHour)
        let (from, until) = cal.interval(of: day(date))
        #expect(from == utc(start))
        #expect(until.secondsSince1970 - from.secondsSince1970 == Double(hours * 3600))
        // Neighbouring days are ordinary.
        let next = cal.interval(of: day(date).adding(days: 1))
        #expect(next.start == until)
        #expect(next.end.secondsSince1970 - next.start.secondsSince1970 == 86_400)
    }

    @Test func dayStartInsideTheSpringGapStartsAtTheChange() {
        // New York, 2026-03-08: 02:00 EST does not exist; clocks jump to 03:00 EDT at 07:00Z.
        let cal = DayCalendar(timeZone: zone("America/New_York"), dayStartHour: 2)
        #expect(cal.start(of: day("2026-03-08")) == utc("2026-03-08T07:00:00Z"))
        #expect(cal.day(of: utc("2026-03-08T06:59:59Z")) == day("2026-03-07"))
        #expect(cal.day(of: utc("2026-03-08T07:00:00Z")) == day("2026-03-08"))
    }

    @Test func autumnRepeatedHourStaysInOneDay() {
        // London, 2026-10-25: 01:00–02:00 happens twice (BST, then GMT); with days
        // starting at 01:00 both passes belong to the 25th.
        let cal = DayCalendar(timeZone: zone("Europe/London"), dayStartHour: 1)
        #expect(cal.start(of: day("2026-10-25")) == utc("2026-10-25T00:00:00Z"))
        #expect(cal.day(of: utc("2026-10-25T00:30:00Z")) == day("2026-10-25"))  // 01:30 BST
        #expect(cal.day(of: utc("2026-10-25T01:30:00Z")) == day("2026-10-25"))  // 01:30 GMT
        #expect(cal.day(of: utc("2026-10-24T23:59:59Z")) == day("2026-10-24"))
    }

    @Test(arguments: ["America/New_York", "Europe/London", "Australia/Lord_Howe", "Asia/Kolkata", "UTC"], [0, 2, 4])
    func everyInstantLiesInsideItsDay(zoneName: String, startHour: Int) {
        let cal = DayCalendar(timeZone: zone(zoneName), dayStartHour: startHour)
        var t = utc("2026-01-01T00:00:00Z").secondsSince1970
        while t < utc("2027-01-01T00:00:00Z").secondsSince1970 {
            let instant = Timestamp(secondsSince1970: t)
            let (from, until) = cal.interval(of: cal.day(of: instant))
            #expect(from <= instant && instant < until, "\(zoneName) \(startHour) \(instant.iso8601)")
            t += 1777  // not a divisor of an hour, to land everywhere
        }
    }

    @Test func sqlTotalsMatchPerEventDays() throws {
        let dir = try TemporaryFolder.create("quench-days")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try IntakeStore(path: dir + "/q.sqlite")
        let cal = DayCalendar(timeZone: zone("America/New_York"), dayStartHour: 4)
        // A year of sips every 37 minutes across both changes of 2026.
        let started = utc("2026-01-01T00:00:00Z")
        var events: [DetectedEvent] = []
        for i in 0..<14_000 {
            let start = Double(i) * 2220
            events.append(DetectedEvent(kind: .sip, t: start + 5, start: start, end: start + 4, ml: Double(10 + i % 7)))
        }
        try store.ingest(events, device: "A", started: started)
        var expected: [Int: DayTotal] = [:]
        for e in events {
            let d = cal.day(of: started.adding(e.start)).number
            expected[d, default: DayTotal(ml: 0, sips: 0)].ml += e.ml
            expected[d, default: DayTotal(ml: 0, sips: 0)].sips += 1
        }
        let first = cal.day(of: started), last = cal.day(of: started.adding(events.last!.start))
        let totals = try store.sipTotalsByDay(cal.segments(from: cal.start(of: first), until: cal.start(of: last.adding(days: 1))))
        #expect(totals == expected)
    }

    @Test func amounts() throws {
        #expect(try HistoryInput.volume("250ml", defaultUnit: .ml) == 250)
        #expect(try HistoryInput.volume("250 mL", defaultUnit: .ml) == 250)
        #expect(try HistoryInput.volume("250mls", defaultUnit: .ml) == 250)  // as people write it
        #expect(try HistoryInput.volume("0.5l", defaultUnit: .ml) == 500)
        #expect(abs(try HistoryInput.volume("8oz", defaultUnit: .ml) - 236.588) < 0.001)
        #expect(abs(try HistoryInput.volume("68 oz", defaultUnit: .ml) - 2011.0) < 0.1)
        #expect(abs(try HistoryInput.volume("8 fl oz", defaultUnit: .ml) - 236.588) < 0.001)
        #expect(abs(try HistoryInput.volume("10", defaultUnit: .usFluidOunce) - 295.735) < 0.001)
        #expect(throws: HistoryError.self) { try HistoryInput.volume("5 cups", defaultUnit: .ml) }
        #expect(throws: HistoryError.self) { try HistoryInput.volume("-5ml", defaultUnit: .ml) }
        #expect(throws: HistoryError.self) { try HistoryInput.volume("0ml", defaultUnit: .ml) }
        #expect(throws: HistoryError.self) { try HistoryInput.volume("ml", defaultUnit: .ml) }
        #expect(throws: HistoryError.self) { try HistoryInput.volume("nan ml", defaultUnit: .ml) }
        #expect(try HistoryInput.weightKG("70kg") == 70)
        #expect(abs(try HistoryInput.weightKG("154 lb") - 69.85) < 0.01)
        #expect(throws: HistoryError.self) { try HistoryInput.weightKG("7kg") }
        #expect(try HistoryInput.minutes("30min") == 30)
        #expect(try HistoryInput.minutes("1.5h") == 90)
    }

    @Test func dates() throws {
        let cal = DayCalendar(timeZone: zone("Europe/London"), dayStartHour: 4)
        let now = utc("2026-07-01T00:30:00Z")  // 01:30 BST, still the 30th of June's day
        #expect(try HistoryInput.instant("2026-06-29", calendar: cal, now: now) == utc("2026-06-29T03:00:00Z"))
        #expect(try HistoryInput.instant("2026-06-29 12:15", calendar: cal, now: now) == utc("2026-06-29T11:15:00Z"))
        #expect(try HistoryInput.instant("2026-06-29T12:15:30", calendar: cal, now: now) == utc("2026-06-29T11:15:30Z"))
        #expect(try HistoryInput.instant("2026-06-29T12:15:30+02:00", calendar: cal, now: now) == utc("2026-06-29T10:15:30Z"))
        // HH:MM is the latest such time not after now.
        #expect(try HistoryInput.instant("01:00", calendar: cal, now: now) == utc("2026-07-01T00:00:00Z"))
        #expect(try HistoryInput.instant("23:00", calendar: cal, now: now) == utc("2026-06-30T22:00:00Z"))
        #expect(try HistoryInput.instant("today", calendar: cal, now: now) == utc("2026-06-30T03:00:00Z"))
        for bad in ["2026-13-01", "2026-02-30", "25:00", "yesterday-ish", "2026-06-29 7pm", ""] {
            #expect(throws: HistoryError.self, "\(bad)") { try HistoryInput.instant(bad, calendar: cal, now: now) }
        }
        #expect(try HistoryInput.month("2026-02") == day("2026-02-01"))
        #expect(throws: HistoryError.self) { try HistoryInput.month("2026-2") }
    }

    @Test func goalRecommendation() {
        let r = History.recommendGoal(weightKg: 70, exerciseMinutes: 30)
        #expect(r.base == 2450 && r.exercise == 350 && r.total == 2800)
        #expect(History.recommendGoal(weightKg: 61, exerciseMinutes: 0).total == 2150)  // 2135 → 2150
    }
}

/// `add --at` on the days the clocks change, and before 1970: said, not silently moved or left to SQLite.
@Suite struct AddAtTests {
    func added(_ at: String) throws -> String {
        let f = try HistoryFixture(populate: false)
        return try History.add(f.environment(now: Timestamp(iso8601: "2026-11-24T12:00:00Z")!), amount: "100ml", at: at, note: nil, json: false)
    }

    /// A time before the day start (04:00) counts for the day before: said, and the JSON's `day` says which
    /// (the page said "Added 100 mL at 02:00" and today's total did not move: a household's trial).
    @Test func aTimeBeforeTheDayStartSaysWhichDayItCountsFor() throws {
        let text = try added("02:00")
        #expect(text.contains("at 2026-11-24 02:00") && text.contains("\nIt counts for 2026-11-23, whose day runs until 04:00 today.\n"), "\(text)")
        #expect(!(try added("09:00")).contains("It counts for"))
        let f = try HistoryFixture(populate: false)
        let json = try History.add(f.environment(now: Timestamp(iso8601: "2026-11-24T12:00:00Z")!), amount: "100ml", at: "02:00", note: nil, json: true)
        #expect(json.contains(#""day":"2026-11-23""#), "\(json)")
    }

    @Test func aTimeTheClocksSkippedIsSaid() throws {
        let text = try added("2026-03-29 01:30")
        #expect(text.hasPrefix("Note: 2026-03-29 01:30 does not exist in Europe/London (the clocks went forward); recorded at 2026-03-29 02:00."), "\(text)")
    }

    @Test func aTimeThatHappensTwiceSaysWhichAndHowToGetTheOther() throws {
        let text = try added("2026-10-25 01:30")
        #expect(text.contains("happens twice in Europe/London (the clocks went back); recorded at the first, 2026-10-25T00:30:00Z; for the second use --at 2026-10-25T01:30:00Z"), "\(text)")
        #expect(!(try added("2026-10-25 02:30")).contains("Note:"))
        #expect(!(try added("2026-07-01 01:30")).contains("Note:"))
    }

    /// The two 01:30s of London's day back show their offsets in the log, which showed them alike (two
    /// drinks read as one logged twice: the outputs trial); any other time as before.
    @Test func theHourShownTwiceSaysWhichInTheLog() throws {
        let cal = DayCalendar(timeZone: try #require(LocalZone(identifier: "Europe/London")), dayStartHour: 4)
        func shown(_ iso: String) throws -> String { Format.dateTime(try #require(Timestamp(iso8601: iso)), cal) }
        #expect(try shown("2026-10-25T00:30:00Z") == "2026-10-25 01:30 +01:00")
        #expect(try shown("2026-10-25T01:30:00Z") == "2026-10-25 01:30 +00:00")
        #expect(try shown("2026-10-25T02:30:00Z") == "2026-10-25 02:30")
        #expect(try shown("2026-10-24T23:59:00Z") == "2026-10-25 00:59")
        #expect(try shown("2026-07-01T00:30:00Z") == "2026-07-01 01:30")
        let f = try HistoryFixture(populate: false)
        let environment = f.environment(now: try #require(Timestamp(iso8601: "2026-10-26T12:00:00Z")))
        for at in ["2026-10-25T01:30:00+01:00", "2026-10-25T01:30:00Z"] {
            _ = try History.add(environment, amount: "300ml", at: at, note: nil, json: false)
        }
        let log = try History.log(environment, since: nil, until: nil, device: nil, limit: nil, includeDeleted: false, csv: false, json: false)
        #expect(log.contains("2026-10-25 01:30 +01:00") && log.contains("2026-10-25 01:30 +00:00"), "\(log)")
    }

    /// Every minute of a repeated hour (or half hour, on Lord Howe Island) is said to be twice, the first
    /// instant kept: from 01:45 in New York (and 01:38 on Lord Howe) the search landed on the second
    /// instant, and the time was stored an hour (half an hour) late without a word.
    @Test(arguments: [("Europe/London", "2026-10-25", 60), ("America/New_York", "2026-11-01", 60), ("Australia/Lord_Howe", "2026-04-05", 30)])
    func everyMinuteOfARepeatedHourIsSaidTwice(zoneName: String, date: String, minutes: Int) throws {
        let cal = DayCalendar(timeZone: try #require(LocalZone(identifier: zoneName)), dayStartHour: 4)
        let day = try #require(CivilDay(parsing: date))
        let start = day.number * 86_400 + 3600 + (minutes == 30 ? 1800 : 0)
        for minute in 0..<minutes {
            let local = start + minute * 60
            let (instant, fit) = cal.fit(localSeconds: local)
            guard case .repeated(let later) = fit else {
                Issue.record("\(zoneName) \(date) minute \(minute): \(fit) at \(instant.iso8601)")
                continue
            }
            #expect(later.secondsSince1970 - instant.secondsSince1970 == Double(minutes * 60), "\(zoneName) minute \(minute)")
            #expect(cal.localSeconds(instant) == Double(local) && cal.localSeconds(later) == Double(local))
        }
        // Either side of the overlap: one instant.
        #expect(cal.fit(localSeconds: start - 60).fit == DayCalendar.LocalTimeFit.exact && cal.fit(localSeconds: start + minutes * 60).fit == DayCalendar.LocalTimeFit.exact)
    }

    @Test func beforeNineteenSeventyIsRefusedInWords() throws {
        #expect(throws: HistoryError.self) { try added("1960-01-01 10:00") }
        let error = #expect(throws: HistoryError.self) { try added("1969-12-31 23:00") }
        #expect(error?.description == "--at: invalid time '1969-12-31 23:00': before 1970: a history starts on 1970-01-01 at the earliest")
        // After 1970 began, before its first day start: that drink counted for 31 December 1969, which no view shows.
        let early = #expect(throws: HistoryError.self) { try added("1970-01-01 03:30") }
        #expect(early?.description == "--at: invalid time '1970-01-01 03:30': it would count for 1969-12-31, before 1970 (days start at 04:00): "
                + "a history starts on 1970-01-01 at the earliest")
        #expect(try added("1970-01-01 04:00").contains("1970-01-01"))
    }
}

@Suite struct PercentTests {
    @Test func roundsDownButNotBelowWhatTheNumbersSay() {
        #expect(Format.percent(2300.0 / 2000) == "115 %", "1.15 × 100 is 114.999… in binary")
        #expect(Format.percent(2731.0 / 2000) == "136 %")
        #expect(Format.percent(1999.0 / 2000) == "99 %", "not met is never 100 %")
        #expect(Format.percent(0.7) == "70 %" && Format.percent(0.29) == "29 %" && Format.percent(0) == "0 %")
    }
}

/// Averages as JSON gives them to a page or Home Assistant: to a hundredth, without a binary
/// fraction's noise (three drinks, 333.3 mL, averaged 111.10000000000001).
@Suite struct FiguresInJSONTests {
    @Test func averagesCarryNoFloatNoise() throws {
        let f = try HistoryFixture(populate: false)
        let env = f.environment(now: Timestamp(iso8601: "2026-11-24T12:00:00Z")!)
        for (amount, at) in [("0.1L", "09:00"), ("0.2L", "10:00"), ("33.3mL", "11:00")] {
            _ = try History.add(env, amount: amount, at: at, note: nil, json: false)
        }
        let today = try #require(try JSONSerialization.jsonObject(with: Data(try History.today(env, json: true).utf8)) as? [String: Any])
        let stats = try #require(try JSONSerialization.jsonObject(with: Data(try History.stats(env, days: 7, json: true).utf8)) as? [String: Any])
        #expect(try History.today(env, json: true).contains("\"average_sip_ml\":111.1,"))
        #expect(today["intake_ml"] as? Double == 333.3)
        #expect(today["progress"] as? Double == 0.1667)
        #expect(try History.stats(env, days: 7, json: true).contains("\"average_sip_ml\":111.1,"))
        #expect(stats["daily_average_ml"] as? Double == 333.3)
    }
}

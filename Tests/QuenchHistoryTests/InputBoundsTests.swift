import Foundation
import QuenchCore
import QuenchStore
import QuenchTestSupport
import Testing
@testable import QuenchHistory

/// Every date, number and unit a command or a query gives is bounded before
/// use (issues 19 and 24): an error naming it, never a trap.
@Suite struct InputBoundsTests {
    let calendar = DayCalendar(timeZone: LocalZone(identifier: "Europe/London")!, dayStartHour: 4)
    let now = HistoryFixture.now

    /// The error's text ("" when there was none): a `HistoryError`'s description.
    func described(_ body: () throws -> Void) -> String {
        do { try body(); return "" } catch { return "\(error)" }
    }

    @Test func daysAreThoseAHistoryHolds() throws {
        #expect(try HistoryInput.day("1970-01-01", calendar: calendar, now: now) == CivilDay.storable.lowerBound)
        #expect(try HistoryInput.day("9999-12-31", calendar: calendar, now: now) == CivilDay.storable.upperBound)
        #expect(CivilDay.storable.upperBound.description == "9999-12-31")
        for text in ["0001-01-07", "0999-12-31", "0000-01-01", "1969-12-31"] {
            #expect(described { _ = try HistoryInput.day(text, calendar: calendar, now: now) }
                    == "invalid date '\(text)': before 1970: a history starts on 1970-01-01 at the earliest")
        }
        for text in ["+999-01-07", "-999-01-01", " 999-01-01", "２０２６-01-01", "2026-2-3"] {
            #expect(described { _ = try HistoryInput.day(text, calendar: calendar, now: now) } == "invalid date '\(text)': expected YYYY-MM-DD, today or yesterday")
        }
        // Written as a day, and none: said so, as for --at (it said "expected YYYY-MM-DD" of 2026-02-30).
        #expect(described { _ = try HistoryInput.day("2026-02-30", calendar: calendar, now: now) } == "invalid date '2026-02-30': 2026-02-30 is not a day of the calendar")
        #expect(described { _ = try HistoryInput.day("10000-01-01", calendar: calendar, now: now) }
                == "invalid date '10000-01-01': after 9999: a history ends on 9999-12-31 at the latest")
        #expect(try HistoryInput.month("9999-12") == CivilDay(parsing: "9999-12-01"))
        #expect(described { _ = try HistoryInput.month("0999-12") } == "invalid date '0999-12': before 1970: a history starts on 1970-01-01 at the earliest")
        // Instants: each form's day, and an ISO 8601 time's UTC day.
        for text in ["0001-01-01", "0999-12-31 10:00", "1969-12-31T23:59:59Z", "0001-01-01T00:00:00+14:00"] {
            #expect(described { _ = try HistoryInput.instant(text, calendar: calendar, now: now) }.contains("before 1970"), "\(text)")
        }
        #expect(described { _ = try HistoryInput.instant("9999-12-31T23:00:00-14:00", calendar: calendar, now: now) }.contains("after 9999"))
        #expect(try HistoryInput.instant("9999-12-31T23:59:59Z", calendar: calendar, now: now).secondsSince1970 == 253_402_300_799)
    }

    /// Any day of years 0 to 9999 reads back from its text: the charts' labels and
    /// the goal table's rows are written that way (year 999 was `999-12-31`).
    @Test func everyDayReadsBackFromItsText() throws {
        var random = FuzzRandom(seed: 19)
        let first = Timestamp.daysFromCivil(year: 0, month: 1, day: 1), last = CivilDay.storable.upperBound.number
        var days = [first, first + 1, -1, 0, 1, last - 1, last, Timestamp.daysFromCivil(year: 999, month: 12, day: 31)]
        for _ in 0..<2000 { days.append(first + Int(random.next() % UInt64(last - first + 1))) }
        for number in days {
            let day = CivilDay(number: number)
            #expect(day.description.count == 10 && CivilDay(parsing: day.description) == day, "\(number): \(day.description)")
        }
        #expect(CivilDay(number: Timestamp.daysFromCivil(year: 999, month: 12, day: 31)).description == "0999-12-31")
    }

    /// Random text at the parsers: an answer or a HistoryError, never a trap.
    @Test func randomTextNeverTraps() {
        var random = FuzzRandom(seed: 24)
        let seeds = ["2026-03-04", "2026-03-04 10:00", "2026-03-04T10:00:00Z", "250ml", "1.5h", "07:00-23:00", "7-23", "2026-03"]
        for _ in 0..<3000 {
            let seed = Array(seeds[Int(random.next() % UInt64(seeds.count))].utf8)
            let text = String(decoding: random.mutate(seed, alphabet: Array("0123456789-:+.eTZ hlmoz%\u{0}".utf8), cutting: true), as: UTF8.self)
            _ = try? HistoryInput.day(text, calendar: calendar, now: now)
            _ = try? HistoryInput.instant(text, calendar: calendar, now: now)
            _ = try? HistoryInput.month(text)
            _ = try? HistoryInput.window(text)
            _ = try? HistoryInput.minutes(text)
            _ = try? HistoryInput.volume(text, defaultUnit: .ml)
            _ = try? HistoryInput.weightKG(text)
        }
    }

    /// A time of day as people write it (9:30 as well as 09:30), and nothing else.
    @Test func aTimeOfDayAsPeopleWriteIt() throws {
        let (morning, _) = try HistoryInput.instantFitted("9:30", calendar: calendar, now: now)
        #expect(morning.iso8601 == "2026-03-04T09:30:00Z")
        #expect(try HistoryInput.instantFitted("09:30:15", calendar: calendar, now: now).instant.iso8601 == "2026-03-04T09:30:15Z")
        for text in ["24:00", "9:60", "23:59:60"] {
            #expect(described { _ = try HistoryInput.instantFitted(text, calendar: calendar, now: now) }
                    == "invalid time '\(text)': no such time of day (00:00 to 23:59:59)", "\(text)")
        }
        for text in ["+9:30", "9:3", "930:00", "9:30:5", ":30", "9:+3", "９:30"] {
            #expect(described { _ = try HistoryInput.instantFitted(text, calendar: calendar, now: now) }
                    == "invalid time '\(text)': the time of day should be HH:MM or HH:MM:SS", "\(text)")
        }
        // On a given instant's day, as a history counts it (from 04:00): 01:30 is after that day's midnight.
        let drink = Timestamp(iso8601: "2026-03-02T12:30:00Z")!
        #expect(try HistoryInput.instantFitted("9:05", calendar: calendar, now: now, onDayOf: drink).instant.iso8601 == "2026-03-02T09:05:00Z")
        #expect(try HistoryInput.instantFitted("01:30", calendar: calendar, now: now, onDayOf: drink).instant.iso8601 == "2026-03-03T01:30:00Z")
    }

    /// A bare time a little ahead of the clock is today's typed early, and refused: it went to
    /// yesterday (a glass logged five minutes before it was drunk left the day at 0). Within the
    /// clock's minute of slack it is today's; more than two hours ahead, yesterday's as before.
    @Test func aTimeOfDayJustAheadOfTheClock() throws {
        let at = Timestamp(iso8601: "2026-03-04T15:00:00Z")!
        #expect(described { _ = try HistoryInput.instantFitted("15:05", calendar: calendar, now: at) }
                == "invalid time '15:05': 15:05 is later than now (15:00); for yesterday's, give its date: '2026-03-03 15:05'")
        #expect(described { _ = try HistoryInput.instantFitted("16:59", calendar: calendar, now: at) }.hasPrefix("invalid time '16:59': 16:59 is later than now"))
        #expect(try HistoryInput.instantFitted("15:00:40", calendar: calendar, now: at).instant.iso8601 == "2026-03-04T15:00:40Z")
        #expect(try HistoryInput.instantFitted("17:01", calendar: calendar, now: at).instant.iso8601 == "2026-03-03T17:01:00Z")
        #expect(try HistoryInput.instantFitted("14:59", calendar: calendar, now: at).instant.iso8601 == "2026-03-04T14:59:00Z")
    }

    /// `today --date` of a day to come is refused, not shown with "Last sip …, just now".
    @Test func todayOfADayToCome() throws {
        let f = try HistoryFixture()
        #expect(described { _ = try History.today(f.environment(), date: "2026-03-05", json: false) }
                == "--date: invalid date '2026-03-05': a day still to come (today is 2026-03-04)")
        #expect(try History.today(f.environment(), date: "2026-03-04", json: false).hasPrefix("Today, Wednesday 4 March 2026"))
    }

    /// An earlier day's `today` says what was left as that day ended, not today's reading.
    @Test func anEarlierDaysBottleIsAsThatDayEnded() throws {
        let f = try HistoryFixture()
        let store = try IntakeStore(path: f.path, mode: .existing)
        let bottle = "AA:BB:CC:DD:EE:42"
        _ = try store.ingest([DetectedEvent(kind: .sip, t: 0, start: 0, end: 5, ml: 50, remainingML: 500)], device: bottle,
                             started: Timestamp(iso8601: "2026-03-03T10:00:00Z")!)
        _ = try store.ingest([DetectedEvent(kind: .sip, t: 0, start: 0, end: 5, ml: 200, remainingML: 300)], device: bottle,
                             started: Timestamp(iso8601: "2026-03-04T09:00:00Z")!)
        let yesterday = try History.todayReport(try f.environment().context(creating: false), day: CivilDay(parsing: "2026-03-03")!)
        #expect(yesterday.bottles.first { $0.device == bottle }?.remainingMl == 500, "\(yesterday.bottles)")
        let today = try History.todayReport(try f.environment().context(creating: false))
        #expect(today.bottles.first { $0.device == bottle }?.remainingMl == 300, "\(today.bottles)")
    }

    /// `edit --at 09:05` mends the time on the drink's own day; it does not move it to today.
    @Test func anEditedTimeStaysOnItsDrinksDay() throws {
        let f = try HistoryFixture()
        let store = try IntakeStore(path: f.path, mode: .existing)
        let lunch = try #require(try store.events(EventQuery()).first { $0.identity == "manual|fixture-1" }?.id)
        _ = try History.edit(f.environment(), id: lunch, amount: nil, at: "13:05", note: nil, json: false)
        #expect(try store.event(id: lunch)?.time.iso8601 == "2026-03-02T13:05:00Z")
        // A whole date still moves it; a time past now on its day is still refused.
        _ = try History.edit(f.environment(), id: lunch, amount: nil, at: "2026-03-01T20:00", note: nil, json: false)
        #expect(try store.event(id: lunch)?.time.iso8601 == "2026-03-01T20:00:00Z")
        // Today's 08:10 drink "at 03:00": on its day (04:00 to 04:00) that is tomorrow's 03:00, in the future;
        // the person meant this morning, and is told how to say it.
        let coffee = try store.addManual(ml: 200, at: Timestamp(iso8601: "2026-03-04T08:10:00Z")!, note: nil, identity: "coffee", person: nil)
        #expect(described { _ = try History.edit(f.environment(), id: coffee.id!, amount: nil, at: "03:00", note: nil, json: false) }
                .hasSuffix("2026-03-05 03:00 is in the future; for 03:00 on the drink's date, give it: '2026-03-04 03:00'"))
        // A time later on its own day is a typo: no hint to move the drink to another day.
        #expect(described { _ = try History.edit(f.environment(), id: coffee.id!, amount: nil, at: "23:00", note: nil, json: false) }
                .hasSuffix("2026-03-04 23:00 is in the future"))
    }

    @Test func windowsTakeWholeHoursOrClockTimes() throws {
        #expect(try HistoryInput.window("7-23") == (420, 1380))
        #expect(try HistoryInput.window("07:00-23:00") == (420, 1380))
        #expect(try HistoryInput.window("7:30 - 22") == (450, 1320))
        #expect(try HistoryInput.window("0-24") == (0, 1440))
        #expect(try HistoryInput.window("08:00-24:00") == (480, 1440))
        for text in ["7-", "-23", "7", "25-26", "7:5-9", "a-b", "7-23-1", "7:00:00-9", "07:60-9", "24:01-9"] {
            let message = described { _ = try HistoryInput.window(text) }
            #expect(message.hasPrefix("--window '\(text)': ") && message.hasSuffix("expected HH:MM-HH:MM or whole hours H-H, e.g. 08:00-22:00 or 7-23"),
                    "\(text): \(message)")
            #expect(!message.contains("date"), "not a date: \(message)")
        }
        // Past midnight is the next morning: a night shift's window.
        #expect(try HistoryInput.window("23-7") == (1380, 420))
        #expect(try HistoryInput.window("20:00-00:00") == (1200, 1440))
        #expect(try HistoryInput.window("24-8") == (0, 480))
        for text in ["8-8", "0-0", "24-24", "07:30-7:30"] {
            #expect(described { _ = try HistoryInput.window(text) } == "--window '\(text)' ends when it starts; all day is 00:00-24:00")
        }
    }

    /// A TZ naming no zone here was read as UTC without a word (a desk trial: every day began an hour out).
    @Test func aTimeZoneNameThisMachineLacksIsRefused() throws {
        let unknown = "TZ='Europe/Londn' is not a time zone this machine knows (its names are in /usr/share/zoneinfo, e.g. Europe/London; "
            + "a POSIX rule needs its daylight dates, as in EST5EDT,M3.2.0,M11.1.0): correct it, or unset TZ to use the system's"
        #expect(described { _ = try DayCalendar.resolveTimeZone(setting: nil, environment: ["TZ": "Europe/Londn"]) } == unknown)
        #expect(try DayCalendar.resolveTimeZone(setting: nil, environment: ["TZ": "Europe/London"]).identifier == "Europe/London")
        for tz in ["CET-1CEST", "EST+5x", "/nowhere/zone"] {
            #expect(throws: HistoryError.self, "\(tz)") { _ = try DayCalendar.resolveTimeZone(setting: nil, environment: ["TZ": tz]) }
        }
        #expect(try DayCalendar.resolveTimeZone(setting: "Asia/Tokyo", environment: ["TZ": "Europe/Londn"]).identifier == "Asia/Tokyo")
    }

    /// TZ as the C library reads it besides a name: a POSIX rule, or a zone file's path. Each was left to the
    /// system's zone (UTC here), so `date` said New York's time and a drink at 23:30 was stored 5 h out (a trial).
    @Test func aPosixRuleOrAZoneFileInTZIsThatZone() throws {
        func offsets(_ tz: String) throws -> [Int] {
            let zone = try DayCalendar.resolveTimeZone(setting: nil, environment: ["TZ": tz])
            // 15 January and 15 July 2026, noon UTC.
            return [1_768_478_400.0, 1_784_116_800.0].map { zone.secondsFromGMT(at: $0) }
        }
        #expect(try offsets("EST+5") == [-18_000, -18_000])
        #expect(try offsets("<+0330>-3:30") == [12_600, 12_600])
        #expect(try offsets("EST5EDT,M3.2.0,M11.1.0") == [-18_000, -14_400])
        #expect(try offsets("CET-1CEST,M3.5.0,M10.5.0/3") == [3_600, 7_200])
        #expect(try offsets(":/usr/share/zoneinfo/Australia/Sydney") == [39_600, 36_000])
        #expect(try DayCalendar.resolveTimeZone(setting: nil, environment: ["TZ": "/usr/share/zoneinfo/Asia/Tokyo"]).identifier == "Asia/Tokyo")
        #expect(try DayCalendar.resolveTimeZone(setting: nil, environment: ["TZ": "EST+5"]).identifier == "EST+5")
        // Days follow the rule's changes: New York's rule and its zone agree through 2026.
        let rule = try DayCalendar.resolveTimeZone(setting: nil, environment: ["TZ": "EST5EDT,M3.2.0,M11.1.0"])
        let named = try #require(LocalZone(identifier: "America/New_York"))
        for hour in stride(from: 1_767_225_600.0, to: 1_798_761_600.0, by: 3600) {
            if rule.secondsFromGMT(at: hour) != named.secondsFromGMT(at: hour) { Issue.record("\(hour)"); break }
        }
        #expect(rule.nextTransition(after: 1_767_225_600) == named.nextTransition(after: 1_767_225_600))
    }

    @Test func aDurationNeedsItsUnit() throws {
        #expect(try HistoryInput.minutes("30m") == 30)
        #expect(try HistoryInput.minutes("2h") == 120)
        for text in ["1h30m", "1h 30min", "1 h 30", "1H30", "1hr 30 minutes"] { #expect(try HistoryInput.minutes(text) == 90, "\(text)") }
        #expect(described { _ = try HistoryInput.minutes("1h75m") } == "invalid amount '1h75m': the minutes after the hours are 0 to 59")
        #expect(described { _ = try HistoryInput.minutes("1h 120m") } == "invalid amount '1h 120m': the minutes after the hours are 0 to 59")
        #expect(described { _ = try HistoryInput.minutes("30h30m") } == "invalid amount '30h30m': between 0 and 24 h, please")
        #expect(described { _ = try HistoryInput.minutes("3") } == "invalid amount '3': give a unit: 3min or 3h")
        // A point between thousands (1.500ml) is asked about, not stored as a drop and a half; litres keep their decimals.
        #expect(described { _ = try HistoryInput.volume("1.500ml", defaultUnit: nil) }
                    == "invalid amount '1.500ml': a point between thousands is not read: write 1500ml, or 1.5ml if you mean a few drops")
        #expect(try HistoryInput.volume("1.500l", defaultUnit: nil) == 1500 && HistoryInput.volume("1.5ml", defaultUnit: nil) == 1.5)
        // Only millilitres are asked about: a few mL in litres or centilitres was written that way on purpose.
        #expect(try HistoryInput.volume("0.005l", defaultUnit: nil) == 5 && HistoryInput.volume("0.500cl", defaultUnit: nil) == 5)
        #expect(described { _ = try HistoryInput.volume("2.500", defaultUnit: .ml) }
                    == "invalid amount '2.500': a point between thousands is not read: write 2500, or 2.5 if you mean a few drops")
        #expect(try HistoryInput.volume("12.500ml", defaultUnit: nil) == 12.5, "not a few drops: as written")
        // A bare amount: the units in which it would be a drink (1 mL to 5 L), not 250oz (7.4 L) or 0.0015l.
        for (text, fits) in [("250", "250ml"), ("1.5", "1.5l, 1.5ml or 1.5oz (US fl oz)"), ("8", "8ml or 8oz (US fl oz)"),
                             ("0.5", "0.5l or 0.5oz (US fl oz)"), ("9000", "such as 250ml, 0.5l or 8oz")] {
            #expect(described { _ = try HistoryInput.volume(text, defaultUnit: nil) } == "invalid amount '\(text)': give a unit: \(fits)")
        }
        #expect(described { _ = try HistoryInput.minutes("3d") } == "unknown unit 'd' (a duration takes min or h, e.g. 30min or 2h)")
    }

    /// A bare goal out of range was meant in another unit: say which would fit (100 mL to 20 L).
    @Test func aBareGoalOutOfRangeSuggestsTheUnitMeant() throws {
        for (text, unit, hint) in [("2", VolumeUnit.ml, " (a bare number is in mL: did you mean 2l?)"),
                                   ("70", .ml, " (a bare number is in mL: did you mean 70oz (US fl oz)?)"),
                                   ("2", .usFluidOunce, " (a bare number is in US fl oz: did you mean 2l?)"),
                                   ("25000", .ml, ""), ("25000ml", .ml, ""), ("2ml", .ml, "")] {
            #expect(described { _ = try HistoryInput.goal(text, defaultUnit: unit) }
                    == "invalid amount '\(text)': a daily goal between 100 mL and 20 L, please\(hint)", "\(text) in \(unit)")
        }
        #expect(described { _ = try HistoryInput.goal("2", defaultUnit: nil) } == "invalid amount '2': give a unit: 2l")
        #expect(described { _ = try HistoryInput.goal("0.01", defaultUnit: nil) } == "invalid amount '0.01': give a unit: such as 2l or 68oz")
        #expect(try HistoryInput.goal("2000", defaultUnit: .ml) == 2000)
        #expect(try abs(HistoryInput.goal("68", defaultUnit: .usFluidOunce) - 2011.0) < 0.1)
    }

    /// Not a number: "a bare number is in your units" only where one is (a Home Assistant trial typed 250 next, and was told to give a unit).
    @Test func notANumberSaysWhetherABareNumberIsTaken() {
        #expect(described { _ = try HistoryInput.volume("lots", defaultUnit: .ml) }
                == "invalid amount 'lots': expected a number, such as 250ml (a bare number is in your units)")
        #expect(described { _ = try HistoryInput.volume("lots", defaultUnit: nil) }
                == "invalid amount 'lots': expected a number followed by a unit, such as 250ml, 0.5l or 8oz")
        #expect(described { _ = try HistoryInput.goal("lots", defaultUnit: nil) }
                == "invalid amount 'lots': expected a number followed by a unit, such as 2l or 68oz")
    }

    @Test func anAmountIsFinite() {
        #expect(described { _ = try HistoryInput.volume("1e308l", defaultUnit: nil) } == "invalid amount '1e308l': too large to be an amount")
        #expect(described { _ = try HistoryInput.volume("1e307 oz", defaultUnit: nil) } == "invalid amount '1e307 oz': too large to be an amount")
    }

    /// Each unit error lists the units that kind of value takes (issue 24).
    @Test func unitErrorsListWhatWouldDo() throws {
        #expect(described { _ = try HistoryInput.volume("5 cups", defaultUnit: .ml) }
                == "unknown unit 'cups' (a volume takes ml, cl, l, or oz or fl oz for US fluid ounces)")
        #expect(described { _ = try HistoryEnvironment.unitOption("gallons") } == "unknown unit 'gallons' (units are ml, or oz for US fluid ounces)")
        #expect(described { _ = try HistoryInput.weightKG("11st") } == "unknown unit 'st' (a weight takes kg or lb)")
        // A comma in the number is said to be one (it was "unknown unit ',3l'"), for a decimal or thousands alike.
        for text in ["0,3l", "1,500ml"] {
            #expect(described { _ = try HistoryInput.volume(text, defaultUnit: nil) }.contains("write the number without a comma"), "\(text)")
        }
        let f = try HistoryFixture()
        #expect(described { _ = try History.setPersonUnits(f.environment(), name: "me", units: "gallons", json: false) }
                == "unknown unit 'gallons' (their units are ml, oz for US fluid ounces, or household)")
        #expect(described { _ = try History.settings(f.environment(), units: "cups", dayStart: nil, timeZone: nil, json: false) }
                == "unknown unit 'cups' (units are ml, or oz for US fluid ounces)")
    }

    @Test func optionsAreNamed() throws {
        let f = try HistoryFixture()
        #expect(described { _ = try History.chart(f.environment(), kind: .month, date: "0999-12-31", out: "-") }
                == "--date: invalid date '0999-12-31': before 1970: a history starts on 1970-01-01 at the earliest")
        #expect(described { _ = try History.setGoal(f.environment(), amount: "2000ml", from: "0999-01-01", json: false) }
                == "--from: invalid date '0999-01-01': before 1970: a history starts on 1970-01-01 at the earliest")
        #expect(described { _ = try History.calendar(f.environment(), month: "0999-12", json: false) }.hasPrefix("--month: invalid date '0999-12'"))
        #expect(described { _ = try History.log(f.environment(), since: "0001-01-01", until: nil, device: nil, limit: nil,
                                                 includeDeleted: false, csv: false, json: false) }.hasPrefix("--since: invalid date"))
        #expect(described { _ = try History.shareCard(f.environment(), period: .day, name: String(repeating: "x", count: 41)) }
                .hasSuffix("the card's name has 41 characters, at most 40"))
        // A right-to-left override turned the heading around; refused as a note's is.
        #expect(described { _ = try History.shareCard(f.environment(), period: .day, name: "\u{202E}evil") }
                .hasSuffix("the card's name holds the control character U+202E"))
        // The bounds themselves work: the last month a history holds is a month to come, said as such.
        #expect(described { _ = try History.chart(f.environment(), kind: .month, date: "9999-12-31", out: "-") }
                == "--date: invalid date '9999-12-31': a day still to come (today is 2026-03-04)")
        #expect(described { _ = try History.chart(f.environment(), kind: .week, date: "2026-03-05", out: "-") }.hasSuffix("a day still to come (today is 2026-03-04)"))
        #expect(try History.chart(f.environment(), kind: .week, date: "2026-03-04", out: "-").contains("4 March 2026"))
        #expect(try History.chart(f.environment(), kind: .thirtyDays, date: "1970-01-01", out: "-").contains("1969"))
    }
}

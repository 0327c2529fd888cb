import FoundationEssentials
import QuenchCharts
import QuenchCore
import QuenchStore
import Threading

extension History {
    /// What `quench chart` draws.
    public enum ChartKind: String, Sendable, CaseIterable {
        /// The 7 days ending on the date.
        case week
        /// The 30 days ending on the date.
        case thirtyDays = "30days"
        /// The calendar month of the date (as `quench calendar` shows it).
        case month
        /// The date's sips over the day and the running total against the goal.
        case day
    }

    /// Which card `quench share` makes.
    public enum SharePeriod: String, Sendable, CaseIterable {
        case day, week
    }

    // MARK: The charts' inputs, from the store

    /// Bars for the `days` days ending on `date` (default today): each day's
    /// total and the goal in force that day, as `calendar` counts them.
    public static func intakeBars(_ environment: HistoryEnvironment, days: Int, endingOn date: String?) throws(HistoryError) -> IntakeBars {
        guard (1...366).contains(days) else { throw .invalidArgument("a chart covers 1 to 366 days") }
        let c = try environment.context(creating: false)
        let last = try chartDay(c, date)
        let first = last.adding(days: -(days - 1))
        return try intakeBars(c, from: first, through: last, title: "\(days) days, \(Self.range(first, last))")
    }

    /// Bars for the calendar month that holds `date` (default today).
    public static func monthBars(_ environment: HistoryEnvironment, containing date: String?) throws(HistoryError) -> IntakeBars {
        let c = try environment.context(creating: false)
        let day = try chartDay(c, date)
        let t = day.components
        let first = day.adding(days: 1 - t.day)
        let last = first.adding(days: Timestamp.daysIn(month: t.month, year: t.year) - 1)
        return try intakeBars(c, from: first, through: last, title: "\(Format.months[t.month - 1]) \(t.year)")
    }

    static func intakeBars(_ c: HistoryContext, from first: CivilDay, through last: CivilDay, title: String) throws(HistoryError) -> IntakeBars {
        // Weekday and date under a week's bars; the day of the month alone under more.
        let short = last.number - first.number < 7
        // The history begins at the first sip (today when there is none), as `stats` counts days.
        let historyStart = try c.firstSipDay() ?? c.today
        // One entry a day, in order: each its day by number, never read back from its text.
        let days = zip(first.number...last.number, try dayEntries(c, from: first, through: last)).map { number, entry in
            let day = CivilDay(number: number)
            let label = short ? "\(Format.weekdays[day.weekday].prefix(3)) \(day.components.day)" : "\(day.components.day)"
            return IntakeBars.Day(date: entry.date, label: label, name: Format.longDate(day), ml: entry.ml, goalMl: entry.goalMl,
                                  sips: entry.sips, isFuture: entry.mark == "future", beforeHistory: number < historyStart.number)
        }
        return IntakeBars(title: title, days: days, unit: c.units)
    }

    /// The sips of `date` (default today) over the day, with the goal in force
    /// that day, ticks every three hours of local time (where the clocks change,
    /// the hours fall where they fall), and now, when the day is today.
    public static func dayTimeline(_ environment: HistoryEnvironment, date: String?) throws(HistoryError) -> DayTimeline {
        let c = try environment.context(creating: false)
        return try dayTimeline(c, day: try chartDay(c, date))
    }

    static func dayTimeline(_ c: HistoryContext, day: CivilDay) throws(HistoryError) -> DayTimeline {
        let (start, end) = c.calendar.interval(of: day)
        let events = try c.run { (store) throws(StoreError) in try store.events(EventQuery(since: start, until: end, kinds: [.sip], person: c.personID)) }
        let sips = events.sorted { ($0.time, $0.id ?? 0) < ($1.time, $1.id ?? 0) }.map { event in
            DayTimeline.Sip(offsetSeconds: event.time.secondsSince1970 - start.secondsSince1970, ml: event.ml,
                            clock: Format.time(event.time, c.calendar))
        }
        let length = end.secondsSince1970 - start.secondsSince1970
        var ticks: [DayTimeline.Tick] = []
        for hours in stride(from: 0, through: 24, by: 3) {
            let instant = c.calendar.instant(atLocalSeconds: day.number * 86_400 + (c.calendar.dayStartHour + hours) * 3600)
            let offset = instant.secondsSince1970 - start.secondsSince1970
            guard offset <= length, offset > (ticks.last?.offsetSeconds ?? -1) else { continue }
            ticks.append(.init(offsetSeconds: offset, label: Format.time(instant, c.calendar)))
        }
        let now: Double? = day == c.today ? c.now.secondsSince1970 - start.secondsSince1970 : day > c.today ? 0 : nil
        return DayTimeline(title: Format.longDate(day), lengthSeconds: length, ticks: ticks, sips: sips,
                           goalMl: try c.goalBook().goal(on: day), nowOffsetSeconds: now, unit: c.units)
    }

    /// Today's card (intake, goal and sips as `today` reports them, the streak as
    /// `stats` counts it) or the last 7 days' (bars, and `stats --week`'s total,
    /// average and days the goal was met).
    public static func shareCard(_ environment: HistoryEnvironment, period: SharePeriod, name: String?) throws(HistoryError) -> ShareCard {
        // A heading, as long as a person's name may be (`Person.problem(withName:)`), and with no control
        // character, as stored text: a right-to-left override turned the heading (and the terminal's line) around.
        if let name, !name.isEmpty, let problem = ShareCard.nameField.problem(name) {
            throw .invalidArgument("--name '\(name.shownSafely(limit: 40))': \(problem)")
        }
        let c = try environment.context(creating: false)
        // In a household the card says whose it is unless given another name.
        let name = name ?? (c.shared ? c.personName : nil)
        switch period {
        case .day:
            let today = try todayReport(c)
            let streak = try statsReport(c, days: 1).currentStreak
            return ShareCard(.day(.init(name: Format.longDate(c.today), intakeMl: today.intakeMl, goalMl: today.goalMl,
                                        sips: today.sips, streak: streak)),
                             person: name, unit: c.units)
        case .week:
            let stats = try statsReport(c, days: 7)
            let first = c.today.adding(days: -6)
            let bars = try intakeBars(c, from: first, through: c.today, title: range(first, c.today))
            return ShareCard(.week(.init(name: bars.title, days: bars.days, totalMl: stats.totalMl, averageMl: stats.dailyAverageMl,
                                         goalMetDays: stats.goalMetDays)),
                             person: name, unit: c.units)
        }
    }

    // MARK: The commands

    /// `quench chart week|30days|month|day [--date DAY] --out FILE.svg`: writes
    /// the chart and says what it shows; with `--out -`, returns the SVG itself.
    /// - Parameter width: the width to lay it out for, in CSS pixels (240 to 800; default 800):
    ///   the web page asks for its own, so a phone's chart is drawn for the phone.
    public static func chart(_ environment: HistoryEnvironment, kind: ChartKind, date: String?, out: String,
                             width: Int? = nil) throws(HistoryError) -> String {
        guard out == "-" || out.lowercased().hasSuffix(".svg") || isStream(out) else {
            throw .invalidArgument("quench chart writes SVG: give --out FILE.svg, or --out - for standard output (not '\(out.shownSafely())')")
        }
        if let width, !ChartWidth.range.contains(Double(width)) {
            throw .invalidArgument("--width \(width): a width from \(Int(ChartWidth.range.lowerBound)) to \(Int(ChartWidth.range.upperBound)) pixels")
        }
        let layout = width.map(Double.init)
        let svg: String, summary: String
        switch kind {
        case .week, .thirtyDays, .month:
            var bars = kind == .month ? try monthBars(environment, containing: date)
                : try intakeBars(environment, days: kind == .week ? 7 : 30, endingOn: date)
            if let layout { bars.layoutWidth = layout }
            (svg, summary) = (bars.svg, bars.summary)
        case .day:
            var timeline = try dayTimeline(environment, date: date)
            if let layout { timeline.layoutWidth = layout }
            (svg, summary) = (timeline.svg, timeline.summary)
        }
        if out == "-" { return String(svg.dropLast()) }  // emit adds the final newline
        try write(svg, to: out)
        return "Wrote \(out): \(summary)"
    }

    /// `quench share --day|--week --out card.png|card.svg`: the card, its
    /// format from the file's extension; PNG through `rasterizer`.
    public static func share(
        _ environment: HistoryEnvironment, period: SharePeriod, name: String?, out: String,
        rasterizer: SVGRasterizer? = nil
    ) throws(HistoryError) -> String {
        let named = out.contains(".") ? out.split(separator: ".").last.map { $0.lowercased() } : nil
        let ext: String
        if let named, named == "png" || named == "svg" {
            ext = named
        } else if isStream(out) {
            // A device or a pipe (`/dev/null`, a FIFO) is written into whatever its name says: the card in PNG.
            ext = "png"
        } else {
            throw .invalidArgument("quench share writes a .png or an .svg file, by its extension: give --out card.png or --out card.svg "
                                   + "(not '\(out.shownSafely())')")
        }
        let card = try shareCard(environment, period: period, name: name)
        if ext == "svg" {
            try write(card.svg, to: out)
        } else {
            try writePNG(card, to: out, rasterizer: rasterizer, environment)
        }
        return "Wrote \(out) (\(ShareCard.width) × \(ShareCard.height)): \(card.summary)"
    }

    /// The share card's bytes (the web page's share links): SVG as is, PNG
    /// through the rasterizer by way of a temporary file.
    public static func shareCardFile(_ environment: HistoryEnvironment, period: SharePeriod, name: String?, png: Bool,
                                     rasterizer: SVGRasterizer? = nil) throws(HistoryError) -> [UInt8] {
        let card = try shareCard(environment, period: period, name: name)
        guard png else { return Array(card.svg.utf8) }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("quench-card-\(UUID().uuidString).png").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try writePNG(card, to: path, rasterizer: rasterizer, environment)
        do { return Array(try Data(contentsOf: URL(fileURLWithPath: path))) } catch { throw .fileError(path: path, cause: error) }
    }

    // MARK: Helpers

    /// The card as a PNG at `path`, through `rasterizer` (default: rsvg-convert from the PATH).
    static func writePNG(_ card: ShareCard, to path: String, rasterizer: SVGRasterizer?, _ environment: HistoryEnvironment) throws(HistoryError) {
        do {
            try (rasterizer ?? SVGRasterizer.find(variables: environment.variables))
                .writePNG(svg: card.svg, width: ShareCard.width, height: ShareCard.height, to: path)
        } catch {
            throw .rasterizer(error)
        }
    }

    /// `--date`: a day (`YYYY-MM-DD`, `today`, `yesterday`); today when not given.
    /// `--date` (`?date=`) of `today` and the charts: a day of the history, never one to come
    /// (it has no intake and no last sip yet: `today` said "Last sip …, just now", a chart drew empty days).
    static func chartDay(_ c: HistoryContext, _ text: String?) throws(HistoryError) -> CivilDay {
        guard let text else { return c.today }
        let day = try HistoryInput.option("--date") { () throws(HistoryError) in try HistoryInput.day(text, calendar: c.calendar, now: c.now) }
        if day > c.today { throw .inOption("--date", .invalidDate(text, reason: "a day still to come (today is \(c.today))")) }
        return day
    }

    /// `2 to 8 March 2026`, `26 February to 4 March 2026`, `28 December 2025 to 3 January 2026`.
    static func range(_ first: CivilDay, _ last: CivilDay) -> String {
        let a = first.components, b = last.components
        let end = "\(b.day) \(Format.months[b.month - 1]) \(b.year)"
        if a.year != b.year { return "\(a.day) \(Format.months[a.month - 1]) \(a.year) to \(end)" }
        if a.month != b.month { return "\(a.day) \(Format.months[a.month - 1]) to \(end)" }
        return first == last ? end : "\(a.day) to \(end)"
    }

    /// A device or a FIFO, which is written into, not replaced (its name need not say the format).
    static func isStream(_ path: String) -> Bool {
        if case .stream? = try? OutputDestination.of(path) { true } else { false }
    }

    /// Replaces `path` whole (written beside it, then renamed).
    /// A regular file is replaced in one step (through a link, the file it names); a device or a
    /// FIFO is written into (`OutputDestination`).
    static func write(_ text: String, to path: String) throws(HistoryError) {
        do {
            switch try OutputDestination.of(path) {
            case .stream(let device): try OutputDestination.stream(Array(text.utf8), into: device)
            case .replace(let file): try Data(text.utf8).write(to: URL(fileURLWithPath: file), options: .atomic)
            }
        } catch {
            throw .fileError(path: path, cause: error)
        }
    }
}

extension ShareCard {
    /// The name a card is headed with (`--name`, `?name=`): a person's name's length, no control character.
    static let nameField = TextField(name: "the card's name", maxCharacters: 40)
}

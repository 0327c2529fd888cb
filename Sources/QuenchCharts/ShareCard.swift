import QuenchCore

/// A card to share (1200 × 630, the size link previews use): a day as a ring of
/// the goal with the sip count and streak, or a week as bars against the goal
/// with its total, average and days the goal was met.
public struct ShareCard: Sendable, Hashable {
    public struct Day: Sendable, Hashable {
        /// `Wednesday 4 March 2026`.
        public var name: String
        public var intakeMl: Double
        public var goalMl: Double
        public var sips: Int
        /// Days in a row the goal was met, up to this one.
        public var streak: Int

        public init(name: String, intakeMl: Double, goalMl: Double, sips: Int, streak: Int) {
            self.name = name
            self.intakeMl = intakeMl
            self.goalMl = goalMl
            self.sips = sips
            self.streak = streak
        }
    }

    public struct Week: Sendable, Hashable {
        /// `26 February to 4 March 2026`.
        public var name: String
        public var days: [IntakeBars.Day]
        public var totalMl: Double
        /// Over the days with history (as `quench stats` counts them).
        public var averageMl: Double
        public var goalMetDays: Int

        public init(name: String, days: [IntakeBars.Day], totalMl: Double, averageMl: Double, goalMetDays: Int) {
            self.name = name
            self.days = days
            self.totalMl = totalMl
            self.averageMl = averageMl
            self.goalMetDays = goalMetDays
        }
    }

    public enum Content: Sendable, Hashable {
        case day(Day)
        case week(Week)
    }

    public var content: Content
    /// The person's name for the heading (`Ann's day`); nil gives `Today` / `This week`.
    public var person: String?
    public var unit: VolumeUnit

    public init(_ content: Content, person: String? = nil, unit: VolumeUnit) {
        self.content = content
        self.person = person
        self.unit = unit
    }

    public static let width = 1200
    public static let height = 630

    var heading: String {
        let person = person.map { $0.trimmedOfSpaces() }.flatMap { $0.isEmpty ? nil : $0 }
        switch content {
        case .day: return person.map { "\($0)’s day" } ?? "Today"
        case .week: return person.map { "\($0)’s week" } ?? "This week"
        }
    }

    /// The heading's size (`.qc-card .qc-heading`), the smallest it is shrunk to, and the width it has.
    static let headingSize = 56.0
    static let smallestHeadingSize = 34.0
    static let headingWidth = Double(width) - 120

    /// The heading at a size it fits in at: a name of up to 40 characters ran off the card's edge with its
    /// "’s day" (a household's trial). Shrunk to fit, down to `smallestHeadingSize`; past that, the name is
    /// cut short with an ellipsis and the period kept.
    static func fitted(heading: String) -> (text: String, size: Double) {
        let width = ems(heading) * headingSize
        if width <= headingWidth { return (heading, headingSize) }
        let size = (headingSize * headingWidth / width).rounded(.down)
        if size >= smallestHeadingSize { return (heading, size) }
        // The period's words after the name ("’s day"), kept whole; the name cut to what fits.
        // (The period's words, not the first "’s " in it: a name may hold one, "Mary’s Mum Jo".)
        let tail = ["’s day", "’s week"].first { heading.hasSuffix($0) } ?? ""
        var name = String(heading.dropLast(tail.count))
        while !name.isEmpty, ems(name + "…" + tail) * smallestHeadingSize > headingWidth { name.removeLast() }
        return (name.trimmedOfSpaces() + "…" + tail, smallestHeadingSize)
    }

    /// The width of `text` in ems, in the card's bold sans-serif (DejaVu Sans Bold), estimated per character:
    /// its own widths for ASCII (a W is 1.11 em, an i 0.34: forty W's ran off the card at the average's size),
    /// a full em for the East Asian scripts and emoji, 0.75 for any other letter (an accented one is its base's,
    /// capitals run to 0.85), nothing for joiners, variation selectors and combining marks.
    static func ems(_ text: String) -> Double {
        text.unicodeScalars.reduce(0) { sum, scalar in
            let v = scalar.value
            if v >= 0x20, v < 0x7F { return sum + asciiEms[Int(v) - 0x20] }
            let wide = (0x1100...0x115F).contains(v) || (0x2E80...0xA4CF).contains(v) || (0xAC00...0xD7A3).contains(v)
                || (0xF900...0xFAFF).contains(v) || (0xFE30...0xFE4F).contains(v) || (0xFF00...0xFF60).contains(v)
                || (0x1F300...0x1FAFF).contains(v) || v >= 0x20000
            let invisible = (0x200B...0x200F).contains(v) || (0xFE00...0xFE0F).contains(v) || scalar.properties.generalCategory == .nonspacingMark
            return sum + (invisible ? 0 : wide ? 1.0 : v == 0x2019 ? 0.38 : 0.75)
        }
    }

    /// DejaVu Sans Bold's advance widths in ems, space (0x20) to tilde (0x7E).
    private static let asciiEms: [Double] = [
        0.35, 0.44, 0.50, 0.84, 0.70, 1.00, 0.87, 0.28, 0.46, 0.46, 0.52, 0.84, 0.38, 0.42, 0.38, 0.37,  //  !"#$%&'()*+,-./
        0.70, 0.70, 0.70, 0.70, 0.70, 0.70, 0.70, 0.70, 0.70, 0.70, 0.40, 0.40, 0.84, 0.84, 0.84, 0.58,  // 0-9 :;<=>?
        1.00, 0.78, 0.76, 0.73, 0.83, 0.68, 0.68, 0.82, 0.84, 0.37, 0.37, 0.78, 0.64, 1.00, 0.84, 0.85,  // @A-O
        0.73, 0.85, 0.77, 0.72, 0.68, 0.81, 0.78, 1.11, 0.77, 0.73, 0.70, 0.46, 0.37, 0.46, 0.84, 0.50,  // P-Z [\]^_
        0.50, 0.68, 0.72, 0.59, 0.72, 0.68, 0.44, 0.72, 0.72, 0.35, 0.35, 0.67, 0.35, 1.05, 0.72, 0.69,  // `a-o
        0.72, 0.72, 0.50, 0.60, 0.48, 0.72, 0.65, 0.93, 0.65, 0.65, 0.58, 0.72, 0.37, 0.72, 0.84,        // p-z {|}~
    ]

    /// One sentence for `aria-label`.
    public var summary: String {
        switch content {
        case .day(let d):
            let percent = Self.percent(d)
            return "\(heading), \(d.name): \(VolumeText.volume(d.intakeMl, unit)) of a \(VolumeText.volume(d.goalMl, unit)) goal "
                + "(\(VolumeText.grouped(percent)) %\(d.intakeMl >= d.goalMl ? ", goal met" : "")), \(VolumeText.count(d.sips, "sip")), "
                + (d.streak == 0 ? "" : "a ") + Self.streak(d.streak) + "."
        case .week(let w):
            return "\(heading), \(w.name): \(VolumeText.volume(w.totalMl, unit)) in all, \(VolumeText.volume(w.averageMl, unit)) a day "
                + "on average; goal met on \(w.goalMetDays) of \(VolumeText.count(IntakeBars.counted(w.days).count, "day"))."
        }
    }

    /// "4-day streak"; none is "no streak yet" (a "0-day streak" on a card to share reads as a slight).
    static func streak(_ days: Int) -> String { days == 0 ? "no streak yet" : "\(VolumeText.grouped(days))-day streak" }

    /// Whole percent of the goal, rounded down (100 % only once met). × 100
    /// before ÷ goal: 2,300 / 2,000 × 100 is 114.99999999999999.
    static func percent(_ d: Day) -> Int {
        d.goalMl > 0 ? Int(saturating: (max(0, d.intakeMl) * 100 / d.goalMl).rounded(.down)) : 0
    }

    /// The card at its own size (a picture, not a responsive chart).
    public var svg: String {
        let width = Double(Self.width), height = Double(Self.height)
        var w = SVGWriter()
        let description: String
        switch content {
        case .day: description = summary
        case .week(let week): description = summary + " " + week.days.map(BarPlot.dayTitle(unit: unit)).joined(separator: "; ") + "."
        }
        w.openDocument(width: width, height: height, classes: "qc-card", fixedSize: true, title: heading, label: summary,
                       description: description, style: ChartStyle.card)
        w.element("rect", ["class": .text("qc-bg"), "width": .number(width), "height": .number(height)])
        // The brand: a drop and the name, top left; the period, top right.
        w.element("path", ["class": .text("qc-drop"), "d": .text("M78 40C78 40 60 62 60 74A18 18 0 0 0 96 74C96 62 78 40 78 40Z")])
        w.text("Quench", ["class": .text("qc-brand"), "x": .number(108), "y": .number(84)])
        switch content {
        case .day(let d): w.text(d.name, ["class": .text("qc-muted"), "x": .number(width - 60), "y": .number(84), "text-anchor": .text("end")])
        case .week(let wk): w.text(wk.name, ["class": .text("qc-muted"), "x": .number(width - 60), "y": .number(84), "text-anchor": .text("end")])
        }
        let (fitted, size) = Self.fitted(heading: heading)
        if size < Self.headingSize {
            w.text(fitted, ["class": .text("qc-heading"), "x": .number(60), "y": .number(170), "style": .text("font-size:\(SVGText.number(size))px")])
        } else {
            w.text(fitted, ["class": .text("qc-heading"), "x": .number(60), "y": .number(170)])
        }
        switch content {
        case .day(let day): drawDay(day, into: &w)
        case .week(let week): drawWeek(week, into: &w)
        }
        w.closeDocument()
        return w.text
    }

    private func drawDay(_ d: Day, into w: inout SVGWriter) {
        let cx = 290.0, cy = 395.0, r = 150.0
        let fraction = d.goalMl > 0 ? max(0, d.intakeMl / d.goalMl) : 0
        let met = d.intakeMl >= d.goalMl
        // The ring: a circle's stroke dashed to the fraction of the goal, starting at twelve o'clock.
        let circumference = 2 * Double.pi * r
        let arc = min(1, fraction) * circumference
        w.element("circle", ["class": .text("qc-track"), "cx": .number(cx), "cy": .number(cy), "r": .number(r)])
        if arc > 0 {
            w.element("circle", ["class": .text(met ? "qc-ring qc-met" : "qc-ring"), "cx": .number(cx), "cy": .number(cy),
                                 "r": .number(r), "stroke-dasharray": .text("\(SVGText.number(arc)) \(SVGText.number(circumference))"),
                                 "transform": .text("rotate(-90 \(SVGText.number(cx)) \(SVGText.number(cy)))")])
        }
        let percent = Self.percent(d)
        w.text("\(VolumeText.grouped(percent)) %", ["class": .text("qc-percent"), "x": .number(cx), "y": .number(cy + 14), "text-anchor": .text("middle")])
        w.text(met ? "✓ goal met" : "of the goal", ["class": .text(met ? "qc-check" : "qc-muted"), "x": .number(cx),
                                                  "y": .number(cy + 58), "text-anchor": .text("middle")])

        let x = 560.0
        w.text(VolumeText.volume(d.intakeMl, unit), ["class": .text("qc-big"), "x": .number(x), "y": .number(320)])
        w.text("of a \(VolumeText.volume(d.goalMl, unit)) goal", ["class": .text("qc-muted"), "x": .number(x), "y": .number(366)])
        w.text(VolumeText.count(d.sips, "sip"), ["x": .number(x), "y": .number(450)])
        w.text(Self.streak(d.streak), ["x": .number(x), "y": .number(500)])
        footer(into: &w)
    }

    private func drawWeek(_ week: Week, into w: inout SVGWriter) {
        w.element("rect", ["class": .text("qc-panel"), "x": .number(40), "y": .number(200), "width": .number(720),
                           "height": .number(390), "rx": .number(16)])
        let plot = BarPlot(days: week.days, unit: unit, left: 124, top: 250, right: 748, bottom: 530, labelSize: 22, smallSize: 22,
                           smallLabels: true)
        plot.draw(into: &w)
        let x = 800.0
        w.text("in all", ["class": .text("qc-muted qc-small"), "x": .number(x), "y": .number(236)])
        w.text(VolumeText.volume(week.totalMl, unit), ["class": .text("qc-stat"), "x": .number(x), "y": .number(290)])
        w.text("a day on average", ["class": .text("qc-muted qc-small"), "x": .number(x), "y": .number(346)])
        w.text(VolumeText.volume(week.averageMl, unit), ["class": .text("qc-stat"), "x": .number(x), "y": .number(400)])
        w.text("goal met", ["class": .text("qc-muted qc-small"), "x": .number(x), "y": .number(456)])
        // Out of the days the average counts (a history begun on Thursday: of 5, not 7); no tick on none.
        let counted = IntakeBars.counted(week.days).count
        w.text("\(week.goalMetDays == 0 ? "" : "✓ ")\(week.goalMetDays) of \(VolumeText.count(counted, "day"))", ["class": .text("qc-stat"), "x": .number(x), "y": .number(510)])
        let goals = week.days.map(\.goalMl)
        if let high = goals.max(), let low = goals.min() {
            let text = low == high ? VolumeText.volume(high, unit) : "\(VolumeText.amount(low, unit)) to \(VolumeText.volume(high, unit))"
            w.element("line", ["class": .text("qc-goal"), "x1": .number(x), "y1": .number(560), "x2": .number(x + 44), "y2": .number(560)])
            w.text("goal \(text)", ["class": .text("qc-small"), "x": .number(x + 56), "y": .number(568)])
        }
    }

    private func footer(into w: inout SVGWriter) {
        w.text("logged with Quench", ["class": .text("qc-muted qc-small"), "x": .number(Double(Self.width) - 60),
                                                        "y": .number(Double(Self.height) - 40), "text-anchor": .text("end")])
    }
}

extension String {
    /// Without leading and trailing spaces and newlines (no Foundation here).
    func trimmedOfSpaces() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
              let last = scalars.lastIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        return String(scalars[first...last])
    }
}

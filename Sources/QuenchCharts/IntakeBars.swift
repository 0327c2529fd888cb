import QuenchCore

/// Daily totals as bars against each day's goal: a week, the last 30 days, a
/// month. Plain values in, SVG text out.
public struct IntakeBars: Sendable, Hashable {
    public struct Day: Sendable, Hashable {
        /// `2026-03-04`.
        public var date: String
        /// Under the bar: `Wed 4`, or `4` when there are many bars.
        public var label: String
        /// In titles and descriptions: `Wednesday 4 March 2026`.
        public var name: String
        public var ml: Double
        /// The goal in force that day (goals have a history).
        public var goalMl: Double
        public var sips: Int
        /// A day of the period still to come (the rest of this month): no bar.
        public var isFuture: Bool
        /// A day before the person's first sip: drawn, but not one of the days an average is over
        /// (as `quench stats` and the share card count them).
        public var beforeHistory: Bool

        public init(date: String, label: String, name: String, ml: Double, goalMl: Double, sips: Int, isFuture: Bool = false,
                    beforeHistory: Bool = false) {
            self.date = date
            self.label = label
            self.name = name
            self.ml = ml
            self.goalMl = goalMl
            self.sips = sips
            self.isFuture = isFuture
            self.beforeHistory = beforeHistory
        }

        public var met: Bool { !isFuture && ml >= goalMl }
        /// No bar, no value: a day still to come, or one before the history with nothing in it (a "0"
        /// there read as a day without a drink, where the calendar leaves it blank).
        var isBlank: Bool { isFuture || (beforeHistory && ml == 0) }
    }

    /// What the bars cover: `Last 7 days, 26 February to 4 March 2026`.
    public var title: String
    public var days: [Day]
    public var unit: VolumeUnit

    /// The width it is drawn for, in CSS pixels (`ChartWidth.range`, clamped when drawn): a phone's
    /// chart is laid out for the phone, so its text is shown at its size rather than shrunk with an
    /// 800-wide drawing.
    public var layoutWidth = IntakeBars.width

    public init(title: String, days: [Day], unit: VolumeUnit) {
        self.title = title
        self.days = days
        self.unit = unit
    }

    public static let width = 800.0
    public static let height = 380.0

    /// One sentence for `aria-label`: the period, total, daily average and days the goal was met.
    public var summary: String {
        // A period wholly before the first drink has nothing to count: "goal met on 0 of 31 days"
        // read as a month of failing, for a month before the bottle was set up.
        let past = days.filter { !$0.isFuture }
        if !past.isEmpty, past.allSatisfy(\.beforeHistory), past.allSatisfy({ $0.ml == 0 }) {
            return "Daily intake, \(title): before the history begins."
        }
        let counted = Self.counted(days)
        let total = counted.reduce(0) { $0 + $1.ml }
        let average = counted.isEmpty ? 0 : total / Double(counted.count)
        let met = counted.filter(\.met).count
        return "Daily intake, \(title): \(VolumeText.volume(total, unit)) in \(Self.dayCount(counted.count)), "
            + "\(VolumeText.volume(average, unit)) a day on average; goal met on \(met) of \(Self.dayCount(counted.count))."
    }

    /// The days a period's figures count: those the history covers, as `stats` counts them; a period
    /// wholly before it, all its days. Never the days still to come.
    public static func counted(_ days: [Day]) -> [Day] {
        let past = days.filter { !$0.isFuture }
        let covered = past.filter { !$0.beforeHistory }
        return covered.isEmpty ? past : covered
    }

    static func dayCount(_ n: Int) -> String { n == 1 ? "1 day" : "\(n) days" }

    /// The whole chart: width 100 % of its container, height from the viewBox.
    public var svg: String {
        var w = SVGWriter()
        let details = days.map(BarPlot.dayTitle(unit: unit)).joined(separator: "; ")
        let width = ChartWidth.clamped(layoutWidth), narrow = ChartWidth.isNarrow(width)
        w.openDocument(width: width, height: Self.height, classes: "qc-chart qc-intake-bars", fixedSize: false,
                       title: "Daily intake: \(title)", label: summary, description: summary + " " + details + ".", style: ChartStyle.chart)
        w.element("rect", ["class": .text("qc-bg"), "width": .number(width), "height": .number(Self.height), "rx": .number(8)])
        // Narrow: the heading smaller and on two lines, and the legend on a line of its own under it.
        let legendY = ChartWidth.heading(title, narrow: narrow, width: width, into: &w)
        var plot = BarPlot(days: days, unit: unit, left: narrow ? 48 : 64, top: legendY + 36, right: width - 12, bottom: Self.height - 44,
                           labelSize: 13, smallSize: 11)
        plot.thinsLabels = narrow
        plot.legend(into: &w, right: width - 12, y: legendY)
        plot.draw(into: &w)
        w.closeDocument()
        return w.text
    }
}

/// Bars, goal line and axis inside a box; drawn by `IntakeBars` and by the
/// week's share card, so both read the same way.
struct BarPlot {
    let days: [IntakeBars.Day]
    let unit: VolumeUnit
    let left: Double, top: Double, right: Double, bottom: Double
    /// Font sizes of the style sheet's `text` and `.qc-small`, for placing labels.
    let labelSize: Double, smallSize: Double
    /// Day labels in the small size whatever the count (the card's larger type).
    var smallLabels = false
    /// Every few days' label only, where each day's would overlap (a phone's 30 days).
    var thinsLabels = false

    var slot: Double { (right - left) / Double(max(1, days.count)) }
    /// Day labels in the small size: the card's, or when there are many bars.
    var usesSmallLabels: Bool { smallLabels || days.count > 16 }

    /// Values over the bars only when there is room for them.
    var showsValues: Bool { days.count <= 14 && (!thinsLabels || slot >= 40) }

    /// Every how many days a label is drawn (counted back from the last, which always has one).
    var labelEvery: Int {
        guard thinsLabels else { return 1 }
        let small = usesSmallLabels
        let needed = (small ? smallSize : labelSize) * (small ? 2.2 : 3.6)
        return ChartWidth.labelEvery(needs: needed, spacing: slot)
    }

    var scale: VolumeScale {
        let highest = days.map { max($0.isFuture ? 0 : $0.ml, $0.goalMl) }.max() ?? 0
        // Room above the tallest bar for its value and check mark.
        let marks = (showsValues ? labelSize + 4 : 0) + smallSize + 10
        return VolumeScale(maximumMl: highest, unit: unit, bottom: bottom, top: top,
                           headroom: marks / max(1, bottom - top - marks))
    }

    /// `Wednesday 4 March 2026: 2,100 mL of the 2,000 mL goal, 3 sips, goal met`.
    static func dayTitle(unit: VolumeUnit) -> (IntakeBars.Day) -> String {
        { day in
            guard !day.isFuture else { return "\(day.name): still to come" }
            if day.beforeHistory, day.ml == 0 { return "\(day.name): before the history begins" }
            let sips = VolumeText.count(day.sips, "sip")
            let verdict = day.met ? "goal met" : "\(VolumeText.volume(day.goalMl - day.ml, unit)) short of the goal"
            return "\(day.name): \(VolumeText.volume(day.ml, unit)) of the \(VolumeText.volume(day.goalMl, unit)) goal, \(sips), \(verdict)"
        }
    }

    func draw(into w: inout SVGWriter) {
        let scale = scale
        w.open("g", ["class": .text("qc-axis-labels")])
        for tick in scale.ticksMl {
            let y = scale.y(tick)
            w.element("line", ["class": .text(tick == 0 ? "qc-axis" : "qc-grid"), "x1": .number(left), "y1": .number(y),
                               "x2": .number(right), "y2": .number(y)])
            w.text(VolumeScale.label(tick, unit), ["class": .text("qc-muted qc-small"), "x": .number(left - 6),
                                                   "y": .number(y + smallSize * 0.35), "text-anchor": .text("end")])
        }
        w.text(unit == .ml ? "mL" : "oz", ["class": .text("qc-muted qc-small"), "x": .number(left - 6),
                                          "y": .number(top - smallSize), "text-anchor": .text("end")])
        w.close("g")

        let slot = slot, every = labelEvery
        let barWidth = min(slot * 0.7, 64)
        let title = Self.dayTitle(unit: unit)
        let small = usesSmallLabels
        let labelClass = small ? "qc-label qc-small" : "qc-label"
        let dayLabelSize = small ? smallSize : labelSize
        func centre(_ i: Int) -> Double { left + slot * (Double(i) + 0.5) }
        // Three layers: the bars, the goal line over them, and the words and
        // marks over both (with a halo, so the line never strikes them through).
        w.open("g", ["class": .text("qc-bars")])
        for (i, day) in days.enumerated() where !day.isBlank {
            w.element("rect", ["class": .text(day.met ? "qc-bar qc-met" : "qc-bar"), "x": .number(centre(i) - barWidth / 2),
                               "y": .number(scale.y(day.ml)), "width": .number(barWidth), "height": .number(scale.height(day.ml))],
                      title: title(day))
        }
        w.close("g")
        w.element("path", ["class": .text("qc-goal"), "d": .text(goalPath(scale: scale, slot: slot))])
        w.open("g", ["class": .text("qc-marks")])
        for (i, day) in days.enumerated() {
            if !day.isBlank {
                var markY = scale.y(day.ml) - 6
                if showsValues {
                    w.text(VolumeText.amount(day.ml, unit), ["class": .text("qc-value qc-halo"), "x": .number(centre(i)),
                                                              "y": .number(markY), "text-anchor": .text("middle")])
                    markY -= labelSize + 4
                }
                if day.met {
                    w.text("✓", ["class": .text("qc-check qc-halo"), "x": .number(centre(i)), "y": .number(markY),
                                 "text-anchor": .text("middle")])
                }
            }
            guard (days.count - 1 - i) % every == 0 else { continue }
            let muted = day.isFuture ? " qc-muted qc-future" : day.isBlank ? " qc-muted" : ""
            w.text(day.label, ["class": .text(labelClass + muted), "x": .number(centre(i)),
                               "y": .number(bottom + dayLabelSize + 8), "text-anchor": .text("middle")])
        }
        w.close("g")
    }

    /// The goal as a step line: level across each day's slot at that day's
    /// goal, stepping where the goal changed; one straight line when it did not.
    func goalPath(scale: VolumeScale, slot: Double) -> String {
        guard let first = days.first else { return "" }
        var d = "M\(SVGText.number(left)) \(SVGText.number(scale.y(first.goalMl)))"
        var current = first.goalMl
        for (i, day) in days.enumerated().dropFirst() where day.goalMl != current {
            d += "H\(SVGText.number(left + slot * Double(i)))V\(SVGText.number(scale.y(day.goalMl)))"
            current = day.goalMl
        }
        return d + "H\(SVGText.number(right))"
    }

    /// `✓ goal met   - - goal 2,000 mL`, ending at `right`.
    func legend(into w: inout SVGWriter, right: Double, y: Double) {
        let goals = days.map(\.goalMl)
        let low = goals.min() ?? 0, high = goals.max() ?? 0
        let goalText = low == high ? "goal \(VolumeText.volume(high, unit))"
            : "goal \(VolumeText.amount(low, unit)) to \(VolumeText.volume(high, unit))"
        // Widths estimated from the font size (DejaVu Sans averages ~0.6 em per character).
        let goalWidth = Double(goalText.count) * labelSize * 0.6
        let goalX = right - goalWidth
        w.open("g", ["class": .text("qc-legend")])
        w.text(goalText, ["x": .number(goalX), "y": .number(y)])
        w.element("line", ["class": .text("qc-goal"), "x1": .number(goalX - 36), "y1": .number(y - labelSize * 0.35),
                           "x2": .number(goalX - 8), "y2": .number(y - labelSize * 0.35)])
        let metX = goalX - 60 - 8.5 * labelSize * 0.6
        w.text("✓", ["class": .text("qc-check"), "x": .number(metX), "y": .number(y)])
        w.text("goal met", ["x": .number(metX + labelSize), "y": .number(y)])
        w.close("g")
    }
}

/// The widths a chart is laid out for.
public enum ChartWidth {
    public static let range = 240.0...800.0
    /// Below this, headings shrink and legends get a line of their own.
    static let narrowBelow = 560.0

    public static func clamped(_ width: Double) -> Double {
        width.isFinite ? min(max(width, range.lowerBound), range.upperBound) : range.upperBound
    }

    static func isNarrow(_ width: Double) -> Bool { width < narrowBelow }

    /// Every how many marks a label goes, so that each has `needs` pixels where marks are `spacing` apart.
    static func labelEvery(needs: Double, spacing: Double) -> Int {
        max(1, Int((needs / max(1, spacing)).rounded(.up)))
    }

    /// The chart's heading at the top left; where its legend goes (the baseline's y). Wide: one line,
    /// the legend at its right. Narrow: split after its first comma onto two smaller lines, the legend under them;
    /// a line too long for `width` has its months shortened ("25 Nov to 1 Dec 2026"), then its letters made
    /// smaller ("25 November to 1 December 2026" ran past a 320 px phone's chart at 200 %, cut off).
    static func heading(_ title: String, narrow: Bool, width: Double, into w: inout SVGWriter) -> Double {
        guard narrow else {
            w.text(title, ["class": .text("qc-heading"), "x": .number(16), "y": .number(28)])
            return 28
        }
        let room = width - 24
        let parts = title.split(separator: ", ", maxSplits: 1).map(String.init)
        for (i, whole) in parts.enumerated() {
            let line = ShareCard.ems(whole) * narrowHeadingSize > room ? shortMonths(whole) : whole
            let size = min(narrowHeadingSize, room / max(ShareCard.ems(line), 1))
            let y = 24 + Double(i) * 17
            if size < narrowHeadingSize {
                w.text(line, ["class": .text("qc-heading qc-narrow"), "x": .number(12), "y": .number(y),
                              "style": .text("font-size:\(SVGText.number(size.rounded(.down)))px")])
            } else {
                w.text(line, ["class": .text("qc-heading qc-narrow"), "x": .number(12), "y": .number(y)])
            }
        }
        return 24 + Double(parts.count) * 17 + 6
    }

    /// `.qc-narrow`'s font size (px).
    static let narrowHeadingSize = 13.0

    /// Each English month's name as its first three letters.
    static func shortMonths(_ text: String) -> String {
        let months: Set<Substring> = ["January", "February", "March", "April", "June", "July", "August", "September", "October",
                                      "November", "December"]
        return text.split(separator: " ", omittingEmptySubsequences: false).map { months.contains($0) ? $0.prefix(3) : $0 }.joined(separator: " ")
    }
}

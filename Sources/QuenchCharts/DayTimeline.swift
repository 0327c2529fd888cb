import QuenchCore

/// One day's sips on a time line: above, the intake so far as a line climbing
/// towards the goal; below, each sip as a mark whose height follows its volume.
///
/// Times are seconds from the day's start (the user's day, which may begin at
/// 04:00 and may last 23 or 25 hours); the caller, who knows the time zone,
/// supplies the ticks' wall-clock labels, so this stays free of calendars.
public struct DayTimeline: Sendable, Hashable {
    public struct Sip: Sendable, Hashable {
        /// Seconds from the day's start.
        public var offsetSeconds: Double
        public var ml: Double
        /// Its local time, `08:15`.
        public var clock: String

        public init(offsetSeconds: Double, ml: Double, clock: String) {
            self.offsetSeconds = offsetSeconds
            self.ml = ml
            self.clock = clock
        }
    }

    /// A labelled point on the time axis (`08:00`).
    public struct Tick: Sendable, Hashable {
        public var offsetSeconds: Double
        public var label: String

        public init(offsetSeconds: Double, label: String) {
            self.offsetSeconds = offsetSeconds
            self.label = label
        }
    }

    /// The day: `Wednesday 4 March 2026`.
    public var title: String
    /// 86 400, or 23 or 25 hours on the days the clocks change.
    public var lengthSeconds: Double
    public var ticks: [Tick]
    /// In time order.
    public var sips: [Sip]
    public var goalMl: Double
    /// For the day in progress, how far into it now is: the line stops there.
    /// Nil for a day that is over.
    public var nowOffsetSeconds: Double?
    public var unit: VolumeUnit

    public init(title: String, lengthSeconds: Double, ticks: [Tick], sips: [Sip], goalMl: Double,
                nowOffsetSeconds: Double? = nil, unit: VolumeUnit) {
        self.title = title
        self.lengthSeconds = lengthSeconds
        self.ticks = ticks
        self.sips = sips
        self.goalMl = goalMl
        self.nowOffsetSeconds = nowOffsetSeconds
        self.unit = unit
    }

    public static let width = 800.0
    public static let height = 390.0
    /// The width it is drawn for (as `IntakeBars.layoutWidth`, clamped when drawn).
    public var layoutWidth = DayTimeline.width

    var totalMl: Double { sips.reduce(0) { $0 + $1.ml } }

    /// The sip with which the running total first reached the goal.
    var goalReachedAt: Int? {
        var sum = 0.0
        for (i, sip) in sips.enumerated() {
            sum += sip.ml
            if sum >= goalMl { return i }
        }
        return nil
    }

    /// One sentence for `aria-label`.
    public var summary: String {
        let total = totalMl
        // × 100 before ÷ goal: 2,300 / 2,000 × 100 is 114.99999999999999.
        let percent = goalMl > 0 ? Int(saturating: (total * 100 / goalMl).rounded(.down)) : 0
        guard !sips.isEmpty else {
            return "Intake over \(title): no sips recorded, against a \(VolumeText.volume(goalMl, unit)) goal."
        }
        let sipText = VolumeText.count(sips.count, "sip")
        let reached = goalReachedAt.map { "goal met at \(sips[$0].clock)" } ?? "goal not met"
        return "Intake over \(title): \(VolumeText.volume(total, unit)) in \(sipText) against a \(VolumeText.volume(goalMl, unit)) goal "
            + "(\(VolumeText.grouped(percent)) %), \(reached); first sip at \(sips[0].clock), last at \(sips[sips.count - 1].clock)."
    }

    public var svg: String {
        let width = ChartWidth.clamped(layoutWidth), narrow = ChartWidth.isNarrow(width)
        let left = narrow ? 48.0 : 64.0, right = width - (narrow ? 12 : 16)
        var lineTop = 72.0
        let lineBottom = 252.0, sipTop = 284.0, sipBottom = 354.0
        let length = max(1, lengthSeconds)
        func x(_ offset: Double) -> Double { left + min(max(0, offset), length) / length * (right - left) }

        var running = 0.0
        let details = sips.map { sip in
            running += sip.ml
            return "\(sip.clock) \(VolumeText.volume(sip.ml, unit)) (\(VolumeText.volume(running, unit)) so far)"
        }
        var w = SVGWriter()
        w.openDocument(width: width, height: Self.height, classes: "qc-chart qc-day-timeline", fixedSize: false,
                       title: "Intake over \(title)", label: summary,
                       description: summary + (details.isEmpty ? "" : " Sips: " + details.joined(separator: "; ") + "."),
                       style: ChartStyle.chart)
        w.element("rect", ["class": .text("qc-bg"), "width": .number(width), "height": .number(Self.height), "rx": .number(8)])
        let legendY = ChartWidth.heading(title, narrow: narrow, width: width, into: &w)
        if narrow { lineTop = legendY + 32 }
        let goalText = "goal \(VolumeText.volume(goalMl, unit))"
        let goalX = right - Double(goalText.count) * 13 * 0.6
        w.text(goalText, ["x": .number(goalX), "y": .number(legendY)])
        w.element("line", ["class": .text("qc-goal"), "x1": .number(goalX - 36), "y1": .number(legendY - 4.5),
                           "x2": .number(goalX - 8), "y2": .number(legendY - 4.5)])

        // The running total against the goal.
        let scale = VolumeScale(maximumMl: max(totalMl, goalMl), unit: unit, bottom: lineBottom, top: lineTop, headroom: 0.12)
        w.open("g", ["class": .text("qc-axis-labels")])
        for tick in scale.ticksMl {
            let y = scale.y(tick)
            w.element("line", ["class": .text(tick == 0 ? "qc-axis" : "qc-grid"), "x1": .number(left), "y1": .number(y),
                               "x2": .number(right), "y2": .number(y)])
            w.text(VolumeScale.label(tick, unit), ["class": .text("qc-muted qc-small"), "x": .number(left - 6), "y": .number(y + 4),
                                                   "text-anchor": .text("end")])
        }
        w.text(unit == .ml ? "mL" : "oz", ["class": .text("qc-muted qc-small"), "x": .number(left - 6), "y": .number(lineTop - 14),
                                          "text-anchor": .text("end")])
        w.text("so far", ["class": .text("qc-muted qc-small"), "x": .number(left + 4), "y": .number(lineTop - 14)])
        w.close("g")

        let end = x(nowOffsetSeconds ?? length)
        var line = "M\(SVGText.number(left)) \(SVGText.number(lineBottom))"
        running = 0
        for sip in sips {
            running += sip.ml
            line += "H\(SVGText.number(x(sip.offsetSeconds)))V\(SVGText.number(scale.y(running)))"
        }
        line += "H\(SVGText.number(end))"
        w.element("path", ["class": .text("qc-area"), "d": .text(line + "V\(SVGText.number(lineBottom))Z")])
        w.element("path", ["class": .text("qc-line"), "d": .text(line)],
                  title: "\(VolumeText.volume(totalMl, unit)) by the end" + (nowOffsetSeconds == nil ? " of the day" : " so far"))
        w.element("line", ["class": .text("qc-goal"), "x1": .number(left), "y1": .number(scale.y(goalMl)),
                           "x2": .number(right), "y2": .number(scale.y(goalMl))],
                  title: goalText)
        if let reached = goalReachedAt {
            let sip = sips[reached]
            let px = x(sip.offsetSeconds), goalY = scale.y(goalMl)
            let text = "✓ goal met at \(sip.clock)"
            // Where the line is not: right of the point and under the goal line
            // (the total is above the goal from here on), or, near the right
            // edge, left of it and over the goal line (the total was below it).
            let width = Double(text.count) * 13 * 0.62
            let after = px + 6 + width <= right
            // Left of the point, but never past the plot's left edge onto the axis (a phone's narrow
            // chart has no room either side of an early point).
            let end = min(right, max(left + width, px - 6))
            w.text(text, ["class": .text("qc-check qc-halo"), "x": .number(after ? px + 6 : end), "y": .number(after ? goalY + 18 : goalY - 8),
                          "text-anchor": .text(after ? "start" : "end")])
        }
        if sips.isEmpty {
            w.text("No sips recorded", ["class": .text("qc-muted"), "x": .number((left + right) / 2),
                                        "y": .number((lineTop + lineBottom) / 2), "text-anchor": .text("middle")])
        }

        // Each sip, its height following its volume.
        // Four steps for a snug round top (600 mL for a largest sip of 600), of which only the top is labelled.
        let sipScale = VolumeScale(maximumMl: sips.map(\.ml).max() ?? 0, unit: unit, bottom: sipBottom, top: sipTop, headroom: 0)
        w.element("line", ["class": .text("qc-axis"), "x1": .number(left), "y1": .number(sipBottom), "x2": .number(right),
                           "y2": .number(sipBottom)])
        w.element("line", ["class": .text("qc-grid"), "x1": .number(left), "y1": .number(sipTop), "x2": .number(right),
                           "y2": .number(sipTop)])
        w.text(VolumeScale.label(sipScale.topMl, unit), ["class": .text("qc-muted qc-small"), "x": .number(left - 6),
                                                        "y": .number(sipTop + 4), "text-anchor": .text("end")])
        w.text("sips", ["class": .text("qc-muted qc-small"), "x": .number(left - 6), "y": .number(sipBottom),
                        "text-anchor": .text("end")])
        w.open("g", ["class": .text("qc-sips")])
        for sip in sips {
            w.element("rect", ["class": .text("qc-sip"), "x": .number(x(sip.offsetSeconds) - 2), "y": .number(sipScale.y(sip.ml)),
                               "width": .number(4), "height": .number(sipScale.height(sip.ml))],
                      title: "\(sip.clock): \(VolumeText.volume(sip.ml, unit))")
        }
        w.close("g")

        // The time axis: the caller's ticks, and now.
        w.open("g", ["class": .text("qc-time")])
        let shown = ticks.filter { $0.offsetSeconds >= 0 && $0.offsetSeconds <= length }
        // Every tick's mark; a label only where it has room (about 40 px each: a phone shows every other).
        let spacing = shown.count > 1 ? (right - left) / Double(shown.count - 1) : right - left
        let every = ChartWidth.labelEvery(needs: 40, spacing: spacing)
        for (n, tick) in shown.enumerated() {
            let tx = x(tick.offsetSeconds)
            w.element("line", ["class": .text("qc-grid"), "x1": .number(tx), "y1": .number(sipBottom), "x2": .number(tx),
                               "y2": .number(sipBottom + 5)])
            guard n % every == 0 else { continue }
            // The last tick's label ends at the edge rather than past it.
            w.text(tick.label, ["class": .text("qc-muted qc-small"), "x": .number(min(tx, right)), "y": .number(sipBottom + 20),
                                "text-anchor": .text(tx > right - 16 ? "end" : "middle")])
        }
        if let now = nowOffsetSeconds, now >= 0, now <= length {
            w.element("line", ["class": .text("qc-now"), "x1": .number(x(now)), "y1": .number(lineTop), "x2": .number(x(now)),
                               "y2": .number(sipBottom)])
            w.text("now", ["class": .text("qc-muted qc-small"), "x": .number(x(now)), "y": .number(lineTop - 4),
                           "text-anchor": .text("middle")])
        }
        w.close("g")
        w.closeDocument()
        return w.text
    }
}

import QuenchCore
import Testing
@testable import QuenchCharts

/// A week of bars: under, met and over the goal, an empty day, a day just short.
func week(goals: [Double] = Array(repeating: 2000, count: 7), unit: VolumeUnit = .ml) -> IntakeBars {
    let ml: [Double] = [500, 1000, 2500, 0, 1999.5, 2000, 3000]
    let names = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
    let days = (0..<7).map { i in
        IntakeBars.Day(date: "2026-03-0\(i + 1)", label: "\(names[i]) \(i + 1)", name: "\(names[i]) \(i + 1) March 2026",
                       ml: ml[i], goalMl: goals[i], sips: i * 2)
    }
    return IntakeBars(title: "7 days, 1 to 7 March 2026", days: days, unit: unit)
}

/// The y of a path's first point (`M64 123.4H…`).
func firstY(_ d: String) -> Double? {
    let afterM = d.dropFirst()
    let parts = afterM.split(whereSeparator: { $0 == " " || $0.isLetter })
    return parts.count >= 2 ? Double(parts[1]) : nil
}

@Suite struct IntakeBarsTests {
    /// A narrow chart's heading fits its width: a week across two months ran past a 320 px phone's chart at 200 %
    /// ("25 November to 1 December 2026", cut off): its months are shortened, and past that its letters made smaller.
    @Test(arguments: [("7 days, 25 November to 1 December 2026", "25 Nov to 1 Dec 2026", false),
                      ("7 days, 28 December 2025 to 3 January 2026", "28 Dec 2025 to 3 Jan 2026", false),
                      ("7 days, Wednesday 30 September 2026 to Thursday 29 October 2026", "Wednesday 30 Sep 2026 to Thursday 29 Oct 2026", true),
                      ("7 days, 1 to 7 March 2026", "1 to 7 March 2026", false)])
    func aNarrowHeadingFitsItsWidth(title: String, shown: String, smaller: Bool) throws {
        var chart = week()
        chart.title = title
        chart.layoutWidth = ChartWidth.range.lowerBound
        let root = try XMLNode.parse(chart.svg)
        let lines = root.elements("text").filter { $0.attributes["class"] == "qc-heading qc-narrow" }
        #expect(lines.map(\.text) == ["7 days", shown])
        let line = try #require(lines.last)
        let size = line.attributes["style"].flatMap { Double($0.dropFirst("font-size:".count).dropLast(2)) } ?? ChartWidth.narrowHeadingSize
        #expect((line.attributes["style"] != nil) == smaller, "\(line.attributes)")
        #expect(ShareCard.ems(line.text) * size + 12 <= ChartWidth.range.lowerBound - 12, "\(line.text) at \(size) px")
    }

    @Test func isWellFormedAndAccessible() throws {
        let svg = week().svg
        let root = try XMLNode.parse(svg)
        #expect(root.name == "svg")
        #expect(root.attributes["xmlns"] == "http://www.w3.org/2000/svg")
        #expect(root.attributes["role"] == "img")
        #expect(root.attributes["viewBox"] == "0 0 800 380")
        #expect(root.attributes["width"] == "100%" && root.attributes["height"] == nil)
        #expect(root.attributes["font-family"] == "DejaVu Sans, Verdana, sans-serif")
        let label = try #require(root.attributes["aria-label"])
        #expect(label == "Daily intake, 7 days, 1 to 7 March 2026: 11,000 mL in 7 days, 1,571 mL a day on average; goal met on 3 of 7 days.")
        #expect(root.children.first?.name == "title" && root.children.dropFirst().first?.name == "desc")
        let style = try #require(root.elements("style").first?.text)
        #expect(style.contains("@media (prefers-color-scheme: dark)"))
        // Scoped: every rule names the chart's own class, so an inlining page is untouched.
        for line in style.split(separator: "\n") {
            let rule = line.drop { $0 == " " }
            guard rule.contains("{"), !rule.hasPrefix("@") else { continue }
            #expect(rule.hasPrefix(".qc-chart"), "\(rule)")
        }
        // No ids: two charts inlined in one page must not clash.
        #expect(root.all.allSatisfy { $0.attributes["id"] == nil })
    }

    @Test func barHeightsFollowTheDataAndTheGoalLineSitsAtTheGoal() throws {
        let chart = week()
        let root = try XMLNode.parse(chart.svg)
        let bars = root.elements("rect", class: "qc-bar")
        #expect(bars.count == 7)
        let heights = bars.map { $0.number("height") ?? -1 }
        let baselines = bars.map { ($0.number("y") ?? 0) + ($0.number("height") ?? 0) }
        let baseline = try #require(baselines.first)
        #expect(baselines.allSatisfy { abs($0 - baseline) < 0.11 })
        // Height per mL, the same for every bar (to the tenth of a unit the output keeps).
        let perMl = heights[6] / 3000
        for (day, height) in zip(chart.days, heights) {
            #expect(abs(height - day.ml * perMl) < 0.11, "\(day.date): \(height)")
        }
        #expect(heights[3] == 0)
        // The tallest bar is the largest day, and the goal line's y is where 2,000 mL would reach.
        #expect(heights.firstIndex(of: heights.max()!) == 6)
        let goal = try #require(root.elements("path", class: "qc-goal").first?.attributes["d"])
        let goalY = try #require(firstY(goal))
        #expect(abs((baseline - goalY) - 2000 * perMl) < 0.15, "\(goal)")
        #expect(!goal.contains("V"), "one goal, one straight line: \(goal)")
        // The axis: 0 at the baseline, round ticks up past the tallest bar.
        let ticks = root.elements("line", class: "qc-grid") + root.elements("line", class: "qc-axis")
        #expect(ticks.contains { abs(($0.number("y1") ?? 0) - baseline) < 0.11 })
    }

    @Test func goalMetIsMarkedNotOnlyByColour() throws {
        let chart = week()
        let root = try XMLNode.parse(chart.svg)
        let bars = root.elements("rect", class: "qc-bar")
        let met = bars.filter { $0.classes.contains("qc-met") }
        #expect(met.count == 3)  // 2,500, 2,000, 3,000; 1,999.5 is short
        // A check mark over each met bar (and one in the legend), and words in every bar's title.
        #expect(root.elements("text", class: "qc-check").count == 3 + 1)
        for (day, bar) in zip(chart.days, bars) {
            let title = try #require(bar.title)
            #expect(title.hasPrefix(day.name + ": " + VolumeText.volume(day.ml, .ml)), "\(title)")
            #expect(title.contains(day.met ? "goal met" : "short of the goal"), "\(title)")
        }
        #expect(bars[4].title == "Mon 5 March 2026: 2,000 mL of the 2,000 mL goal, 8 sips, 1 mL short of the goal")
        // Day labels under the bars.
        let labels = root.elements("text", class: "qc-label").map(\.text)
        #expect(labels == chart.days.map(\.label))
    }

    @Test func aChangingGoalStepsTheLine() throws {
        let root = try XMLNode.parse(week(goals: [2000, 2000, 2000, 2500, 2500, 2500, 2500]).svg)
        let goal = try #require(root.elements("path", class: "qc-goal").first?.attributes["d"])
        #expect(goal.filter { $0 == "V" }.count == 1, "\(goal)")
        #expect(root.attributes["aria-label"]?.isEmpty == false)
        let legend = root.elements("g", class: "qc-legend").first?.allText ?? ""
        #expect(legend.contains("goal 2,000 to 2,500 mL"), "\(legend)")
    }

    @Test func aMonthWithDaysToComeAndNothingRecorded() throws {
        let days = (1...31).map { d in
            IntakeBars.Day(date: "2026-03-\(d < 10 ? "0" : "")\(d)", label: "\(d)", name: "\(d) March 2026", ml: 0, goalMl: 2000,
                           sips: 0, isFuture: d > 4)
        }
        let chart = IntakeBars(title: "March 2026", days: days, unit: .ml)
        let root = try XMLNode.parse(chart.svg)
        #expect(root.elements("rect", class: "qc-bar").count == 4)
        #expect(root.elements("text", class: "qc-label").count == 31)
        #expect(root.elements("text", class: "qc-future").count == 27)
        #expect(chart.summary.contains("0 mL in 4 days") && chart.summary.contains("goal met on 0 of 4 days"), "\(chart.summary)")
        // An empty chart still has an axis to read.
        #expect(root.elements("line", class: "qc-grid").count >= 2)
    }

    @Test func ouncesOnTheAxisAndInTitles() throws {
        let root = try XMLNode.parse(week(unit: .usFluidOunce).svg)
        let titles = root.elements("rect", class: "qc-bar").compactMap(\.title)
        #expect(titles[6].contains("101.4 oz of the 67.6 oz goal"), "\(titles[6])")
        #expect(root.elements("text").contains { $0.text == "oz" })
        let axis = root.elements("g", class: "qc-axis-labels").first?.children.filter { $0.name == "text" }.map(\.text) ?? []
        #expect(axis.first == "0" && axis.count >= 3 && !axis.contains { $0.hasSuffix(".0") }, "\(axis)")
    }

    @Test func textIsEscaped() throws {
        var chart = week()
        chart.title = "<Ann & \"Bo\">'s week\u{7}"
        chart.days[0].name = "<script>alert(1)</script>"
        let svg = chart.svg
        #expect(!svg.contains("<Ann") && !svg.contains("<script"))
        let root = try XMLNode.parse(svg)
        #expect(root.elements("text", class: "qc-heading").first?.text == "<Ann & \"Bo\">'s week\u{FFFD}")
        #expect(root.elements("rect", class: "qc-bar").first?.title?.hasPrefix("<script>alert(1)</script>: ") == true)
    }

    @Test func sameDataSameBytesAndCompactNumbers() throws {
        #expect(week().svg == week().svg)
        #expect(week(goals: [1999.99, 2000, 2000, 2000, 2000, 2000, 2000]).svg != week().svg)
        for svg in [week().svg, week(unit: .usFluidOunce).svg] {
            try expectCompactNumbers(svg)
        }
    }
}

/// Every number in every attribute has at most one decimal.
func expectCompactNumbers(_ svg: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let root = try XMLNode.parse(svg)
    for node in root.all {
        for (name, value) in node.attributes where name != "aria-label" {
            var digitsAfterPoint = 0, afterPoint = false
            for c in value {
                if c == "." { afterPoint = true; digitsAfterPoint = 0 } else if c.isNumber, afterPoint { digitsAfterPoint += 1 } else { afterPoint = false }
                #expect(digitsAfterPoint <= 1, "\(node.name) \(name)=\"\(value)\"", sourceLocation: sourceLocation)
                if digitsAfterPoint > 1 { return }
            }
        }
    }
}

@Suite struct SVGTextTests {
    @Test(arguments: [
        (0.1 + 0.2, "0.3"), (12.0, "12"), (12.04, "12"), (12.05, "12.1"), (-3.14159, "-3.1"), (-0.04, "0"),
        (Double.nan, "0"), (Double.infinity, "0"), (630, "630"), (1234567.891, "1234567.9"),
    ])
    func numbers(value: Double, text: String) {
        #expect(SVGText.number(value) == text)
    }

    @Test func escaping() {
        #expect(SVGText.escaped("<Ann & \"Bo\">'") == "&lt;Ann &amp; &quot;Bo&quot;&gt;&apos;")
        #expect(SVGText.escaped("a\u{0}b\u{1F}c\td\ne") == "a\u{FFFD}b\u{FFFD}c\td\ne")
        #expect(SVGText.escaped("Zoë 💧 ✓") == "Zoë 💧 ✓")
    }

    @Test func roundAxisSteps() {
        #expect(VolumeScale.niceStep(550) == 1000)
        #expect(VolumeScale.niceStep(500) == 500)
        #expect(VolumeScale.niceStep(230) == 250)
        #expect(VolumeScale.niceStep(17) == 20)
        #expect(VolumeScale.niceStep(0.3) == 0.5)
        let scale = VolumeScale(maximumMl: 2000, unit: .ml, bottom: 300, top: 100, headroom: 0.1)
        #expect(scale.ticksMl == [0, 1000, 2000, 3000])
        #expect(scale.y(0) == 300 && scale.y(scale.topMl) == 100)
        // Nothing recorded: still an axis.
        #expect(VolumeScale(maximumMl: 0, unit: .ml, bottom: 300, top: 100).topMl == 1000)
    }
}

import QuenchCore
import Testing
@testable import QuenchCharts

@Suite struct ShareCardTests {
    let day = ShareCard.Day(name: "Wednesday 4 March 2026", intakeMl: 1500, goalMl: 2000, sips: 7, streak: 3)

    @Test func dayCardIsAFixedSizeAccessiblePicture() throws {
        let card = ShareCard(.day(day), unit: .ml)
        let root = try XMLNode.parse(card.svg)
        #expect(root.attributes["viewBox"] == "0 0 1200 630")
        #expect(root.attributes["width"] == "1200" && root.attributes["height"] == "630")
        #expect(root.attributes["role"] == "img")
        #expect(root.attributes["aria-label"]
                == "Today, Wednesday 4 March 2026: 1,500 mL of a 2,000 mL goal (75 %), 7 sips, a 3-day streak.")
        #expect(root.title == "Today")
        let texts = root.elements("text").map(\.text)
        for expected in ["75 %", "1,500 mL", "of a 2,000 mL goal", "7 sips", "3-day streak"] {
            #expect(texts.contains(expected), "\(expected) in \(texts)")
        }
        // The ring's arc is three quarters of its circumference.
        let ring = try #require(root.elements("circle", class: "qc-ring").first)
        let dash = (ring.attributes["stroke-dasharray"] ?? "").split(separator: " ").compactMap { Double($0) }
        #expect(dash.count == 2 && abs(dash[0] / dash[1] - 0.75) < 0.001, "\(dash)")
        try expectCompactNumbers(card.svg)
    }

    /// Counts group their digits as amounts do: "3,649-day streak", not "3649-day streak" (issue 24).
    @Test func longCountsAreGrouped() throws {
        let card = ShareCard(.day(.init(name: "Monday 1 March 2036", intakeMl: 250_000, goalMl: 2000, sips: 1234, streak: 3649)), unit: .ml)
        #expect(card.summary == "Today, Monday 1 March 2036: 250,000 mL of a 2,000 mL goal (12,500 %, goal met), 1,234 sips, a 3,649-day streak.")
        let texts = try XMLNode.parse(card.svg).elements("text").map(\.text)
        for expected in ["12,500 %", "1,234 sips", "3,649-day streak"] {
            #expect(texts.contains(expected), "\(expected) in \(texts)")
        }
    }

    @Test func aDayWithNothingYetHasNoArc() throws {
        let card = ShareCard(.day(.init(name: "Wednesday 4 March 2026", intakeMl: 0, goalMl: 2000, sips: 0, streak: 0)), unit: .ml)
        let root = try XMLNode.parse(card.svg)
        #expect(root.elements("circle", class: "qc-ring").isEmpty)
        #expect(root.elements("text").contains { $0.text == "0 sips" })
    }

    @Test func theNameIsEscaped() throws {
        let card = ShareCard(.day(day), person: "<Ann & \"Bo\">", unit: .ml)
        let svg = card.svg
        #expect(!svg.contains("<Ann"))
        let root = try XMLNode.parse(svg)
        #expect(root.elements("text", class: "qc-heading").first?.text == "<Ann & \"Bo\">’s day")
        #expect(root.title == "<Ann & \"Bo\">’s day")
        #expect(root.attributes["aria-label"]?.hasPrefix("<Ann & \"Bo\">’s day, ") == true)
        // A blank name is no name.
        #expect(ShareCard(.day(day), person: "  ", unit: .ml).heading == "Today")
    }

    /// A name of up to 40 characters ran off the card's edge, its "’s day" with it (a household's trial): the
    /// heading is shrunk to fit whole, and a name longer than shrinking allows is cut with an ellipsis, its
    /// period kept. Wide scripts count wide (a Chinese name of 20 characters is wider than a Latin one of 30).
    @Test(arguments: ["Ann", "Maximiliane Wolkenstein-Łukasiewiczówna", "Anna Maria González de la Fuente Zoë",
                      String(repeating: "明", count: 20), String(repeating: "W", count: 200),
                      "Mary’s Mum " + String(repeating: "W", count: 60)])
    func aLongNameFitsTheCard(name: String) throws {
        let bars = week()
        let week = ShareCard.Week(name: "1 to 7 March 2026", days: bars.days, totalMl: 9500, averageMl: 1900, goalMetDays: 3)
        for content in [ShareCard.Content.day(day), .week(week)] {
            let card = ShareCard(content, person: name, unit: .ml)
            let heading = try #require(try XMLNode.parse(card.svg).elements("text", class: "qc-heading").first)
            let style: String? = heading.attributes["style"]
            let size = style.flatMap { Double(String($0.dropFirst(10).dropLast(2))) } ?? ShareCard.headingSize
            #expect(ShareCard.ems(heading.text) * size <= ShareCard.headingWidth, "\(heading.text) at \(size) px")
            let period: String = card.heading.hasSuffix("’s day") ? "’s day" : "’s week"
            #expect(heading.text.hasSuffix(period), "\(heading.text)")
            if name.count <= 40 {
                #expect(heading.text == card.heading, "a name the page allows is whole")
            } else {
                #expect(heading.text.contains("…") && size == ShareCard.smallestHeadingSize, "\(heading.text)")
            }
            #expect(size == ShareCard.headingSize || name.count >= 20, "a short name keeps the heading’s size")
        }
    }

    /// A history begun two days into the week: its goal met "of 5 days", as its average and `chart week`
    /// count them (it said "of 7"); none met has no tick, and a day without a streak says so.
    @Test func aWeekBegunLateCountsItsOwnDays() throws {
        var bars = week()
        for i in 0..<2 { bars.days[i].beforeHistory = true; bars.days[i].ml = 0 }
        let card = ShareCard(.week(.init(name: "1 to 7 March 2026", days: bars.days, totalMl: 9500, averageMl: 1900, goalMetDays: 3)),
                             unit: .ml)
        #expect(card.summary.hasSuffix("goal met on 3 of 5 days."), "\(card.summary)")
        #expect(bars.summary.hasSuffix("goal met on 3 of 5 days."), "the chart's, the same: \(bars.summary)")
        #expect(try XMLNode.parse(card.svg).elements("text").map(\.text).contains("✓ 3 of 5 days"))
        // The two days before it have no bar and no "0" over them (read as days without a drink), on the card
        // and on the chart; their labels stay, muted.
        for svg in [card.svg, bars.svg] {
            let root = try XMLNode.parse(svg)
            #expect(root.elements("rect", class: "qc-bar").count == 5, "\(svg)")
            #expect(root.elements("text", class: "qc-value").count == 5, "\(svg)")
            #expect(root.elements("text", class: "qc-label").filter { $0.classes.contains("qc-muted") }.map(\.text)
                    == bars.days.prefix(2).map(\.label), "\(svg)")
        }
        let none = ShareCard(.week(.init(name: "1 to 7 March 2026", days: bars.days, totalMl: 0, averageMl: 0, goalMetDays: 0)), unit: .ml)
        #expect(try XMLNode.parse(none.svg).elements("text").map(\.text).contains("0 of 5 days"))
        let day = ShareCard(.day(.init(name: "Wednesday 4 March 2026", intakeMl: 0, goalMl: 2000, sips: 0, streak: 0)), unit: .ml)
        let dayTexts = try XMLNode.parse(day.svg).elements("text").map(\.text)
        #expect(day.summary.hasSuffix("0 sips, no streak yet.") && dayTexts.contains("no streak yet"), "\(day.summary) \(dayTexts)")
    }

    @Test func weekCardDrawsTheBarsWithTheGoalLine() throws {
        let bars = week()
        let card = ShareCard(.week(.init(name: "1 to 7 March 2026", days: bars.days, totalMl: 11_000, averageMl: 1571, goalMetDays: 3)),
                             person: "Ann", unit: .ml)
        let root = try XMLNode.parse(card.svg)
        #expect(root.title == "Ann’s week")
        let rects = root.elements("rect", class: "qc-bar")
        #expect(rects.count == 7 && rects.filter { $0.classes.contains("qc-met") }.count == 3)
        #expect(root.elements("path", class: "qc-goal").count == 1)
        let texts = root.elements("text").map(\.text)
        for expected in ["11,000 mL", "1,571 mL", "✓ 3 of 7 days", "goal 2,000 mL"] {
            #expect(texts.contains(expected), "\(expected) in \(texts)")
        }
        #expect(card.svg == ShareCard(.week(.init(name: "1 to 7 March 2026", days: bars.days, totalMl: 11_000, averageMl: 1571,
                                                  goalMetDays: 3)), person: "Ann", unit: .ml).svg)
    }
}

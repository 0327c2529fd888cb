import QuenchCore
import Testing
@testable import QuenchCharts

func timeline(sips: [(hours: Double, ml: Double)], goal: Double = 2000, now: Double? = nil) -> DayTimeline {
    DayTimeline(
        title: "Tuesday 3 March 2026", lengthSeconds: 86_400,
        ticks: stride(from: 0, through: 24, by: 3).map { .init(offsetSeconds: Double($0) * 3600, label: "\(($0 + 4) % 24):00") },
        sips: sips.map { .init(offsetSeconds: $0.hours * 3600, ml: $0.ml, clock: "\(4 + Int($0.hours)):00") },
        goalMl: goal, nowOffsetSeconds: now, unit: .ml)
}

@Suite struct DayTimelineTests {
    @Test func sipsAndTheRunningTotalFollowTheData() throws {
        let day = timeline(sips: [(1, 250), (3, 500), (6, 1000), (9, 400), (12, 150)])
        let root = try XMLNode.parse(day.svg)
        #expect(root.attributes["role"] == "img" && root.attributes["width"] == "100%")
        #expect(root.attributes["aria-label"] == "Intake over Tuesday 3 March 2026: 2,300 mL in 5 sips against a 2,000 mL goal (115 %), "
                + "goal met at 13:00; first sip at 5:00, last at 16:00.")
        // Each sip a mark whose height follows its volume, placed by its time.
        let sips = root.elements("rect", class: "qc-sip")
        #expect(sips.count == 5)
        let perMl = (sips[2].number("height") ?? 0) / 1000
        for (sip, mark) in zip(day.sips, sips) {
            #expect(abs((mark.number("height") ?? 0) - sip.ml * perMl) < 0.11)
            #expect(mark.title == "\(sip.clock): \(VolumeText.volume(sip.ml, .ml))")
        }
        let xs = sips.map { ($0.number("x") ?? 0) + 2 }
        let perHour = (xs[1] - xs[0]) / 2
        #expect(abs((xs[4] - xs[0]) - 11 * perHour) < 0.2)
        // The running total ends at 2,300 mL, on the same scale as the goal line.
        let line = try #require(root.elements("path", class: "qc-line").first?.attributes["d"])
        let goal = try #require(root.elements("line", class: "qc-goal").first { $0.attributes["x1"] != nil && $0.title != nil })
        let baseline = try #require(firstY(line))
        let lastV = try #require(line.split(separator: "V").last.flatMap { Double($0.split(separator: "H")[0]) })
        let goalY = try #require(goal.number("y1"))
        #expect(abs((baseline - lastV) / 2300 - (baseline - goalY) / 2000) < 0.001, "\(line)")
        // Reached with the fourth sip (1,750 + 400 mL): said in words, with a check mark.
        #expect(root.elements("text", class: "qc-check").map(\.text) == ["✓ goal met at 13:00"])
        try expectCompactNumbers(day.svg)
    }

    @Test func aDayWithNoSipsRenders() throws {
        let day = timeline(sips: [])
        let root = try XMLNode.parse(day.svg)
        #expect(root.elements("rect", class: "qc-sip").isEmpty)
        #expect(root.elements("text").contains { $0.text == "No sips recorded" })
        #expect(day.summary == "Intake over Tuesday 3 March 2026: no sips recorded, against a 2,000 mL goal.")
        let line = try #require(root.elements("path", class: "qc-line").first?.attributes["d"])
        #expect(!line.contains("V"), "flat: \(line)")
    }

    @Test func todayStopsAtNowAndTicksAreLabelled() throws {
        let day = timeline(sips: [(1, 300)], now: 8 * 3600)
        let root = try XMLNode.parse(day.svg)
        let now = try #require(root.elements("line", class: "qc-now").first)
        let line = try #require(root.elements("path", class: "qc-line").first?.attributes["d"])
        let end = try #require(line.split(separator: "H").last.flatMap { Double($0) })
        #expect(abs(end - (now.number("x1") ?? 0)) < 0.11)
        #expect(root.elements("g", class: "qc-time").first?.children.filter { $0.name == "text" }.map(\.text).prefix(2) == ["4:00", "7:00"])
        #expect(root.elements("text", class: "qc-check").isEmpty)
    }

    @Test func sameDataSameBytes() {
        #expect(timeline(sips: [(1, 250), (2.5, 333.3333)]).svg == timeline(sips: [(1, 250), (2.5, 333.3333)]).svg)
    }
}

import QuenchCore
import Testing

private func sip(_ t: Double, _ ml: Double) -> DetectedEvent {
    DetectedEvent(kind: .sip, t: t, start: t - 5, end: t - 1, ml: ml)
}

private func trueSip(_ start: Double, _ end: Double, _ ml: Double) -> TruthEvent {
    TruthEvent(tStart: start, tEnd: end, kind: .sip, ml: ml)
}

@Suite struct EvaluationMath {
    @Test func windowEdgesAreInclusive() {
        let truth = [trueSip(100, 105, 20)]
        for t in [98.0, 120.0] {
            let report = Evaluation.score(detected: [sip(t, 20)], truth: truth)
            #expect(report.sip.matched == 1, "t = \(t)")
        }
        for t in [97.999, 120.001] {
            let report = Evaluation.score(detected: [sip(t, 20)], truth: truth)
            #expect(report.sip.matched == 0, "t = \(t)")
            #expect(report.sipRecall == 0)
            #expect(report.sipPrecision == 0)
            #expect(report.missed == truth)
            #expect(report.spurious.count == 1)
        }
    }

    @Test func oneToOne() {
        // Two detections for one true sip: one matches, the other is spurious.
        let report = Evaluation.score(detected: [sip(106, 10), sip(108, 10)], truth: [trueSip(100, 105, 20)])
        #expect(report.sip.matched == 1)
        #expect(report.sipRecall == 1)
        #expect(report.sipPrecision == 0.5)
        #expect(report.spurious == [sip(108, 10)])
        #expect(report.sip.detectedTotalML == 20)
        #expect(report.totalIntakeErrorPercent == 0)
    }

    /// The first detection lies in both windows; taking the window that closes
    /// first leaves the later one for the second detection, so both match.
    @Test func earliestClosingWindowMaximisesMatches() {
        let truth = [trueSip(100, 104, 20), trueSip(110, 114, 30)]
        let detected = [sip(112, 30), sip(125, 20)]  // 112 in both; 125 only in the second
        let report = Evaluation.score(detected: detected, truth: truth)
        #expect(report.sip.matched == 2)
        // 112 took the first sip (closes at 119), 125 the second: 10 mL off each.
        #expect(report.sipMeanAbsoluteErrorML == 10)
        #expect(report.matches.map(\.truth.ml) == [20, 30])
    }

    @Test func ties() {
        // Equal windows: the closer mL wins.
        let truth = [trueSip(100, 104, 20), trueSip(100, 104, 40)]
        let report = Evaluation.score(detected: [sip(106, 39)], truth: truth)
        #expect(report.matches.first?.truth.ml == 40)
        #expect(report.missed.map(\.ml) == [20])
    }

    @Test func meanAbsoluteAndTotalError() throws {
        let truth = [trueSip(0, 5, 20), trueSip(100, 105, 30), trueSip(200, 205, 50)]
        let detected = [sip(7, 21), sip(108, 28.5), sip(400, 10)]  // third true sip missed, one spurious
        let report = Evaluation.score(detected: detected, truth: truth)
        #expect(report.sip.matched == 2)
        #expect(abs(try #require(report.sipMeanAbsoluteErrorML) - 1.25) < 1e-12)  // (1 + 1.5) / 2
        // |59.5 − 100| / 100
        #expect(abs(try #require(report.totalIntakeErrorPercent) - 40.5) < 1e-9)
        #expect(abs(try #require(report.sipRecall) - 2.0 / 3) < 1e-12)
        #expect(abs(try #require(report.sipPrecision) - 2.0 / 3) < 1e-12)
    }

    @Test func kindsAreScoredApartAndDiagnosticsIgnored() {
        let truth = [
            trueSip(0, 5, 20),
            TruthEvent(tStart: 50, tEnd: 90, kind: .refill, ml: 500),
            TruthEvent(tStart: 200, tEnd: 210, kind: .pour, ml: 300),
        ]
        let detected = [
            DetectedEvent(kind: .lifted, t: 0.5, start: 0, end: 0, ml: 0),
            DetectedEvent(kind: .placed, t: 6, start: 0, end: 6, ml: 0),
            sip(8, 20),
            DetectedEvent(kind: .sip, t: 95, start: 50, end: 90, ml: 500),  // a refill reported as a sip
            DetectedEvent(kind: .refill, t: 96, start: 50, end: 90, ml: 498),
            DetectedEvent(kind: .pour, t: 215, start: 200, end: 210, ml: 300),
        ]
        let report = Evaluation.score(detected: detected, truth: truth)
        #expect(report.sip.detectedCount == 2)
        #expect(report.sip.matched == 1)
        #expect(report.sipPrecision == 0.5)
        #expect(report.refillRecall == 1)
        #expect(report.refillPrecision == 1)
        #expect(report.pourRecall == 1)
        #expect(report.failures().contains { $0.hasPrefix("sip precision") })
        #expect(report.failures().contains { $0.hasPrefix("total intake error") })
    }

    @Test func emptyInputs() {
        let report = Evaluation.score(detected: [], truth: [])
        #expect(report.sipRecall == nil)
        #expect(report.sipPrecision == nil)
        #expect(report.sipMeanAbsoluteErrorML == nil)
        #expect(report.totalIntakeErrorPercent == 0)
        #expect(report.failures().isEmpty)
        #expect(report.description.contains("n/a"))
    }

    @Test func perfectReportMeetsTargets() {
        let truth = (0..<50).map { trueSip(Double($0) * 100, Double($0) * 100 + 5, 25) }
        let detected = (0..<50).map { sip(Double($0) * 100 + 9, 25.4) }
        let report = Evaluation.score(detected: detected.reversed(), truth: truth)
        #expect(report.sipRecall == 1)
        #expect(report.failures().isEmpty)
        let text = report.description
        #expect(text.contains("sip recall:              1.000"))
        #expect(text.contains("mean abs. error per sip: 0.40 mL"))
        #expect(text.contains("total intake error:      1.60 %"))
    }
}

@Suite struct TruthFiles {
    @Test func roundTrip() throws {
        let events = [
            TruthEvent(tStart: 12.5, tEnd: 18.25, kind: .sip, ml: 23.5),
            TruthEvent(tStart: 4120, tEnd: 4161.3, kind: .refill, ml: 512),
            TruthEvent(tStart: 5000.001, tEnd: 5009, kind: .pour, ml: 333.33),
        ]
        let text = TruthWriter.file(events)
        #expect(text.hasPrefix("t_start,t_end,kind,ml\n12.500,18.250,sip,23.50\n"))
        #expect(try TruthParser.parse(text) == events)
    }

    @Test func commentsBlanksCRLFAndSpaces() throws {
        let text = "\u{FEFF}# made by hand\r\n\r\nt_start, t_end, kind, ml\r\n 1 , 2 , SIP , 3.5 \r\n# note\r\n"
        #expect(try TruthParser.parse(text) == [TruthEvent(tStart: 1, tEnd: 2, kind: .sip, ml: 3.5)])
    }

    static let malformed: [(String, Int, TruthProblem)] = [
        ("", 1, .empty),
        ("# only a comment\n", 1, .empty),
        ("t,value\n0,1\n", 1, .missingColumns(found: "t,value")),
        ("t_start,t_end,kind,ml\n1,2,sip\n", 2, .wrongFieldCount(3)),
        ("t_start,t_end,kind,ml\n1,2,sip,3,4\n", 2, .wrongFieldCount(5)),
        ("t_start,t_end,kind,ml\n1,2,sip,3\nx,2,sip,3\n", 3, .invalidTime(column: "t_start", found: "x")),
        ("t_start,t_end,kind,ml\n1,nan,sip,3\n", 2, .invalidTime(column: "t_end", found: "nan")),
        ("t_start,t_end,kind,ml\n5,2,sip,3\n", 2, .endBeforeStart(start: 5, end: 2)),
        ("t_start,t_end,kind,ml\n1,2,lifted,0\n", 2, .unknownKind("lifted")),
        ("t_start,t_end,kind,ml\n1,2,drink,3\n", 2, .unknownKind("drink")),
        ("t_start,t_end,kind,ml\n1,2,sip,-3\n", 2, .invalidML("-3")),
        ("t_start,t_end,kind,ml\n1,2,sip,\n", 2, .invalidML("")),
        ("t_start,t_end,kind,ml\n\n\n1,2,sip,inf\n", 4, .invalidML("inf")),
        // As a trace's numbers: hexadecimal was read (0x3c as 60), and 0 or 1e300 mL taken.
        ("t_start,t_end,kind,ml\n0x3c,64,sip,40\n", 2, .invalidTime(column: "t_start", found: "0x3c")),
        ("t_start,t_end,kind,ml\n1,2,sip,0\n", 2, .invalidML("0")),
        ("t_start,t_end,kind,ml\n1,2,sip,1e300\n", 2, .invalidML("1e300")),
        ("t_start,t_end,kind,ml\n" + String(repeating: "1", count: 5000) + "\n", 2, .lineTooLong),
    ]

    @Test(arguments: malformed.indices)
    func malformedFilesNameTheLine(index: Int) {
        let (text, line, reason) = Self.malformed[index]
        #expect(throws: TruthError(line: line, reason: reason)) { try TruthParser.parse(text) }
        do {
            _ = try TruthParser.parse(text)
        } catch {
            #expect(error.description.hasPrefix("line \(line): "))
        }
    }
}

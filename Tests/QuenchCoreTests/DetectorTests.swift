import Foundation
import Testing
import QuenchCore
import QuenchSimulator

/// The detector against scripted situations from the simulated bottle, each
/// with realistic noise, spikes and ringing on.
@Suite struct DetectorTests {
    static let weight = SimulationConfiguration.clean(unit: .g).with(.noise, .spikes, .jitter, .ring)
    static let level = SimulationConfiguration.clean(unit: .mm, sampleRate: 5).with(.noise, .jitter, .tiltGarbage, .slosh)

    func run(_ scenario: Scenario) -> (events: [DetectedEvent], truth: [TruthEvent]) {
        let (readings, truth) = scenario.run()
        let events = detect(readings, calibration: scenario.configuration.calibration)
        return (events.filter { !$0.kind.isDiagnostic }, truth)
    }

    /// A logger that writes every 4–10 s (slower than a link gap): each reading was taken for the
    /// end of a gap, no level held, and a trace of sips gave no event at all, silently (a developer's
    /// trial). Three intervals alike make it a slow stream, whose gaps are two and a half of them.
    @Test(arguments: [0.25, 0.2, 0.1])
    func aSlowLoggersSipsAreFound(rate: Double) {
        var c = SimulationConfiguration.clean(unit: .g, sampleRate: rate).with(.noise)
        c.capacityML = 1000
        let (readings, truth) = Scenario(c, seed: 3, initialML: 900).idle(90).sip(ml: 30).idle(90).sip(ml: 45).idle(90).sip(ml: 25).idle(90).run()
        let events = detect(readings, calibration: c.calibration).filter { !$0.kind.isDiagnostic }
        #expect(events.map(\.kind) == [.sip, .sip, .sip], "\(rate) Hz: \(events)")
        for (event, sip) in zip(events, truth) {
            #expect(abs(event.ml - sip.ml) <= 2, "\(rate) Hz: \(event) for \(sip)")
        }
    }

    @Test(arguments: [4.0, 12, 25, 60, 110])
    func oneSipOfAnySize(ml: Double) {
        let (events, _) = run(Scenario(Self.weight).idle(20).sip(ml: ml).idle(30))
        #expect(events.count == 1)
        #expect(events.first?.kind == .sip)
        #expect(abs((events.first?.ml ?? 0) - ml) <= 1.0, "\(events)")
    }

    @Test func sipTimesBracketTheLift() {
        let (events, truth) = run(Scenario(Self.weight).idle(20).sip(ml: 30, liftSeconds: 6).idle(30))
        let sip = try! #require(events.first)
        let real = try! #require(truth.first)
        #expect(abs(sip.start - real.tStart) < 1.5)
        #expect(sip.end >= real.tEnd - 1 && sip.end <= real.tEnd + 3)
        #expect(sip.t > sip.end && sip.t <= real.tEnd + 15, "final within the evaluation window")
    }

    @Test func refillAndPourAreNotIntake() {
        let (events, truth) = run(Scenario(Self.weight, initialML: 300).idle(20).refill(to: 700).idle(30).pour(ml: 500).idle(30))
        #expect(events.map(\.kind) == [.refill, .pour], "\(events)")
        for (event, real) in zip(events, truth) { #expect(abs(event.ml - real.ml) <= 2) }
    }

    @Test func touchesNudgesAndEmptyLiftsAreNothing() {
        let (events, _) = run(Scenario(Self.weight).idle(20).nudge(grams: 150).idle(20).touch(grams: 300, seconds: 3).idle(20)
            .liftWithoutDrinking(seconds: 4).idle(20).touch(grams: -200, seconds: 2).idle(30))
        #expect(events.isEmpty, "\(events)")
    }

    @Test func aPhoneBesideTheBottleIsNotIntake() {
        let (events, _) = run(Scenario(Self.weight).idle(20).phoneOn(grams: 180).idle(40).sip(ml: 20).idle(30).phoneOff().idle(30))
        #expect(events.count == 1 && events.first?.kind == .sip, "\(events)")
        #expect(abs((events.first?.ml ?? 0) - 20) <= 1)
    }

    @Test func handRestingAfterSetDownDoesNotCount() {
        let (events, _) = run(Scenario(Self.weight).idle(20).sip(ml: 18, handRestSeconds: 4).idle(30))
        #expect(events.count == 1)
        #expect(abs((events.first?.ml ?? 0) - 18) <= 1, "\(events)")
    }

    @Test(arguments: GapPlacement.allCases)
    func aSipHiddenByALinkGapCountsOnce(placement: GapPlacement) {
        let (events, truth) = run(Scenario(Self.weight).idle(30).gap(seconds: 90, withSip: 25, placement: placement).idle(40))
        #expect(truth.count == 1)
        #expect(events.count == 1, "\(events)")
        #expect(abs((events.first?.ml ?? 0) - 25) <= 1)
    }

    @Test func driftAndCreepAreNeverSips() {
        var c = Self.weight.with(.drift, .creep)
        c.driftAmplitude = 6
        let (events, _) = run(Scenario(c).idle(3 * 3600))
        #expect(events.isEmpty, "\(events)")
    }

    /// An HX711-like zero that shifts at each lift and stays: the detector
    /// learns from the empty readings that the shifts stay, and judges the
    /// bottle against the zero it was weighed on.
    @Test func lastingZeroShiftsAreCompensated() {
        var c = Self.weight.with(.zeroShift)
        c.zeroShiftSigmaG = 6
        var scenario = Scenario(c, seed: 5, initialML: 900).idle(20)
        for i in 0..<16 { scenario = scenario.sip(ml: 15 + Double(i % 4) * 5).idle(25) }
        let (events, truth) = run(scenario)
        #expect(events.count == truth.count, "\(events)")
        let errors = zip(events, truth).map { abs($0.ml - $1.ml) }
        // The first lifts are hedged while the stream shows whether shifts stay.
        for error in errors.dropFirst(6) { #expect(error <= 2.5, "\(errors)") }
        let total = events.reduce(0) { $0 + $1.ml }, real = truth.reduce(0) { $0 + $1.ml }
        #expect(abs(total - real) / real <= 0.03, "\(total) vs \(real)")
    }

    /// An empty scale that only reads a few grams off while empty: the bottle,
    /// back on it, reads as before, and the offsets are not carried over.
    @Test func passingEmptyOffsetsAreNotCarriedOver() {
        var readings: [Reading] = []
        var t = 0.0
        var random = SeededRandom(seed: 3)
        func hold(_ grams: Double, _ seconds: Double) {
            let end = t + seconds
            while t < end {
                readings.append(Reading(t: t, value: grams + random.normal() * 0.5))
                t += 0.1
            }
        }
        var water = 700.0
        var truth: [Double] = []
        hold(500 + water, 20)
        for i in 0..<16 {
            hold(random.uniform(-4, 4), 4)  // lifted: the empty scale reads a few grams off
            let sip = 12 + Double(i % 5) * 4
            water -= sip
            truth.append(sip)
            hold(500 + water, 25)
        }
        let events = detect(readings, calibration: try! BottleCalibration(unit: .g)).filter { !$0.kind.isDiagnostic }
        #expect(events.count == truth.count, "\(events)")
        let errors = zip(events, truth).map { abs($0.ml - $1) }
        for error in errors.dropFirst(6) { #expect(error <= 1.5, "\(errors)") }
    }

    /// A level sensor in 1 % steps read once a second (issue 20): a sip whose
    /// tilt falls between two readings brings no unreadable one, and its step
    /// is within the noise band; the dithering readings still sit on the new
    /// side of it more often than not. Over 30 bottles of four 8–20 mL sips:
    /// almost all found, none twice. (With a three-second average of the
    /// readings instead of their CUSUM: 111 of 120, and 3 spurious; 115 and 0 now.)
    @Test func smallSipsOnACoarseOneHertzLevelSensor() {
        var c = SimulationConfiguration.preset(.levelPercent)
        c.behaviours = [.sips, .noise, .jitter, .tiltGarbage, .slosh]
        var random = SeededRandom(seed: 26)
        var found = 0, total = 0, spurious = 0, errors: [Double] = []
        for seed in UInt64(1)...30 {
            var scenario = Scenario(c, seed: seed, initialML: 600).idle(40)
            for _ in 0..<4 { scenario = scenario.sip(ml: random.uniform(8, 20)).idle(60) }
            let (events, truth) = run(scenario)
            let report = Evaluation.score(detected: events, truth: truth)
            found += report.sip.matched
            total += truth.count
            spurious += report.spurious.count
            errors += report.matches.map { abs($0.detected.ml - $0.truth.ml) }
        }
        print("small sips at 1 Hz in 1 % steps: \(found) of \(total) found, \(spurious) spurious, mean error \(errors.reduce(0, +) / Double(max(errors.count, 1))) mL")
        #expect(found * 100 >= total * 97, "\(found) of \(total) found")
        #expect(spurious <= 1, "\(spurious) spurious")
    }

    /// One step of a level sensor in whole percent holds 4.3 mL in a sports bottle's
    /// neck and 8 mL in its body. A band learnt from the neck's step (1.6 steps, 6.9 mL)
    /// split a level dithering between two of the body's steps, so each sip there was
    /// confirmed only once the readings happened to sit still: 15–30 s after the bottle
    /// was back instead of about 8 s. With the resolution kept in the sensor's own
    /// units, the band follows the step where the level stands.
    @Test func aLevelSensorsStepFollowsTheBottlesShape() {
        var c = SimulationConfiguration.preset(.levelPercent)
        c.behaviours = [.sips, .noise, .jitter, .tiltGarbage, .slosh]
        c.sampleRate = 5
        c.noise = 0.3
        var random = SeededRandom(seed: 36)
        var delays: [Double] = [], missed = 0
        for seed in UInt64(1)...12 {
            // Full to the neck for a minute (its small step is learnt), then a drink
            // down into the body, then sips there.
            var scenario = Scenario(c, seed: seed, initialML: 745).idle(60).drink(ml: 300, mlPerSecond: 15).idle(60)
            for _ in 0..<4 { scenario = scenario.sip(ml: random.uniform(20, 40)).idle(45) }
            let (events, truth) = run(scenario)
            for sip in truth.dropFirst() {
                guard let event = events.first(where: { $0.kind == .sip && $0.start <= sip.tEnd && $0.t >= sip.tEnd }) else {
                    missed += 1
                    continue
                }
                delays.append(event.t - sip.tEnd)
            }
        }
        print("sips in the body: confirmed \(delays.min() ?? -1)–\(delays.max() ?? -1) s after the bottle was back")
        #expect(missed == 0)
        #expect(delays.count == 48)
        // The level holds 8 s (a level sensor's confirmation) once the slosh calms.
        #expect(delays.max() ?? .infinity <= 13, "confirmed \(delays.sorted().suffix(5)) s after the bottle was back")
    }

    @Test func coarseScaleResolution() {
        var c = SimulationConfiguration.clean(unit: .kg, sampleRate: 1).with(.noise, .jitter)
        c.resolution = 0.005
        c.noise = 1.5
        let (events, _) = run(Scenario(c).idle(30).sip(ml: 40).idle(30))
        #expect(events.count == 1)
        #expect(abs((events.first?.ml ?? 0) - 40) <= 5, "one 5 g step either way")
    }

    /// A Mi scale at rest: 5 g steps, no noise that shows, one broadcast a second, so
    /// the first step it ever shows is the grasp before a lift. After a few seconds
    /// without broadcasts (lost, or a busy gateway), two readings and the grasp once
    /// made a refill of the grasp and a sip larger by as much. A touch earlier on (a
    /// press of `touch` g and its release: two equal steps) is no resolution either.
    @Test(arguments: [(30.0, nil), (37, nil), (38, nil), (39, nil), (38, 40.0), (38, 20), (30, 40)] as [(Double, Double?)])
    func aCoarseScaleAtRestWhoseFirstStepIsAGrasp(heardAgainAt: Double, touch: Double?) throws {
        let calibration = try BottleCalibration(unit: .g, emptyWeightG: 180)
        var readings = (0..<30).map { Reading(t: Double($0), value: $0 == 20 && touch != nil ? 880 + (touch ?? 0) : 880) }
        readings += stride(from: heardAgainAt, to: 40, by: 1).map { Reading(t: $0, value: 880) }
        readings += [Reading(t: 40, value: 920), Reading(t: 40.25, value: 905), Reading(t: 40.5, value: 475)]
        readings += (41..<46).map { Reading(t: Double($0), value: 0) }
        readings += [Reading(t: 46, value: 160), Reading(t: 46.25, value: 820)] + (47..<62).map { Reading(t: Double($0), value: 820) }
        let events = detect(readings, calibration: calibration)
        #expect(events.map(\.kind) == [.sip], "\(events)")
        #expect(events.first.map { abs($0.ml - 60) < 0.01 } == true, "\(events)")
    }

    @Test func levelSensorTiltedWhileDrinking() {
        let (events, truth) = run(Scenario(Self.level).idle(20).sip(ml: 25).idle(30).sip(ml: 40).idle(30).refill(to: 700).idle(30))
        #expect(events.map(\.kind) == [.sip, .sip, .refill], "\(events)")
        for (event, real) in zip(events, truth) {
            // A refill is judged through the slosh of a fresh fill: looser.
            #expect(abs(event.ml - real.ml) <= (real.kind == .sip ? 1.5 : 8), "\(event) vs \(real)")
        }
    }

    @Test func identicalInputGivesIdenticalEvents() {
        let scenario = Scenario(SimulationConfiguration.randomised(seed: 9, duration: 1800), seed: 9).idle(1800)
        #expect(run(scenario).events == run(scenario).events)
    }

    @Test func emptyAndNilStreams() {
        let calibration = try! BottleCalibration(unit: .g)
        #expect(detect([], calibration: calibration).isEmpty)
        #expect(detect((0..<100).map { Reading(t: Double($0), value: nil) }, calibration: calibration).isEmpty)
        #expect(detect([Reading(t: 0, value: .nan), Reading(t: 1, value: .infinity)], calibration: calibration).isEmpty)
    }

    @Test func diagnosticsOnRequest() {
        var configuration = DetectorConfiguration()
        configuration.emitDiagnostics = true
        let (readings, _) = Scenario(Self.weight).idle(20).sip(ml: 20).idle(30).run()
        let events = detect(readings, calibration: Self.weight.calibration, configuration: configuration)
        #expect(events.map(\.kind) == [.lifted, .sip, .placed], "\(events)")
    }
}

/// Many seeds of the randomised simulator: every sensor preset, rate and
/// resolution, with every behaviour on.
@Suite struct DetectorPropertyTests {
    @Test func scoresAcrossSeeds() {
        var detected: [DetectedEvent] = []
        var truth: [TruthEvent] = []
        var offset = 0.0
        for seed in UInt64(100)..<UInt64(124) {
            let configuration = SimulationConfiguration.randomised(seed: seed, duration: 1800)
            var bottle = SimulatedBottle(configuration: configuration, seed: seed)
            var detector = SipDetector(calibration: configuration.calibration)
            var events: [DetectedEvent] = []
            var lastT = -Double.infinity
            while let reading = bottle.next() {
                let before = events.count
                detector.process(reading, into: &events)
                for event in events[before...] {
                    #expect(event.ml >= 0 && event.start <= event.end && event.end <= event.t, "seed \(seed): \(event)")
                    #expect(event.t >= lastT, "events come in time order")
                    #expect(event.t <= reading.t, "an event is final no later than the reading that made it so")
                    lastT = event.t
                }
            }
            detector.finish(into: &events)
            detected += events.map { var e = $0; e.t += offset; e.start += offset; e.end += offset; return e }
            truth += bottle.drainTruth().map { var e = $0; e.tStart += offset; e.tEnd += offset; return e }
            offset += configuration.duration + 100
        }
        let report = Evaluation.score(detected: detected, truth: truth)
        #expect(report.sip.truthCount > 100)
        #expect((report.sipRecall ?? 0) >= 0.97, "\(report)")
        #expect((report.sipPrecision ?? 0) >= 0.97, "\(report)")
        #expect((report.sipMeanAbsoluteErrorML ?? 99) <= 1.6, "\(report)")
        #expect((report.totalIntakeErrorPercent ?? 99) <= 3, "\(report)")
        #expect((report.refillRecall ?? 0) >= 0.95, "\(report)")
    }
}

@Suite struct DetectorObjectTests {
    /// A phone put on the scale while the bottle is off it: the bottle comes
    /// back heavier by the phone, which is neither a refill nor hides the sip.
    @Test func phonePutDownWhileTheBottleIsAway() {
        var readings: [Reading] = []
        var t = 0.0
        func hold(_ grams: Double, _ seconds: Double) {
            let end = t + seconds
            while t < end {
                readings.append(Reading(t: t, value: grams + 0.4 * sin(t * 7.3)))
                t += 0.1
            }
        }
        hold(900, 20)          // bottle
        hold(0, 3)             // lifted
        hold(180, 5)           // a phone put on the scale meanwhile
        hold(180 + 875, 20)    // bottle back, 25 mL lighter, beside the phone
        hold(875, 20)          // phone taken away
        let events = detect(readings, calibration: try! BottleCalibration(unit: .g)).filter { !$0.kind.isDiagnostic }
        #expect(events.count == 1, "\(events)")
        #expect(events.first?.kind == .sip)
        #expect(abs((events.first?.ml ?? 0) - 25) <= 1, "\(events)")
    }
    /// A SIG weight scale at 1 Hz (kg in 5 g steps; its wire carries no negative weight, so a
    /// spike below zero arrives as 0). Two such spikes in a row agree like a short lift onto an
    /// empty scale; beside a phone, that once said the phone had gone: a 225 g "refill", then
    /// the phone alone taken for the bottle (a 430 g "sip"), then its removal a 225 g "sip".
    /// The pair comes while the bottle stands, or in a lift, after the phone alone was read.
    @Test(arguments: [false, true])
    func twoSpikesAtZeroBesideAPhoneAreNothing(atTheLift: Bool) {
        var scale = OneHertzScale.bottleBesideAPhone()
        if atTheLift {
            scale.hold(0.900, 30)
        } else {
            scale.hold(0, 1); scale.hold(0.015, 1)  // two spikes in a row
            scale.hold(0.900, 28)
        }
        scale.hold(0.225, 6)          // lifted: the phone alone
        if atTheLift { scale.hold(0, 1); scale.hold(0.015, 1) } else { scale.hold(0.225, 2) }
        scale.hold(0.880, 60)         // back, 20 mL lighter
        scale.hold(0.655, 60)         // the phone taken away
        let events = detect(scale.readings, calibration: try! BottleCalibration(unit: .kg)).filter { !$0.kind.isDiagnostic }
        #expect(events.count == 1, "\(events)")
        #expect(events.first?.kind == .sip)
        #expect(abs((events.first?.ml ?? 0) - 20) <= 0.5, "\(events)")
    }

    /// A phone taken from the scale while the bottle is off it (or from beside a nearly empty bottle,
    /// which leaves less than "a bottle" counted with the phone, so it reads as the bottle lifted).
    /// The empty scale seen then was counted against the phone still there, and stayed a phone's
    /// weight low once the bottle was back without it: the next lift's empty scale read as the
    /// bottle (a "sip" of all the water, then a "refill"). Simulated day 3 of the `day` preset
    /// went to 211 % of the intake over 240 hours that way.
    @Test(arguments: [false, true])
    func aPhoneTakenAwayLeavesTheZeroWhereItWas(besideANearlyEmptyBottle: Bool) {
        var scale = SteadyScale(secondsPerReading: 0.1, noise: 0.5, seed: 41)
        func hold(_ grams: Double, _ seconds: Double) { scale.hold(grams, seconds) }
        let phone = 213.0, tare = 180.0
        var water = besideANearlyEmptyBottle ? 90.0 : 600.0
        var truth: [Double] = []
        hold(tare + water, 30)
        hold(tare + water + phone, 30)            // a phone put down beside the bottle
        hold(phone, 4)                            // lifted: the phone alone
        hold(tare + water + phone, 30)
        if besideANearlyEmptyBottle {
            hold(tare + water, 120)               // the phone taken away: less than a bottle is left
            hold(0, 5)                            // lifted: the empty scale
        } else {
            hold(phone, 4)                        // lifted again
            hold(0, 6)                            // the phone taken away meanwhile
        }
        water -= 12
        truth.append(12)
        hold(tare + water, 40)                    // back, without the phone
        for ml in [20.0, 15] {
            hold(0, 15)                           // carried off for a while: nothing on the scale
            water -= ml
            truth.append(ml)
            hold(tare + water, 40)
        }
        let events = detect(scale.readings, calibration: try! BottleCalibration(unit: .g, emptyWeightG: tare)).filter { !$0.kind.isDiagnostic }
        #expect(events.map(\.kind) == Array(repeating: .sip, count: truth.count), "\(events)")
        for (event, ml) in zip(events, truth) { #expect(abs(event.ml - ml) <= 1.5, "\(event.ml) for \(ml): \(events)") }
    }

    /// The same pair of spikes at 0 while the bottle stands beside a phone, and then a lift long
    /// enough for a level to confirm (a walk with the bottle). The pair, held over a second, set the
    /// empty scale's zero a phone's weight low, and the phone alone, seen at that lift, read as the
    /// bottle: a "sip" of all the water and a "refill" (simulated SIG scale, 240 h: 10 % of the intake).
    @Test func twoSpikesAtZeroDoNotMoveTheZeroALongLiftIsJudgedBy() {
        var scale = OneHertzScale.bottleBesideAPhone()
        scale.t += 0.25
        scale.hold(0, 1)              // two spikes to 0 in a row, a reading's jitter apart (1.25 s)
        scale.t += 0.25
        scale.hold(0, 1)
        scale.hold(0.900, 30)
        scale.hold(0.225, 15)         // lifted and carried off: the phone alone
        scale.hold(0.880, 60)         // back, 20 mL lighter
        let events = detect(scale.readings, calibration: try! BottleCalibration(unit: .kg)).filter { !$0.kind.isDiagnostic }
        #expect(events.map(\.kind) == [.sip], "\(events)")
        #expect(abs((events.first?.ml ?? 0) - 20) <= 0.5, "\(events)")
    }

    /// A phone taken from beside the bottle whose weight the detector does not know: it lay there
    /// when the gateway started, or a SIG scale's zero below its floor of 0 hid part of it at each
    /// lift (simulated SIG scales over 240 h: 3–9 % of the intake, each removal a "drink" of
    /// 135–220 mL). 135 g gone within a second is faster than anyone drinks without lifting the
    /// bottle: it is something taken away, and the drinks around it are judged as before.
    @Test(arguments: [1.0, 0.1])
    func somethingTakenAwayFasterThanAnyoneDrinksIsNoSip(secondsPerReading: Double) {
        var scale = SteadyScale(secondsPerReading: secondsPerReading, noise: 0.4, seed: 7)
        func hold(_ grams: Double, _ seconds: Double) { scale.hold(grams, seconds) }
        var water = 500.0
        hold(180 + water + 135, 60)    // the bottle, a phone beside it, as the gateway starts
        water -= 20
        hold(135, 5)                   // lifted: the phone alone
        hold(180 + water + 135, 60)
        hold(180 + water, 60)          // the phone taken away
        water -= 20
        hold(0, 5)                     // lifted: the empty scale
        hold(180 + water, 60)
        hold(180 + water + 90, 60)     // a glass put down beside it
        hold(180 + water, 60)          // and taken away again
        let events = detect(scale.readings, calibration: try! BottleCalibration(unit: .g)).filter { !$0.kind.isDiagnostic }
        #expect(events.map(\.kind) == [.sip, .sip], "\(events)")
        for event in events { #expect(abs(event.ml - 20) <= 1.5, "\(events)") }
    }

    /// A load cell whose zero moved by 14 g as the bottle left it, read once a second and lifted
    /// for two seconds: the empty scale shows twice, fewer than its zero takes, but enough for the
    /// shift. Judged without it, the 20 mL drunk came out as 6 (the shift is in the level after).
    @Test func aZeroShiftSeenInTwoReadingsIsCounted() {
        var scale = SteadyScale(secondsPerReading: 1, noise: 0.3, seed: 5)
        scale.hold(0, 20)              // the empty scale: its zero
        scale.hold(180 + 500, 60)
        scale.hold(14, 2)              // lifted: the zero has moved
        scale.hold(14 + 180 + 480, 60)
        let events = detect(scale.readings, calibration: try! BottleCalibration(unit: .g)).filter { !$0.kind.isDiagnostic }
        #expect(events.map(\.kind) == [.sip] && abs((events.first?.ml ?? 0) - 20) <= 1, "\(events)")
    }

    /// A load cell's glitch far below its zero while the bottle stands (a developer's trace: -300 g
    /// for 1.6 s at 5 Hz) is no empty scale: taken for one, every put-down after it read as a refill
    /// of the whole bottle and every sip was lost. A scale cannot weigh far less than nothing.
    @Test(arguments: [-300.0, -1000.0])
    func aGlitchFarBelowTheZeroIsNoEmptyScale(glitch: Double) {
        var scale = SteadyScale(secondsPerReading: 0.2, noise: 0.3, seed: 3)
        scale.hold(850, 10)            // the bottle from the start: the empty scale not seen yet
        scale.hold(glitch, 1.6)        // the glitch, the bottle standing
        scale.hold(850, 18.4)
        for (away, left) in [(4.0, 810.0), (10, 690), (8, 630)] {  // three drinks: 40, 120 and 60 mL
            scale.hold(0, away)
            scale.hold(left, 50)
        }
        let events = detect(scale.readings, calibration: try! BottleCalibration(unit: .g)).filter { !$0.kind.isDiagnostic }
        #expect(events.map(\.kind) == [.sip, .sip, .sip] && zip(events.map(\.ml), [40.0, 120, 60]).allSatisfy { abs($0 - $1) <= 1 },
                "\(events)")
    }

    /// The same glitch before the first bottle settled (a trace's first seconds, or a gateway's): with no
    /// empty scale seen before it, it was taken for one, the empty scale at 0 then read as a light bottle,
    /// and every drink after the first was a refill (690 and 630 mL for 120 and 60 drunk). Whether the
    /// bottle was already on the scale or came after it, and whatever the glitch's depth.
    @Test(arguments: [(-300.0, false), (-1000, false), (-300, true), (-1000, true)])
    func aGlitchFarBelowTheZeroBeforeTheFirstBottleIsNoEmptyScale(glitch: Double, bottleFirst: Bool) {
        var scale = SteadyScale(secondsPerReading: 0.2, noise: 0.3, seed: 3)
        if bottleFirst { scale.hold(850, 1) }   // too short to settle
        scale.hold(glitch, 1.6)
        scale.hold(850, 28.4)
        for (away, left) in [(4.0, 810.0), (10, 690), (8, 630)] {  // drinks of 40, 120 and 60 mL
            scale.hold(0, away)
            scale.hold(left, 50)
        }
        let events = detect(scale.readings, calibration: try! BottleCalibration(unit: .g, emptyWeightG: 150)).filter { !$0.kind.isDiagnostic }
        #expect(events.map(\.kind) == [.sip, .sip, .sip] && zip(events.map(\.ml), [40.0, 120, 60]).allSatisfy { abs($0 - $1) <= 1 },
                "\(events)")
        // What is left, on the scale's true zero: 850 g less the bottle's 150, less each drink.
        #expect(zip(events.map { $0.remainingML ?? .nan }, [660.0, 540, 480]).allSatisfy { abs($0 - $1) <= 1 }, "\(events)")
    }

    /// What the glitch is told from: a scale tared under its bottle, the bottle lifted when the trace
    /// begins (far below nothing) and then put back (about nothing), or put back refilled (far above it),
    /// whose stays far below nothing are each lift's empty scale. Every drink counted.
    @Test(arguments: [(-850.0, 0.0), (-200, 700)])
    func aScaleTaredUnderItsBottleAndLiftedAtTheStartKeepsItsZero(lifted: Double, back: Double) {
        var scale = SteadyScale(secondsPerReading: 0.2, noise: 0.3, seed: 3)
        scale.hold(lifted, 5)
        var left = back
        scale.hold(left, 30)
        for (away, drunk) in [(6.0, 45.0), (6, 60), (6, 30), (6, 50)] {
            scale.hold(lifted, away)
            left -= drunk
            scale.hold(left, 60)
        }
        let events = detect(scale.readings, calibration: try! BottleCalibration(unit: .g, emptyWeightG: 150)).filter { !$0.kind.isDiagnostic }
        #expect(events.map(\.kind) == [.sip, .sip, .sip, .sip] && zip(events.map(\.ml), [45.0, 60, 30, 50]).allSatisfy { abs($0 - $1) <= 1 },
                "\(events)")
    }

    /// A zero learnt before a restart (`keepingLearning`: a scale tared under its bottle, its lifts reading −200 g)
    /// is kept when the bottle, refilled since, stands far above nothing: only a far-below reading the new detector saw
    /// itself before its first level is dropped as a glitch (a review: the inherited zero was thrown away, and what is
    /// "left" read 200 mL low until a long lift).
    @Test func aZeroLearntBeforeARestartIsKeptWhenTheBottleStandsAboveNothing() {
        var scale = SteadyScale(secondsPerReading: 0.2, noise: 0.3, seed: 4)
        scale.hold(-200, 5)                  // lifted off a scale tared with the bottle on
        scale.hold(700, 30)                  // back, refilled
        for (away, left) in [(6.0, 660.0), (6, 620)] {
            scale.hold(-200, away)
            scale.hold(left, 40)
        }
        let calibration = try! BottleCalibration(unit: .g, emptyWeightG: 150)
        var before = SipDetector(calibration: calibration)
        var events: [DetectedEvent] = []
        for r in scale.readings { before.process(r, into: &events) }
        #expect(events.filter { !$0.kind.isDiagnostic }.map(\.ml).allSatisfy { abs($0 - 40) <= 1 }, "\(events)")
        // The gateway restarts long after: a fresh detector with what the old one learnt of the zero.
        var after = SipDetector(calibration: calibration).keepingLearning(of: before)
        var later = SteadyScale(secondsPerReading: 0.2, noise: 0.3, seed: 5)
        later.hold(620, 30)
        later.hold(-200, 1)                  // a quick lift: too short to take the empty scale's level from
        later.hold(570, 40)
        var resumed: [DetectedEvent] = []
        for r in later.readings { after.process(r, into: &resumed) }
        after.finish(into: &resumed)
        let sips = resumed.filter { !$0.kind.isDiagnostic }
        #expect(sips.map(\.kind) == [.sip] && abs((sips.first?.ml ?? 0) - 50) <= 1, "\(sips)")
        // Left on the learnt zero: 570 g above −200, less the bottle's 150.
        #expect(abs((sips.first?.remainingML ?? 0) - 620) <= 2, "\(sips)")
    }

    /// The same glitch with a phone beside the bottle: the objects' bookkeeping took the glitch for the
    /// empty scale with the phone gone (a review), and made a refill of the phone's weight.
    @Test func aGlitchFarBelowTheZeroBesideAPhoneIsNoEmptyScaleEither() {
        var scale = SteadyScale(secondsPerReading: 0.2, noise: 0.3, seed: 6)
        scale.hold(0, 10)                  // the empty scale
        scale.hold(850, 30)
        scale.hold(1000, 30)               // a phone put down beside it
        scale.hold(-300, 1.6)              // the glitch
        scale.hold(1000, 20)
        for (away, left) in [(10.0, 730.0), (8, 670)] {  // drinks of 120 and 60 mL, the phone staying
            scale.hold(150, away)
            scale.hold(left + 150, 50)
        }
        let events = detect(scale.readings, calibration: try! BottleCalibration(unit: .g)).filter { !$0.kind.isDiagnostic }
        #expect(events.map(\.kind) == [.sip, .sip] && zip(events.map(\.ml), [120.0, 60]).allSatisfy { abs($0 - $1) <= 1 }, "\(events)")
    }

    /// A scale zeroed with the bottle on it (its tare pressed, an HX711 board that tares at power-up): the
    /// bottle reads nothing and its lifts far below, the scale's new zero. The level before the tare moves
    /// with it (a trial's tare was a sip of the whole bottle, 950 mL), and each drink is judged on it.
    @Test func aScaleZeroedUnderTheBottleLearnsItsNewZero() {
        var scale = SteadyScale(secondsPerReading: 0.2, noise: 0.3, seed: 7)
        scale.hold(850, 30)
        scale.hold(0, 120)                 // tared with the bottle on
        var left = 0.0
        for (away, drunk) in [(6.0, 45.0), (6, 60), (6, 30), (6, 50)] {
            scale.hold(-850, away)
            left -= drunk
            scale.hold(left, 60)
        }
        let events = detect(scale.readings, calibration: try! BottleCalibration(unit: .g, emptyWeightG: 150)).filter { !$0.kind.isDiagnostic }
        #expect(events.map(\.kind) == [.sip, .sip, .sip, .sip] && zip(events.map(\.ml), [45.0, 60, 30, 50]).allSatisfy { abs($0 - $1) <= 1 },
                "\(events)")
        // What is left is judged from the new zero (it read 0 for good): 700 mL of water at the tare.
        #expect(zip(events.map { $0.remainingML ?? -1 }, [655.0, 595, 565, 515]).allSatisfy { abs($0 - $1) <= 1 }, "\(events)")
    }

    /// Tared with the empty bottle on it, then filled (a review): the first lift shows the empty scale far
    /// below, with a drink; that is the scale's new zero, and the drinks are judged as drunk.
    @Test func aScaleTaredWithTheEmptyBottleOnIsJudgedAsDrunk() {
        var scale = SteadyScale(secondsPerReading: 0.2, noise: 0.3, seed: 8)
        scale.hold(0, 10)                  // the empty scale
        scale.hold(250, 20)                // the empty bottle
        scale.hold(0, 20)                  // its tare pressed
        scale.hold(600, 30)                // filled
        var level = 600.0
        for drunk in [50.0, 30, 40] {
            scale.hold(-250, 8)
            level -= drunk
            scale.hold(level, 60)
        }
        let events = detect(scale.readings, calibration: try! BottleCalibration(unit: .g)).filter { !$0.kind.isDiagnostic }
        let sips = events.filter { $0.kind == .sip }
        #expect(sips.count == 3 && zip(sips.map(\.ml), [50.0, 30, 40]).allSatisfy { abs($0 - $1) <= 1 } && !events.contains { $0.kind == .pour },
                "\(events)")
    }

    /// A glitch that flickers (two stays far below, the bottle between them too short to be judged): still a glitch.
    @Test func aFlickeringGlitchIsNoEmptyScale() {
        var scale = SteadyScale(secondsPerReading: 0.2, noise: 0.3, seed: 9)
        scale.hold(850, 10)
        scale.hold(-300, 1.6)
        scale.hold(850, 0.8)
        scale.hold(-300, 1.6)
        scale.hold(850, 18)
        for (away, left) in [(4.0, 810.0), (10, 690), (8, 630)] {
            scale.hold(0, away)
            scale.hold(left, 50)
        }
        let events = detect(scale.readings, calibration: try! BottleCalibration(unit: .g)).filter { !$0.kind.isDiagnostic }
        #expect(events.map(\.kind) == [.sip, .sip, .sip] && zip(events.map(\.ml), [40.0, 120, 60]).allSatisfy { abs($0 - $1) <= 1 },
                "\(events)")
    }

    /// Readings no scale under a bottle gives (10¹⁵ g for 12 s, a developer's broken trace) are
    /// missing readings, not a refill of 10¹⁵ mL and a pour of it after.
    @Test func aScalesReadingPastAHundredKilogramsIsNoReading() {
        var scale = SteadyScale(secondsPerReading: 0.2, noise: 0.3, seed: 4)
        scale.hold(850, 30)
        scale.hold(1e15, 12)
        scale.hold(850, 20)
        scale.hold(0, 10)
        scale.hold(730, 30)
        let events = detect(scale.readings, calibration: try! BottleCalibration(unit: .g)).filter { !$0.kind.isDiagnostic }
        #expect(events.map(\.kind) == [.sip] && abs((events.first?.ml ?? 0) - 120) <= 1, "\(events)")
    }

    /// Two readings of exactly 0 while the bottle is off are no glimpse of the zero: a wire without
    /// negative weights sends spikes below zero as 0. With the zero at 15 g, taken as a glimpse they
    /// made the 20 mL drunk a drink of 5.
    @Test func twoZerosAreNoGlimpseOfTheZero() {
        var scale = SteadyScale(secondsPerReading: 1, noise: 0, seed: 1)
        scale.hold(15, 20)             // the empty scale: its zero, 15 g
        scale.hold(15 + 180 + 500, 60)
        scale.hold(0, 2)               // lifted: two spikes to the wire's floor
        scale.hold(15 + 180 + 480, 60)
        let events = detect(scale.readings, calibration: try! BottleCalibration(unit: .g)).filter { !$0.kind.isDiagnostic }
        #expect(events.map(\.kind) == [.sip] && abs((events.first?.ml ?? 0) - 20) <= 0.5, "\(events)")
    }

    /// A drink without a lift while the link dropped readings for less than a gap (2.5 s at 10 Hz, two
    /// readings at 1 Hz): its pace counts from the last reading before, so it is a drink, not something
    /// taken away (paced from the first reading after, 40 mL came "in 0.2 s").
    @Test(arguments: [(0.1, 2.5), (1.0, 3.0)])
    func aDrinkHiddenByAShortDropoutIsStillADrink(secondsPerReading: Double, dropout: Double) {
        var scale = SteadyScale(secondsPerReading: secondsPerReading, noise: 0, seed: 1)
        scale.hold(700, 30)
        scale.t += dropout - secondsPerReading  // no readings meanwhile
        scale.hold(660, 30)
        let events = detect(scale.readings, calibration: try! BottleCalibration(unit: .g)).filter { !$0.kind.isDiagnostic }
        #expect(events.map(\.kind) == [.sip] && abs((events.first?.ml ?? 0) - 40) <= 0.5, "\(events)")
    }

    /// A scale whose zero drifts while the bottle stands (a load cell warming), with drinks that
    /// never lift it (a pump pot's presses): each is judged against the level before it, and the
    /// drift is counted once. It was counted again at every such drink since the zero was last
    /// seen (2 + 4 + 6 … g), so the lift after ten of them found the empty scale 90 g "above" the
    /// zero it expected, took that for an object put beside the bottle, and judged the drink by it.
    @Test func driftBetweenDrinksWithoutALiftIsCountedOnce() {
        var readings: [Reading] = []
        var t = 0.0
        var offset = 0.0
        var random = SeededRandom(seed: 5)
        func hold(_ grams: Double, _ seconds: Double, drift: Double = 0) {
            let end = t + seconds
            let steps = seconds * 10
            while t < end {
                offset += drift / steps
                readings.append(Reading(t: t, value: grams + offset + random.normal() * 0.3))
                t += 0.1
            }
        }
        var water = 600.0
        hold(300 + water, 30)
        var truth: [Double] = []
        for _ in 0..<10 {
            hold(300 + water, 20, drift: -2)     // standing: the zero drifts down 2 g
            water -= 15                           // a press of the pump: 15 mL out, no lift
            truth.append(15)
            hold(300 + water, 15)
        }
        hold(0, 3)                                // lifted: the empty scale shows the zero, 20 g down
        water -= 25
        truth.append(25)
        hold(300 + water, 30)
        let events = detect(readings, calibration: try! BottleCalibration(unit: .g)).filter { !$0.kind.isDiagnostic }
        #expect(events.map(\.kind) == Array(repeating: .sip, count: 11), "\(events)")
        for (event, ml) in zip(events, truth) { #expect(abs(event.ml - ml) <= 3, "\(event.ml) for \(ml): \(events)") }
    }

    /// Read once a second, a bottle filled at the tap, set down for a few seconds and lifted
    /// again to drink (issue 20's big drinks): between the hand's press after the put-down and
    /// its grasp before the lift, only two calm readings showed the level it stood at, with a
    /// spike between them (simulated bottle 76 of the big drinks). They are that level: the
    /// refill and the drink after it are two events. (Before, no level had held three
    /// readings, and the two were judged as one change: a refill of 86 mL, a drink of 339 lost.)
    /// Forty bottles, each a different press, spike (up, or down like a knock), drink and time away.
    @Test func aShortStayBetweenTheTapAndADrinkAtOneHertz() {
        var random = SeededRandom(seed: 20)
        for bottle in 0..<40 {
            var readings: [Reading] = []
            var t = 0.0
            func read(_ grams: Double) {
                readings.append(Reading(t: t + random.uniform(-0.1, 0.1), value: (grams + random.normal() * 0.8).rounded()))
                t += 1
            }
            func hold(_ grams: Double, _ seconds: Int) { for _ in 0..<seconds { read(grams) } }
            let before = random.uniform(450, 650), refill = random.uniform(300, 450)
            let full = before + refill, drink = random.uniform(150, 400)
            hold(before, 30)
            hold(0, Int(random.uniform(12, 20)))            // at the tap
            read(full)                                      // set down
            read(full + random.uniform(60, 150))            // the hand presses
            read(full + random.uniform(20, 50))
            read(full)
            read(bottle % 2 == 0 ? full + random.uniform(400, 1500) : full * random.uniform(0.5, 0.8))  // a spike
            read(full)
            read(full * random.uniform(0.3, 0.6))           // the grasp
            hold(0, Int(drink / random.uniform(10, 18) + 2.5))  // drinking, 10–18 mL/s
            hold(full - drink, 40)
            let events = detect(readings, calibration: try! BottleCalibration(unit: .g)).filter { !$0.kind.isDiagnostic }
            #expect(events.map(\.kind) == [.refill, .sip], "bottle \(bottle): \(events)")
            guard events.count == 2 else { continue }
            #expect(abs(events[0].ml - refill) <= 3, "bottle \(bottle): refill \(refill) read \(events[0].ml)")
            #expect(abs(events[1].ml - drink) <= 3, "bottle \(bottle): drink \(drink) read \(events[1].ml)")
        }
    }
}

/// A SIG weight scale read once a second, in kilograms.
private struct OneHertzScale {
    var readings: [Reading] = []
    var t = 0.0

    mutating func hold(_ kg: Double, _ seconds: Int) {
        for _ in 0..<seconds {
            readings.append(Reading(t: t, value: kg))
            t += 1
        }
    }

    /// The empty scale for 20 s, a bottle (675 g) for a minute, then a phone (225 g) put down beside it for a minute.
    static func bottleBesideAPhone() -> OneHertzScale {
        var scale = OneHertzScale()
        scale.hold(0, 20)
        scale.hold(0.675, 60)
        scale.hold(0.900, 60)
        return scale
    }
}

/// A scale read every `secondsPerReading`, each reading off by seeded noise (grams).
private struct SteadyScale {
    let secondsPerReading: Double
    let noise: Double
    var random: SeededRandom
    var readings: [Reading] = []
    var t = 0.0

    init(secondsPerReading: Double, noise: Double, seed: UInt64) {
        (self.secondsPerReading, self.noise, random) = (secondsPerReading, noise, SeededRandom(seed: seed))
    }

    mutating func hold(_ grams: Double, _ seconds: Double) {
        let end = t + seconds
        while t < end {
            readings.append(Reading(t: t, value: grams + random.normal() * noise))
            t += secondsPerReading
        }
    }
}

import Foundation
import QuenchCore
import QuenchSimulator
import Testing

/// A detector resumed from its checkpoint after a kill loses no sip and
/// doubles none (issue 20): simulated kills at random moments of sips, with
/// what was not persisted thrown away and a restart up to 60 s later.
@Suite struct DetectorCheckpointTests {
    struct Simulated {
        var calibration: BottleCalibration
        var readings: [Reading]
        var truth: [TruthEvent]
    }

    static func simulate(_ preset: SimulationConfiguration.Preset, seed: UInt64, minutes: Double) -> Simulated {
        let c = SimulationConfiguration.preset(preset, duration: minutes * 60)
        var bottle = SimulatedBottle(configuration: c, seed: seed)
        var readings: [Reading] = []
        var truth: [TruthEvent] = []
        while let r = bottle.next() {
            readings.append(r)
            truth += bottle.drainTruth()
        }
        truth += bottle.drainTruth()
        return Simulated(calibration: c.calibration, readings: readings, truth: truth)
    }

    /// The encoding the store uses (JSON, with the state's infinities and NaN as strings).
    static func encode(_ c: DetectorCheckpoint) throws -> Data {
        let e = JSONEncoder()
        e.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return try e.encode(c)
    }

    static func decode(_ data: Data) throws -> DetectorCheckpoint {
        let d = JSONDecoder()
        d.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return try d.decode(DetectorCheckpoint.self, from: data)
    }

    /// What the store holds when the process dies before reading `kill`: the
    /// events committed, and the checkpoint committed with the last of them or
    /// after it (the gateway's rule: with every event, and when `DetectorCheckpoint.isDue`).
    /// `lastWriteLands` false: the write of the last reading's checkpoint (and
    /// its events) was under way and is lost with the process.
    /// `through`: the readings the stored checkpoint has seen.
    static func persisted(_ sim: Simulated, until kill: Int, lastWriteLands: Bool) throws -> (events: [DetectedEvent], checkpoint: Data?, through: Int) {
        var detector = SipDetector(calibration: sim.calibration)
        var stored: [DetectedEvent] = []
        // Kept as values and encoded once, at the end: the store's encoding is what
        // the restart reads, and encoding every checkpoint of the run would only cost time.
        var checkpoint: DetectorCheckpoint?
        var through = 0
        var events: [DetectedEvent] = []
        var lastCheckpointT = -Double.infinity
        var pending: (events: [DetectedEvent], checkpoint: DetectorCheckpoint?, through: Int) = ([], nil, 0)
        for (i, r) in sim.readings[..<kill].enumerated() {
            let previous = detector.phase
            detector.process(r, into: &events)
            let final = events.filter { !$0.kind.isDiagnostic }
            events.removeAll()
            guard !final.isEmpty || DetectorCheckpoint.isDue(detector, previous: previous, t: r.t, last: lastCheckpointT) else { continue }
            lastCheckpointT = r.t
            // The previous write has landed by now; this one is in flight.
            stored += pending.events
            if let c = pending.checkpoint { checkpoint = c; through = pending.through }
            let c = DetectorCheckpoint(device: "A", detector: detector, t: r.t, wall: 1_800_000_000 + r.t, bootID: "", sinceBoot: r.t)
            pending = (final, c, i + 1)
        }
        if lastWriteLands {
            stored += pending.events
            if let c = pending.checkpoint { checkpoint = c; through = pending.through }
        }
        return (stored, try checkpoint.map(encode), through)
    }

    /// The events of a run killed before reading `kill` and restarted at
    /// `restart` (readings in between are never seen), resumed from the
    /// checkpoint or, `resume` false, from scratch as before issue 20.
    /// `unseen`: the readings between the checkpoint and the restart, which no detector saw.
    static func interrupted(_ sim: Simulated, kill: Int, restart: Int, lastWriteLands: Bool, resume: Bool = true) throws -> (events: [DetectedEvent], unseen: Range<Int>) {
        let (stored, checkpoint, through) = try persisted(sim, until: kill, lastWriteLands: lastWriteLands)
        var detector = SipDetector(calibration: sim.calibration)
        if resume, let checkpoint {
            let c = try decode(checkpoint)
            #expect(c.problem(device: "A", calibration: sim.calibration, configuration: .init()) == nil)
            detector = c.detector
        }
        var events: [DetectedEvent] = []
        for r in sim.readings[restart...] { detector.process(r, into: &events) }
        detector.finish(into: &events)
        return (stored + events.filter { !$0.kind.isDiagnostic }, through..<restart)
    }

    static func overlaps(_ e: DetectedEvent, _ start: Double, _ end: Double, slack: Double) -> Bool {
        e.start <= end + slack && e.end >= start - slack
    }

    /// Kills at random moments of random sips (from just before the lift to
    /// just after it would have been confirmed), restarts 2–60 s later. Only
    /// kills whose downtime holds no other event count: two drinks while
    /// the gateway is down are one change of level to anyone who was not there.
    static func killTrials(_ sim: Simulated, count: Int, seed: UInt64) -> [(kill: Int, restart: Int, lastWriteLands: Bool, sip: TruthEvent)] {
        var random = SeededRandom(seed: seed &+ 9)
        let sips = sim.truth.filter { $0.kind == .sip }
        guard !sips.isEmpty, let end = sim.readings.last?.t else { return [] }
        var trials: [(kill: Int, restart: Int, lastWriteLands: Bool, sip: TruthEvent)] = []
        for _ in 0..<count * 20 where trials.count < count {
            let sip = sips[min(sips.count - 1, Int(random.uniform(0, Double(sips.count))))]
            let killT = random.uniform(sip.tStart - 3, sip.tEnd + 8)
            let restartT = killT + random.uniform(2, 60)
            let lastWriteLands = random.uniform(0, 1) < 0.5
            let others = sim.truth.filter { $0 != sip && $0.tStart <= restartT + 10 && $0.tEnd >= killT - 2 * DetectorCheckpoint.interval }
            guard others.isEmpty, restartT < end - 60 else { continue }
            let kill = max(1, sim.readings.firstIndex { $0.t >= killT } ?? sim.readings.count)
            let restart = max(kill, sim.readings.firstIndex { $0.t >= restartT } ?? sim.readings.count)
            trials.append((kill, restart, lastWriteLands, sip))
        }
        return trials
    }

    /// Kitchen scale and level sensor: every kill gives exactly the uninterrupted
    /// run's sips, refills and pours. HX711 load cells shift their zero when the
    /// bottle leaves them, and a shift nobody saw (the gateway was down while the
    /// bottle was off) leaves the interrupted sip up to 9 mL off, or one sip
    /// fewer (merged, or a small one under the threshold): 14 of 120 kills (20 when a
    /// checkpoint came every 5 s whatever the phase), what a link gap of the same length
    /// gives too (checked below), against nearly all losing a sip without the checkpoint.
    @Test(arguments: [(SimulationConfiguration.Preset.kitchenScale, UInt64(3), 0), (.levelMillimetres, 6, 0), (.hx711, 4, 12), (.hx711, 5, 4)])
    func aKillAtAnyMomentOfASipLosesNoneAndDoublesNone(preset: SimulationConfiguration.Preset, seed: UInt64, allowedMisses: Int) throws {
        let sim = Self.simulate(preset, seed: seed, minutes: 90)
        let whole = detectAll(sim)
        let trials = Self.killTrials(sim, count: 60, seed: seed)
        #expect(trials.count == 60)
        var misses = 0, lostWithoutCheckpoint = 0
        for trial in trials {
            let (events, unseen) = try Self.interrupted(sim, kill: trial.kill, restart: trial.restart, lastWriteLands: trial.lastWriteLands)
            let sip = trial.sip
            let context = "\(preset) seed \(seed): kill at t \(sim.readings[trial.kill - 1].t), restart at \(sim.readings[min(trial.restart, sim.readings.count - 1)].t), last write lands \(trial.lastWriteLands), sip \(sip.tStart)–\(sip.tEnd) \(sip.ml) mL"
            // Exactly what one detector gives when the readings from the checkpoint to
            // the restart never reach it (a link gap): the checkpoint loses nothing else.
            let gap = detect(Array(sim.readings[..<unseen.lowerBound] + sim.readings[unseen.upperBound...]), calibration: sim.calibration)
                .filter { !$0.kind.isDiagnostic }
            #expect(events == gap, "\(context)")
            // The interrupted sip: never judged twice; once when the uninterrupted run judged it once.
            let expected = whole.filter { $0.kind == .sip && Self.overlaps($0, sip.tStart, sip.tEnd, slack: 2) }.count
            let found = events.filter { $0.kind == .sip && Self.overlaps($0, sip.tStart, sip.tEnd, slack: 2) }
            #expect(found.count <= expected, "\(context): \(found)")
            // Everything else: as many sips, refills and pours, the same intake within a few mL.
            let total = events.filter { $0.kind == .sip }.reduce(0) { $0 + $1.ml }
            let wholeTotal = whole.filter { $0.kind == .sip }.reduce(0) { $0 + $1.ml }
            let same = found.count == expected && abs(total - wholeTotal) <= 5
                && [EventKind.sip, .refill, .pour].allSatisfy { kind in events.filter { $0.kind == kind }.count == whole.filter { $0.kind == kind }.count }
            if !same {
                misses += 1
                print("\(context): \(events.filter { $0.kind == .sip }.count) sips, \(total) mL; uninterrupted \(whole.filter { $0.kind == .sip }.count) sips, \(wholeTotal) mL")
            }
            let fresh = try Self.interrupted(sim, kill: trial.kill, restart: trial.restart, lastWriteLands: trial.lastWriteLands, resume: false).events
            if fresh.filter({ $0.kind == .sip }).count < whole.filter({ $0.kind == .sip }).count { lostWithoutCheckpoint += 1 }
        }
        #expect(misses <= allowedMisses, "\(misses) of \(trials.count) kills changed the sips")
        // The trials are hard enough: restarting from scratch loses sips in them.
        #expect(lostWithoutCheckpoint > 20, "only \(lostWithoutCheckpoint) of \(trials.count) kills lose a sip without the checkpoint")
        print("\(preset) seed \(seed): \(trials.count) kills: \(misses) changed the sips with the checkpoint, \(lostWithoutCheckpoint) lost one without")
    }

    /// The cadence: a bottle standing still (or off its scale) is checkpointed every 30 s (every 5 s was 17,280
    /// writes a day per device), anything under way every 5 s, and each change of the detector's phase at once.
    @Test(arguments: [SimulationConfiguration.Preset.kitchenScale, .levelPercent])
    func checkpointsAreSparseAtRestAndFollowEverySip(preset: SimulationConfiguration.Preset) {
        let sim = Self.simulate(preset, seed: 12, minutes: 90)
        var detector = SipDetector(calibration: sim.calibration)
        var events: [DetectedEvent] = []
        var written: [Double] = [], last = -Double.infinity
        var longestSettledWait = 0.0, longestBusyWait = 0.0
        for r in sim.readings {
            let previous = detector.phase
            detector.process(r, into: &events)
            let final = events.contains { !$0.kind.isDiagnostic }
            events.removeAll()
            if final || DetectorCheckpoint.isDue(detector, previous: previous, t: r.t, last: last) {
                last = r.t
                written.append(r.t)
            } else if !detector.phase.isUnderWay {
                longestSettledWait = max(longestSettledWait, r.t - last)
            } else {
                longestBusyWait = max(longestBusyWait, r.t - last)
            }
        }
        let duration = (sim.readings.last?.t ?? 0) - (sim.readings.first?.t ?? 0)
        // Mostly at rest: far fewer than one every 5 s, and more than one every 30 s.
        #expect(Double(written.count) < duration / DetectorCheckpoint.interval / 3, "\(written.count) in \(duration) s")
        #expect(Double(written.count) > duration / DetectorCheckpoint.restingInterval, "\(written.count) in \(duration) s")
        #expect(longestSettledWait < DetectorCheckpoint.restingInterval && longestBusyWait < DetectorCheckpoint.interval,
                "\(longestSettledWait) \(longestBusyWait)")
        // (That a kill anywhere in a sip loses nothing with this cadence: `aKillAtAnyMomentOfASipLosesNoneAndDoublesNone`.)
        print("\(preset): \(written.count) checkpoints in \(Int(duration)) s (every \(DetectorCheckpoint.interval) s: about \(Int(duration / DetectorCheckpoint.interval)))")
    }

    func detectAll(_ sim: Simulated) -> [DetectedEvent] {
        detect(sim.readings, calibration: sim.calibration).filter { !$0.kind.isDiagnostic }
    }

    /// A resumed detector is the same detector: fed the same readings after
    /// the round trip, it gives exactly the events of the one that never stopped.
    @Test func theRoundTripKeepsEveryBitOfTheState() throws {
        let sim = Self.simulate(.hx711, seed: 11, minutes: 30)
        let whole = detectAll(sim)
        for cut in stride(from: 500, to: sim.readings.count, by: 1_777) {
            var detector = SipDetector(calibration: sim.calibration)
            var events: [DetectedEvent] = []
            for r in sim.readings[..<cut] { detector.process(r, into: &events) }
            let c = DetectorCheckpoint(device: "A", detector: detector, t: sim.readings[cut - 1].t, wall: 0, bootID: "", sinceBoot: 0)
            var resumed = try Self.decode(Self.encode(c)).detector
            for r in sim.readings[cut...] { resumed.process(r, into: &events) }
            resumed.finish(into: &events)
            #expect(events.filter { !$0.kind.isDiagnostic } == whole, "cut at \(cut)")
        }
    }

    /// A checkpoint of another device, calibration, configuration or a broken
    /// ring is refused with a reason, never trusted.
    @Test func aForeignOrBrokenCheckpointIsRefusedWithAReason() throws {
        let sim = Self.simulate(.kitchenScale, seed: 2, minutes: 5)
        var detector = SipDetector(calibration: sim.calibration)
        var events: [DetectedEvent] = []
        for r in sim.readings.prefix(2_000) { detector.process(r, into: &events) }
        let c = DetectorCheckpoint(device: "A", detector: detector, t: sim.readings[1_999].t, wall: 0, bootID: "", sinceBoot: 0)
        #expect(c.problem(device: "A", calibration: sim.calibration, configuration: .init()) == nil)
        #expect(c.problem(device: "B", calibration: sim.calibration, configuration: .init())?.contains("belongs to A") == true)
        var other = sim.calibration
        other.density = 1.03
        #expect(c.problem(device: "A", calibration: other, configuration: .init())?.contains("calibration changed") == true)
        var configuration = DetectorConfiguration()
        configuration.minSipML = 5
        #expect(c.problem(device: "A", calibration: sim.calibration, configuration: configuration)?.contains("configuration changed") == true)
        var early = c
        early.t = c.t - 100
        #expect(early.problem(device: "A", calibration: sim.calibration, configuration: .init())?.contains("out of order") == true)

        // A ring whose arrays are short would index out of bounds: refused.
        var json = try JSONSerialization.jsonObject(with: Self.encode(c)) as? [String: Any] ?? [:]
        var d = json["detector"] as? [String: Any] ?? [:]
        var run = d["run"] as? [String: Any] ?? [:]
        var recent = run["recent"] as? [String: Any] ?? [:]
        #expect(recent["values"] != nil)
        recent["values"] = [1.0, 2.0]
        run["recent"] = recent
        d["run"] = run
        json["detector"] = d
        let broken = try Self.decode(JSONSerialization.data(withJSONObject: json))
        #expect(broken.problem(device: "A", calibration: sim.calibration, configuration: .init())?.contains("inconsistent") == true)
    }

    /// Beyond `resumeWithin`, a fresh detector keeps what the old one learnt
    /// of the scale's zero: its first lifts are judged as by the old one.
    @Test func learningOfTheZeroCarriesOver() throws {
        let sim = Self.simulate(.hx711, seed: 21, minutes: 60)
        var detector = SipDetector(calibration: sim.calibration)
        var events: [DetectedEvent] = []
        let half = sim.readings.count / 2
        for r in sim.readings[..<half] { detector.process(r, into: &events) }
        let fresh = SipDetector(calibration: sim.calibration)
        var kept = fresh.keepingLearning(of: detector)
        var plain = fresh
        var keptEvents: [DetectedEvent] = [], plainEvents: [DetectedEvent] = []
        for r in sim.readings[half...] {
            kept.process(r, into: &keptEvents)
            plain.process(r, into: &plainEvents)
        }
        let truth = sim.truth.filter { $0.kind == .sip && $0.tStart > sim.readings[half].t + 10 }.prefix(4)
        func error(_ found: [DetectedEvent]) -> Double {
            truth.reduce(0) { sum, t in
                let match = found.first { $0.kind == .sip && Self.overlaps($0, t.tStart, t.tEnd, slack: 2) }
                return sum + abs((match?.ml ?? 0) - t.ml)
            }
        }
        #expect(truth.count == 4)
        #expect(error(keptEvents) <= error(plainEvents), "kept \(error(keptEvents)) mL off, fresh \(error(plainEvents)) mL off")
    }

    /// A checkpoint the previous version wrote (its detector's settings with
    /// the scale's old pour rule, no tilt time kept) still resumes a pour that
    /// was under way when the gateway was upgraded: it is judged once, a pour.
    @Test func aCheckpointFromTheVersionBeforeStillResumes() throws {
        var c = SimulationConfiguration.clean(unit: .mm, sampleRate: 5).with(.noise, .jitter, .tiltGarbage, .slosh)
        c.capacityML = 1000
        c.shape = .sportsBottle(capacityML: 1000)
        let (readings, truth) = Scenario(c, seed: 3, initialML: 950).idle(20).pour(ml: 400, mlPerSecond: 80).idle(40).run()
        let pour = try #require(truth.first { $0.kind == .pour })
        // Killed in the middle of the tilt, restarted 20 s later.
        let kill = try #require(readings.firstIndex { $0.t >= pour.tStart + 4 })
        let restart = try #require(readings.firstIndex { $0.t >= readings[kill].t + 20 })
        var detector = SipDetector(calibration: c.calibration)
        var events: [DetectedEvent] = []
        for r in readings[..<kill] { detector.process(r, into: &events) }
        #expect(events.filter { !$0.kind.isDiagnostic }.isEmpty)
        let now = DetectorCheckpoint(device: "A", detector: detector, t: readings[kill - 1].t, wall: 1_800_000_000, bootID: "", sinceBoot: 1)

        /// The keys as the previous version wrote them.
        func earlier(_ value: Any) -> Any {
            if let array = value as? [Any] { return array.map(earlier) }
            guard var object = value as? [String: Any] else { return value }
            object["tiltedSeconds"] = nil
            if object["awayPourRateMLPerSecond"] != nil {
                object["awayPourRateMLPerSecond"] = nil
                object["emptiedRateMLPerSecond"] = 20
                object["pourMostFraction"] = 0.7
            }
            return object.mapValues(earlier)
        }
        let current = try JSONSerialization.jsonObject(with: Self.encode(now))
        let old = try JSONSerialization.data(withJSONObject: earlier(current))
        #expect(!String(decoding: old, as: UTF8.self).contains("tiltedSeconds"))
        #expect(String(decoding: old, as: UTF8.self).contains("pourMostFraction"))

        let resumed = try Self.decode(old)
        #expect(resumed.problem(device: "A", calibration: c.calibration, configuration: .init()) == nil)
        var after = resumed.detector
        for r in readings[restart...] { after.process(r, into: &events) }
        after.finish(into: &events)
        let judged = events.filter { !$0.kind.isDiagnostic }
        #expect(judged.map(\.kind) == [.pour], "\(judged)")
        #expect(abs((judged.first?.ml ?? 0) - 400) <= 15, "\(judged)")
    }

    /// The version before took a sensor's first step for its resolution, which on a quiet
    /// coarse scale may be a grasp: a resolution it kept must come again before it counts.
    @Test func aResolutionKeptByTheVersionBeforeMustComeAgain() throws {
        let calibration = try BottleCalibration(unit: .g, emptyWeightG: 180)
        var detector = SipDetector(calibration: calibration)
        var events: [DetectedEvent] = []
        for t in 0..<30 { detector.process(Reading(t: Double(t), value: 880), into: &events) }
        let now = DetectorCheckpoint(device: "A", detector: detector, t: 29, wall: 1_800_000_000, bootID: "", sinceBoot: 1)
        /// As the version before wrote it, after a grasp of 40 g had been its first step.
        func earlier(_ value: Any) -> Any {
            if let array = value as? [Any] { return array.map(earlier) }
            guard var object = value as? [String: Any] else { return value }
            if object["unconfirmedStep"] != nil {
                object["unconfirmedStep"] = nil
                object["unconfirmedSeen"] = nil
                object["unitResolution"] = 40.0
                object["tolerance"] = 60.0
            }
            return object.mapValues(earlier)
        }
        let old = try JSONSerialization.data(withJSONObject: earlier(try JSONSerialization.jsonObject(with: Self.encode(now))))
        #expect(String(decoding: old, as: UTF8.self).contains("\"unitResolution\":40"))
        var resumed = try Self.decode(old).detector
        // Heard again 9 s later (a restart), the grasp, the lift, the bottle back 60 mL lighter.
        var readings = (38..<40).map { Reading(t: Double($0), value: 880) }
        readings += [Reading(t: 40, value: 920), Reading(t: 40.25, value: 905), Reading(t: 40.5, value: 475)]
        readings += (41..<46).map { Reading(t: Double($0), value: 0) }
        readings += [Reading(t: 46, value: 160), Reading(t: 46.25, value: 820)] + (47..<62).map { Reading(t: Double($0), value: 820) }
        for r in readings { resumed.process(r, into: &events) }
        resumed.finish(into: &events)
        let judged = events.filter { !$0.kind.isDiagnostic }
        #expect(judged.map(\.kind) == [.sip] && judged.first.map { abs($0.ml - 60) < 0.01 } == true, "\(judged)")
    }
}

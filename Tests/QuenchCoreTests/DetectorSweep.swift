import Foundation
import Testing
import QuenchCore
import QuenchSimulator

/// One simulated bottle through the detector: what it reported, and what happened.
func detectSimulated(_ configuration: SimulationConfiguration, seed: UInt64) -> (events: [DetectedEvent], truth: [TruthEvent]) {
    var bottle = SimulatedBottle(configuration: configuration, seed: seed)
    var detector = SipDetector(calibration: configuration.calibration)
    var events: [DetectedEvent] = []
    while let r = bottle.next() { detector.process(r, into: &events) }
    detector.finish(into: &events)
    return (events, bottle.drainTruth())
}

/// Runs `seeds` one-hour bottles of a configuration family through the detector.
func sweep(seeds: UInt64, verbose: Bool = false, bySensor: Bool = false, _ configuration: (UInt64) -> SimulationConfiguration)
    -> [String: EvaluationPool] {
    var byName: [String: EvaluationPool] = [:]
    let environment = ProcessInfo.processInfo.environment
    // `WITHOUT=zeroShift,creep` scores the same bottles without those behaviours.
    let without = Set((environment["WITHOUT"] ?? "").split(separator: ",").compactMap { Behaviour(rawValue: String($0)) })
    // `SWEEP_FIRST=1001` scores other bottles than the ones a rule was chosen on.
    let first = environment["SWEEP_FIRST"].flatMap { UInt64($0) } ?? 1
    for seed in first..<(first + seeds) {
        var configuration = configuration(seed)
        configuration.behaviours.subtract(without)
        let (events, truth) = detectSimulated(configuration, seed: seed)
        let report = Evaluation.score(detected: events, truth: truth)
        if verbose {
            print("seed \(seed) \(configuration.name) \(configuration.unit) rate \(configuration.sampleRate) res \(configuration.resolution) noise \(configuration.noise): recall \(report.sipRecall ?? -1) precision \(report.sipPrecision ?? -1) mae \(report.sipMeanAbsoluteErrorML ?? -1) total \(report.totalIntakeErrorPercent ?? -1) refill \(report.refillRecall ?? -1)")
            for m in report.missed { print("   missed \(m)") }
            for s in report.spurious { print("   spurious \(s)") }
            for m in report.matches where abs(m.truth.ml - m.detected.ml) > (Double(environment["ERROR_ML"] ?? "") ?? 3) { print("   error \(m.truth) -> \(m.detected.ml) \(m.detected.kind)") }
            if environment["PACE"] != nil {
                // A spurious event is named for the truth it overlaps (a pour judged a drink).
                let overlapped = { (d: DetectedEvent) in truth.first { $0.tStart < d.end && $0.tEnd > d.start }?.kind ?? .lifted }
                let all = report.matches.map { ($0.truth.kind, $0.detected) } + report.spurious.map { (overlapped($0), $0) }
                for (truthKind, d) in all where d.ml >= 100 && d.kind != .refill {
                    print(String(format: "   pace %@ as %@ ml %.0f away %.1f pace %.1f left %.0f sensor %@", "\(truthKind)", "\(d.kind)", d.ml, d.end - d.start, d.ml / max(d.end - d.start - 1, 0.5), d.remainingML ?? -1, "\(configuration.sensor)"))
                }
            }
        }
        let name = environment["BY_UNIT"] != nil ? "\(configuration.name) \(configuration.unit)"
            : bySensor ? "\(configuration.name) \(configuration.sensor)" : configuration.name
        // One report covers every seed.
        byName[name, default: EvaluationPool()].add(detected: events, truth: truth, duration: configuration.duration)
    }
    return byName
}

/// Prints one line per group and one for all of them; returns the overall report.
@discardableResult
func printSweep(_ groups: [String: EvaluationPool]) -> EvaluationReport {
    var all = EvaluationPool()
    for (name, pool) in groups.sorted(by: { $0.key < $1.key }) {
        let r = pool.report
        print(String(format: "%-28@ sips %4d recall %.3f precision %.3f mae %.2f total %.2f%% refill %.3f pour %.3f/%.3f", name as NSString, r.sip.truthCount, r.sipRecall ?? -1, r.sipPrecision ?? -1, r.sipMeanAbsoluteErrorML ?? -1, r.totalIntakeErrorPercent ?? -1, r.refillRecall ?? -1, r.pourRecall ?? -1, r.pour.precision ?? -1))
        all.add(pool)
    }
    let r = all.report
    print(String(format: "ALL sips %d recall %.4f precision %.4f mae %.3f total %.2f%% refill %.3f pour %.3f", r.sip.truthCount, r.sipRecall ?? -1, r.sipPrecision ?? -1, r.sipMeanAbsoluteErrorML ?? -1, r.totalIntakeErrorPercent ?? -1, r.refillRecall ?? -1, r.pourRecall ?? -1))
    return r
}

/// Exploration aid: `SWEEP=40 scripts/test.sh --filter detectorSweep` prints per-preset scores
/// of the randomised bottles, then per situation of issue 20 (`SITUATION=pours` for one).
@Test(.enabled(if: ProcessInfo.processInfo.environment["SWEEP"] != nil, "exploration aid: SWEEP=100 scripts/test.sh --filter detectorSweep"))
func detectorSweep() throws {
    let environment = ProcessInfo.processInfo.environment
    let seeds = UInt64(environment["SWEEP"]!) ?? 20
    let verbose = environment["VERBOSE"] != nil
    let only = environment["SITUATION"].flatMap(Situation.init(rawValue:))
    if only == nil {
        print("-- randomised presets")
        printSweep(sweep(seeds: seeds, verbose: verbose) { SimulationConfiguration.randomised(seed: $0, duration: 3600) })
    }
    print("-- situations")
    var groups: [String: EvaluationPool] = [:]
    for situation in Situation.allCases where only == nil || only == situation {
        let bySensor = environment["BY_SENSOR"] != nil
        groups.merge(sweep(seeds: seeds, verbose: verbose, bySensor: bySensor) { .situation(situation, seed: $0, duration: 3600) }) { a, _ in a }
    }
    printSweep(groups)
}

/// Exploration aid: `DUMP=36,everyday,780,805` prints one bottle's readings in that span,
/// with the detector's phase and any event, to see why it judged as it did.
@Test(.enabled(if: ProcessInfo.processInfo.environment["DUMP"] != nil, "exploration aid: DUMP=SEED,SITUATION,FROM,TO scripts/test.sh --filter detectorDump"))
func detectorDump() throws {
    let parts = ProcessInfo.processInfo.environment["DUMP"]!.split(separator: ",").map(String.init)
    let seed = UInt64(parts[0]) ?? 1
    let from = Double(parts[2]) ?? 0, to = Double(parts[3]) ?? 3600
    // `DUMP=0,path/to/trace.csv,FROM,TO`: a trace file (a long `quench simulate`) instead.
    if parts[1].contains("/") {
        let (header, readings) = try loadTrace(parts[1])
        let value = { (key: String) in header.metadata.first { $0.key == key }.flatMap { Double($0.value) } }
        let calibration = try BottleCalibration(unit: header.unit ?? .g, capacityML: value("capacity-ml"), emptyWeightG: value("empty-weight-g"))
        var detector = SipDetector(calibration: calibration)
        var events: [DetectedEvent] = []
        for r in readings {
            let before = events.count
            detector.process(r, into: &events)
            if r.t >= from, r.t <= to { printDumpLine(r, detector) }
            for e in events[before...] where e.t >= from && e.t <= to + 30 { print("   EVENT \(e)") }
        }
        return
    }
    let configuration = Situation(rawValue: parts[1]).map { SimulationConfiguration.situation($0, seed: seed, duration: 3600) }
        ?? SimulationConfiguration.randomised(seed: seed, duration: 3600)
    var bottle = SimulatedBottle(configuration: configuration, seed: seed)
    var detector = SipDetector(calibration: configuration.calibration)
    var events: [DetectedEvent] = []
    while let r = bottle.next() {
        let before = events.count
        detector.process(r, into: &events)
        if r.t >= from, r.t <= to { printDumpLine(r, detector) }
        for e in events[before...] where e.t >= from && e.t <= to + 30 { print("   EVENT \(e)") }
    }
    for t in bottle.drainTruth() where t.tEnd >= from && t.tStart <= to { print("   TRUTH \(t)") }
}

private func printDumpLine(_ r: Reading, _ detector: SipDetector) {
    print(String(format: "%8.2f %@ %@ band %.2f level %@", r.t, r.value.map { String(format: "%8.2f", $0) } ?? "     nil",
                 detector.phase.rawValue, detector.band, detector.level.map { String(format: "%.2f", $0) } ?? "-"))
}

/// Exploration aid: `LOSS_FEATURES=/tmp/losses SWEEP=1000 scripts/test.sh --filter detectorLossFeatures` writes,
/// for every loss across a lift of 90 mL or more on a scale (situations `pours`, `bigDrinks`, `mixed`, or
/// `SITUATIONS=a,b`), what the stream showed of it (loss, time away, what was left, the next event) and what it
/// was, to `losses.csv`, and each bottle's intake to `intake.csv`; `scripts/pour-floor.py` asks how well any
/// rule on those could tell a pour from a drink (docs/detector.md#pour-or-drink).
@Test(.enabled(if: ProcessInfo.processInfo.environment["LOSS_FEATURES"] != nil, "exploration aid: LOSS_FEATURES=DIR SWEEP=1000 scripts/test.sh --filter detectorLossFeatures"))
func detectorLossFeatures() throws {
    let environment = ProcessInfo.processInfo.environment
    let folder = environment["LOSS_FEATURES"]!
    let seeds = environment["SWEEP"].flatMap { UInt64($0) } ?? 100
    let situations = (environment["SITUATIONS"] ?? "pours,bigDrinks,mixed").split(separator: ",").compactMap { Situation(rawValue: String($0)) }
    var losses = "situation,seed,truth,judged,ml,away_s,left_ml,next,next_after_s\n"
    var intake = "situation,seed,intake_ml\n"
    for situation in situations {
        for seed in 1...seeds {
            let configuration = SimulationConfiguration.situation(situation, seed: seed, duration: 3600)
            guard configuration.sensor == .weight else { continue }
            let (events, truth) = detectSimulated(configuration, seed: seed)
            intake += "\(situation),\(seed),\(truth.filter { $0.kind == .sip }.reduce(0) { $0 + $1.ml })\n"
            let judged = events.filter { !$0.kind.isDiagnostic }
            for (i, d) in judged.enumerated() where d.ml >= 90 && d.kind != .refill {
                // What it was: the drink or pour it overlaps (none: a spurious loss, left out).
                guard let what = truth.first(where: { $0.tStart < d.end && $0.tEnd > d.start && $0.kind != .refill }) else { continue }
                let next = judged.indices.contains(i + 1) ? judged[i + 1] : nil
                losses += "\(situation),\(seed),\(what.kind),\(d.kind),\(d.ml),\(d.end - d.start),\(d.remainingML.map { "\($0)" } ?? ""),"
                    + "\(next.map { "\($0.kind)" } ?? "end"),\(next.map { "\($0.start - d.end)" } ?? "")\n"
            }
        }
    }
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    try losses.write(toFile: folder + "/losses.csv", atomically: true, encoding: .utf8)
    try intake.write(toFile: folder + "/intake.csv", atomically: true, encoding: .utf8)
}

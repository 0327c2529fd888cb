/// Scores detected events against ground truth (issue 2, point 7): `quench evaluate`.
///
/// **Matching rule.** A detected event matches a true event of the same kind when
/// its `t` lies in `[tStart − 2 s, tEnd + 15 s]`, one to one. Detected events are
/// taken in time order (ties: larger mL first, for a stable order); each takes, among
/// the still-unmatched true events whose window contains its `t`, the one whose
/// window closes first (ties: closest mL, then earliest `tStart`). Taking the
/// earliest-closing window is the classic greedy that matches as many points to
/// intervals as any assignment can, so a detector is never penalised by the order
/// of matching. Diagnostics (`lifted`, `placed`) are ignored.
public enum Evaluation {
    /// Seconds before `tStart` that a detection may come.
    public static let windowBefore = 2.0
    /// Seconds after `tEnd` that a detection may come.
    public static let windowAfter = 15.0

    public static func score(detected: [DetectedEvent], truth: [TruthEvent]) -> EvaluationReport {
        var report = EvaluationReport()
        for kind in TruthFormat.kinds {
            let (score, pairs, missed, extra) = scoreKind(
                kind,
                detected: detected.filter { $0.kind == kind },
                truth: truth.filter { $0.kind == kind }
            )
            report[kind] = score
            report.matches += pairs
            report.missed += missed
            report.spurious += extra
        }
        report.matches.sort { $0.truth.tStart < $1.truth.tStart }
        report.missed.sort { $0.tStart < $1.tStart }
        report.spurious.sort { $0.t < $1.t }
        return report
    }

    /// Whether `t` falls in the window of `truth`.
    @inlinable
    public static func window(of truth: TruthEvent, contains t: Double) -> Bool {
        t >= truth.tStart - windowBefore && t <= truth.tEnd + windowAfter
    }

    private static func scoreKind(
        _ kind: EventKind, detected: [DetectedEvent], truth: [TruthEvent]
    ) -> (EvaluationReport.KindScore, [EvaluationReport.Match], [TruthEvent], [DetectedEvent]) {
        let detected = detected.sorted { $0.t != $1.t ? $0.t < $1.t : $0.ml > $1.ml }
        let truth = truth.sorted { $0.tStart != $1.tStart ? $0.tStart < $1.tStart : $0.tEnd < $1.tEnd }
        var taken = [Bool](repeating: false, count: truth.count)
        var pairs: [EvaluationReport.Match] = []
        var extra: [DetectedEvent] = []
        // Detections come in time order, so a window that closed before one
        // detection is closed for all later ones: `low` skips those (and taken
        // ones) for good; the scan stops at the first window not yet open.
        var low = 0
        for event in detected {
            while low < truth.count, taken[low] || truth[low].tEnd + windowAfter < event.t { low += 1 }
            var best: Int?
            for i in low..<truth.count where !taken[i] {
                let candidate = truth[i]
                if candidate.tStart - windowBefore > event.t { break }
                guard window(of: candidate, contains: event.t) else { continue }
                guard let b = best else { best = i; continue }
                let current = truth[b]
                if candidate.tEnd != current.tEnd {
                    if candidate.tEnd < current.tEnd { best = i }
                } else if abs(candidate.ml - event.ml) < abs(current.ml - event.ml) {
                    best = i
                }
            }
            if let best {
                taken[best] = true
                pairs.append(.init(truth: truth[best], detected: event))
            } else {
                extra.append(event)
            }
        }
        let missed = truth.indices.filter { !taken[$0] }.map { truth[$0] }
        let score = EvaluationReport.KindScore(
            truthCount: truth.count,
            detectedCount: detected.count,
            matched: pairs.count,
            absoluteErrorSumML: pairs.reduce(0) { $0 + abs($1.detected.ml - $1.truth.ml) },
            truthTotalML: truth.reduce(0) { $0 + $1.ml },
            detectedTotalML: detected.reduce(0) { $0 + $1.ml }
        )
        return (score, pairs, missed, extra)
    }
}

/// The outcome of `Evaluation.score`.
public struct EvaluationReport: Sendable, Hashable, CustomStringConvertible {
    /// Counts and volumes for one kind of event.
    public struct KindScore: Sendable, Hashable {
        public var truthCount = 0
        public var detectedCount = 0
        public var matched = 0
        /// Sum over matched pairs of |detected mL − true mL|.
        public var absoluteErrorSumML = 0.0
        public var truthTotalML = 0.0
        public var detectedTotalML = 0.0

        public init(truthCount: Int = 0, detectedCount: Int = 0, matched: Int = 0, absoluteErrorSumML: Double = 0,
                    truthTotalML: Double = 0, detectedTotalML: Double = 0) {
            self.truthCount = truthCount
            self.detectedCount = detectedCount
            self.matched = matched
            self.absoluteErrorSumML = absoluteErrorSumML
            self.truthTotalML = truthTotalML
            self.detectedTotalML = detectedTotalML
        }

        /// Matched / true; nil when there was nothing to find.
        public var recall: Double? { truthCount == 0 ? nil : Double(matched) / Double(truthCount) }
        /// Matched / detected; nil when nothing was detected.
        public var precision: Double? { detectedCount == 0 ? nil : Double(matched) / Double(detectedCount) }
        /// Mean |detected − true| mL over matched pairs; nil without pairs.
        public var meanAbsoluteErrorML: Double? { matched == 0 ? nil : absoluteErrorSumML / Double(matched) }
        /// |Σ detected − Σ true| / Σ true in %, over all events (matched or not);
        /// 0 when both are zero, nil when only the truth is.
        public var totalErrorPercent: Double? {
            if truthTotalML == 0 { return detectedTotalML == 0 ? 0 : nil }
            return abs(detectedTotalML - truthTotalML) / truthTotalML * 100
        }
    }

    public struct Match: Sendable, Hashable {
        public var truth: TruthEvent
        public var detected: DetectedEvent
    }

    public var sip = KindScore()
    public var refill = KindScore()
    public var pour = KindScore()
    /// Matched pairs, in the truth's time order.
    public var matches: [Match] = []
    /// True events nothing matched.
    public var missed: [TruthEvent] = []
    /// Detected sips, refills and pours that matched nothing.
    public var spurious: [DetectedEvent] = []

    public init() {}

    public subscript(kind: EventKind) -> KindScore {
        get {
            switch kind {
            case .refill: refill
            case .pour: pour
            default: sip
            }
        }
        set {
            switch kind {
            case .sip: sip = newValue
            case .refill: refill = newValue
            case .pour: pour = newValue
            case .lifted, .placed: break
            }
        }
    }

    public var sipRecall: Double? { sip.recall }
    public var sipPrecision: Double? { sip.precision }
    public var sipMeanAbsoluteErrorML: Double? { sip.meanAbsoluteErrorML }
    /// Total intake error in %: |Σ detected sips − Σ true sips| / Σ true sips.
    public var totalIntakeErrorPercent: Double? { sip.totalErrorPercent }
    public var refillRecall: Double? { refill.recall }
    public var refillPrecision: Double? { refill.precision }
    public var pourRecall: Double? { pour.recall }

    /// The targets this report misses, each as a readable line (empty when all are met).
    /// A metric that cannot be computed (no true events of its kind) is not a miss.
    public func failures(against targets: EvaluationTargets = .init()) -> [String] {
        var out: [String] = []
        func atLeast(_ name: String, _ value: Double?, _ target: Double) {
            if let value, value < target { out.append("\(name) \(TraceWriter.fixed(value, places: 4)) is below \(target)") }
        }
        func atMost(_ name: String, _ value: Double?, _ target: Double, _ unit: String) {
            if let value, value > target {
                out.append("\(name) \(TraceWriter.fixed(value, places: 2))\(unit) is above \(target.compactDescription)\(unit)")
            }
        }
        atLeast("sip recall", sipRecall, targets.sipRecall)
        atLeast("sip precision", sipPrecision, targets.sipPrecision)
        atMost("sip mean absolute error", sipMeanAbsoluteErrorML, targets.sipMeanAbsoluteErrorML, " mL")
        atMost("total intake error", totalIntakeErrorPercent, targets.totalIntakeErrorPercent, " %")
        atLeast("refill recall", refillRecall, targets.refillRecall)
        return out
    }

    public var description: String {
        func ratio(_ v: Double?) -> String { v.map { TraceWriter.fixed($0, places: 3) } ?? "n/a" }
        func ml(_ v: Double?) -> String { v.map { TraceWriter.fixed($0, places: 2) + " mL" } ?? "n/a" }
        func line(_ name: String, _ s: KindScore) -> String {
            let label = name.padding(to: 8)
            return "\(label)true \(s.truthCount), detected \(s.detectedCount), matched \(s.matched); "
                + "recall \(ratio(s.recall)), precision \(ratio(s.precision)); "
                + "total true \(TraceWriter.fixed(s.truthTotalML, places: 1)) mL, detected \(TraceWriter.fixed(s.detectedTotalML, places: 1)) mL"
        }
        return [
            line("sips", sip),
            line("refills", refill),
            line("pours", pour),
            "sip recall:              \(ratio(sipRecall))",
            "sip precision:           \(ratio(sipPrecision))",
            "mean abs. error per sip: \(ml(sipMeanAbsoluteErrorML))",
            "total intake error:      \(totalIntakeErrorPercent.map { TraceWriter.fixed($0, places: 2) + " %" } ?? "n/a")",
            "refill recall:           \(ratio(refillRecall))",
            "refill precision:        \(ratio(refillPrecision))",
            "pour recall:             \(ratio(pourRecall))",
        ].joined(separator: "\n") + listed
    }

    /// Each missed and spurious event, to find in the trace (at most `listedEach` of each; all in `--json`).
    private var listed: String {
        func seconds(_ t: Double) -> String { TraceWriter.fixed(t, places: 1) }
        func some<T>(_ events: [T], _ title: String, _ text: (T) -> String) -> String {
            guard !events.isEmpty else { return "" }
            let more = events.count > Self.listedEach ? ["  … and \(events.count - Self.listedEach) more (all of them with --json)"] : []
            return "\n\(title):\n" + (events.prefix(Self.listedEach).map { "  " + text($0) } + more).joined(separator: "\n")
        }
        return some(missed, "missed") { "\($0.kind.rawValue) of \(TraceWriter.fixed($0.ml, places: 1)) mL, \(seconds($0.tStart))–\(seconds($0.tEnd)) s" }
            + some(spurious, "spurious") { "\($0.kind.rawValue) of \(TraceWriter.fixed($0.ml, places: 1)) mL, \(seconds($0.start))–\(seconds($0.end)) s" }
    }

    static let listedEach = 20
}

/// The acceptance targets of issue 2 ("How it will be judged").
public struct EvaluationTargets: Sendable, Hashable {
    public var sipRecall = 0.99
    public var sipPrecision = 0.98
    public var sipMeanAbsoluteErrorML = 1.0
    public var totalIntakeErrorPercent = 2.0
    public var refillRecall = 0.98
    public init() {}
}

extension String {
    fileprivate func padding(to width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}

/// Several traces scored as one report: each is placed after the ones before it on one clock,
/// 1 000 s apart, so that no event of one trace can match another's truth.
public struct EvaluationPool: Sendable {
    public private(set) var detected: [DetectedEvent] = []
    public private(set) var truth: [TruthEvent] = []
    /// Where the next trace starts on the pool's clock.
    private var end = 0.0

    public init() {}

    /// Adds a trace of `duration` seconds, its times counted from 0.
    public mutating func add(detected: [DetectedEvent], truth: [TruthEvent], duration: Double) {
        let shift = end
        self.detected += detected.map { var e = $0; e.t += shift; e.start += shift; e.end += shift; return e }
        self.truth += truth.map { var e = $0; e.tStart += shift; e.tEnd += shift; return e }
        end += duration + 1000
    }

    /// Adds every trace of `other`, after these.
    public mutating func add(_ other: EvaluationPool) { add(detected: other.detected, truth: other.truth, duration: other.end) }

    public var report: EvaluationReport { Evaluation.score(detected: detected, truth: truth) }
}

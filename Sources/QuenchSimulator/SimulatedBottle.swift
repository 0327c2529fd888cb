import QuenchCore

/// A seeded, deterministic simulated bottle on a scale (or with a level sensor):
/// an endless (or `duration`-long) stream of readings with the ground truth of
/// what happened. Streaming: it holds one episode (a few seconds to minutes of
/// physics) at a time, so it can produce any number of readings in bounded memory.
/// No I/O: the CLI writes its output, the BLE simulated peripheral sends it.
///
/// Truth events of an episode become available (`drainTruth()`) when the
/// episode's first reading is produced; drain them as you go to keep memory flat.
public struct SimulatedBottle: IteratorProtocol, Sequence, Sendable {
    public let configuration: SimulationConfiguration
    public let seed: UInt64

    /// How far (g) a load cell's zero wanders from its tare over any length of simulation.
    static let largestZeroG = 100.0

    /// How often each behaviour has happened so far (episodes, or samples for
    /// per-sample effects such as spikes and tilted readings).
    public private(set) var occurrences: [Behaviour: Int] = [:]
    /// Readings produced so far.
    public private(set) var readingCount = 0
    /// Water in the bottle at the end of the current episode (mL).
    public var waterML: Double { state.water }

    private struct State: Sendable {
        var water: Double
        var phone = 0.0
        var zero: Double
    }

    private var plan: SeededRandom
    private var sense: SeededRandom
    private var script: [ScenarioStep]?
    private var scriptIndex = 0
    private var state: State
    private var episode: Episode
    private var placedAt = 0.0
    private var sampleIndex: UInt64 = 0
    private var lastT = 0.0
    private var truth: [TruthEvent] = []
    private var pendingStep: ScenarioStep?
    private var lastWasAction = true
    private var finished = false
    private let stopAt: Double
    private let on: Flags
    private let driftPeriods: (Double, Double)
    private let driftPhases: (Double, Double)

    private struct Flags: Sendable {
        var noise, spikes, jitter, ring, zeroShift, drift, creep, gaps, gapsWithSips, tilt, slosh, hand: Bool
        init(_ b: Set<Behaviour>) {
            noise = b.contains(.noise); spikes = b.contains(.spikes); jitter = b.contains(.jitter)
            ring = b.contains(.ring); zeroShift = b.contains(.zeroShift); drift = b.contains(.drift)
            creep = b.contains(.creep); gaps = b.contains(.gaps); gapsWithSips = b.contains(.gapsWithSips)
            tilt = b.contains(.tiltGarbage); slosh = b.contains(.slosh); hand = b.contains(.handRest)
        }
    }

    /// A bottle living the habits drawn from `seed` for `configuration.duration` seconds.
    public init(configuration: SimulationConfiguration, seed: UInt64) {
        self.init(configuration: configuration, seed: seed, script: nil)
    }

    /// A bottle following `script` step by step (see `Scenario`); it stops after
    /// the last step and a short quiet tail.
    init(configuration: SimulationConfiguration, seed: UInt64, script: [ScenarioStep]?) {
        self.configuration = configuration
        self.seed = seed
        plan = SeededRandom(seed: seed, stream: 1)
        sense = SeededRandom(seed: seed, stream: 2)
        on = Flags(configuration.behaviours)
        self.script = script.map { $0 + [.idle(seconds: 15)] }
        stopAt = script == nil ? configuration.duration : .infinity
        let initialZero = on.zeroShift ? plan.uniform(-3, 3) : 0
        state = State(water: Swift.min(Swift.max(configuration.initialML, 0), configuration.capacityML), zero: initialZero)
        driftPeriods = (plan.uniform(2400, 5400), plan.uniform(7200, 14400))
        driftPhases = (plan.uniform(0, 2 * .pi), plan.uniform(0, 2 * .pi))
        var first = EpisodeBuilder(t: 0, water: state.water, phone: 0)
        first.add(.rest, seconds: script == nil ? plan.uniform(20, 60) : 5)
        episode = first.episode()
    }

    /// The trace header for what this bottle produces.
    public var header: TraceHeader {
        var metadata: [TraceHeader.Metadata] = [
            .init(key: "simulator", value: "quench 1"),
            .init(key: "seed", value: String(seed)),
            .init(key: "preset", value: configuration.name),
            .init(key: "rate-hz", value: configuration.sampleRate.compactDescription),
            .init(key: "resolution", value: configuration.resolution.compactDescription),
            .init(key: "capacity-ml", value: configuration.capacityML.compactDescription),
        ]
        if configuration.sensor == .weight {
            metadata.append(.init(key: "empty-weight-g", value: TraceWriter.fixed(configuration.emptyWeightG, places: 1)))
        }
        if let curve = configuration.levelCurve {
            metadata.append(.init(key: "level-curve", value: curve.description))
        }
        return TraceHeader(sensor: configuration.sensor, unit: configuration.unit, started: configuration.started, metadata: metadata)
    }

    /// The truth events produced since the last call, in time order.
    public mutating func drainTruth() -> [TruthEvent] {
        defer { truth.removeAll(keepingCapacity: true) }
        return truth
    }

    public mutating func next() -> Reading? {
        while !finished {
            let nominal = Double(sampleIndex) / configuration.sampleRate
            sampleIndex += 1
            if nominal >= stopAt {
                finished = true
                return nil
            }
            while nominal >= episode.end {
                startNextEpisode()
                if finished { return nil }
            }
            if episode.inGap(nominal) { continue }
            let physical = episode.physical(at: nominal, emptyWeightG: configuration.emptyWeightG, shape: configuration.shape)
            let value = measure(physical, at: nominal)
            var t = nominal
            if on.jitter, configuration.timestampJitter > 0 {
                t += sense.uniform(-configuration.timestampJitter, configuration.timestampJitter)
            }
            // Loggers never write time backwards: they repeat the last stamp.
            t = Swift.max(t, lastT)
            lastT = t
            readingCount += 1
            return Reading(t: t, value: value)
        }
        return nil
    }

    // MARK: The sensor

    private mutating func measure(_ p: Physical, at t: Double) -> Double? {
        let c = configuration
        switch c.sensor {
        case .weight:
            var grams = p.loadG + (t >= episode.zeroShiftAt ? episode.zeroAfter : state.zero)
            if on.drift { grams += drift(at: t) }
            if on.creep, p.bottleOnScaleG > 0 {
                let since = t - (episode.placedAt.flatMap { $0 <= t ? $0 : nil } ?? placedAt)
                grams += c.creepFraction * p.bottleOnScaleG * (1 - DeterministicMath.exp(-since / 300))
            }
            if on.noise { grams += sense.normal() * c.noise }
            if on.spikes, sense.chance(c.spikeRate) {
                grams += sense.sign() * sense.logUniform(50, Swift.max(c.maxSpikeG, 51))
                count(.spikes)
            }
            if c.unsignedReadings { grams = Swift.max(0, grams) }
            return quantise(grams / c.unit.gramsPerUnit!)
        case .level:
            let top = c.shape.topLevelMM
            guard var level = p.levelMM else {
                // Tilted: ultrasonic and ToF sensors see the wall or foam.
                guard on.tilt else { return nil }
                count(.tiltGarbage)
                if sense.chance(c.tiltNilFraction) { return nil }
                return quantise(levelValue(sense.uniform(0, top * 1.3)))
            }
            if on.drift { level += drift(at: t) }
            if on.noise { level += sense.normal() * c.noise }
            if on.spikes, sense.chance(c.spikeRate) {
                level = sense.uniform(0, top * 1.3)
                count(.spikes)
            }
            return quantise(levelValue(Swift.max(0, level)))
        }
    }

    private func levelValue(_ mm: Double) -> Double {
        switch configuration.unit {
        case .percent: mm / configuration.shape.topLevelMM * 100
        case .raw: configuration.rawOffset + mm * configuration.rawCountsPerMM
        default: mm
        }
    }

    @inline(__always)
    private func quantise(_ value: Double) -> Double {
        let r = configuration.resolution
        guard r > 0 else { return value }
        return (value / r).rounded() * r
    }

    private func drift(at t: Double) -> Double {
        // Two slow sines (room temperature over hours); phases reduced so
        // arguments stay small for the series.
        let a = (t / driftPeriods.0).truncatingRemainder(dividingBy: 1)
        let b = (t / driftPeriods.1).truncatingRemainder(dividingBy: 1)
        return configuration.driftAmplitude
            * (0.6 * DeterministicMath.sin(2 * .pi * a + driftPhases.0) + 0.4 * DeterministicMath.sin(2 * .pi * b + driftPhases.1))
    }

    private mutating func count(_ behaviour: Behaviour) {
        occurrences[behaviour, default: 0] += 1
    }

    // MARK: The person

    private mutating func startNextEpisode() {
        // Carry over what persists from the episode that ended.
        if let placed = episode.placedAt { placedAt = placed }
        if episode.zeroShiftAt.isFinite { state.zero = episode.zeroAfter }
        let t0 = episode.end
        let step: ScenarioStep
        if script != nil {
            guard scriptIndex < script!.count else {
                finished = true
                return
            }
            step = script![scriptIndex]
            scriptIndex += 1
        } else {
            step = nextPlannedStep()
        }
        var built = build(step, at: t0)
        // A planned episode that would not finish inside the trace becomes quiet
        // to the end, so the truth never holds an event the readings cannot show.
        if script == nil, built.episode.end > stopAt - 5, !built.isIdle {
            var idle = EpisodeBuilder(t: t0, water: state.water, phone: state.phone)
            idle.add(.rest, seconds: Swift.max(stopAt - t0 + 1, 1))
            built = Built(episode: idle.episode(), state: state, truth: nil, counts: [], isIdle: true)
        }
        episode = built.episode
        state = built.state
        if let event = built.truth { truth.append(event) }
        for behaviour in built.counts { count(behaviour) }
    }

    private mutating func nextPlannedStep() -> ScenarioStep {
        if let step = pendingStep {
            pendingStep = nil
            return step
        }
        let c = configuration
        if !lastWasAction {
            lastWasAction = true
            return action()
        }
        lastWasAction = false
        return .idle(seconds: Swift.max(15, plan.exponential(mean: c.meanIdleSeconds)))
    }

    private mutating func action() -> ScenarioStep {
        let c = configuration
        let b = c.behaviours
        let water = state.water
        if b.contains(.refills), water < Swift.max(80, 3 * c.sipMedianML) {
            return .refill(toML: c.capacityML * plan.uniform(0.9, 1.0))
        }
        var choices: [(Double, ScenarioStep)] = []
        if b.contains(.sips) { choices.append((100, .sip(ml: 0))) }
        if b.contains(.bigDrinks) { choices.append((12, .drink(ml: 0, mlPerSecond: 0))) }
        if b.contains(.partialPours), water >= 300 { choices.append((2.5, .pour(ml: water * plan.uniform(0.3, 0.7)))) }
        if b.contains(.liftWithoutDrinking) { choices.append((7, .liftWithoutDrinking(seconds: plan.uniform(1, 6)))) }
        if b.contains(.nudges) {
            choices.append((5, .nudge(grams: plan.sign() * plan.logUniform(20, 500))))
            let press = plan.chance(0.6) ? plan.uniform(30, 400) : -plan.uniform(0.2, 0.6) * (c.emptyWeightG + water)
            choices.append((4, .touch(grams: press, seconds: plan.uniform(1, 5))))
        }
        if b.contains(.phone), c.sensor == .weight {
            choices.append((3, state.phone == 0 ? .phoneOn(grams: plan.uniform(140, 230)) : .phoneOff))
        }
        if b.contains(.gaps) { choices.append((4, .gap(seconds: plan.logUniform(2, 300)))) }
        if b.contains(.gapsWithSips), b.contains(.sips) {
            let placement = GapPlacement.allCases[Int(plan.next() % 3)]
            choices.append((4, .gap(seconds: plan.logUniform(5, 120), sipML: 0, placement: placement)))
        }
        if b.contains(.pours), water >= 200 { choices.append((2.5, .pour(ml: water * plan.uniform(0.7, 1.0)))) }
        if b.contains(.refills), water < 0.6 * c.capacityML {
            choices.append((3, .refill(toML: c.capacityML * plan.uniform(0.9, 1.0))))
        }
        guard !choices.isEmpty else { return .idle(seconds: Swift.max(15, plan.exponential(mean: c.meanIdleSeconds))) }
        if !c.emphasised.isEmpty {
            choices = choices.map { ($0.0 * (c.emphasised.contains(Self.behaviour(of: $0.1)) ? 5 : 1), $0.1) }
        }
        var roll = plan.unit() * choices.reduce(0) { $0 + $1.0 }
        var chosen = choices[choices.count - 1].1
        for (weight, step) in choices {
            if roll < weight {
                chosen = step
                break
            }
            roll -= weight
        }
        switch chosen {
        case .sip:
            return drawSip { .sip(ml: $0) }
        case .gap(let seconds, .some, let placement):
            return drawSip { .gap(seconds: seconds, sipML: $0, placement: placement) }
        case .drink:
            return drawBigDrink()
        case .pour(let ml, _) where ml < water * 0.7 && b.contains(.partialPours):
            return chosen  // part of the bottle: no refill needed after it
        case .pour:
            if b.contains(.refills), plan.chance(0.7) {
                pendingStep = .refill(toML: c.capacityML * plan.uniform(0.9, 1.0))
                lastWasAction = true  // the refill follows the pour after a short walk
            }
            return chosen
        default:
            return chosen
        }
    }

    /// The behaviour a planned step stands for (for `emphasised`).
    private static func behaviour(of step: ScenarioStep) -> Behaviour {
        switch step {
        case .sip: .sips
        case .drink: .bigDrinks
        case .liftWithoutDrinking: .liftWithoutDrinking
        case .nudge, .touch: .nudges
        case .phoneOn, .phoneOff: .phone
        case .gap(_, .some, _): .gapsWithSips
        case .gap: .gaps
        case .pour: .pours
        case .refill: .refills
        case .idle: .sips
        }
    }

    /// A big drink after exercise: 150–400 mL at 8–30 mL/s. With less left, the
    /// person finishes the bottle (a few to 30 mL stay in it) and often refills
    /// it next; with under 150 mL left, they refill first.
    private mutating func drawBigDrink() -> ScenarioStep {
        let c = configuration
        let wanted = plan.uniform(150, 400)
        let pace = plan.uniform(8, 30)
        let available = state.water - plan.uniform(5, 30)
        if wanted <= available { return .drink(ml: wanted, mlPerSecond: pace) }
        if available >= 150 {
            if c.behaviours.contains(.refills), plan.chance(0.5) {
                pendingStep = .refill(toML: c.capacityML * plan.uniform(0.9, 1.0))
                lastWasAction = true
            }
            return .drink(ml: available, mlPerSecond: pace)
        }
        guard c.behaviours.contains(.refills) else { return .idle(seconds: 60) }
        pendingStep = .drink(ml: Swift.min(wanted, c.capacityML * 0.85), mlPerSecond: pace)
        lastWasAction = true
        return .refill(toML: c.capacityML * plan.uniform(0.9, 1.0))
    }

    /// A lognormal sip; never more than the bottle holds (it is refilled first).
    private mutating func drawSip(_ make: (Double) -> ScenarioStep) -> ScenarioStep {
        let c = configuration
        let ml = Swift.min(150, Swift.max(3, plan.lognormal(median: c.sipMedianML, sigma: c.sipLogSigma)))
        if ml > state.water - 5 {
            if c.behaviours.contains(.refills) {
                pendingStep = make(ml)
                lastWasAction = true
                return .refill(toML: c.capacityML * plan.uniform(0.9, 1.0))
            }
            let left = state.water - 5
            return left >= 3 ? make(left * plan.uniform(0.3, 0.9)) : .idle(seconds: 60)
        }
        return make(ml)
    }

    // MARK: Building episodes

    private struct Built {
        var episode: Episode
        var state: State
        var truth: TruthEvent?
        var counts: [Behaviour]
        var isIdle = false
    }

    private mutating func build(_ step: ScenarioStep, at t0: Double) -> Built {
        let c = configuration
        let on = self.on
        // A local copy: the nested helpers below capture it instead of `self`.
        var rng = plan
        defer { plan = rng }
        var s = state
        var b = EpisodeBuilder(t: t0, water: s.water, phone: s.phone)
        var truth: TruthEvent?
        var counts: [Behaviour] = []
        var gap: (Double, Double)?
        var zeroShift: (at: Double, to: Double)?
        var placed: Double?

        func lift() -> Double {
            // Grasping first presses or pulls a little.
            b.add(.bump, seconds: rng.uniform(0.25, 0.8)) { $0.amplitude = rng.sign() * rng.uniform(5, 60) }
            let start = b.t
            let ramp = rng.uniform(0.15, 0.45)
            if on.zeroShift, c.sensor == .weight {
                let shift = Swift.max(-4, Swift.min(4, rng.normal())) * c.zeroShiftSigmaG
                // A load cell's zero wanders at each unloading, but stays within `largestZeroG` of its tare:
                // unbounded, the walk reached 290 g in a 96 h simulation, and the detector read the empty
                // scale as a bottle. A step past the bound goes the other way.
                let to = abs(s.zero + shift) > Self.largestZeroG ? s.zero - shift : s.zero + shift
                zeroShift = (start + ramp / 2, Swift.max(-Self.largestZeroG, Swift.min(Self.largestZeroG, to)))
            }
            b.add(.liftRamp, seconds: ramp)
            return start
        }
        func away(_ seconds: Double, toWater: Double? = nil, tilted: Bool = false) {
            b.add(.away, seconds: seconds, toWater: toWater) {
                $0.tilted = tilted
                $0.slosh = on.slosh ? rng.uniform(1, 4) : 0
                $0.sloshFrequency = rng.uniform(0.6, 1.6)
            }
        }
        func settle(hand requested: Double?, gentle: Bool = false) {
            let handSeconds: Double
            if let requested { handSeconds = requested } else { handSeconds = on.hand && !gentle && rng.chance(0.35) ? rng.uniform(1, 4) : 0 }
            let tau = rng.uniform(0.15, 0.5), sloshTau = rng.uniform(0.8, 2.5)
            let ringing = on.ring && c.sensor == .weight
            let sloshing = on.slosh && c.sensor == .level
            let seconds = Swift.max(ringing ? 5 * tau : 0.3, sloshing ? 4 * sloshTau : 0.3, handSeconds + 0.4)
            let start = b.t
            b.add(.settle, seconds: seconds) {
                $0.amplitude = ringing ? rng.uniform(0.03, 0.2) * (gentle ? 0.2 : 1) : 0
                $0.tau = tau
                $0.frequency = rng.uniform(2, 6)
                $0.slosh = sloshing ? rng.uniform(2, 8) * (gentle ? 0.3 : 1) : 0
                $0.sloshTau = sloshTau
                $0.sloshFrequency = rng.uniform(0.8, 2)
                if handSeconds > 0 {
                    $0.hand = rng.uniform(30, 300)
                    $0.handEnd = start + handSeconds
                }
            }
            if handSeconds > 0, c.sensor == .weight { counts.append(.handRest) }
            if ringing, !gentle { counts.append(.ring) }
            if sloshing, !gentle { counts.append(.slosh) }
        }
        func putBack(hand: Double? = nil) -> Double {
            b.add(.setDown, seconds: rng.uniform(0.15, 0.35))
            let back = b.t
            placed = back
            settle(hand: hand)
            return back
        }
        /// A sip: returns (lift, back).
        func sip(ml: Double, liftSeconds: Double?, hand: Double?, pace: Double? = nil) -> (Double, Double, Double) {
            let ml = Swift.min(ml, b.water)
            b.add(.rest, seconds: 0.5)
            let start = lift()
            var drink = ml / (pace ?? rng.uniform(8, 25))
            // A long drink takes as long as it takes; a sip is over within 10 s.
            let total = liftSeconds ?? (pace != nil ? drink + rng.uniform(1.5, 4) : Swift.min(10, Swift.max(2, drink + rng.uniform(1.5, 4))))
            drink = Swift.min(drink, Swift.max(total - 0.8, 0.3))
            let handling = Swift.max(total - drink, 0.5)
            let before = handling * rng.uniform(0.3, 0.7)
            away(before)
            let drinkStart = b.t
            away(drink, toWater: b.water - ml, tilted: true)
            away(handling - before)
            let back = putBack(hand: hand)
            counts.append(.sips)
            return (start, back, drinkStart)
        }

        switch step {
        case .idle(let seconds):
            b.add(.rest, seconds: seconds)
        case .sip(let ml, let liftSeconds, let hand):
            let (start, back, _) = sip(ml: ml, liftSeconds: liftSeconds, hand: hand)
            truth = TruthEvent(tStart: start, tEnd: back, kind: .sip, ml: Swift.min(ml, s.water))
            b.add(.rest, seconds: 2)
        case .drink(let ml, let pace):
            let pace = Swift.min(Swift.max(pace, 1), 200)
            let (start, back, _) = sip(ml: ml, liftSeconds: nil, hand: nil, pace: pace)
            truth = TruthEvent(tStart: start, tEnd: back, kind: .sip, ml: Swift.min(ml, s.water))
            counts.append(.bigDrinks)
            b.add(.rest, seconds: 2)
        case .refill(let target):
            let target = Swift.min(Swift.max(target, 0), c.capacityML)
            b.add(.rest, seconds: 0.5)
            let start = lift()
            away(rng.uniform(3, 15))
            away(Swift.max(target - b.water, 0) / rng.uniform(60, 150), toWater: Swift.max(target, b.water), tilted: true)
            away(rng.uniform(3, 15))
            let back = putBack()
            if target > s.water { truth = TruthEvent(tStart: start, tEnd: back, kind: .refill, ml: target - s.water) }
            counts.append(.refills)
            b.add(.rest, seconds: 2)
        case .pour(let ml, let requestedPace):
            let ml = Swift.min(Swift.max(ml, 0), b.water)
            let partial = ml < s.water * 0.7
            b.add(.rest, seconds: 0.5)
            let start = lift()
            away(rng.uniform(1, 4))
            let pace = rng.uniform(c.pourMLPerSecond.lowerBound, c.pourMLPerSecond.upperBound)
            away(ml / Swift.max(requestedPace ?? pace, 1), toWater: b.water - ml, tilted: true)
            away(rng.uniform(1, 4))
            let back = putBack()
            if ml > 0 { truth = TruthEvent(tStart: start, tEnd: back, kind: .pour, ml: ml) }
            counts.append(partial && c.behaviours.contains(.partialPours) ? .partialPours : .pours)
            b.add(.rest, seconds: 2)
        case .nudge(let grams):
            b.add(.rest, seconds: 0.3)
            b.add(.bump, seconds: rng.uniform(0.15, 0.7)) {
                $0.amplitude = grams
                $0.slosh = on.slosh ? rng.uniform(0.5, 3) : 0
            }
            settle(hand: 0, gentle: true)
            counts.append(.nudges)
            b.add(.rest, seconds: 1)
        case .touch(let grams, let seconds):
            b.add(.rest, seconds: 0.3)
            b.add(.bump, seconds: seconds) {
                $0.amplitude = grams
                $0.plateau = true
                $0.slosh = on.slosh ? rng.uniform(0.5, 2) : 0
            }
            settle(hand: 0, gentle: true)
            counts.append(.nudges)
            b.add(.rest, seconds: 1)
        case .liftWithoutDrinking(let seconds):
            b.add(.rest, seconds: 0.5)
            _ = lift()
            away(seconds)
            _ = putBack()
            counts.append(.liftWithoutDrinking)
            b.add(.rest, seconds: 2)
        case .phoneOn(let grams):
            b.add(.rest, seconds: 0.3)
            b.add(.phoneRamp, seconds: rng.uniform(0.3, 0.8), toPhone: s.phone + grams) { $0.amplitude = grams * rng.uniform(0.1, 0.5) }
            settle(hand: 0, gentle: true)
            s.phone += grams
            counts.append(.phone)
            b.add(.rest, seconds: 1)
        case .phoneOff:
            b.add(.rest, seconds: 0.3)
            b.add(.phoneRamp, seconds: rng.uniform(0.3, 0.8), toPhone: 0) { $0.amplitude = s.phone * rng.uniform(0, 0.3) }
            settle(hand: 0, gentle: true)
            s.phone = 0
            counts.append(.phone)
            b.add(.rest, seconds: 1)
        case .gap(let seconds, let sipML, let placement):
            let seconds = Swift.max(seconds, 0.5)
            if let sipML {
                let (start, back, drinkStart) = sip(ml: sipML, liftSeconds: nil, hand: nil)
                var tEnd = back
                switch placement {
                case .covering:
                    let from = start - rng.uniform(1, 5)
                    let to = Swift.max(from + seconds, b.t + rng.uniform(0.5, 3))
                    gap = (from, to)
                    tEnd = to
                case .liftVisible:
                    let from = drinkStart + 0.2
                    let to = Swift.max(from + seconds, back + rng.uniform(0.5, 3))
                    gap = (from, to)
                    tEnd = to
                case .putBackVisible:
                    let from = start - rng.uniform(1, 3)
                    gap = (from, Swift.max(from + 0.5, Swift.min(from + seconds, back - 0.3)))
                }
                truth = TruthEvent(tStart: start, tEnd: tEnd, kind: .sip, ml: Swift.min(sipML, s.water))
                counts.append(.gapsWithSips)
                let after = Swift.max(2, (gap!.1 + 3) - b.t)
                b.add(.rest, seconds: after)
            } else {
                b.add(.rest, seconds: 1)
                gap = (b.t, b.t + seconds)
                b.add(.rest, seconds: seconds + 2)
                counts.append(.gaps)
            }
        }

        s.water = b.water
        s.phone = b.phone
        var episode = b.episode()
        if let zeroShift {
            episode.zeroShiftAt = zeroShift.at
            episode.zeroAfter = zeroShift.to
        }
        episode.placedAt = placed
        if let gap {
            episode.gapStart = gap.0
            episode.gapEnd = gap.1
        }
        return Built(episode: episode, state: s, truth: truth, counts: counts, isIdle: { if case .idle = step { true } else { false } }())
    }
}


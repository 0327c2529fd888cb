/// A stretch of the physical timeline, made of phases, built from one
/// `ScenarioStep`. Only the current episode exists at a time, which keeps the
/// simulator's memory bounded however long it runs.
struct Phase: Sendable {
    enum Kind: Sendable {
        /// Bottle on the sensor, still.
        case rest
        /// A hand or bump pressing (+) or pulling (−) by `amplitude` g, without a lift.
        case bump
        /// The bottle leaving the scale.
        case liftRamp
        /// Off the scale; water may change (drinking, pouring, filling).
        case away
        /// The bottle arriving on the scale.
        case setDown
        /// Overshoot, ring, slosh and a resting hand after a set-down or bump.
        case settle
        /// The phone arriving or leaving.
        case phoneRamp
    }

    var kind: Kind
    var start: Double
    var end: Double
    var water0: Double
    var water1: Double
    var phone0: Double
    var phone1: Double
    /// bump: g; settle: overshoot as a fraction of the bottle's weight; phoneRamp: press in g.
    var amplitude = 0.0
    /// Ring decay (s) and frequency (Hz).
    var tau = 0.3
    var frequency = 3.0
    /// Level sensors: slosh amplitude (mm), decay (s) and frequency (Hz).
    var slosh = 0.0
    var sloshTau = 1.0
    var sloshFrequency = 1.2
    /// A resting hand: extra g until `handEnd`.
    var hand = 0.0
    var handEnd = -Double.infinity
    /// Level sensors cannot read while the bottle is tilted.
    var tilted = false
    /// A touch holds a plateau; a nudge is a single bump.
    var plateau = false
}

/// What the sensor would see at one instant, before its own errors.
struct Physical {
    /// Everything pressing on the scale (g).
    var loadG: Double
    /// The bottle's own weight when it stands fully on the scale (for creep), else 0.
    var bottleOnScaleG: Double
    /// Water height (mm), nil while tilted.
    var levelMM: Double?
}

struct Episode: Sendable {
    var phases: [Phase]
    private var index = 0
    var start: Double { phases[0].start }
    var end: Double { phases[phases.count - 1].end }
    /// When the zero shifts (the bottle leaving), and the zero after it.
    var zeroShiftAt = Double.infinity
    var zeroAfter = 0.0
    /// When the bottle was last fully placed (for creep).
    var placedAt: Double?
    /// Readings inside [gapStart, gapEnd) are lost.
    var gapStart = Double.infinity
    var gapEnd = -Double.infinity

    init(phases: [Phase]) { self.phases = phases }

    @inline(__always)
    func inGap(_ t: Double) -> Bool { t >= gapStart && t < gapEnd }

    mutating func physical(at t: Double, emptyWeightG: Double, shape: BottleShape) -> Physical {
        while index < phases.count - 1 && t >= phases[index].end { index += 1 }
        let p = phases[index]
        let span = p.end - p.start
        let u = span > 0 ? min(1, max(0, (t - p.start) / span)) : 1
        let dt = t - p.start
        let water = p.water0 + (p.water1 - p.water0) * u
        let phone = p.phone0 + (p.phone1 - p.phone0) * u
        let bottle = emptyWeightG + water  // water at 1 g/mL
        let level = shape.level(forML: water)
        switch p.kind {
        case .rest:
            return Physical(loadG: phone + bottle, bottleOnScaleG: bottle, levelMM: level)
        case .bump:
            let envelope: Double
            if p.plateau {
                let edge = min(1, min(u, 1 - u) * 6)
                envelope = edge * (1 + 0.1 * DeterministicMath.sin(2 * .pi * 1.7 * dt))
            } else {
                envelope = DeterministicMath.sin(.pi * u)
            }
            let slosh = p.slosh * DeterministicMath.sin(.pi * u) * DeterministicMath.sin(2 * .pi * p.sloshFrequency * dt)
            return Physical(loadG: phone + bottle + p.amplitude * envelope, bottleOnScaleG: bottle, levelMM: level + slosh)
        case .liftRamp:
            return Physical(loadG: phone + bottle * (1 - u), bottleOnScaleG: 0, levelMM: level)
        case .away:
            if p.tilted { return Physical(loadG: phone, bottleOnScaleG: 0, levelMM: nil) }
            let handMotion = p.slosh * DeterministicMath.sin(2 * .pi * p.sloshFrequency * dt)
            return Physical(loadG: phone, bottleOnScaleG: 0, levelMM: level + handMotion)
        case .setDown:
            return Physical(loadG: phone + bottle * u, bottleOnScaleG: 0, levelMM: level)
        case .settle:
            let ring = p.amplitude * bottle * DeterministicMath.exp(-dt / p.tau) * DeterministicMath.sin(2 * .pi * p.frequency * dt)
            var hand = 0.0
            if p.hand != 0 {
                let rampIn = min(1, dt / 0.3)
                let rampOut = min(1, max(0, (p.handEnd - t) / 0.3))
                hand = p.hand * rampIn * rampOut * (1 + 0.15 * DeterministicMath.sin(2 * .pi * 0.9 * dt))
            }
            let slosh = p.slosh * DeterministicMath.exp(-dt / p.sloshTau) * DeterministicMath.sin(2 * .pi * p.sloshFrequency * dt)
            return Physical(loadG: phone + bottle + ring + hand, bottleOnScaleG: bottle, levelMM: level + slosh)
        case .phoneRamp:
            let press = p.amplitude * DeterministicMath.sin(.pi * u)
            return Physical(loadG: phone + bottle + press, bottleOnScaleG: bottle, levelMM: level)
        }
    }
}

/// Appends phases one after another.
struct EpisodeBuilder {
    var t: Double
    var water: Double
    var phone: Double
    var phases: [Phase] = []

    init(t: Double, water: Double, phone: Double) {
        self.t = t
        self.water = water
        self.phone = phone
    }

    mutating func add(_ kind: Phase.Kind, seconds: Double, toWater: Double? = nil, toPhone: Double? = nil,
                      _ configure: (inout Phase) -> Void = { _ in }) {
        let seconds = max(seconds, 0.01)
        var phase = Phase(kind: kind, start: t, end: t + seconds, water0: water, water1: toWater ?? water,
                          phone0: phone, phone1: toPhone ?? phone)
        configure(&phase)
        phases.append(phase)
        t += seconds
        water = phase.water1
        phone = phase.phone1
    }

    func episode() -> Episode { Episode(phases: phases) }
}

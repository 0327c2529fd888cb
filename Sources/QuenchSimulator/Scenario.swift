import QuenchCore

/// A small, hand-written sequence of steps with chosen sensor behaviour, for
/// detector tests: readings plus the truth of exactly what was scripted.
///
/// ```swift
/// let (readings, truth) = Scenario(.clean(unit: .g), initialML: 600)
///     .idle(30).sip(ml: 20).idle(20).nudge(grams: 150).idle(20)
///     .run()
/// ```
public struct Scenario: Sendable {
    public var configuration: SimulationConfiguration
    public var seed: UInt64
    public var steps: [ScenarioStep] = []

    /// `initialML` overrides the configuration's starting fill.
    public init(_ configuration: SimulationConfiguration = .clean(unit: .g), seed: UInt64 = 1, initialML: Double? = nil) {
        self.configuration = configuration
        if let initialML { self.configuration.initialML = initialML }
        self.seed = seed
    }

    public func then(_ step: ScenarioStep) -> Scenario {
        var copy = self
        copy.steps.append(step)
        return copy
    }

    public func idle(_ seconds: Double) -> Scenario { then(.idle(seconds: seconds)) }
    public func sip(ml: Double, liftSeconds: Double? = nil, handRestSeconds: Double? = nil) -> Scenario {
        then(.sip(ml: ml, liftSeconds: liftSeconds, handRestSeconds: handRestSeconds))
    }
    public func refill(to ml: Double) -> Scenario { then(.refill(toML: ml)) }
    public func pour(ml: Double, mlPerSecond: Double? = nil) -> Scenario { then(.pour(ml: ml, mlPerSecond: mlPerSecond)) }
    public func drink(ml: Double, mlPerSecond: Double) -> Scenario { then(.drink(ml: ml, mlPerSecond: mlPerSecond)) }
    public func nudge(grams: Double = 150) -> Scenario { then(.nudge(grams: grams)) }
    public func touch(grams: Double = 200, seconds: Double = 3) -> Scenario { then(.touch(grams: grams, seconds: seconds)) }
    public func liftWithoutDrinking(seconds: Double = 3) -> Scenario { then(.liftWithoutDrinking(seconds: seconds)) }
    public func phoneOn(grams: Double = 180) -> Scenario { then(.phoneOn(grams: grams)) }
    public func phoneOff() -> Scenario { then(.phoneOff) }
    public func gap(seconds: Double, withSip ml: Double? = nil, placement: GapPlacement = .covering) -> Scenario {
        then(.gap(seconds: seconds, sipML: ml, placement: placement))
    }

    /// The streaming bottle (5 s of quiet first, 15 s after the last step).
    public func bottle() -> SimulatedBottle {
        SimulatedBottle(configuration: configuration, seed: seed, script: steps)
    }

    /// Everything at once (scenarios are short).
    public func run() -> (readings: [Reading], truth: [TruthEvent]) {
        var bottle = bottle()
        var readings: [Reading] = []
        while let reading = bottle.next() { readings.append(reading) }
        return (readings, bottle.drainTruth())
    }
}

extension SimulationConfiguration {
    /// No sensor errors and no random habits: noise, spikes, jitter, drift and the
    /// rest are off, so a test adds exactly the behaviours it is about
    /// (`.clean(unit: .g).with(.noise, .ring)`).
    public static func clean(unit: MeasurementUnit = .g, sampleRate: Double = 10) -> SimulationConfiguration {
        var c = SimulationConfiguration(unit: unit, sampleRate: sampleRate, behaviours: [], name: "clean")
        switch unit {
        case .g: c.resolution = 0.1
        case .kg: c.resolution = 0.005
        case .lb: c.resolution = 0.01
        case .oz: c.resolution = 0.05
        case .mm: c.resolution = 0.1
        case .percent: c.resolution = 1
        case .raw: c.resolution = 1
        }
        if unit.sensor == .level { c.noise = 0.3 }
        return c
    }

    /// The same configuration with more behaviours switched on.
    public func with(_ behaviours: Behaviour...) -> SimulationConfiguration {
        var copy = self
        copy.behaviours.formUnion(behaviours)
        return copy
    }

    /// The same configuration with behaviours switched off.
    public func without(_ behaviours: Behaviour...) -> SimulationConfiguration {
        var copy = self
        copy.behaviours.subtract(behaviours)
        return copy
    }
}

/// A level sensor's calibration: measured `level:mL` points, interpolated
/// piecewise-linearly and extrapolated along the end segments.
public struct LevelCurve: Sendable, Hashable, Codable {
    public struct Point: Sendable, Hashable, Codable {
        public var level: Double
        public var ml: Double
        public init(level: Double, ml: Double) {
            self.level = level
            self.ml = ml
        }

        /// Parses `LEVEL:ML` (two finite numbers, spaces allowed around each).
        public init?(parsing text: some StringProtocol) {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, let level = TraceParser.decimal(parts[0]), let ml = TraceParser.decimal(parts[1]) else { return nil }
            self.init(level: level, ml: ml)
        }
    }

    public let points: [Point]

    /// Validates the curve: at least two points, level strictly increasing,
    /// mL never decreasing, everything finite.
    public init(_ points: [Point]) throws(CalibrationError) {
        guard points.count >= 2 else { throw .tooFewPoints(points.count) }
        for (index, point) in points.enumerated() {
            guard point.level.isFinite, point.ml.isFinite else {
                throw .invalidPoint(index: index, reason: "not a finite number")
            }
            guard point.ml >= 0 else { throw .invalidPoint(index: index, reason: "mL is negative") }
            // No bottle holds more than 100 L, nor reads beyond a million in any unit.
            guard point.ml <= BottleCalibration.largestML, abs(point.level) <= 1_000_000 else {
                throw .invalidPoint(index: index, reason: "beyond what a bottle is (at most 100,000 mL, levels within 1,000,000)")
            }
            guard index > 0 else { continue }
            let previous = points[index - 1]
            guard point.level > previous.level else {
                throw .invalidPoint(index: index, reason: "level \(point.level.compactDescription) is not above the previous point's \(previous.level.compactDescription)")
            }
            guard point.ml >= previous.ml else {
                throw .invalidPoint(index: index, reason: "\(point.ml.compactDescription) mL is less than the previous point's \(previous.ml.compactDescription) mL")
            }
        }
        // A curve whose mL never change turns every reading into the same amount: no sip ever.
        guard let first = points.first, let last = points.last, last.ml > first.ml else {
            throw .invalidPoint(index: points.count - 1, reason: "the curve never rises: its mL are the same everywhere")
        }
        self.points = points
    }

    private enum CodingKeys: String, CodingKey { case points }

    /// Decoded curves are checked like any other: a saved or imported curve
    /// with too few points, or one that falls back, never reaches a detector.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let points = try container.decode([Point].self, forKey: .points)
        do { try self.init(points) } catch {
            throw DecodingError.dataCorruptedError(forKey: .points, in: container, debugDescription: "level curve: \(error)")
        }
    }

    /// Parses `L:ML,L:ML,...` as given on the command line.
    public init(parsing text: String) throws(CalibrationError) {
        var points: [Point] = []
        for (index, item) in text.split(separator: ",", omittingEmptySubsequences: false).enumerated() {
            guard let point = Point(parsing: item) else {
                throw .invalidPoint(index: index, reason: "'\(String(item).shownSafely())' is not LEVEL:ML")
            }
            points.append(point)
        }
        try self.init(points)
    }

    public var highestLevel: Double { points[points.count - 1].level }
    /// The mL at the highest level: the bottle full.
    public var highestML: Double { points[points.count - 1].ml }

    /// The volume at `level`, in mL (never negative).
    @inlinable
    public func millilitres(atLevel level: Double) -> Double { millilitresAndSlope(atLevel: level).ml }

    /// The volume at `level` (never negative), and mL per unit of level there:
    /// one step of a level sensor holds more water in a bottle's wide body than in its neck.
    @inlinable
    public func millilitresAndSlope(atLevel level: Double) -> (ml: Double, perLevel: Double) {
        // Curves are short (a handful of points): a linear scan beats a search.
        var upper = 1
        while upper < points.count - 1 && level > points[upper].level { upper += 1 }
        let a = points[upper - 1], b = points[upper]
        let slope = (b.ml - a.ml) / (b.level - a.level)
        return (max(0, a.ml + (level - a.level) * slope), slope)
    }

    /// The text form accepted by `init(parsing:)`.
    public var description: String {
        points.map { "\($0.level.compactDescription):\($0.ml.compactDescription)" }.joined(separator: ",")
    }
}

public enum CalibrationError: Error, Sendable, Hashable, CustomStringConvertible {
    case tooFewPoints(Int)
    /// `index` is zero-based; messages count from one as people do.
    case invalidPoint(index: Int, reason: String)
    case invalidDensity(Double)
    case missingLevelCurve(MeasurementUnit)
    case unitDoesNotFitSensor(MeasurementUnit, SensorKind)
    /// A level curve given for a scale, which weighs and has no use for one.
    case levelCurveForScale(MeasurementUnit)
    case invalidCapacity(Double)
    case invalidEmptyWeight(Double)

    public var description: String {
        switch self {
        case .tooFewPoints(let n): "a level curve needs at least two LEVEL:ML points, got \(n)"
        case .invalidPoint(let index, let reason): "level curve point \(index + 1): \(reason)"
        case .invalidDensity(let d): "density \(d.compactDescription) g/mL is not from 0.5 to 2 g/mL"
        case .missingLevelCurve(let unit): "a level sensor in \(unit.rawValue) needs a level curve"
        case .unitDoesNotFitSensor(let unit, let sensor): "unit \(unit.rawValue) is not a \(sensor.rawValue) unit"
        case .levelCurveForScale(let unit): "a level curve is for a level sensor, and unit \(unit.rawValue) is a scale's (weight)"
        case .invalidCapacity(let c): "capacity \(c.compactDescription) mL is not from 1 to 100,000 mL"
        case .invalidEmptyWeight(let w): "empty weight \(w.compactDescription) g is not from 0 to 100,000 g"
        }
    }
}

/// Everything needed to turn a sensor value into millilitres.
public struct BottleCalibration: Sendable, Hashable, Codable {
    /// What people drink weighs 0.5 to 2 g/mL (oil 0.9, water 1, honey 1.4).
    public static let densities: ClosedRange<Double> = 0.5...2
    /// A capacity, an empty bottle's weight (g) or a curve's mL: 100 L at most.
    public static let largestML = 100_000.0
    /// A bottle's capacity (mL) and its empty weight (g), wherever they are given: the options, a
    /// trace's header, a saved device.
    public static let capacitiesML = 1...largestML
    public static let emptyWeightsG = 0...largestML

    public var unit: MeasurementUnit
    /// g/mL of the liquid (water: 1.0).
    public var density: Double
    public var levelCurve: LevelCurve?
    /// The bottle's capacity in mL, when known.
    public var capacityML: Double?
    /// The empty bottle's weight in g (its tare), when known.
    public var emptyWeightG: Double?

    public var sensor: SensorKind { unit.sensor }

    private enum CodingKeys: String, CodingKey {
        case unit, density, levelCurve, capacityML, emptyWeightG
        /// `capacity_ml` as a snake-case decoder turns it (an export read back): "capacityMl", not "capacityML".
        case capacityMLFromSnakeCase = "capacityMl"
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(unit, forKey: .unit)
        try c.encode(density, forKey: .density)
        try c.encodeIfPresent(levelCurve, forKey: .levelCurve)
        try c.encodeIfPresent(capacityML, forKey: .capacityML)
        try c.encodeIfPresent(emptyWeightG, forKey: .emptyWeightG)
    }

    /// Decoded calibrations are checked as `init` checks them (a saved one
    /// from an older version, an import): what the detector is given holds.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        do {
            try self.init(unit: try c.decode(MeasurementUnit.self, forKey: .unit),
                          density: try c.decode(Double.self, forKey: .density),
                          levelCurve: try c.decodeIfPresent(LevelCurve.self, forKey: .levelCurve),
                          capacityML: try c.decodeIfPresent(Double.self, forKey: .capacityML)
                              ?? c.decodeIfPresent(Double.self, forKey: .capacityMLFromSnakeCase),
                          emptyWeightG: try c.decodeIfPresent(Double.self, forKey: .emptyWeightG))
        } catch let error as CalibrationError {
            throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath, debugDescription: "calibration: \(error)"))
        }
    }

    public init(
        unit: MeasurementUnit,
        density: Double = 1.0,
        levelCurve: LevelCurve? = nil,
        capacityML: Double? = nil,
        emptyWeightG: Double? = nil
    ) throws(CalibrationError) {
        guard Self.densities.contains(density) else { throw .invalidDensity(density) }
        if unit.sensor == .level, levelCurve == nil { throw .missingLevelCurve(unit) }
        if let capacityML, !Self.capacitiesML.contains(capacityML) { throw .invalidCapacity(capacityML) }
        if let emptyWeightG, !Self.emptyWeightsG.contains(emptyWeightG) { throw .invalidEmptyWeight(emptyWeightG) }
        self.unit = unit
        self.density = density
        self.levelCurve = levelCurve
        self.capacityML = capacityML
        self.emptyWeightG = emptyWeightG
    }

    /// Maps a sensor value to mL. For weight it is the whole load on the scale
    /// as water-equivalent mL (the bottle's own weight included); for level it is
    /// the water in the bottle.
    @inlinable
    public func millilitres(_ value: Double) -> Double { millilitresAndSlope(value).ml }

    /// `millilitres(_:)`, and the mL one unit of the sensor is worth at `value`
    /// (for a scale the same everywhere; for a level sensor it follows the curve).
    @inlinable
    public func millilitresAndSlope(_ value: Double) -> (ml: Double, perUnit: Double) {
        if let grams = unit.gramsPerUnit { return (value * grams / density, grams / density) }
        let curve = levelCurve!  // guaranteed by init for level units
        let perValue = unit == .percent ? curve.highestLevel / 100 : 1
        let (ml, perLevel) = curve.millilitresAndSlope(atLevel: value * perValue)
        return (ml, perLevel * perValue)
    }

    /// What is left in the bottle given its settled reading in mL (from
    /// `millilitres(_:)`), or nil when the calibration cannot say.
    public func remaining(settledML: Double) -> Double? {
        contents(settledML: settledML).map { water in capacityML.map { min(water, $0) } ?? water }
    }

    /// The same, not capped at the capacity: more than it says the calibration is off.
    public func contents(settledML: Double) -> Double? {
        switch sensor {
        case .level: settledML
        case .weight: emptyWeightG.map { max(0, settledML - $0 / density) }
        }
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (what people type around numbers).
    public var trimmingSpaces: SubSequence {
        var s = self[...]
        while s.first == " " || s.first == "\t" { s = s.dropFirst() }
        while s.last == " " || s.last == "\t" { s = s.dropLast() }
        return s
    }
}

extension Double {
    /// `250` rather than `250.0`, `0.5` as is.
    public var compactDescription: String {
        self == rounded() && abs(self) < 1e15 ? String(Int64(self)) : String(self)
    }
}

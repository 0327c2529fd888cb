/// What a bottle's sensor measures.
public enum SensorKind: String, Sendable, Hashable, CaseIterable, Codable {
    /// A load cell: the bottle stands on a scale (or the scale is in its base).
    case weight
    /// A level sensor inside the bottle (ultrasonic, capacitive, ToF).
    case level
}

/// The unit a sensor reports in. Weight units convert to grams; level units
/// are mapped to mL by a `LevelCurve`.
public enum MeasurementUnit: String, Sendable, Hashable, CaseIterable, Codable {
    case g, kg, lb, oz
    case mm, percent, raw

    public var sensor: SensorKind {
        switch self {
        case .g, .kg, .lb, .oz: .weight
        case .mm, .percent, .raw: .level
        }
    }

    /// Grams per unit for weight units (avoirdupois pound and ounce); nil for level units.
    public var gramsPerUnit: Double? {
        switch self {
        case .g: 1
        case .kg: 1000
        case .lb: 453.59237
        case .oz: 28.349523125
        case .mm, .percent, .raw: nil
        }
    }
}

/// A volume the way people type it: `250ml`, `0.5l`, `8oz` (US fluid ounces).
public enum VolumeUnit: String, Sendable, Hashable, CaseIterable, Codable {
    case ml
    case usFluidOunce = "oz"

    /// Millilitres in one US fluid ounce (exactly 29.5735295625 mL).
    public static let millilitresPerUSFluidOunce = 29.5735295625

    public func millilitres(_ amount: Double) -> Double {
        switch self {
        case .ml: amount
        case .usFluidOunce: amount * Self.millilitresPerUSFluidOunce
        }
    }

    public func amount(fromMillilitres ml: Double) -> Double {
        switch self {
        case .ml: ml
        case .usFluidOunce: ml / Self.millilitresPerUSFluidOunce
        }
    }
}

import QuenchCore

/// A vertical volume axis: 0 at `bottom`, `topMl` at `top`, with round ticks in
/// the display unit (0, 500, 1,000 … mL; 0, 20, 40 … oz).
struct VolumeScale {
    let bottom: Double
    let top: Double
    let topMl: Double
    /// Tick values in mL (each a round number in the display unit).
    let ticksMl: [Double]

    /// - Parameters:
    ///   - maximumMl: the largest value to show (a bar or the goal).
    ///   - headroom: the fraction of the height kept free above `maximumMl`, so a
    ///     mark or label over the tallest bar stays inside the chart.
    init(maximumMl: Double, unit: VolumeUnit, bottom: Double, top: Double, headroom: Double = 0.1, ticks: Int = 4) {
        self.bottom = bottom
        self.top = top
        let maximum = unit.amount(fromMillilitres: max(maximumMl.isFinite ? maximumMl : 0, 0)) * (1 + headroom)
        // Nothing to show still gets an axis: one litre (or 32 oz).
        let wanted = maximum > 0 ? maximum : (unit == .ml ? 1000 : 32)
        let step = Self.niceStep(wanted / Double(ticks))
        let steps = max(1, Int(saturating: (wanted / step).rounded(.up)))
        topMl = unit.millilitres(Double(steps) * step)
        ticksMl = (0...steps).map { unit.millilitres(Double($0) * step) }
    }

    /// The y of a volume.
    func y(_ ml: Double) -> Double {
        bottom - (max(0, ml) / topMl) * (bottom - top)
    }

    /// The height a volume spans from the baseline.
    func height(_ ml: Double) -> Double { bottom - y(ml) }

    /// A tick's label in the display unit: `1,000`, `25`, `2.5` (no `.0` on round numbers).
    static func label(_ ml: Double, _ unit: VolumeUnit) -> String {
        let text = VolumeText.amount(ml, unit)
        return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
    }

    /// The smallest of 1, 2, 2.5, 5 × 10ⁿ at or above `raw`.
    static func niceStep(_ raw: Double) -> Double {
        guard raw.isFinite, raw > 0 else { return 1 }
        var power = 1.0
        while power * 10 <= raw { power *= 10 }
        while power > raw { power /= 10 }
        for factor in [1.0, 2, 2.5, 5, 10] where factor * power >= raw { return factor * power }
        return 10 * power
    }
}

import QuenchCore

/// The inside of a bottle: water height (mm above the sensor's zero) against
/// volume (mL). Real bottles are not cylinders: a rounded base, a straight body,
/// a shoulder and a neck, so equal sips move the level by different amounts.
public struct BottleShape: Sendable, Hashable {
    /// `level` in mm, strictly increasing in both level and mL.
    public let curve: LevelCurve

    public init(_ curve: LevelCurve) { self.curve = curve }

    /// A 230 mm sports bottle scaled to `capacityML`: rounded base, straight body,
    /// shoulder from 180 mm, narrow neck.
    public static func sportsBottle(capacityML: Double) -> BottleShape {
        let f = capacityML / 750
        let points: [(Double, Double)] = [
            (0, 0), (10, 22), (30, 84), (150, 504), (180, 606), (200, 676), (215, 722), (230, 750),
        ]
        // The points are valid by construction (both columns strictly increase).
        let curve = try! LevelCurve(points.map { LevelCurve.Point(level: $0.0, ml: $0.1 * f) })
        return BottleShape(curve)
    }

    public var topLevelMM: Double { curve.highestLevel }
    public var capacityML: Double { curve.highestML }

    /// The water height for `ml` (the inverse of the curve; clamped to the bottle).
    public func level(forML ml: Double) -> Double {
        let points = curve.points
        if ml <= points[0].ml { return points[0].level }
        var upper = 1
        while upper < points.count - 1 && ml > points[upper].ml { upper += 1 }
        let a = points[upper - 1], b = points[upper]
        if ml >= b.ml { return b.level }
        return a.level + (ml - a.ml) * (b.level - a.level) / (b.ml - a.ml)
    }
}

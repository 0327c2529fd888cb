/// One thing the person (or the link) does. The simulator's planner draws
/// these at random; `Scenario` lists them by hand.
public enum ScenarioStep: Sendable, Hashable {
    /// The bottle stands still.
    case idle(seconds: Double)
    /// Lift, drink `ml`, put back. `liftSeconds` (away from the sensor) defaults to the
    /// drinking time plus handling, 2–10 s; `handRestSeconds` nil draws one when the
    /// `handRest` behaviour is on (0: none).
    case sip(ml: Double, liftSeconds: Double? = nil, handRestSeconds: Double? = nil)
    /// One long drink of `ml` at `mlPerSecond` (after exercise: 150–400 mL at
    /// 8–30 mL/s), with the usual handling either side; intake.
    case drink(ml: Double, mlPerSecond: Double)
    /// Taken to the tap and back holding `toML`.
    case refill(toML: Double)
    /// Emptied into the sink by `ml` (not intake), at `mlPerSecond` (nil: drawn
    /// from the configuration's `pourMLPerSecond`).
    case pour(ml: Double, mlPerSecond: Double? = nil)
    /// A brief bump (under a second): positive presses down, negative pulls up.
    case nudge(grams: Double)
    /// A hand pressing on (positive) or half-lifting (negative) the bottle without a lift.
    case touch(grams: Double, seconds: Double)
    /// Lifted for `seconds` and put back without drinking.
    case liftWithoutDrinking(seconds: Double)
    /// A phone of `grams` put on the scale next to the bottle.
    case phoneOn(grams: Double)
    /// The phone taken away again.
    case phoneOff
    /// The link drops for `seconds`; with `sipML`, a sip happens in or across the gap.
    case gap(seconds: Double, sipML: Double? = nil, placement: GapPlacement = .covering)
}

/// Where a gap falls relative to a sip taken during it.
public enum GapPlacement: String, Sendable, Hashable, CaseIterable {
    /// The lift and the put-back are both hidden.
    case covering
    /// The lift is seen; the link drops while the bottle is away and returns after the put-back.
    case liftVisible
    /// The link drops before the lift and returns while the bottle is still away.
    case putBackVisible
}

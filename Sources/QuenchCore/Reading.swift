/// One sample from a sensor, on the trace's clock.
///
/// `value` is in the sensor's unit; nil means the device reported nothing
/// usable (a tilted level sensor, an empty CSV cell).
public struct Reading: Sendable, Hashable {
    /// Seconds since the trace's start (`started` in the header when known).
    public var t: Double
    public var value: Double?

    @inlinable
    public init(t: Double, value: Double?) {
        self.t = t
        self.value = value
    }
}

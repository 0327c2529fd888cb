import BluetoothWire

/// How a device shows a reminder with its own light or buzzer: values written,
/// in order, to one of its characteristics, `pause` seconds apart (display off,
/// pause, on: a blink). A profile declares one only where the command is known
/// (`ProfileDefinition.reminderSignal`); a profile file may declare one for any
/// device (`"reminder"`, docs/profiles.md).
///
/// Only how to show it lives here. Whether a reminder is due is
/// `QuenchHistory.ReminderPolicy`'s to decide (`quench remind --notify`, run by
/// the timer); the gateway shows the one the timer recorded.
public struct ReminderSignal: Sendable, Hashable {
    public var service: BluetoothUUID
    public var characteristic: BluetoothUUID
    /// Each a whole characteristic value, written in order.
    public var writes: [[UInt8]]
    /// Seconds between one write and the next.
    public var pause: Double
    /// A Write Request, answered by the device (Core Spec Vol 3, Part G, 4.9.3),
    /// rather than a Write Command it does not acknowledge (4.9.1).
    public var withResponse: Bool

    /// The most writes a signal may hold: a blink or a few, never a stream.
    public static let mostWrites = 16
    /// The longest pause between writes, so a whole signal stays a moment.
    public static let longestPause = 5.0
    /// The longest value one write may carry: 20 bytes fit the LE default ATT_MTU
    /// (23; Core Spec Vol 3, Part G, 5.2.1) less a write's 3-byte header, which every link has.
    public static let longestWrite = 20

    public init(service: BluetoothUUID, characteristic: BluetoothUUID, writes: [[UInt8]], pause: Double, withResponse: Bool) {
        self.service = service
        self.characteristic = characteristic
        self.writes = writes
        self.pause = pause
        self.withResponse = withResponse
    }

    /// What is wrong with this signal, nil when it can be given.
    public var problem: String? {
        guard (1...Self.mostWrites).contains(writes.count) else { return "1 to \(Self.mostWrites) writes, please" }
        if let i = writes.firstIndex(where: { !(1...Self.longestWrite).contains($0.count) }) {
            return "write \(i) has \(writes[i].count) bytes; each write is 1 to \(Self.longestWrite) bytes"
        }
        guard pause.isFinite, (0...Self.longestPause).contains(pause) else {
            return "the pause must be 0 to \(Int(Self.longestPause)) seconds"
        }
        return nil
    }
}

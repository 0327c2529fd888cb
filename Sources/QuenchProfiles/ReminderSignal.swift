import BluetoothWire

/// How a device shows a reminder with its own light or buzzer: values written,
/// in order, to one of its characteristics, `pause` seconds apart (display off,
/// pause, on: a blink). A profile declares one only where the command is known
/// (`DeviceProfile.reminderSignal`); a profile file may declare one for any
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

extension DecentScaleFrame {
    /// The Decent Scale API's display ("LED") command, `03 0A LL LL 00 HB XOR`
    /// written to 0x36F5 (decentespresso.com/decentscale_api, quick start step 4:
    /// LED ON `030A0101000108`, LED OFF `030A0000000009`). HB (byte 5) is 00 here:
    /// on the Half Decent Scale 01 there also asks for a heartbeat every 5 s, or it
    /// drops the link ("Programmer's guide to the Half Decent Scale"); Quench sends
    /// no heartbeat, so it never asks for one. The XOR still covers bytes 0-5.
    public static func display(on: Bool) -> [UInt8] {
        DecentScaleFrame(type: MessageType(rawValue: 0x0A), data: on ? [1, 1, 0, 0] : [0, 0, 0, 0]).encoded()
    }

    /// Two blinks of the display: off, on, off, on, 0.6 s apart. Written
    /// without response, as the API's own examples send commands (a dropped
    /// blink costs nothing; v1.0 firmware occasionally drops a command).
    public static let reminderBlink = ReminderSignal(
        service: serviceUUID, characteristic: writeUUID,
        writes: [display(on: false), display(on: true), display(on: false), display(on: true)],
        pause: 0.6, withResponse: false)
}

extension DeviceProfile {
    /// How this profile's device shows a reminder; nil when it cannot (or
    /// when how is not known). The readings session (`GATTDeviceSession`) gives
    /// it; a bottle that reports its own sips has a session of its own
    /// (`HidrateSparkDrain`), which would have to give it too once one is known.
    public var reminderSignal: ReminderSignal? {
        switch self {
        case .decentScale: DecentScaleFrame.reminderBlink
        // The bottle glows when its owner falls behind, but the command that makes it
        // glow is not documented publicly (neither reverse-engineered source has it,
        // docs/profiles.md): nothing is invented here. A profile file can declare one.
        case .hidrateSpark: nil
        case .weightScale, .miScale, .miBodyScale: nil
        case .custom(let c): c.reminder
        }
    }
}

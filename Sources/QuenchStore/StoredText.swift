import BluetoothWire
import QuenchCore

/// The one definition of the text a history holds: for each text field, how
/// long it may be and what it may contain. Every door (the web API, the
/// command line, an import, the gateway) goes through the store, which checks
/// here; the import checks here first too, to name the line.
///
/// Chosen so that every export re-imports: no field holds a control character
/// (C0, DEL, C1, bidirectional overrides) but a note's line breaks and tabs, so nothing is spelled `\uXXXX`; the
/// longest event, every field at its limit, is a few KB in JSON or CSV, far
/// under the importer's 1 MB bound on one event or row (`longestEventBytes`).
/// Lengths are in characters as SQLite's `length()` counts them (Unicode
/// scalars), so a value that passes here is what the schema stores.
public struct TextField: Sendable, Hashable {
    /// How errors name the field (`note`, `device name`).
    public let name: String
    public let maxCharacters: Int
    /// The control characters this field needs: a note may run over lines.
    public var allowedControls: Set<Unicode.Scalar> = []

    /// A field of text that is not stored but is shown the same way (a share card's heading).
    public init(name: String, maxCharacters: Int, allowedControls: Set<Unicode.Scalar> = []) {
        (self.name, self.maxCharacters, self.allowedControls) = (name, maxCharacters, allowedControls)
    }

    /// Lines and tabs allowed: a person may write a list (CSV quotes it, JSON
    /// spells it `\n`, a table shows `\u{A}`); no carriage return, so a line break is one character.
    public static let note = TextField(name: "note", maxCharacters: 1000, allowedControls: ["\n", "\t"])
    /// A stable identity (`manual|<uuid>`, `device|kind|ms`, an import's own).
    public static let identity = TextField(name: "identity", maxCharacters: 256)
    /// The device an event came from: a Bluetooth address, or a trace's or the demo's label.
    public static let eventDevice = TextField(name: "device", maxCharacters: 64)
    public static let deviceName = TextField(name: "device name", maxCharacters: 64)
    /// A profile's identifier (`weight-scale`, or a profile file's `name`).
    public static let profile = TextField(name: "profile", maxCharacters: 64)

    /// What is wrong with `text` as this field, nil when it will do. Empty text
    /// is refused: an optional field without a value is absent (see `stored`).
    public func problem(_ text: String) -> String? {
        let count = text.unicodeScalars.count
        if count == 0 { return "\(name) is empty" }
        if count > maxCharacters { return "\(name) has \(count) characters, at most \(maxCharacters)" }
        if let control = text.unicodeScalars.first(where: { $0.isControlOrBidiOverride && !allowedControls.contains($0) }) {
            return "\(name) holds the control character U+\(String(control.value, radix: 16, uppercase: true).leftPadded(4))"
        }
        return nil
    }

    /// An optional value as stored: empty text is no value (a form's empty
    /// box, an empty CSV field), so what is stored is what an export gives back.
    public func stored(_ text: String?) -> String? {
        guard let text, !text.isEmpty else { return nil }
        return text
    }


    /// Every text field of the longest event, at its limit, as the export
    /// writes it (at most 4 bytes a character, a quote escaped as 2), plus the
    /// numbers: what the importer's bounds on one event and one row must hold.
    public static var longestEventBytes: Int {
        let texts = [note, identity, eventDevice].map(\.maxCharacters).reduce(0, +) + Person.maximumNameLength
        return texts * 4 * 2 + 1024
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}

/// A paired device's address as stored: a Bluetooth address in the form
/// BluetoothWire prints it (`AA:BB:CC:DD:EE:FF`). Every device Quench pairs
/// has one (user-defined profiles too: they are found by scanning); a trace's
/// label names the device of its events, never a paired device.
public enum DeviceAddress {
    /// The stored spelling of `text` (any case, `:` or `-`), or a reason it is not an address.
    public static func canonical(_ text: String) -> Result<String, DeviceAddressError> {
        guard let address = BluetoothAddress(text) else { return .failure(DeviceAddressError(text: text)) }
        return .success(address.description)
    }
}

public struct DeviceAddressError: Error, Sendable, CustomStringConvertible {
    public var text: String
    public var description: String {
        "'\(text.shownSafely(limit: 40))' is not a Bluetooth address (six hex pairs: AA:BB:CC:DD:EE:FF)"
    }
}

extension IntakeEvent {
    /// What is wrong with this event's text, nil when the store can hold it.
    public var textProblem: String? {
        // The device first: an identity made from it would otherwise take the blame.
        if let device, !device.isEmpty, let problem = TextField.eventDevice.problem(device) { return problem }
        if let note, !note.isEmpty, let problem = TextField.note.problem(note) { return problem }
        if let problem = TextField.identity.problem(identity) { return problem }
        if let person, let problem = Person.problem(withName: person) { return "person: \(problem)" }
        return nil
    }
}

extension Device {
    /// What is wrong with this device's text, nil when the store can hold it
    /// (the address must already be in its stored spelling).
    public var textProblem: String? {
        switch DeviceAddress.canonical(address) {
        case .failure(let error): return error.description
        case .success(let canonical) where canonical != address: return "the address '\(address.shownSafely(limit: 40))' is written \(canonical) here"
        case .success: break
        }
        if let name, !name.isEmpty, let problem = TextField.deviceName.problem(name) { return problem }
        if let profile, !profile.isEmpty, let problem = TextField.profile.problem(profile) { return problem }
        if let definition = profileDefinition, definition.utf8.count > Device.largestProfileDefinition {
            return "the profile definition is \(definition.utf8.count) bytes, at most \(Device.largestProfileDefinition)"
        }
        if let person, let problem = Person.problem(withName: person) { return "person: \(problem)" }
        return nil
    }

    /// A profile file's text kept with a device: real ones are a few hundred
    /// bytes; the bound keeps the devices of an export within what the import reads.
    public static let largestProfileDefinition = 64 << 10
}

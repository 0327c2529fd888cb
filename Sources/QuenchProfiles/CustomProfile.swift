import BluetoothWire
import FoundationEssentials
import QuenchCore

/// How a GATT characteristic delivers values.
public enum GATTDelivery: Sendable, Hashable {
    case notify
    case indicate
    /// Read the characteristic every `interval` seconds.
    case readPoll(interval: Double)
}

/// A user-defined profile, read from a JSON file (format in docs/profiles.md):
/// where one number sits in a characteristic value, service data or
/// manufacturer data, how it is encoded and what it means; and, optionally,
/// how the device shows a reminder (`reminder`).
public struct CustomProfile: Sendable, Hashable {
    public enum Source: Sendable, Hashable {
        case characteristic(service: BluetoothUUID, characteristic: BluetoothUUID, delivery: GATTDelivery)
        case serviceData(BluetoothUUID)
        case manufacturerData(companyID: UInt16)
    }

    /// The number's wire type.
    public enum ValueType: String, Sendable, Hashable, CaseIterable {
        case u8, i8, u16, i16, u24, i24, u32, i32, f32

        public var width: Int {
            switch self {
            case .u8, .i8: 1
            case .u16, .i16: 2
            case .u24, .i24: 3
            case .u32, .i32, .f32: 4
            }
        }

        public var isSigned: Bool { [.i8, .i16, .i24, .i32].contains(self) }

        /// The raw integers the type holds (f32: nil).
        public var integerRange: ClosedRange<Int64>? {
            switch self {
            case .f32: return nil
            default:
                let bits = Int64(width * 8)
                return isSigned ? -(1 << (bits - 1))...((1 << (bits - 1)) - 1) : 0...((1 << bits) - 1)
            }
        }
    }

    /// value = raw × scale + add.
    public struct ValueFormat: Sendable, Hashable {
        public var offset: Int
        public var type: ValueType
        public var bigEndian: Bool
        public var scale: Double
        public var add: Double
        /// A raw value meaning "no reading" (e.g. 65535 from a tilted level sensor).
        public var missing: Int64?

        public init(offset: Int, type: ValueType, bigEndian: Bool = false, scale: Double = 1, add: Double = 0, missing: Int64? = nil) {
            self.offset = offset
            self.type = type
            self.bigEndian = bigEndian
            self.scale = scale
            self.add = add
            self.missing = missing
        }
    }

    public var name: String
    public var sensor: SensorKind
    public var unit: MeasurementUnit
    public var source: Source
    public var value: ValueFormat
    /// Scan matching: the advertised name starts with this.
    public var namePrefix: String?
    /// Scan matching: the advertisement lists this service UUID (or carries its service data).
    public var matchService: BluetoothUUID?
    /// How the device shows a reminder (its light or buzzer), when the file says (`"reminder"`).
    public var reminder: ReminderSignal?

    public init(name: String, sensor: SensorKind, unit: MeasurementUnit, source: Source, value: ValueFormat,
                namePrefix: String? = nil, matchService: BluetoothUUID? = nil, reminder: ReminderSignal? = nil) {
        self.reminder = reminder
        self.name = name
        self.sensor = sensor
        self.unit = unit
        self.source = source
        self.value = value
        self.namePrefix = namePrefix
        self.matchService = matchService
    }

    // MARK: Decoding and encoding payloads

    public func decode(_ payload: [UInt8]) throws(DecodeError) -> [ProfileReading] {
        var r = ByteReader(payload, context: "\(name) payload", offset: 0)
        guard payload.count >= value.offset else {
            // Named where the profile puts it (it said "value at byte 3: needs 7 bytes" of a u16 at byte 5).
            throw r.error("value (\(value.type.rawValue))", .invalidValue("the payload ends before it, at \(payload.count) byte\(payload.count == 1 ? "" : "s")"),
                          at: value.offset)
        }
        _ = try r.bytes(value.offset, "bytes before the value")
        let raw = try r.unsigned(value.type.width, "value (\(value.type.rawValue))", bigEndian: value.bigEndian)
        let number: Double?
        switch value.type {
        case .f32:
            let f = Double(Float(bitPattern: UInt32(truncatingIfNeeded: raw)))
            number = f.isFinite ? f : nil
        default:
            let bits = value.type.width * 8
            let signed = value.type.isSigned && raw >> (bits - 1) & 1 == 1 ? Int64(raw) - (1 << bits) : Int64(raw)
            number = signed == value.missing ? nil : Double(signed)
        }
        let reading = number.map { $0 * value.scale + value.add }.flatMap { $0.isFinite ? $0 : nil }
        return [ProfileReading(value: reading, unit: unit, flags: reading == nil ? .unsuccessful : [])]
    }

    /// The payload a device following this profile sends for `value` in `unit`:
    /// zeros before the value's offset, nothing after it.
    public func encode(_ reading: Double?, unit: MeasurementUnit? = nil) throws(ProfileEncodingError) -> [UInt8] {
        let context = "\(name) payload"
        var v: Double
        switch reading {
        case nil:
            guard let missing = value.missing else {
                throw ProfileEncodingError(context: context, field: "value", reason: .missingValue)
            }
            return bytes(UInt64(bitPattern: missing))
        case let r?:
            v = r
        }
        if let given = unit, given != self.unit {
            guard let from = given.gramsPerUnit, let to = self.unit.gramsPerUnit else {
                throw ProfileEncodingError(context: context, field: "unit", reason: .unsupportedUnit(given))
            }
            v = v * from / to
        }
        let scaled = (v - value.add) / value.scale
        if value.type == .f32 {
            return bytes(UInt64(Float(scaled).bitPattern))
        }
        let range = value.type.integerRange!
        let raw = try quantize(scaled, resolution: 1, range: Double(range.lowerBound)...Double(range.upperBound),
                               context: context, field: "value")
        return bytes(UInt64(bitPattern: raw))
    }

    private func bytes(_ raw: UInt64) -> [UInt8] {
        var w = ByteWriter(capacity: value.offset + 4)
        w.append([UInt8](repeating: 0, count: value.offset))
        w.unsigned(raw, width: value.type.width, bigEndian: value.bigEndian)
        return w.bytes
    }
}

/// A profile file is a profile like the built-in ones: saved under its own
/// `name`, its identifier `custom`.
extension CustomProfile: ProfileDefinition {
    public var identifier: String { "custom" }
    public var displayName: String { name }

    public var transport: ProfileTransport {
        switch source {
        case .characteristic(let s, let ch, let d): .gatt(service: s, characteristic: ch, delivery: d)
        case .serviceData(let u): .serviceData(u)
        case .manufacturerData(let id): .manufacturerData(companyID: id)
        }
    }

    public func matches(advertisement ad: AdvertisingData) -> Bool {
        if let prefix = namePrefix, !(ad.name?.hasPrefix(prefix) ?? false) { return false }
        if let service = matchService,
           !(ad.serviceUUIDs.contains(service) || ad.serviceData(for: service) != nil) { return false }
        if namePrefix != nil || matchService != nil { return true }
        // Without explicit rules, the source itself must show.
        switch source {
        case .characteristic(let service, _, _): return ad.serviceUUIDs.contains(service)
        case .serviceData(let uuid): return ad.serviceData(for: uuid) != nil
        case .manufacturerData(let id): return ad.manufacturerData(companyID: id) != nil
        }
    }

    public func encode(_ reading: ProfileReading) throws(ProfileEncodingError) -> [UInt8] {
        try encode(reading.value, unit: reading.unit)
    }

    public var reminderSignal: ReminderSignal? { reminder }
}

// MARK: - The profile file

/// A profile file that cannot be used: which field, and why.
public struct ProfileFileError: Error, Sendable, CustomStringConvertible {
    public enum Reason: Sendable {
        /// Not JSON at all; the parser's own error is kept.
        case syntax(DecodingError)
        case missing
        case wrongType(expected: String)
        case invalid(String)
        case unknownField
        /// An unknown field where a required one (named) is missing.
        case misspelt(of: String)
    }

    /// Dotted path, e.g. `value.type`; empty for the whole file.
    public var field: String
    public var reason: Reason

    public init(field: String, reason: Reason) {
        self.field = field
        self.reason = reason
    }

    public var description: String {
        let what: String
        switch reason {
        case .syntax(let e): what = e.summary()
        case .missing: what = "required field is missing"
        case .wrongType(let expected): what = "must be \(expected)"
        case .invalid(let why): what = why
        case .unknownField: what = "unknown field (check the spelling)"
        case .misspelt(let key): what = "unknown field; did you mean `\(key)`? (it is required)"
        }
        return field.isEmpty ? "profile file: \(what)" : "profile file: field `\(field)`: \(what)"
    }
}

/// JSON as it came, so validation can name each field.
private enum JSONValue: Decodable {
    case null, bool(Bool), number(Double), string(String), array([JSONValue]), object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let n = try? c.decode(Double.self) { self = .number(n) }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else if let a = try? c.decode([JSONValue].self) { self = .array(a) }
        else { self = .object(try c.decode([String: JSONValue].self)) }
    }
}

/// Reads fields of one JSON object, remembering which were used.
private struct FieldReader {
    let path: String
    let object: [String: JSONValue]
    private(set) var used: Set<String> = []

    init(_ value: JSONValue, path: String) throws(ProfileFileError) {
        guard case .object(let o) = value else { throw ProfileFileError(field: path, reason: .wrongType(expected: "an object")) }
        self.path = path
        self.object = o
    }

    func name(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    mutating func raw(_ key: String) -> JSONValue? {
        used.insert(key)
        if case .null? = object[key] { return nil }
        return object[key]
    }

    mutating func string(_ key: String) throws(ProfileFileError) -> String? {
        guard let v = raw(key) else { return nil }
        guard case .string(let s) = v else { throw ProfileFileError(field: name(key), reason: .wrongType(expected: "a string")) }
        return s
    }

    mutating func requiredString(_ key: String) throws(ProfileFileError) -> String {
        guard let s = try string(key) else { throw missing(key) }
        return s
    }

    mutating func number(_ key: String) throws(ProfileFileError) -> Double? {
        guard let v = raw(key) else { return nil }
        guard case .number(let n) = v, n.isFinite else { throw ProfileFileError(field: name(key), reason: .wrongType(expected: "a number")) }
        return n
    }

    mutating func bool(_ key: String) throws(ProfileFileError) -> Bool? {
        guard let v = raw(key) else { return nil }
        guard case .bool(let b) = v else { throw ProfileFileError(field: name(key), reason: .wrongType(expected: "true or false")) }
        return b
    }

    mutating func integer(_ key: String) throws(ProfileFileError) -> Int64? {
        guard let v = raw(key) else { return nil }
        switch v {
        case .number(let n) where n == n.rounded() && abs(n) < 9.0e15:
            return Int64(n)
        case .string(let s) where s.lowercased().hasPrefix("0x"):
            if let n = Int64(s.dropFirst(2), radix: 16) { return n }
        default:
            break
        }
        throw ProfileFileError(field: name(key), reason: .wrongType(expected: "an integer (or a \"0x…\" hex string)"))
    }

    mutating func uuid(_ key: String) throws(ProfileFileError) -> BluetoothUUID? {
        guard let s = try string(key) else { return nil }
        guard let u = BluetoothUUID(s) else {
            throw ProfileFileError(field: name(key), reason: .invalid("\"\(s)\" is not a 16-, 32- or 128-bit UUID"))
        }
        return u
    }

    mutating func object(_ key: String) throws(ProfileFileError) -> FieldReader? {
        guard let v = raw(key) else { return nil }
        return try FieldReader(v, path: name(key))
    }

    /// A required `key` is not there: said as the unknown key beside it that is `key` misspelt
    /// (`"units"` for `unit`), when there is one, since that is the line the person wrote.
    func missing(_ key: String) -> ProfileFileError {
        let unknown = object.keys.filter { !used.contains($0) }.sorted()
        if let typo = unknown.first(where: { Spelling.nearest(to: $0, among: [key]) != nil }) {
            return ProfileFileError(field: name(typo), reason: .misspelt(of: key))
        }
        return ProfileFileError(field: name(key), reason: .missing)
    }

    /// Fails on keys nobody asked for (typos would otherwise be silently ignored);
    /// a key the format has, but not in this case, is named as not applying, and why.
    func finish(elsewhere: Set<String> = [], because context: String = "") throws(ProfileFileError) {
        if let extra = object.keys.sorted().first(where: { !used.contains($0) }) {
            if elsewhere.contains(extra) {
                throw ProfileFileError(field: name(extra), reason: .invalid("does not apply when \(context)"))
            }
            throw ProfileFileError(field: name(extra), reason: .unknownField)
        }
    }
}

extension CustomProfile {
    /// The longest `name` (Unicode scalars), as profiles.md says.
    public static let longestName = 64

    /// Parses and validates a profile file's JSON text.
    public init(json file: [UInt8]) throws(ProfileFileError) {
        // A UTF-8 byte order mark (Notepad writes one) is not part of the text, as for a trace.
        let json = file.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(file.dropFirst(3)) : file
        // Named by its byte: the decoder would report it as a problem with some field.
        if let bad = String.firstInvalidUTF8Offset(json) {
            throw ProfileFileError(field: "", reason: .invalid("byte offset \(bad) is not valid UTF-8 text"))
        }
        // Named by line and column, and a key given twice refused (the decoder keeps the last in silence).
        if let problem = JSONSyntax.firstProblem(in: json) { throw ProfileFileError(field: "", reason: .invalid(problem.description)) }
        let root: JSONValue
        do {
            root = try JSONDecoder().decode(JSONValue.self, from: Data(json))
        } catch let e as DecodingError {
            throw ProfileFileError(field: "", reason: .syntax(e))
        } catch {
            throw ProfileFileError(field: "", reason: .syntax(.dataCorrupted(.init(codingPath: [], debugDescription: "\(error)"))))
        }
        var top = try FieldReader(root, path: "")

        let name = try top.requiredString("name")
        guard !name.isEmpty else { throw ProfileFileError(field: "name", reason: .invalid("must not be empty")) }
        // It is shown in listings, logs and errors: bounded, and nothing a terminal would obey.
        guard name.unicodeScalars.count <= Self.longestName else {
            throw ProfileFileError(field: "name", reason: .invalid("has \(name.unicodeScalars.count) characters, at most \(Self.longestName)"))
        }
        guard !name.unicodeScalars.contains(where: \.isControlOrBidiOverride) else {
            throw ProfileFileError(field: "name", reason: .invalid("must not hold control characters or bidirectional overrides"))
        }

        let sensorText = try top.requiredString("sensor")
        guard let sensor = SensorKind(rawValue: sensorText) else {
            throw ProfileFileError(field: "sensor", reason: .invalid("\"\(sensorText)\" is not one of weight, level"))
        }
        let unitText = try top.requiredString("unit")
        guard let unit = MeasurementUnit(rawValue: unitText) else {
            let all = MeasurementUnit.allCases.map(\.rawValue).joined(separator: ", ")
            throw ProfileFileError(field: "unit", reason: .invalid("\"\(unitText)\" is not one of \(all)"))
        }
        guard unit.sensor == sensor else {
            throw ProfileFileError(field: "unit", reason: .invalid("\(unit.rawValue) is not a unit of a \(sensor.rawValue) sensor"))
        }

        guard var src = try top.object("source") else { throw top.missing("source") }
        let kind = try src.requiredString("kind")
        let source: Source
        switch kind {
        case "characteristic":
            guard let service = try src.uuid("service") else { throw src.missing("service") }
            guard let characteristic = try src.uuid("characteristic") else {
                throw src.missing("characteristic")
            }
            let mode = try src.string("mode") ?? "notify"
            let interval = try src.number("pollInterval")
            let delivery: GATTDelivery
            switch mode {
            case "notify", "indicate":
                guard interval == nil else {
                    throw ProfileFileError(field: "source.pollInterval", reason: .invalid("only for mode read-poll"))
                }
                delivery = mode == "notify" ? .notify : .indicate
            case "read-poll":
                let seconds = interval ?? 1
                guard seconds >= 0.05, seconds <= 86400 else {
                    throw ProfileFileError(field: "source.pollInterval", reason: .invalid("\(seconds) s is outside 0.05...86400"))
                }
                delivery = .readPoll(interval: seconds)
            default:
                throw ProfileFileError(field: "source.mode", reason: .invalid("\"\(mode)\" is not one of notify, indicate, read-poll"))
            }
            source = .characteristic(service: service, characteristic: characteristic, delivery: delivery)
        case "service-data":
            guard let uuid = try src.uuid("uuid") else { throw src.missing("uuid") }
            source = .serviceData(uuid)
        case "manufacturer-data":
            guard let company = try src.integer("company") else { throw src.missing("company") }
            guard (0...0xFFFF).contains(company) else {
                throw ProfileFileError(field: "source.company", reason: .invalid("\(company) is not a 16-bit company identifier"))
            }
            source = .manufacturerData(companyID: UInt16(company))
        default:
            throw ProfileFileError(field: "source.kind",
                                   reason: .invalid("\"\(kind)\" is not one of characteristic, service-data, manufacturer-data"))
        }
        try src.finish(elsewhere: ["service", "characteristic", "mode", "pollInterval", "uuid", "company"],
                       because: "source.kind is \"\(kind)\"")

        guard var val = try top.object("value") else { throw top.missing("value") }
        let offset = try val.integer("offset") ?? 0
        guard (0...1024).contains(offset) else {
            throw ProfileFileError(field: "value.offset", reason: .invalid("\(offset) is outside 0...1024"))
        }
        let typeText = try val.requiredString("type")
        guard let type = ValueType(rawValue: typeText) else {
            let all = ValueType.allCases.map(\.rawValue).joined(separator: ", ")
            throw ProfileFileError(field: "value.type", reason: .invalid("\"\(typeText)\" is not one of \(all)"))
        }
        // Where the source can never hold the value, no reading would ever come (a developer's offset 300 of
        // manufacturer data was taken): an attribute value is at most 512 bytes (Core 5.4 Vol 3 Part F 3.2.9),
        // an advertisement's data structure at most 254 after its type, 252 after a company id or 16-bit UUID.
        let room: (bytes: Int, what: String) = switch source {
        case .characteristic: (512, "a characteristic's value")
        case .serviceData: (252, "an advertisement's service data")
        case .manufacturerData: (252, "an advertisement's manufacturer data")
        }
        guard Int(offset) + type.width <= room.bytes else {
            throw ProfileFileError(field: "value.offset", reason: .invalid(
                "a \(type.rawValue) at byte \(offset) ends past the \(room.bytes) bytes \(room.what) can hold"))
        }
        let endian = try val.string("endian") ?? "little"
        guard endian == "little" || endian == "big" else {
            throw ProfileFileError(field: "value.endian", reason: .invalid("\"\(endian)\" is not little or big"))
        }
        // Bounded so that every raw value (up to f32's 3.4e38) scales to a finite reading.
        let scale = try val.number("scale") ?? 1
        guard scale != 0 else { throw ProfileFileError(field: "value.scale", reason: .invalid("must not be 0")) }
        guard abs(scale) <= 1e6 else { throw ProfileFileError(field: "value.scale", reason: .invalid("\(scale) is beyond ±1000000")) }
        let add = try val.number("add") ?? 0
        guard abs(add) <= 1e9 else { throw ProfileFileError(field: "value.add", reason: .invalid("\(add) is beyond ±1000000000")) }
        let missing = try val.integer("missing")
        if let m = missing {
            guard let range = type.integerRange else {
                throw ProfileFileError(field: "value.missing", reason: .invalid("not available for f32 (NaN already means no reading)"))
            }
            guard range.contains(m) else {
                throw ProfileFileError(field: "value.missing", reason: .invalid("\(m) does not fit \(type.rawValue)"))
            }
        }
        try val.finish()

        var namePrefix: String?
        var matchService: BluetoothUUID?
        if var match = try top.object("match") {
            namePrefix = try match.string("namePrefix")
            matchService = try match.uuid("service")
            try match.finish()
        }
        let reminder = try Self.reminderSignal(&top, source: source, kind: kind)
        try top.finish()

        self.init(name: name, sensor: sensor, unit: unit, source: source,
                  value: ValueFormat(offset: Int(offset), type: type, bigEndian: endian == "big", scale: scale, add: add, missing: missing),
                  namePrefix: namePrefix, matchService: matchService, reminder: reminder)
    }

    /// `"reminder"`: what to write to show a reminder. Only a device Quench
    /// connects to can be written to, so only with a characteristic source;
    /// the service defaults to the source's.
    private static func reminderSignal(_ top: inout FieldReader, source: Source, kind: String) throws(ProfileFileError) -> ReminderSignal? {
        guard var r = try top.object("reminder") else { return nil }
        guard case .characteristic(let sourceService, _, _) = source else {
            throw ProfileFileError(field: "reminder", reason: .invalid("does not apply when source.kind is \"\(kind)\" (a device that only broadcasts is never connected, so nothing can be written to it)"))
        }
        let service = try r.uuid("service") ?? sourceService
        guard let characteristic = try r.uuid("characteristic") else {
            throw r.missing("characteristic")
        }
        guard let list = r.raw("writes") else { throw r.missing("writes") }
        guard case .array(let items) = list else {
            throw ProfileFileError(field: "reminder.writes", reason: .wrongType(expected: "an array of hex strings"))
        }
        guard (1...ReminderSignal.mostWrites).contains(items.count) else {
            throw ProfileFileError(field: "reminder.writes", reason: .invalid("\(items.count) writes; 1 to \(ReminderSignal.mostWrites), please"))
        }
        var writes: [[UInt8]] = []
        for (i, item) in items.enumerated() {
            // Named by position: `reminder.writes[1]`, as a reader counts them in the file (from 0, like JSON Pointer).
            let field = "reminder.writes[\(i)]"
            guard case .string(let text) = item else { throw ProfileFileError(field: field, reason: .wrongType(expected: "a hex string")) }
            guard let bytes = [UInt8](hexString: text) else {
                throw ProfileFileError(field: field, reason: .invalid("\"\(text.shownSafely(limit: 48))\" is not hex bytes (e.g. \"030a0000000009\")"))
            }
            guard (1...ReminderSignal.longestWrite).contains(bytes.count) else {
                throw ProfileFileError(field: field, reason: .invalid("\(bytes.count) bytes; a write is 1 to \(ReminderSignal.longestWrite) bytes"))
            }
            writes.append(bytes)
        }
        let pause = try r.number("pauseSeconds") ?? 0.5
        guard (0...ReminderSignal.longestPause).contains(pause) else {
            throw ProfileFileError(field: "reminder.pauseSeconds", reason: .invalid("\(pause) s is outside 0...\(Int(ReminderSignal.longestPause))"))
        }
        let withResponse = try r.bool("withResponse") ?? false
        try r.finish()
        return ReminderSignal(service: service, characteristic: characteristic, writes: writes, pause: pause, withResponse: withResponse)
    }
}

extension CustomProfile {
    /// What the profile reads, and from where, in words (`quench profile FILE`): a developer
    /// checks a profile file before there is a device to try it on.
    public var summary: [String] {
        var lines = ["\(name.shownSafely(limit: 64)): a \(sensor.rawValue) sensor's readings in \(unit.rawValue)"]
        switch source {
        case .characteristic(let service, let characteristic, let delivery):
            let how = switch delivery {
            case .notify: "notified"
            case .indicate: "indicated"
            case .readPoll(let interval): "read every \(interval.compactDescription) s"
            }
            lines.append("from: characteristic \(characteristic) of service \(service), \(how)")
        case .serviceData(let uuid):
            lines.append("from: the service data of \(uuid) in its advertisements")
        case .manufacturerData(let company):
            lines.append("from: the manufacturer data of company 0x\([UInt8(company >> 8), UInt8(company & 0xFF)].hexString.uppercased()) in its advertisements")
        }
        var reading = "value: \(value.type.rawValue)"
        if value.type.width > 1 { reading += value.bigEndian ? " big-endian" : " little-endian" }
        reading += " at byte \(value.offset)"
        if value.scale != 1 { reading += " × \(value.scale.compactDescription)" }
        if value.add != 0 { reading += (value.add < 0 ? " − " : " + ") + abs(value.add).compactDescription }
        reading += value.scale == 1 && value.add == 0 ? ", in \(unit.rawValue)" : " \(unit.rawValue)"
        if let missing = value.missing { reading += "; \(missing) is no reading" }
        lines.append(reading)
        var match: [String] = []
        if let namePrefix { match.append("a name beginning \"\(namePrefix.shownSafely(limit: 64))\"") }
        if let matchService { match.append("service \(matchService) advertised") }
        lines.append("matches: " + (match.isEmpty ? "a device whose advertisements show its source" : match.joined(separator: " and ")))
        if let reminder {
            lines.append("reminder: \(reminder.writes.count) write\(reminder.writes.count == 1 ? "" : "s") to characteristic \(reminder.characteristic)")
        }
        return lines
    }
}

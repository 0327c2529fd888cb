import QuenchCore

/// Where an intake event came from.
public enum EventSource: String, Sendable, Hashable, CaseIterable, Codable {
    /// Detected from a bottle or scale's readings (live, replay or demo).
    case sensor
    /// Typed by a person (`quench add`).
    case manual
    /// Read from another application's file.
    case imported = "import"
}

/// One stored sip, refill or pour (table `intake_event`).
public struct IntakeEvent: Sendable, Hashable, Codable {
    /// The most one event can be (the schema's CHECK on `ml`): more is a broken input.
    public static let largestML = 100_000.0
    /// Epoch seconds a history holds, from just after 1970 to the end of 9999:
    /// what dates can show. A time outside it (or not finite) is a broken input.
    public static let plausibleTime = 1.0...253_402_300_799.0
    /// How far past the clock an event may lie (seconds): clocks disagree by that much. More is a
    /// typo or a wrong clock, and no today, streak or total could show it right.
    public static let clockSlack = 60.0

    /// Whether an amount is one a history holds: finite, positive, at most `largestML`.
    public static func holds(ml: Double) -> Bool { ml.isFinite && ml > 0 && ml <= largestML }

    /// Row id, shown by `quench log` and taken by `delete`/`restore`; nil before insertion.
    public var id: Int64?
    /// Stable identity: the same physical event always gets the same identity, so
    /// storing it twice is a no-op. See `IntakeEvent.sensorIdentity`.
    public var identity: String
    public var kind: EventKind
    /// Always positive.
    public var ml: Double
    /// When the event began (the lift), UTC, to the millisecond.
    public var time: Timestamp
    /// What was left in the bottle afterwards, when the calibration knows.
    public var remainingML: Double?
    public var source: EventSource
    /// The device's address (or a trace's device label); nil for manual drinks.
    public var device: String?
    /// The event's start on the trace's clock (seconds), for events from a trace.
    public var traceTime: Double?
    public var note: String?
    /// Soft-deleted: kept, but excluded from totals and streaks.
    public var deleted: Bool
    /// When the row was first written.
    public var recordedAt: Timestamp
    /// Who drank it, by name. Stamped when stored: a device's events go to its
    /// owner at that moment; nil on a new row means exactly that (or, for a
    /// device nobody owns, the household's first person).
    public var person: String?

    public init(
        id: Int64? = nil, identity: String, kind: EventKind, ml: Double, time: Timestamp,
        remainingML: Double? = nil, source: EventSource, device: String? = nil, traceTime: Double? = nil,
        note: String? = nil, deleted: Bool = false, recordedAt: Timestamp, person: String? = nil
    ) {
        self.person = person
        self.id = id
        self.identity = identity
        self.kind = kind
        self.ml = ml
        self.time = time
        self.remainingML = remainingML
        self.source = source
        self.device = device
        self.traceTime = traceTime
        self.note = note
        self.deleted = deleted
        self.recordedAt = recordedAt
    }

    /// The identity of a detected event: device, kind and start time in whole
    /// milliseconds since the epoch. The start (the lift) is what a detector pins
    /// down first and never revises, so a replay, a re-delivery after a reconnect
    /// or a second run of the same trace all produce the same key.
    /// The row a detector's event becomes: its time on the wall clock (to the
    /// millisecond the store keeps), its identity from device, kind and time.
    public static func sensor(_ event: DetectedEvent, device: String?, started: Timestamp, source: EventSource = .sensor,
                              recordedAt: Timestamp = .wallClockNow) -> IntakeEvent {
        let time = roundedToMillisecond(started.adding(event.start))
        return IntakeEvent(identity: sensorIdentity(device: device, kind: event.kind, time: time), kind: event.kind, ml: event.ml,
                           time: time, remainingML: event.remainingML.map { max(0, $0) }, source: source, device: device,
                           traceTime: event.start, recordedAt: recordedAt)
    }

    public static func sensorIdentity(device: String?, kind: EventKind, time: Timestamp) -> String {
        "\(device ?? "-")|\(kind.rawValue)|\(milliseconds(time))"
    }

    static func milliseconds(_ time: Timestamp) -> Int64 {
        Int64((time.secondsSince1970 * 1000).rounded())
    }

    /// Time rounded to the millisecond, the precision the store keeps.
    static func roundedToMillisecond(_ time: Timestamp) -> Timestamp {
        Timestamp(secondsSince1970: Double(milliseconds(time)) / 1000)
    }
}

/// A paired bottle or scale (table `device`).
public struct Device: Sendable, Hashable, Codable {
    /// Bluetooth address as printed (`AA:BB:CC:DD:EE:FF`), or any stable label.
    public var address: String
    public var name: String?
    /// Profile identifier (e.g. `weight-scale`, `mi-scale`, a profile file's name).
    public var profile: String?
    public var sensor: SensorKind?
    public var calibration: BottleCalibration?
    public var addedAt: Timestamp
    public var lastSeenAt: Timestamp?
    /// LE address type, `public` or `random`, as the device advertises; nil when unknown.
    public var addressType: String?
    /// The JSON text of the profile file the device was paired with (custom profiles only).
    public var profileDefinition: String?
    /// What a smart bottle last said: its battery (percent) and whether its cap was open.
    public var batteryPercent: Int?
    public var capOpen: Bool?
    /// Whose it is, by name: their events are stamped with it. Saving a device
    /// without one keeps its owner (a re-pair), or gives a new one to the first person.
    public var person: String?

    public init(
        address: String, name: String? = nil, profile: String? = nil, sensor: SensorKind? = nil,
        calibration: BottleCalibration? = nil, addedAt: Timestamp, lastSeenAt: Timestamp? = nil,
        addressType: String? = nil, profileDefinition: String? = nil, person: String? = nil
    ) {
        self.person = person
        self.addressType = addressType
        self.profileDefinition = profileDefinition
        self.address = address
        self.name = name
        self.profile = profile
        self.sensor = sensor ?? calibration?.sensor
        self.calibration = calibration
        self.addedAt = addedAt
        self.lastSeenAt = lastSeenAt
    }
}

/// A daily goal in force from `startDay` (local day) until the next goal's start (table `goal`).
public struct Goal: Sendable, Hashable, Codable {
    public var startDay: CivilDay
    public var ml: Double
    public var setAt: Timestamp

    public init(startDay: CivilDay, ml: Double, setAt: Timestamp) {
        self.startDay = startDay
        self.ml = ml
        self.setAt = setAt
    }
}

/// The user's preferences (table `settings`, one row).
public struct Settings: Sendable, Hashable, Codable {
    public var units: VolumeUnit
    /// Hour (0–23, local time) at which a new day begins; 4 means a sip at 01:00 counts for the evening before.
    public var dayStartHour: Int
    /// IANA time zone name; nil follows the system (`TZ`).
    public var timeZone: String?

    public static let defaults = Settings(units: .ml, dayStartHour: 4, timeZone: nil)

    /// The hours a day may begin at: the schema's CHECK on `settings.day_start_hour` and `person.day_start_hour`.
    public static let dayStartHours = 0...23

    public init(units: VolumeUnit, dayStartHour: Int, timeZone: String?) {
        self.units = units
        self.dayStartHour = dayStartHour
        self.timeZone = timeZone
    }
}

/// A calendar date without a time zone, counted as days since 1970-01-01.
public struct CivilDay: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// Days since 1970-01-01 (negative before).
    public var number: Int

    public init(number: Int) { self.number = number }

    /// The days a history holds: those of `IntakeEvent.plausibleTime`, 1970-01-01
    /// to 9999-12-31, each written with the four-digit year the goal table's CHECK
    /// wants. A day typed or asked for outside it is refused before use.
    public static let storable = CivilDay(number: 0)...CivilDay(number: 2_932_896)

    public init?(year: Int, month: Int, day: Int) {
        guard (1...12).contains(month), day >= 1, day <= Timestamp.daysIn(month: month, year: year) else { return nil }
        number = Timestamp.daysFromCivil(year: year, month: month, day: day)
    }

    /// Parses `YYYY-MM-DD`.
    public init?(parsing text: some StringProtocol) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        // Digits only: `Int` alone would read `+999` as a year.
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
              let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2])
        else { return nil }
        self.init(year: y, month: m, day: d)
    }

    public var components: (year: Int, month: Int, day: Int) {
        let (y, m, d) = Timestamp.civilFromDays(number)
        return (y, m, d)
    }

    /// 0 = Sunday … 6 = Saturday (1970-01-01 was a Thursday).
    public var weekday: Int { ((number % 7) + 7 + 4) % 7 }

    public func adding(days: Int) -> CivilDay { CivilDay(number: number + days) }

    public static func < (a: CivilDay, b: CivilDay) -> Bool { a.number < b.number }

    /// `YYYY-MM-DD`, the year padded to four digits (ISO 8601), so every day of
    /// years 0 to 9999 reads back with `init(parsing:)`.
    public var description: String {
        let (y, m, d) = components
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let year = String(y.magnitude)
        return (y < 0 ? "-" : "") + String(repeating: "0", count: max(0, 4 - year.count)) + year + "-\(two(m))-\(two(d))"
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let day = CivilDay(parsing: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "'\(text.shownSafely())' is not a YYYY-MM-DD date"))
        }
        self = day
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// Where an event stamped before the wall clock was synchronised lies on the
/// monotonic clock of its boot (`/proc/sys/kernel/random/boot_id`).
public struct UnsyncedStamp: Sendable, Hashable {
    public var bootID: String
    /// Seconds since boot (CLOCK_BOOTTIME) of the event's time.
    public var sinceBoot: Double
    public init(bootID: String, sinceBoot: Double) {
        self.bootID = bootID
        self.sinceBoot = sinceBoot
    }
}

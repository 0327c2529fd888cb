import FoundationEssentials
import QuenchCore

// Devices, goals and settings: the small tables.
extension IntakeStore {
    // MARK: - Devices (for `quench pair`, `devices`, `forget`, `run`)

    /// Saves a device, replacing any earlier record with the same address (a re-pair).
    public func saveDevice(_ device: Device) throws(StoreError) {
        let calibration = try calibrationJSON(device)
        try write("saving device \(device.address)") { db in try Self.upsertDevice(device, calibration: calibration, db) }
    }

    /// The device's calibration as stored (JSON), after checking the record can be stored at all.
    func calibrationJSON(_ device: Device) throws(StoreError) -> String? {
        if let problem = device.textProblem {
            throw StoreError(.invalidValue, path: path, "cannot save device \(device.address.shownSafely(limit: 40)): \(problem)")
        }
        do {
            return try device.calibration.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
        } catch {
            throw StoreError(.invalidValue, path: path, "cannot encode the calibration of \(device.address)", cause: error)
        }
    }

    static func upsertDevice(_ device: Device, calibration: String?, _ db: SQLiteConnection) throws {
        let owner = try device.person.map { (name) throws -> Int64 in try personID(named: name, db) }
        // A re-pair without a person keeps the owner; a new device without one goes to the first person.
        try db.run("""
            INSERT INTO device (address, name, profile, sensor, calibration, added_at, last_seen_at,
                                address_type, profile_definition, person)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, coalesce(?, (SELECT min(id) FROM person)))
            ON CONFLICT (address) DO UPDATE SET name = excluded.name, profile = excluded.profile,
                sensor = excluded.sensor, calibration = excluded.calibration, last_seen_at = excluded.last_seen_at,
                address_type = excluded.address_type, profile_definition = excluded.profile_definition,
                person = coalesce(?10, device.person, excluded.person)
            """, [device.address, device.name, device.profile, device.sensor?.rawValue, calibration,
                  device.addedAt.secondsSince1970, device.lastSeenAt?.secondsSince1970,
                  device.addressType, device.profileDefinition, owner])
    }

    /// The id of the person called `name`, or a refusal naming who there is.
    /// The person called `name`, or called so before a rename (an export from before it names them so).
    static func personID(named name: String, _ db: SQLiteConnection) throws -> Int64 {
        if let person = try personNamedOrAliased(name, db) { return person.id }
        let names = try db.all("SELECT name FROM person ORDER BY id") { row -> String in row[0] }
        throw StoreError(.invalidValue, path: nil,
                         "nobody is called \(name.shownSafely(limit: 40)) (people: \(names.joined(separator: ", ")))")
    }

    public func device(address: String) throws(StoreError) -> Device? {
        try read("reading device \(address)") { db in
            try db.first("SELECT \(Self.deviceColumns) FROM device WHERE address = ?", [address], Self.device)
        }
    }

    /// All saved devices, by address.
    public func listDevices() throws(StoreError) -> [Device] {
        try read("reading devices") { db in
            try db.all("SELECT \(Self.deviceColumns) FROM device ORDER BY address", [], Self.device)
        }
    }

    /// Removes a device and its detector's checkpoint; its events stay in the history.
    /// Returns false when it was not saved.
    @discardableResult
    public func forgetDevice(address: String) throws(StoreError) -> Bool {
        try write("forgetting device \(address)") { db in
            try db.run("DELETE FROM device WHERE address = ?", [address])
            let forgotten = db.changes > 0
            try db.run("DELETE FROM detector_checkpoint WHERE device = ?", [address])
            return forgotten
        }
    }

    /// Records that a device was heard from.
    public func markDeviceSeen(address: String, at time: Timestamp) throws(StoreError) {
        try write("updating device \(address)") { db in
            try db.run("UPDATE device SET last_seen_at = ? WHERE address = ?", [time.secondsSince1970, address])
        }
    }

    static let deviceColumns = "address, name, profile, sensor, calibration, added_at, last_seen_at, address_type, profile_definition, battery_percent, cap_open, "
        + "(SELECT name FROM person WHERE person.id = device.person)"

    /// Decodes a row selected with `deviceColumns`, by position.
    static func device(_ row: SQLiteRow) throws -> Device {
        let sensorText: String? = row[3]
        let calibrationText: String? = row[4]
        var device = Device(
            address: row[0], name: row[1], profile: row[2],
            sensor: sensorText.flatMap(SensorKind.init(rawValue:)),
            // A calibration that no longer holds (written before it was checked) reads as none:
            // the device is listed and asks to be calibrated, and no detector is given it.
            calibration: calibrationText.flatMap { try? JSONDecoder().decode(BottleCalibration.self, from: Data($0.utf8)) },
            addedAt: Timestamp(secondsSince1970: row[5]),
            lastSeenAt: (row[6] as Double?).map(Timestamp.init(secondsSince1970:)),
            addressType: row[7], profileDefinition: row[8])
        device.batteryPercent = row[9]
        device.capOpen = row[10]
        device.person = row[11]
        return device
    }

    /// What a device said of itself just now (nil: unchanged), and that it was seen.
    public func recordDeviceStatus(address: String, batteryPercent: Int? = nil, capOpen: Bool? = nil, seenAt: Timestamp) throws(StoreError) {
        let battery = batteryPercent.map { min(100, max(0, $0)) }
        try write("recording the state of device \(address)") { db in
            try db.run("""
                UPDATE device SET battery_percent = COALESCE(?, battery_percent), cap_open = COALESCE(?, cap_open),
                    last_seen_at = ? WHERE address = ?
                """, [battery, capOpen, seenAt.secondsSince1970, address])
        }
    }

    // MARK: - Goals

    /// Sets someone's daily goal from `day` on (replacing their goal that starts the same day).
    /// `person` nil: the household's first person (the only one, until there are more).
    public func setGoal(ml: Double, from day: CivilDay, setAt: Timestamp = .wallClockNow, person: Int64? = nil) throws(StoreError) {
        guard ml.isFinite, ml > 0, ml <= 20_000 else {
            throw StoreError(.invalidValue, path: path, "a daily goal of \(ml) mL is not between 1 mL and 20 L")
        }
        try write("setting the goal") { db in try Self.setGoal(ml: ml, from: day, setAt: setAt, person: person, db) }
    }

    static func setGoal(ml: Double, from day: CivilDay, setAt: Timestamp, person: Int64?, _ db: SQLiteConnection) throws {
        try db.run(Self.upsertGoal, [try Self.personOrFirst(person, db), day.description, ml, setAt.secondsSince1970])
    }

    private static let upsertGoal = """
        INSERT INTO goal (person, start_day, ml, set_at) VALUES (?, ?, ?, ?)
        ON CONFLICT (person, start_day) DO UPDATE SET ml = excluded.ml, set_at = excluded.set_at
        """

    /// `person`, or when nil the household's first person.
    static func personOrFirst(_ person: Int64?, _ db: SQLiteConnection) throws -> Int64 {
        if let person { return person }
        guard let first = try db.first("SELECT min(id) FROM person", [], { row -> Int64? in row[0] }) ?? nil else {
            throw StoreError(.corrupt, path: nil, "the database has nobody in it (table person is empty)")
        }
        return first
    }

    /// Someone's goals, oldest start first (`person` nil: the first person's).
    public func goals(person: Int64? = nil) throws(StoreError) -> [Goal] {
        try read("reading goals") { db in
            try db.all("SELECT start_day, ml, set_at FROM goal WHERE person = ? ORDER BY start_day", [try Self.personOrFirst(person, db)]) { row in
                let text: String = row[0]
                guard let day = CivilDay(parsing: text) else {
                    throw StoreError(.corrupt, path: nil, "a goal starts on '\(text.shownSafely())', which is not a date")
                }
                return Goal(startDay: day, ml: row[1], setAt: Timestamp(secondsSince1970: row[2]))
            }
        }
    }

    /// Replaces someone's goals with the same start days (import).
    public func insertGoals(_ goals: [Goal], person: Int64? = nil) throws(StoreError) {
        try write("storing goals") { db in try Self.upsertGoals(goals, person: person, db) }
    }

    static func upsertGoals(_ goals: [Goal], person: Int64?, _ db: SQLiteConnection) throws {
        let person = try personOrFirst(person, db)
        for goal in goals {
            try db.run(Self.upsertGoal, [person, goal.startDay.description, goal.ml, goal.setAt.secondsSince1970])
        }
    }

    // MARK: - Settings

    public func settings() throws(StoreError) -> Settings {
        try read("reading settings") { db in
            try db.first("SELECT units, day_start_hour, time_zone FROM settings WHERE id = 1", []) { row in
                let unitText: String = row[0]
                return Settings(units: VolumeUnit(rawValue: unitText) ?? .ml, dayStartHour: row[1], timeZone: row[2])
            } ?? .defaults
        }
    }

    public func saveSettings(_ settings: Settings) throws(StoreError) {
        try checkSettings(settings)
        try write("saving settings") { db in try Self.upsertSettings(settings, db) }
    }

    func checkSettings(_ settings: Settings) throws(StoreError) {
        guard Settings.dayStartHours.contains(settings.dayStartHour) else {
            throw StoreError(.invalidValue, path: path, "day start hour \(settings.dayStartHour) is not between 0 and 23")
        }
    }

    static func upsertSettings(_ settings: Settings, _ db: SQLiteConnection) throws {
        try db.run("""
            INSERT INTO settings (id, units, day_start_hour, time_zone) VALUES (1, ?, ?, ?)
            ON CONFLICT (id) DO UPDATE SET units = excluded.units, day_start_hour = excluded.day_start_hour,
                time_zone = excluded.time_zone
            """, [settings.units.rawValue, settings.dayStartHour, settings.timeZone])
    }
}

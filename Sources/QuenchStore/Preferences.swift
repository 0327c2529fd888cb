import Foundation
import GRDB
import QuenchCore

// Devices, goals and settings: the small tables.
extension IntakeStore {
    // MARK: - Devices (for `quench pair`, `devices`, `forget`, `run`)

    /// Saves a device, replacing any earlier record with the same address (a re-pair).
    public func saveDevice(_ device: Device) throws(StoreError) {
        guard !device.address.isEmpty else {
            throw StoreError(.invalidValue, path: path, "a device needs an address")
        }
        let calibration: String?
        do {
            calibration = try device.calibration.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
        } catch {
            throw StoreError(.invalidValue, path: path, "cannot encode the calibration of \(device.address)", cause: error)
        }
        try write("saving device \(device.address)") { db in
            try db.execute(sql: """
                INSERT INTO device (address, name, profile, sensor, calibration, added_at, last_seen_at,
                                    address_type, profile_definition)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (address) DO UPDATE SET name = excluded.name, profile = excluded.profile,
                    sensor = excluded.sensor, calibration = excluded.calibration, last_seen_at = excluded.last_seen_at,
                    address_type = excluded.address_type, profile_definition = excluded.profile_definition
                """, arguments: [device.address, device.name, device.profile, device.sensor?.rawValue, calibration,
                                 device.addedAt.secondsSince1970, device.lastSeenAt?.secondsSince1970,
                                 device.addressType, device.profileDefinition])
        }
    }

    public func device(address: String) throws(StoreError) -> Device? {
        try read("reading device \(address)") { db in
            try Row.fetchOne(db, sql: "SELECT * FROM device WHERE address = ?", arguments: [address]).map(Self.device)
        }
    }

    /// All saved devices, by address.
    public func listDevices() throws(StoreError) -> [Device] {
        try read("reading devices") { db in
            try Row.fetchAll(db, sql: "SELECT * FROM device ORDER BY address").map(Self.device)
        }
    }

    /// Removes a device; its events stay in the history. Returns false when it was not saved.
    @discardableResult
    public func forgetDevice(address: String) throws(StoreError) -> Bool {
        try write("forgetting device \(address)") { db in
            try db.execute(sql: "DELETE FROM device WHERE address = ?", arguments: [address])
            return db.changesCount > 0
        }
    }

    /// Records that a device was heard from.
    public func markDeviceSeen(address: String, at time: Timestamp) throws(StoreError) {
        try write("updating device \(address)") { db in
            try db.execute(sql: "UPDATE device SET last_seen_at = ? WHERE address = ?", arguments: [time.secondsSince1970, address])
        }
    }

    static func device(_ row: Row) throws -> Device {
        let sensorText: String? = row["sensor"]
        let calibrationText: String? = row["calibration"]
        return Device(
            address: row["address"], name: row["name"], profile: row["profile"],
            sensor: sensorText.flatMap(SensorKind.init(rawValue:)),
            calibration: try calibrationText.map { try JSONDecoder().decode(BottleCalibration.self, from: Data($0.utf8)) },
            addedAt: Timestamp(secondsSince1970: row["added_at"]),
            lastSeenAt: (row["last_seen_at"] as Double?).map(Timestamp.init(secondsSince1970:)),
            addressType: row["address_type"], profileDefinition: row["profile_definition"])
    }

    // MARK: - Goals

    /// Sets the daily goal from `day` on (replacing a goal that starts the same day).
    public func setGoal(ml: Double, from day: CivilDay, setAt: Timestamp = .wallClockNow) throws(StoreError) {
        guard ml.isFinite, ml > 0, ml <= 20_000 else {
            throw StoreError(.invalidValue, path: path, "a daily goal of \(ml) mL is not between 1 mL and 20 L")
        }
        try write("setting the goal") { db in
            try db.execute(sql: """
                INSERT INTO goal (start_day, ml, set_at) VALUES (?, ?, ?)
                ON CONFLICT (start_day) DO UPDATE SET ml = excluded.ml, set_at = excluded.set_at
                """, arguments: [day.description, ml, setAt.secondsSince1970])
        }
    }

    /// Every goal, oldest start first.
    public func goals() throws(StoreError) -> [Goal] {
        try read("reading goals") { db in
            try Row.fetchAll(db, sql: "SELECT start_day, ml, set_at FROM goal ORDER BY start_day").map { row in
                let text: String = row[0]
                guard let day = CivilDay(parsing: text) else {
                    throw StoreError(.corrupt, path: nil, "a goal starts on '\(text)', which is not a date")
                }
                return Goal(startDay: day, ml: row[1], setAt: Timestamp(secondsSince1970: row[2]))
            }
        }
    }

    /// Replaces goals with the same start days (import).
    public func insertGoals(_ goals: [Goal]) throws(StoreError) {
        try write("storing goals") { db in
            for goal in goals {
                try db.execute(sql: """
                    INSERT INTO goal (start_day, ml, set_at) VALUES (?, ?, ?)
                    ON CONFLICT (start_day) DO UPDATE SET ml = excluded.ml, set_at = excluded.set_at
                    """, arguments: [goal.startDay.description, goal.ml, goal.setAt.secondsSince1970])
            }
        }
    }

    // MARK: - Settings

    public func settings() throws(StoreError) -> Settings {
        try read("reading settings") { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT units, day_start_hour, time_zone FROM settings WHERE id = 1") else {
                return .defaults
            }
            let unitText: String = row[0]
            return Settings(units: VolumeUnit(rawValue: unitText) ?? .ml, dayStartHour: row[1], timeZone: row[2])
        }
    }

    public func saveSettings(_ settings: Settings) throws(StoreError) {
        guard (0...23).contains(settings.dayStartHour) else {
            throw StoreError(.invalidValue, path: path, "day start hour \(settings.dayStartHour) is not between 0 and 23")
        }
        try write("saving settings") { db in
            try db.execute(sql: """
                INSERT INTO settings (id, units, day_start_hour, time_zone) VALUES (1, ?, ?, ?)
                ON CONFLICT (id) DO UPDATE SET units = excluded.units, day_start_hour = excluded.day_start_hour,
                    time_zone = excluded.time_zone
                """, arguments: [settings.units.rawValue, settings.dayStartHour, settings.timeZone])
        }
    }
}

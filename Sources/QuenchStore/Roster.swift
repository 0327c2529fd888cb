import QuenchCore

/// One line of a hub's roster: who drinks from the bottle or scale at `address`
/// (docs/hub.md, "People and devices are the hub's").
public struct RosterEntry: Sendable, Hashable, Codable {
    public var address: String
    /// The person's name: the gateways know people by name.
    public var person: String

    public init(address: String, person: String) {
        self.address = address
        self.person = person
    }
}

extension IntakeStore {
    /// At the hub: gives the device at `address` to `person` (nil: takes it off the roster).
    public func setRoster(address: String, person: Int64?) throws(StoreError) {
        try write("setting the roster") { db in
            if let person {
                try db.run("INSERT INTO hub_roster (address, person) VALUES (?, ?) ON CONFLICT (address) DO UPDATE SET person = excluded.person",
                           [address, person])
            } else {
                try db.run("DELETE FROM hub_roster WHERE address = ?", [address])
            }
        }
    }

    /// At the hub: the roster, by address.
    public func roster() throws(StoreError) -> [RosterEntry] {
        try read("reading the roster") { db in
            try db.all("SELECT r.address, p.name FROM hub_roster r JOIN person p ON p.id = r.person ORDER BY r.address") { row in
                RosterEntry(address: row[0], person: row[1])
            }
        }
    }

    /// At a gateway: the hub's roster applied to the devices paired here, in one transaction.
    /// Someone the gateway does not know is added (by name); a device the roster names goes to
    /// its person (its next events are theirs). Devices the roster does not name keep their
    /// owner, and entries for devices not paired here change nothing. Returns what changed.
    public func applyRoster(_ entries: [RosterEntry], at time: Timestamp) throws(StoreError) -> [RosterEntry] {
        for entry in entries { try checkName(entry.person) }
        // Read first: the roster is applied again every half minute, and mostly changes nothing.
        guard try !read("reading who has the roster's devices", { db in try Self.rosterChanges(entries, db) }).isEmpty else { return [] }
        return try write("applying the hub's roster") { db in
            let changes = try Self.rosterChanges(entries, db)
            for entry in changes {
                // Looked up again: an earlier entry may have added them.
                let person = try Self.person(named: entry.person, db) ?? Self.addPerson(name: entry.person, units: nil, at: time, db)
                try db.run("UPDATE device SET person = ? WHERE address = ?", [person.id, entry.address])
            }
            return changes
        }
    }

    /// The entries whose device is paired here and is not yet their person's (found by name as
    /// `person(named:)` finds them; someone not known here yet has none).
    private static func rosterChanges(_ entries: [RosterEntry], _ db: SQLiteConnection) throws -> [RosterEntry] {
        try entries.filter { entry in
            guard let owner = try db.first("SELECT person FROM device WHERE address = ?", [entry.address], { row -> Int64? in row[0] }) else {
                return false
            }
            // Someone not known here yet owns nothing here.
            return try person(named: entry.person, db).map { $0.id != owner } ?? true
        }
    }
}

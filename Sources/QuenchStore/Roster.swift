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
        let owners = try read("reading who has the roster's devices") { db in
            try Dictionary(entries.compactMap { entry -> (String, String?)? in
                guard let owner = try db.first("SELECT p.name FROM device d LEFT JOIN person p ON p.id = d.person WHERE d.address = ?",
                                               [entry.address], { row -> String? in row[0] }) else { return nil }
                return (entry.address, owner)
            }, uniquingKeysWith: { a, _ in a })
        }
        guard entries.contains(where: { entry in owners[entry.address].map { $0?.lowercased() != entry.person.lowercased() } ?? false }) else { return [] }
        return try write("applying the hub's roster") { db in
            var changed: [RosterEntry] = []
            for entry in entries {
                guard let owner = try db.first("SELECT person FROM device WHERE address = ?", [entry.address], { row -> Int64? in row[0] }) else {
                    continue
                }
                let person = try Self.person(named: entry.person, db) ?? Self.addPerson(name: entry.person, units: nil, at: time, db)
                guard owner != person.id else { continue }
                try db.run("UPDATE device SET person = ? WHERE address = ?", [person.id, entry.address])
                changed.append(entry)
            }
            return changed
        }
    }
}

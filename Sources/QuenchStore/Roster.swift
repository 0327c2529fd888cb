import QuenchCore

/// One line of a hub's roster: who drinks from the bottle or scale at `address`
/// (docs/hub.md, "People and devices are the hub's").
public struct RosterEntry: Sendable, Hashable, Codable {
    public var address: String
    /// The person's name: a gateway that does not know them yet adds them by it.
    public var person: String
    /// The person's id at the hub (`person_id`; a hub before 2026-11-29 sent none): a gateway
    /// keeps it with the person, so a rename at the hub renames them there too.
    public var personId: Int64?

    public init(address: String, person: String, personId: Int64? = nil) {
        self.address = address
        self.person = person
        self.personId = personId
    }
}

/// What applying the hub's roster changed at a gateway.
public struct RosterApplied: Sendable, Hashable {
    /// The entries whose device was given to their person here.
    public var devices: [RosterEntry] = []
    /// People the hub renamed, renamed here: the name before, and after.
    public var renamed: [PersonRename] = []
    /// People here now known by their hub id (matched by name, or added).
    public var linked = 0

    public init() {}
    public var isEmpty: Bool { devices.isEmpty && renamed.isEmpty && linked == 0 }
}

public struct PersonRename: Sendable, Hashable {
    public var from: String
    public var to: String
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

    /// At the hub: the roster, by address, with each person's id.
    public func roster() throws(StoreError) -> [RosterEntry] {
        try read("reading the roster") { db in
            try db.all("SELECT r.address, p.name, p.id FROM hub_roster r JOIN person p ON p.id = r.person ORDER BY r.address") { row in
                RosterEntry(address: row[0], person: row[1], personId: row[2])
            }
        }
    }

    /// At a gateway: the hub's roster applied, in one transaction. A person the hub's id was
    /// linked to here is that person, renamed if the hub renamed them (unless someone else here
    /// keeps the new name: then they keep theirs; two the hub swapped swap here too); else the
    /// person of that name, linked to the id now; else, for a device paired here, someone new. A device the roster names
    /// goes to its person (its next events are theirs). Devices the roster does not name keep their
    /// owner, and entries for devices not paired here give nothing. Returns what changed.
    public func applyRoster(_ entries: [RosterEntry], at time: Timestamp) throws(StoreError) -> RosterApplied {
        for entry in entries { try checkName(entry.person) }
        // Read first: the roster is applied again every half minute, and mostly changes nothing.
        guard try !read("reading who has the roster's devices", { db in try Self.applyRoster(entries, at: time, db, writing: false) }).isEmpty else {
            return RosterApplied()
        }
        return try write("applying the hub's roster") { db in try Self.applyRoster(entries, at: time, db, writing: true) }
    }

    /// The roster's work; without `writing`, what it would change (for a read).
    private static func applyRoster(_ entries: [RosterEntry], at time: Timestamp, _ db: SQLiteConnection, writing: Bool) throws -> RosterApplied {
        var applied = RosterApplied()
        applied.renamed = try renamesAtTheHub(entries, db, writing: writing)
        for entry in entries {
            var person: Person?
            if let hubID = entry.personId, let linked = try Self.person(linkedTo: hubID, db) {
                person = linked
            } else if let named = try Self.person(named: entry.person, db) {
                person = named
                let linkedTo = try db.first("SELECT hub_person FROM person WHERE id = ?", [named.id]) { row -> Int64? in row[0] } ?? nil
                if let hubID = entry.personId, linkedTo == nil {
                    if writing { try link(named.id, to: hubID, db) }
                    applied.linked += 1
                }
            }
            guard let owner = try db.first("SELECT person FROM device WHERE address = ?", [entry.address], { row -> Int64? in row[0] }) else {
                continue  // not paired here
            }
            if person == nil {
                // Someone not known here yet, for a device paired here.
                if writing {
                    let added = try Self.addPerson(name: entry.person, units: nil, at: time, db)
                    if let hubID = entry.personId { try link(added.id, to: hubID, db) }
                    person = added
                } else {
                    applied.devices.append(entry)
                    continue
                }
            }
            guard let person, person.id != owner else { continue }
            if writing { try db.run("UPDATE device SET person = ? WHERE address = ?", [person.id, entry.address]) }
            applied.devices.append(entry)
        }
        return applied
    }

    /// Whether the hub's roster linked the person `id` here to someone at the hub.
    public func isLinkedToHub(person id: Int64) throws(StoreError) -> Bool {
        try read("reading whether someone is the hub's") { db in
            ((try db.first("SELECT hub_person FROM person WHERE id = ?", [id]) { row -> Int64? in row[0] }) ?? nil) != nil
        }
    }

    /// The person here the hub's id `hubID` was linked to, if any.
    private static func person(linkedTo hubID: Int64, _ db: SQLiteConnection) throws -> Person? {
        try db.first("SELECT \(personColumns) FROM person WHERE hub_person = ?", [hubID], Self.person)
    }

    /// Links the person `id` here to the hub's id `hubID`.
    private static func link(_ id: Int64, to hubID: Int64, _ db: SQLiteConnection) throws {
        try db.run("UPDATE person SET hub_person = ? WHERE id = ?", [hubID, id])
    }

    /// The people linked to a hub id whose name there differs, renamed to it. A name someone
    /// here keeps (not linked, or not renamed away by this roster) blocks the rename, and so
    /// everything waiting on it; the rest move in two steps, through a name nobody types, so
    /// that two the hub swapped (or any cycle of renames) swap here too. Names match as the
    /// store matches them (any case): a change of case alone is a rename too.
    private static func renamesAtTheHub(_ entries: [RosterEntry], _ db: SQLiteConnection, writing: Bool) throws -> [PersonRename] {
        var wanted: [Int64: (person: Person, name: String)] = [:]
        for entry in entries {
            guard let hubID = entry.personId, wanted[hubID] == nil, let linked = try person(linkedTo: hubID, db),
                  linked.name != entry.person else { continue }
            wanted[hubID] = (linked, entry.person)
        }
        // Who holds each wanted name now, and whether they move away from it.
        var moving = Set(wanted.values.map(\.person.id))
        var changed = true
        while changed {
            changed = false
            for (person, name) in wanted.values where moving.contains(person.id) {
                if let holder = try Self.person(named: name, db), holder.id != person.id, !moving.contains(holder.id) {
                    moving.remove(person.id)
                    changed = true
                }
            }
        }
        let renames = wanted.values.filter { moving.contains($0.person.id) }.sorted { $0.person.id < $1.person.id }
        if writing {
            for (person, _) in renames { try db.run("UPDATE person SET name = ? WHERE id = ?", ["\u{1}\(person.id)", person.id]) }
            for (person, name) in renames { try db.run("UPDATE person SET name = ? WHERE id = ?", [name, person.id]) }
            // As a rename here: a gateway's page bookmarked under the name before still finds them (the review).
            try Self.noteRenames(renames.map { (id: $0.person.id, from: $0.person.name, to: $0.name) }, db)
        }
        return renames.map { PersonRename(from: $0.person.name, to: $0.name) }
    }
}

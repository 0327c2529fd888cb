import QuenchCore

/// A claim on a connected bottle as the database keeps it (table `device_claim`): the gateway
/// writes its own (under its database's id), the MQTT publisher sends it and writes the other
/// gateways' as the broker brings them (HandOverRule).
public struct StoredClaim: Sendable, Hashable {
    /// The bottle's address, as devices are keyed.
    public var device: String
    public var claim: DeviceClaim

    public init(device: String, claim: DeviceClaim) {
        self.device = device
        self.claim = claim
    }
}

extension IntakeStore {
    /// Saves a claim on `device`: the gateway's own, or another gateway's as the broker brought it.
    public func saveClaim(device: String, _ claim: DeviceClaim) throws(StoreError) {
        try write("saving a device claim") { db in
            try db.run("""
                INSERT INTO device_claim (device, gateway, rssi, heard_at, holding, at, held_until) VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (device, gateway) DO UPDATE SET rssi = excluded.rssi, heard_at = excluded.heard_at,
                    holding = excluded.holding, at = excluded.at, held_until = excluded.held_until
                """, [device, claim.gateway, claim.rssi.map { min(127, max(-128, $0)) }, claim.heardAt?.secondsSince1970, claim.holding,
                      claim.at.secondsSince1970, claim.heldUntil?.secondsSince1970])
        }
    }

    /// Every claim kept, the gateway's own and the others'.
    public func claims() throws(StoreError) -> [StoredClaim] {
        try read("reading the device claims") { db in
            try db.all("SELECT device, gateway, rssi, heard_at, holding, at, held_until FROM device_claim ORDER BY device, gateway") { row in
                let heard: Double? = row[3], heldUntil: Double? = row[6]
                return StoredClaim(device: row[0], claim: DeviceClaim(gateway: row[1], rssi: row[2], heardAt: heard.map(Timestamp.init(secondsSince1970:)),
                                                                     holding: row[4], at: Timestamp(secondsSince1970: row[5]),
                                                                     heldUntil: heldUntil.map(Timestamp.init(secondsSince1970:))))
            }
        }
    }
}

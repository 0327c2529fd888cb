extension IntakeStore {
    /// SQLite's `data_version`: a number that changes whenever another
    /// connection (another process: the gateway, `quench add`) commits to the
    /// file. Cheap to ask, so a web page can be told of a change within a
    /// fraction of a second by polling it, without a channel between processes.
    public func dataVersion() throws(StoreError) -> Int64 {
        try read("reading the data version") { db in
            try db.first("PRAGMA data_version") { row -> Int64 in row[0] } ?? 0
        }
    }

    /// How many changes were made to what a page or Home Assistant shows (the history, people, goals,
    /// settings, devices, reminders, carers' alerts, the hub's gateways; schema v29): what pages and the
    /// MQTT publisher wait on. A gateway's housekeeping (its detectors' checkpoints, claims, the outbox)
    /// moves `dataVersion` and not this.
    public func shownChanges() throws(StoreError) -> Int64 {
        try read("reading the count of changes shown") { db in
            try db.first("SELECT count FROM shown_change WHERE id = 1") { row -> Int64 in row[0] } ?? 0
        }
    }
}

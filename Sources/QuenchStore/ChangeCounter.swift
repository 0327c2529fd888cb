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
}

/// Expected outputs for `HistorySnapshotTests`.
enum Snapshots {
    static let today = ""
    static let todayOz = ""
    static let log = ""
    static let statsWeek = ""
    static let calendarFebruary = ""
    static let goalShow = ""
    static let recommend = ""
    static let add = ""
    static let undo = ""
    static let restore = ""
}

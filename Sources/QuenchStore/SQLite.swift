import CSQLite
import Synchronization

/// A failure reported by SQLite: its extended result code, its message, and the
/// statement that failed. The store classifies it by `primaryCode`.
public struct SQLiteError: Error, Sendable, CustomStringConvertible {
    /// The extended result code (`sqlite3_extended_errcode`), e.g. 2067 for SQLITE_CONSTRAINT_UNIQUE.
    public var extendedCode: Int32
    public var message: String
    /// The SQL that failed, when one statement did.
    public var sql: String?

    /// The primary result code (SQLITE_FULL, SQLITE_BUSY, …): the low byte of the extended one.
    public var primaryCode: Int32 { extendedCode & 0xFF }
    /// SQLITE_CANTOPEN: a file SQLite needs could not be opened or made.
    var isCannotOpen: Bool { primaryCode == SQLITE_CANTOPEN }

    public var description: String {
        "SQLite error \(extendedCode): \(message)" + (sql.map { " in `\($0)`" } ?? "")
    }
}

/// A value bound to a statement parameter.
protocol SQLiteBindable {
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32
}

/// A value read from a result column.
protocol SQLiteColumnValue {
    static func column(_ statement: OpaquePointer, _ index: Int32) -> Self
}

/// SQLITE_TRANSIENT: SQLite copies the bytes before `bind` returns.
private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

extension Int64: SQLiteBindable, SQLiteColumnValue {
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 { sqlite3_bind_int64(statement, index, self) }
    static func column(_ statement: OpaquePointer, _ index: Int32) -> Int64 { sqlite3_column_int64(statement, index) }
}

extension Int: SQLiteBindable, SQLiteColumnValue {
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 { sqlite3_bind_int64(statement, index, Int64(self)) }
    static func column(_ statement: OpaquePointer, _ index: Int32) -> Int { Int(sqlite3_column_int64(statement, index)) }
}

extension Bool: SQLiteBindable, SQLiteColumnValue {
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 { sqlite3_bind_int64(statement, index, self ? 1 : 0) }
    static func column(_ statement: OpaquePointer, _ index: Int32) -> Bool { sqlite3_column_int64(statement, index) != 0 }
}

extension Double: SQLiteBindable, SQLiteColumnValue {
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 { sqlite3_bind_double(statement, index, self) }
    static func column(_ statement: OpaquePointer, _ index: Int32) -> Double { sqlite3_column_double(statement, index) }
}

extension String: SQLiteBindable, SQLiteColumnValue {
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        // withCString, not withUTF8: "" must bind as an empty text, not as NULL.
        withCString { sqlite3_bind_text(statement, index, $0, Int32(utf8.count), transient) }
    }

    static func column(_ statement: OpaquePointer, _ index: Int32) -> String {
        guard let text = sqlite3_column_text(statement, index) else { return "" }
        let count = Int(sqlite3_column_bytes(statement, index))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }
}

extension Optional: SQLiteBindable where Wrapped: SQLiteBindable {
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        switch self {
        case .some(let value): value.bind(to: statement, at: index)
        case .none: sqlite3_bind_null(statement, index)
        }
    }
}

extension Optional: SQLiteColumnValue where Wrapped: SQLiteColumnValue {
    static func column(_ statement: OpaquePointer, _ index: Int32) -> Wrapped? {
        sqlite3_column_type(statement, index) == SQLITE_NULL ? nil : Wrapped.column(statement, index)
    }
}

/// The current row of a statement being stepped; valid only inside the closure it is passed to.
struct SQLiteRow {
    let statement: OpaquePointer

    subscript<Value: SQLiteColumnValue>(_ index: Int) -> Value { Value.column(statement, Int32(index)) }
}

/// When this process last waited for another process's lock on a database: a thread waiting
/// there (an import holding the write lock for minutes) is waiting, not stuck, and the gateway's
/// watchdog must not have systemd kill it for that (it did after 60 s: the service trial).
public enum LockWaits {
    private static let last = Mutex<ContinuousClock.Instant?>(nil)

    static func note() { last.withLock { $0 = .now } }

    /// Whether some connection of this process waited for another process's lock within `seconds`.
    public static func waited(within seconds: Double) -> Bool {
        last.withLock { $0.map { ContinuousClock.now - $0 < .seconds(seconds) } ?? false }
    }
}

/// One connection to one database file, used by one thread at a time (the store
/// serialises access). Prepared statements are cached by their SQL.
final class SQLiteConnection {
    let handle: OpaquePointer
    private var statements: [String: OpaquePointer] = [:]
    /// Released after the handle is closed (see `OpenDatabaseFiles`).
    private let hold: OpenDatabaseFiles.Hold?

    /// - Parameters:
    ///   - busyTimeout: how long a statement waits for another process's lock, in seconds.
    /// - Parameter immutable: read-only, on a medium nothing can write (SQLite's `immutable=1`): no
    ///   locks and no `-shm` file, which a database in WAL mode otherwise needs even to be read.
    init(path: String, readOnly: Bool, busyTimeout: Double, hold: OpenDatabaseFiles.Hold? = nil, immutable: Bool = false) throws(SQLiteError) {
        self.hold = hold
        var handle: OpaquePointer?
        // FULLMUTEX off: the store serialises access, so SQLite's own locking is wasted work.
        var flags = (readOnly || immutable ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) | SQLITE_OPEN_NOMUTEX
        var name = path
        if immutable {
            // A URI's path: `%`, `?` and `#` are escaped (sqlite.org/uri.html, 3.1).
            let escaped = path.map { c in c == "%" ? "%25" : c == "?" ? "%3f" : c == "#" ? "%23" : String(c) }.joined()
            // An absolute path after an empty authority: `//mnt/q.sqlite` would be read as the authority "mnt".
            name = (path.hasPrefix("/") ? "file://" : "file:") + escaped + "?immutable=1"
            flags |= SQLITE_OPEN_URI
        }
        let status = sqlite3_open_v2(name, &handle, flags, nil)
        guard status == SQLITE_OK, let handle else {
            let error = SQLiteError(
                extendedCode: handle.map(sqlite3_extended_errcode) ?? status,
                message: handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(status)))
            sqlite3_close_v2(handle)
            throw error
        }
        self.handle = handle
        sqlite3_extended_result_codes(handle, 1)
        busyLimit = Int(min(max(busyTimeout, 0) * 1000, Double(Int32.max)))
        // sqlite3_busy_timeout's waits, noted as they happen (`LockWaits`).
        sqlite3_busy_handler(handle, { context, count in
            guard let context else { return 0 }
            return Unmanaged<SQLiteConnection>.fromOpaque(context).takeUnretainedValue().waitOutLock(count: Int(count)) ? 1 : 0
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// How long a statement waits for another process's lock, in milliseconds.
    private let busyLimit: Int
    /// SQLite's own schedule of sleeps while a lock is held (sqliteDefaultBusyCallback), then 100 ms each.
    private static let busySleeps = [1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100]

    /// One more wait for another process's lock, the `count`-th: false once `busyLimit` is spent.
    private func waitOutLock(count: Int) -> Bool {
        let sleeps = Self.busySleeps
        let slept = count < sleeps.count ? sleeps.prefix(count).reduce(0, +) : sleeps.reduce(0, +) + (count - sleeps.count) * 100
        let sleep = min(count < sleeps.count ? sleeps[count] : 100, busyLimit - slept)
        guard sleep > 0 else { return false }
        LockWaits.note()
        sqlite3_sleep(Int32(sleep))
        return true
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(handle)
    }

    /// Runs one or more statements that take no parameters and return nothing of interest.
    func execute(_ sql: String) throws(SQLiteError) {
        var message: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(handle, sql, nil, nil, &message)
        defer { sqlite3_free(message) }
        if status != SQLITE_OK {
            throw SQLiteError(extendedCode: sqlite3_extended_errcode(handle),
                              message: message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(status)), sql: sql)
        }
    }

    /// Runs one statement with `arguments` bound to its parameters, calling `row` for each result row.
    func run(_ sql: String, _ arguments: [any SQLiteBindable] = [], row: (SQLiteRow) throws -> Void = { _ in }) throws {
        let statement = try prepared(sql)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        for (offset, argument) in arguments.enumerated() {
            let status = argument.bind(to: statement, at: Int32(offset + 1))
            if status != SQLITE_OK { throw error(sql) }
        }
        while true {
            switch sqlite3_step(statement) {
            case SQLITE_ROW: try row(SQLiteRow(statement: statement))
            case SQLITE_DONE: return
            default: throw error(sql)
            }
        }
    }

    /// The first row's value from `decode`, or nil when there is no row.
    func first<T>(_ sql: String, _ arguments: [any SQLiteBindable] = [], _ decode: (SQLiteRow) throws -> T) throws -> T? {
        var result: T?
        try run(sql, arguments) { row in
            if result == nil { result = try decode(row) }
        }
        return result
    }

    /// Every row, decoded.
    func all<T>(_ sql: String, _ arguments: [any SQLiteBindable] = [], _ decode: (SQLiteRow) throws -> T) throws -> [T] {
        var results: [T] = []
        try run(sql, arguments) { row in results.append(try decode(row)) }
        return results
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { Int(sqlite3_changes(handle)) }

    var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    /// `immediate` takes the write lock up front (waiting up to the busy timeout), so a
    /// writer never fails halfway on a lock upgrade; readers use a deferred one, which
    /// gives them one consistent snapshot.
    func transaction<T>(immediate: Bool, _ body: () throws -> T) throws -> T {
        try execute(immediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            // A failed COMMIT, or SQLITE_FULL / IOERR mid-statement, may already have
            // rolled back: ask before rolling back again.
            if sqlite3_get_autocommit(handle) == 0 { try? execute("ROLLBACK") }
            throw error
        }
    }

    private func prepared(_ sql: String) throws(SQLiteError) -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK,
              let statement
        else { throw error(sql) }
        statements[sql] = statement
        return statement
    }

    private func error(_ sql: String) -> SQLiteError {
        SQLiteError(extendedCode: sqlite3_extended_errcode(handle), message: String(cString: sqlite3_errmsg(handle)), sql: sql)
    }
}

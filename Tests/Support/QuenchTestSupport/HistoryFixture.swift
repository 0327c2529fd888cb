import Foundation
import Synchronization
import QuenchCore
import QuenchStore
import QuenchHistory

/// A small history in a temporary database, read with a fixed clock and zone:
/// Europe/London, days from 04:00, now = Wednesday 2026-03-04 12:00Z, goal
/// 2 000 mL from 2026-02-01, a scale that last had 350 mL left.
public final class HistoryFixture {
    public let directory: String
    public let path: String
    public static let now = Timestamp(iso8601: "2026-03-04T12:00:00Z")!
    public static let device = "C4:7C:8D:6A:12:34"

    public init(populate: Bool = true) throws {
        directory = try TemporaryFolder.create("quench-history")
        path = directory + "/quench.sqlite"
        guard populate else { return }
        let store = try IntakeStore(path: path)
        try store.setGoal(ml: 2000, from: CivilDay(parsing: "2026-02-01")!, setAt: Self.now)
        try store.saveDevice(Device(address: Self.device, name: "Kitchen scale", profile: "weight-scale", sensor: .weight,
                                    addedAt: Timestamp(iso8601: "2026-02-01T09:00:00Z")!))
        // (local time in London, mL), per day; GMT until the end of March.
        let drinks: [(String, Double)] = [
            ("2026-02-26T09:00:00Z", 700), ("2026-02-26T13:00:00Z", 700), ("2026-02-26T19:00:00Z", 700),
            ("2026-02-27T10:00:00Z", 1000), ("2026-02-27T18:00:00Z", 1000),
            ("2026-02-28T11:00:00Z", 900),
            ("2026-03-01T08:00:00Z", 1200), ("2026-03-01T16:00:00Z", 1000),
            ("2026-03-02T09:00:00Z", 1050), ("2026-03-02T21:00:00Z", 1000),
            ("2026-03-03T08:30:00Z", 1300), ("2026-03-04T01:30:00Z", 1000),  // 01:30 counts for the 3rd
            ("2026-03-04T08:15:00Z", 250), ("2026-03-04T09:40:00Z", 150), ("2026-03-04T11:37:00Z", 100),
        ]
        let recorded = Timestamp(iso8601: "2026-03-04T11:38:00Z")!
        var events = drinks.enumerated().map { i, drink in
            let time = Timestamp(iso8601: drink.0)!
            return IntakeEvent(identity: IntakeEvent.sensorIdentity(device: Self.device, kind: .sip, time: time), kind: .sip,
                               ml: drink.1, time: time, remainingML: i == drinks.count - 1 ? 350 : nil, source: .sensor,
                               device: Self.device, recordedAt: recorded)
        }
        let refill = Timestamp(iso8601: "2026-03-04T08:00:00Z")!
        events.append(IntakeEvent(identity: IntakeEvent.sensorIdentity(device: Self.device, kind: .refill, time: refill),
                                  kind: .refill, ml: 600, time: refill, remainingML: 750, source: .sensor, device: Self.device,
                                  recordedAt: recorded))
        events.append(IntakeEvent(identity: "manual|fixture-1", kind: .sip, ml: 330, time: Timestamp(iso8601: "2026-03-02T12:30:00Z")!,
                                  source: .manual, note: "sparkling, with lunch", recordedAt: recorded))
        try store.insert(events)
    }

    public func environment(units: VolumeUnit? = nil, color: Bool = false, now: Timestamp = HistoryFixture.now) -> HistoryEnvironment {
        HistoryEnvironment(databasePath: path, now: now, timeZone: LocalZone(identifier: "Europe/London")!, units: units, color: color)
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }
}

/// An executable of this package built next to the test bundle, when there is one.
public func builtExecutable(_ name: String) -> String? {
    var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    for _ in 0..<4 {
        url.deleteLastPathComponent()
        let candidate = url.appendingPathComponent(name).path
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    return nil
}

/// The `quench` executable built next to the test bundle, when there is one.
public let quenchBinary = builtExecutable("quench")

public struct ProcessResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
}

/// Runs any program the same way (a script, systemd-analyze) and waits for it.
public func runProgram(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws -> ProcessResult {
    try runQuench(arguments, environment: environment, executable: executable)
}

/// Runs quench (or another of the package's executables) and waits for it.
/// - Parameters:
///   - directory: the folder it runs in (by default this process's).
///   - output: where its standard output goes instead of the result's `stdout` (`/dev/full`).
public func runQuench(_ arguments: [String], environment extra: [String: String] = [:], stdin: String? = nil,
               executable: String? = quenchBinary, directory: String? = nil, output: FileHandle? = nil) throws -> ProcessResult {
    let process = try startQuench(arguments, environment: extra, stdin: stdin, executable: executable, directory: directory, output: output)
    let (out, err) = (process.standardOutput as? Pipe, process.standardError as! Pipe)
    // Both pipes drained at once: a child filling one while we block on the other would hang.
    let errorsRead = Mutex(Data())
    let stderrDrained = DispatchSemaphore(value: 0)
    let errorHandle = err.fileHandleForReading
    DispatchQueue.global().async {
        let data = errorHandle.readDataToEndOfFile()
        errorsRead.withLock { $0 = data }
        stderrDrained.signal()
    }
    let printed = out?.fileHandleForReading.readDataToEndOfFile() ?? Data()
    stderrDrained.wait()
    process.waitUntilExit()
    let errors = errorsRead.withLock { $0 }
    return ProcessResult(status: process.terminationStatus, stdout: String(decoding: printed, as: UTF8.self),
                         stderr: String(decoding: errors, as: UTF8.self))
}

/// Starts `executable` with pipes for its output; `stdin` (when given) is
/// written to its standard input, which is then closed.
public func startQuench(_ arguments: [String], environment extra: [String: String] = [:], stdin: String? = nil,
                 executable: String? = quenchBinary, directory: String? = nil, output: FileHandle? = nil,
                 errorLog: String? = nil) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable!)
    process.arguments = arguments
    if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
    var environment = ProcessInfo.processInfo.environment
    environment["NO_COLOR"] = "1"
    environment["TZ"] = "Europe/London"
    environment.removeValue(forKey: "QUENCH_DB")
    for (k, v) in extra { environment[k] = v }
    process.environment = environment
    process.standardOutput = output ?? Pipe()
    // A log file for a process that runs long: a pipe nobody reads fills at 64 KiB, and its writer stops.
    if let errorLog {
        if !FileManager.default.fileExists(atPath: errorLog) { _ = FileManager.default.createFile(atPath: errorLog, contents: nil) }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: errorLog))
        try handle.seekToEnd()
        process.standardError = handle
    } else {
        process.standardError = Pipe()
    }
    let input = stdin.map { _ in Pipe() }
    if let input { process.standardInput = input }
    try process.run()
    if let input, let stdin {
        try input.fileHandleForWriting.write(contentsOf: Data(stdin.utf8))
        try input.fileHandleForWriting.close()
    }
    return process
}

/// Starts the store's day twelve hours from now (in `zone`), so that the sips of the last minutes are
/// today's whatever the hour: at the default 04:00, a sip ten minutes ago was yesterday's from 04:00 to
/// 04:10 (CI at 8f5bcf6 ran then).
public func startTheDayTwelveHoursFromNow(_ store: IntakeStore, zone: String = "Europe/London") throws {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: zone) ?? .gmt
    try store.saveSettings(Settings(units: .ml, dayStartHour: (calendar.component(.hour, from: Date()) + 12) % 24, timeZone: nil))
}

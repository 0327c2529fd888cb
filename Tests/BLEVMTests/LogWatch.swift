#if os(Linux)
import Foundation
import Synchronization

/// Conditions on the emulated devices' `--log`s, watched on the host while a VM runs: when one
/// holds, its flag file appears in the work folder and the guest, waiting on it (`awaitFlag`), goes
/// on. The guest polling the logs itself cost the emulated CPU a grep over a growing file and two
/// programs a second, which the gateway under test then lacked (a guest beside five others took
/// 20 s to start a program).
struct LogCondition: Sendable {
    /// The flag file's name, in the work folder.
    let flag: String
    let log: URL
    /// Lines that count towards the condition, and how many are needed.
    var counts: @Sendable (Substring) -> Bool = { _ in false }
    var needed = Int.max
    /// Or: a test on how many lines of the log hold each event (`["acked": 9, "logged": 12,
    /// "lost: bottle memory full": 2, …]`).
    var tally: (@Sendable ([String: Int]) -> Bool)?

    /// At least `count` lines of the log hold `event` (`"event": "end"`, `"event": "acked"`).
    static func events(_ event: String, atLeast count: Int, in log: URL, flag: String) -> LogCondition {
        let marker = "\"event\": \"\(event)\""
        return LogCondition(flag: flag, log: log, counts: { $0.contains(marker) }, needed: count)
    }

    /// At least `count` lines of `quench run --json`'s output (in `log`) are stored events of `type`.
    static func printed(_ type: String, atLeast count: Int, in log: URL, flag: String) -> LogCondition {
        let marker = "{\"type\":\"\(type)\""
        return LogCondition(flag: flag, log: log, counts: { $0.hasPrefix(marker) }, needed: count)
    }

    /// `holds` of the log's event counts (each event's lines so far) is true.
    static func events(in log: URL, flag: String, _ holds: @escaping @Sendable ([String: Int]) -> Bool) -> LogCondition {
        LogCondition(flag: flag, log: log, tally: holds)
    }

    /// A reading at trace time `t` or later has been sent.
    static func sent(atOrAfter t: Double, in log: URL, flag: String) -> LogCondition {
        LogCondition(flag: flag, log: log, counts: { line in
            guard line.contains("\"event\": \"sent\""),
                  let obj = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let sentAt = obj["t"] as? Double else { return false }
            return sentAt >= t
        }, needed: 1)
    }
}

/// Watches the conditions on a thread of its own until each holds or `stop` is called. Each log is
/// read from where the last round stopped: reading the growing logs whole ten times a second cost
/// the host seconds of CPU per test, which the emulated guest beside it then lacked.
final class LogWatch: Sendable {
    private let stopped = Atomic(false)

    init(_ conditions: [LogCondition], in dir: URL) {
        guard !conditions.isEmpty else { return }
        Thread.detachNewThread { [self, conditions] in
            var waiting = conditions.map { (condition: $0, seen: 0) }
            var readers: [URL: LineReader] = [:]
            var tallies: [URL: [String: Int]] = [:]
            while !waiting.isEmpty && !stopped.load(ordering: .relaxed) {
                for log in Set(waiting.map(\.condition.log)) {
                    let reader = readers[log] ?? LineReader(log)
                    readers[log] = reader
                    for line in reader.newLines() {
                        if let event = Self.event(line) { tallies[log, default: [:]][event, default: 0] += 1 }
                        for i in waiting.indices where waiting[i].condition.log == log && waiting[i].condition.counts(line) {
                            waiting[i].seen += 1
                        }
                    }
                }
                waiting.removeAll { entry in
                    let holds = entry.condition.tally.map { $0(tallies[entry.condition.log] ?? [:]) } ?? (entry.seen >= entry.condition.needed)
                    guard holds else { return false }
                    _ = FileManager.default.createFile(atPath: dir.appendingPathComponent(entry.condition.flag).path, contents: nil)
                    return true
                }
                Thread.sleep(forTimeInterval: 0.2)
            }
        }
    }

    func stop() { stopped.store(true, ordering: .relaxed) }

    /// A log line's `"event": "NAME"`; a loss with its reason (`lost: bottle memory full`).
    static func event(_ line: Substring) -> String? {
        guard let name = value("event", in: line) else { return nil }
        return name == "lost" ? value("reason", in: line).map { "lost: " + $0 } ?? name : name
    }

    static func value(_ key: String, in line: Substring) -> String? {
        guard let start = line.range(of: "\"\(key)\": \"") else { return nil }
        let rest = line[start.upperBound...]
        return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
    }
}

/// The complete lines appended to a file since the last call (the file may not exist yet).
private final class LineReader {
    let url: URL
    var offset: UInt64 = 0
    var partial = Data()

    init(_ url: URL) { self.url = url }

    func newLines() -> [Substring] {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return [] }
        defer { try? handle.close() }
        // Emptied for a second run of the case (`runScript` after a guest kernel crash): from the start.
        if let size = try? handle.seekToEnd(), size < offset { offset = 0; partial = Data() }
        guard (try? handle.seek(toOffset: offset)) != nil, let data = try? handle.readToEnd(), !data.isEmpty else { return [] }
        offset += UInt64(data.count)
        partial.append(data)
        guard let lastNewline = partial.lastIndex(of: UInt8(ascii: "\n")) else { return [] }
        let complete = String(decoding: partial[..<lastNewline], as: UTF8.self)
        partial = Data(partial[partial.index(after: lastNewline)...])
        return complete.split(separator: "\n")
    }
}
#endif

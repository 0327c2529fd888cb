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
    let holds: @Sendable (String) -> Bool

    /// At least `count` lines of the log hold `event` (`"event": "end"`, `"event": "acked"`).
    static func events(_ event: String, atLeast count: Int, in log: URL, flag: String) -> LogCondition {
        LogCondition(flag: flag, log: log) { text in
            text.components(separatedBy: "\"event\": \"\(event)\"").count - 1 >= count
        }
    }

    /// A reading at trace time `t` or later has been sent.
    static func sent(atOrAfter t: Double, in log: URL, flag: String) -> LogCondition {
        LogCondition(flag: flag, log: log) { text in
            text.split(separator: "\n").contains { line in
                guard line.contains("\"event\": \"sent\""),
                      let obj = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                      let sentAt = obj["t"] as? Double else { return false }
                return sentAt >= t
            }
        }
    }
}

/// Watches the conditions on a thread of its own until each holds or `stop` is called.
final class LogWatch: Sendable {
    private let stopped = Atomic(false)

    init(_ conditions: [LogCondition], in dir: URL) {
        guard !conditions.isEmpty else { return }
        Thread.detachNewThread { [self, conditions] in
            var waiting = conditions
            while !waiting.isEmpty && !stopped.load(ordering: .relaxed) {
                // Each log read once a round, however many conditions watch it.
                var texts: [URL: String] = [:]
                waiting.removeAll { condition in
                    if texts[condition.log] == nil { texts[condition.log] = try? String(contentsOf: condition.log, encoding: .utf8) }
                    guard let text = texts[condition.log], condition.holds(text) else { return false }
                    FileManager.default.createFile(atPath: dir.appendingPathComponent(condition.flag).path, contents: nil)
                    return true
                }
                Thread.sleep(forTimeInterval: 0.1)
            }
        }
    }

    func stop() { stopped.store(true, ordering: .relaxed) }
}
#endif

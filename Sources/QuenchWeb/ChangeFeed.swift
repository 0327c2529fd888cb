import Synchronization

/// Tells every open page that the history changed: the one place the server
/// fans a change out, fed by its own writes (at once) and by a poll of the
/// store's count of changes shown (changes made by the gateway or `quench add`
/// in other processes; not a gateway's checkpoints and claims).
final class ChangeFeed: Sendable {
    enum Notice: Sendable, Equatable {
        case changed(version: Int64)
        /// Nothing changed for a while: written so a closed connection is noticed, and, an event the page
        /// hears (a comment it does not), so a page notices a stream fallen silent (a Pi switched off).
        case heartbeat
    }

    private struct State {
        var next = 0
        var subscribers: [Int: AsyncStream<Notice>.Continuation] = [:]
        var version: Int64 = 0
        var finished = false
    }

    private let state = Mutex(State())

    /// A stream of notices until the subscriber goes away.
    func subscribe() -> AsyncStream<Notice> {
        let (stream, continuation) = AsyncStream.makeStream(of: Notice.self, bufferingPolicy: .bufferingNewest(4))
        let id = state.withLock { s -> Int? in
            guard !s.finished else { return nil }
            s.next += 1
            s.subscribers[s.next] = continuation
            return s.next
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Something changed: every page refetches.
    func changed() {
        let (version, subscribers) = state.withLock { s in
            s.version += 1
            return (s.version, Array(s.subscribers.values))
        }
        for subscriber in subscribers { subscriber.yield(.changed(version: version)) }
    }

    func heartbeat() {
        for subscriber in state.withLock({ Array($0.subscribers.values) }) { subscriber.yield(.heartbeat) }
    }

    /// The server is stopping: every live stream ends, and no new one starts.
    func finish() {
        let subscribers = state.withLock { s in
            s.finished = true
            return Array(s.subscribers.values)
        }
        for subscriber in subscribers { subscriber.finish() }
    }

    var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// How many changes have been told: what was made from the history before a change is older.
    var version: Int64 { state.withLock { $0.version } }

    /// One event of the `text/event-stream` (HTML, "Server-sent events").
    static func frame(_ notice: Notice) -> String {
        switch notice {
        case let .changed(version): "event: change\ndata: {\"version\":\(version)}\n\n"
        case .heartbeat: "event: ping\ndata: {}\n\n"
        }
    }
}

#if canImport(Glibc)
import QuenchStore
import Threading

/// A database's role that one process holds at a time (`mqtt`: one publisher; `hub`: one hub),
/// claimed under this process's pid and start time, so one killed with -9 is replaced at once.
public struct RoleHolding: Sendable {
    public let role: String
    public let me: ProcessHolder
    public private(set) var holding = false

    public init(role: String, command: String) {
        self.role = role
        let process = ProcessIdentity.current
        me = ProcessHolder(pid: process.pid, started: process.started, command: command, since: .wallClockNow)
    }

    /// Takes the role in `store`; the process that holds it instead, if one does.
    public mutating func claim(in store: IntakeStore) throws(MQTTSetupError) -> ProcessHolder? {
        guard !holding else { return nil }
        let other: ProcessHolder?
        do { other = try store.claimRole(role, me) { ProcessIdentity.isRunning(pid: $0.pid, started: $0.started) } } catch {
            throw .store("\(error)")
        }
        holding = other == nil
        return other
    }

    public mutating func release(in store: IntakeStore) {
        guard holding else { return }
        holding = false
        try? store.releaseRole(role, me)
    }
}
#endif

import Foundation
import QuenchStore
import Threading

/// A process standing in for a service that holds a role on a database (a gateway's `quenchd`): `/bin/sleep`,
/// recorded as the role's holder by its pid and start time, as the service records itself, and killed (`kill -9`,
/// leaving the role as a crash leaves it) when the test says. Killed at the latest when it is released.
public final class RoleHolderStandIn {
    public let process = Process()
    public let holder: ProcessHolder

    /// Started, and made `role`'s holder in `store`.
    public init(role: String, in store: IntakeStore, command: String = "quenchd") throws {
        process.executableURL = URL(fileURLWithPath: "/bin/sleep")
        process.arguments = ["300"]
        try process.run()
        guard let identity = ProcessIdentity.of(process.processIdentifier) else {
            process.terminate()
            throw CocoaError(.executableLoad)
        }
        holder = ProcessHolder(pid: identity.pid, started: identity.started, command: command, since: .wallClockNow)
        _ = try store.claimRole(role, holder) { _ in false }
    }

    /// As a crash ends it: the role stays recorded, its process gone.
    public func kill9() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    deinit { kill9() }
}

import QuenchCore
import QuenchStore
import Threading

/// `quench mqtt status`: what waits in the outbox, the ids this gateway publishes
/// under (so two gateways can be told apart), who publishes now, and how soon a
/// broker that comes back is reached again.
public struct MQTTStatus: Sendable, Encodable {
    public var enabled: Bool
    public var pending: Int
    public var dropped: Int
    public var bound: Int
    public var oldest: String?
    public var nodeId: String
    /// Where the node id comes from: `mqtt.node_id`, `/etc/machine-id`, `the database`, or `the running publisher`.
    public var nodeIdFrom: String
    public var clientId: String
    public var databaseId: String
    /// The process publishing now (`quench mqtt run (pid 812) since …`), if any.
    public var publisher: String?
    /// The longest wait between connection attempts: the publisher is back at most this long after the broker.
    public var reconnectWithinS: Double

    /// `nodeIDFrom`: where a configured node id was given (`--node-id` on the command line, a file's line).
    public static func read(store: IntakeStore, nodeID configuredNode: String?, nodeIDFrom: String? = nil, clientID configuredClient: String?,
                            maximumBackoff: Double = MQTTSettings.defaultMaximumBackoff) throws(StoreError) -> MQTTStatus {
        let s = try store.outboxStatus()
        let identity = try store.mqttIdentity()
        var (node, from) = NodeID.resolve(configured: configuredNode, database: identity.nodeID)
        if configuredNode != nil, let nodeIDFrom { from = nodeIDFrom }
        let running = try store.roleHolder(MQTTPublisher.role).flatMap { ProcessIdentity.isRunning(pid: $0.pid, started: $0.started) ? $0 : nil }
        let holder = running.map { "\($0.command) (pid \($0.pid)) since \($0.since.iso8601)" }
        // Nothing configured here, and a publisher running under a node id of its own (`--node-id gwb`): its, not the
        // machine's id it would take (a carer's trial read 3716191affd8 beside a publisher that said gwb).
        // (`run` alone notes its node: a `sync` or `retire` holding the role is not that publisher.)
        if configuredNode == nil, running?.command.hasPrefix("quench mqtt run") == true, let published = identity.publishedNode, published != node {
            (node, from) = (published, "the running publisher")
        }
        return MQTTStatus(enabled: s.enabled, pending: s.pending, dropped: s.dropped, bound: s.bound, oldest: s.oldest?.iso8601,
                          nodeId: node, nodeIdFrom: from,
                          clientId: configuredClient ?? MQTTSettings.defaultClientID(nodeID: node, databaseID: identity.databaseID),
                          databaseId: identity.databaseID, publisher: holder, reconnectWithinS: maximumBackoff)
    }

    public var text: String {
        var lines: [String] = []
        if !enabled {
            lines.append("MQTT publishing was never started on this database (`quench mqtt run` or `sync` starts the outbox)")
        } else {
            lines.append("\(pending) change\(pending == 1 ? "" : "s") waiting" + (oldest.map { ", the oldest from \($0)" } ?? "")
                         + "; at most \(bound) kept" + (dropped > 0 ? "; \(dropped) dropped when it was full" : ""))
        }
        lines.append("node id \(nodeId) (from \(nodeIdFrom)), client id \(clientId), database id \(databaseId)")
        lines.append(publisher.map { "published by \($0)" } ?? "no publisher running")
        lines.append("after a broker outage, back within \(maximumBackoffText) s of the broker")
        return lines.joined(separator: "\n")
    }

    private var maximumBackoffText: String { reconnectWithinS.compactDescription }
}

extension NodeID {
    /// The node id in force and where it comes from.
    public static func resolve(configured: String?, database: String) -> (id: String, from: String) {
        if let configured { return (configured, "mqtt.node_id") }
        if let machine = machine() { return (machine, "/etc/machine-id") }
        return (database, "the database")
    }
}

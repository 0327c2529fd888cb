#if canImport(Glibc)
import BluetoothWire
import GATT
import QuenchCore
import QuenchGateway
import QuenchProfiles
import Threading

/// A HidrateSpark in the process, speaking its wire protocol through a real
/// `GATTServer` (the attribute table, the 13-write handshake, `57` to ask and
/// acknowledge, 20-byte frames of either firmware): sips it "detects" are kept
/// in its memory until a central drains them, resent when unacknowledged at a
/// link loss, notified at once when logged while a drained central listens.
/// Its clock can run ahead of ours (legacy frames carry it).
public final class SimulatedHidrateSpark: ATTConnector, Sendable {
    public struct Sip: Sendable, Hashable {
        /// When it was drunk, seconds since 1970 on the true clock.
        public var time: Double
        public var ml: Double
        public init(time: Double, ml: Double) {
            self.time = time
            self.ml = ml
        }
    }

    public let address: BluetoothAddress
    public let layout: HidrateSparkLayout
    public let capacityML: Double
    /// Seconds the bottle's clock runs ahead of the true one.
    public let clockAhead: Double
    /// Sips kept until drained; the oldest is dropped beyond it.
    public let memory: Int
    /// A new connection finds the link state of the last (the handshake, a
    /// record awaiting acknowledgement), as when the kernel kept the LE link
    /// up for a moment after a central's socket closed.
    public let linkOutlivesSockets: Bool
    private let database: GATTDatabase
    private let handles: (sip: UInt16, debug: UInt16, setPoint: UInt16, sipConfiguration: UInt16)

    private struct Kept {
        var sip: Sip
        var totalML: UInt16
    }

    private struct State {
        var kept: [Kept] = []
        var totalML: UInt16 = 0
        var link: (server: GATTServer, bearer: DescriptorBearer)?
        var handshakeStep = 0
        /// A record was sent and awaits its acknowledgement.
        var awaitingAck = false
        var acknowledged = 0
        var lost = 0
        var connects = 0
        /// What reads of the sip characteristic return: the frame sent last.
        var lastFrame = HidrateSparkFrame(pending: 0, totalML: 0, record: nil).encoded()
    }
    private let state = Condition(State())

    public init(address: BluetoothAddress, layout: HidrateSparkLayout, capacityML: Double = HidrateSpark.defaultCapacityML,
                clockAhead: Double = 0, memory: Int = 200, linkOutlivesSockets: Bool = false, kept sips: [Sip] = []) {
        self.linkOutlivesSockets = linkOutlivesSockets
        self.address = address
        self.layout = layout
        self.capacityML = capacityML
        self.clockAhead = clockAhead
        self.memory = memory
        let notifyWrite: GATTCharacteristicProperties = [.read, .write, .notify]
        var reference = [
            GATTCharacteristicDefinition(uuid: HidrateSpark.debugCharacteristic, properties: [.write, .notify]),
            GATTCharacteristicDefinition(uuid: HidrateSpark.setPointCharacteristic, properties: [.write]),
        ]
        var services: [GATTServiceDefinition] = [.genericAccess(deviceName: "h2o-3F2A")]
        if layout == .legacy {
            reference.append(GATTCharacteristicDefinition(uuid: HidrateSpark.dataPointCharacteristic, properties: notifyWrite))
        }
        services.append(GATTServiceDefinition(uuid: HidrateSpark.referenceService, characteristics: reference))
        if layout == .modern {
            services.append(GATTServiceDefinition(uuid: HidrateSpark.userDataService, characteristics: [
                GATTCharacteristicDefinition(uuid: HidrateSpark.userDataCharacteristic, properties: notifyWrite)]))
        }
        services.append(GATTServiceDefinition(uuid: HidrateSpark.batteryService, characteristics: [
            GATTCharacteristicDefinition(uuid: HidrateSpark.batteryLevelCharacteristic, properties: [.read], value: [87])]))
        database = GATTDatabase(services: services)
        // The table is built just above with these characteristics.
        let sip = database.valueHandle(service: layout.sipService, characteristic: layout.sipCharacteristic)!
        let configuration = database.attributes.first { $0.handle > sip && $0.type == GATTAttributeType.clientCharacteristicConfiguration }!
        handles = (sip, database.valueHandle(service: HidrateSpark.referenceService, characteristic: HidrateSpark.debugCharacteristic)!,
                   database.valueHandle(service: HidrateSpark.referenceService, characteristic: HidrateSpark.setPointCharacteristic)!,
                   configuration.handle)
        for sip in sips { log(sip) }
    }

    /// Records acknowledged by a central (and forgotten) / dropped from a full memory.
    public var acknowledged: Int { state.withLock { $0.acknowledged } }
    public var lost: Int { state.withLock { $0.lost } }
    public var keptCount: Int { state.withLock { $0.kept.count } }
    public var connects: Int { state.withLock { $0.connects } }
    public var isConnected: Bool { state.withLock { $0.link != nil } }

    /// The bottle detects a sip: the cap opens and closes (DEBUG notifications),
    /// the sip is kept, and notified at once when a drained central listens.
    public func log(_ sip: Sip) {
        if let server = state.withLock({ $0.handshakeStep == HidrateSpark.handshake.count ? $0.link?.server : nil }) {
            for message in [HidrateSparkDebugMessage.capOpened, HidrateSparkDebugMessage.capClosed] {
                _ = try? server.updateValue(message, handle: handles.debug)
            }
        }
        let notify = state.changing { s -> (GATTServer, [UInt8])? in
            s.totalML &+= UInt16(clamping: Int(saturating: sip.ml.rounded()))
            s.kept.append(Kept(sip: sip, totalML: s.totalML))
            if s.kept.count > memory { s.kept.removeFirst(); s.lost += 1 }
            guard let link = s.link, s.handshakeStep == HidrateSpark.handshake.count, !s.awaitingAck,
                  !link.server.configuration(valueHandle: handles.sip).isEmpty else { return nil }
            s.awaitingAck = true
            s.lastFrame = frame(for: s.kept.first, count: s.kept.count, total: s.totalML, now: Timestamp.wallClockNow.secondsSince1970)
            return (link.server, s.lastFrame)
        }
        if let (server, bytes) = notify { _ = try? server.updateValue(bytes, handle: handles.sip) }
    }

    /// The link drops: the handshake is forgotten, an unacknowledged record stays.
    public func dropLink() {
        state.changing { s in
            s.link?.bearer.interrupt()
            s.link = nil
        }
    }

    public func connect(to device: LiveDevice, timeout: Double, stop: StopSignal) throws(LiveError) -> any ATTBearer {
        let pair: (client: DescriptorBearer, server: DescriptorBearer)
        do { pair = try DescriptorBearer.makePair(wakeup: stop.bluetooth?.fileDescriptor) } catch { throw .gatt(.bearer(error)) }
        let server = GATTServer(database: database, bearer: pair.server) { [self] handle, value in written(handle, value) }
        // Reads return the frame sent last, whichever connection it went to.
        _ = try? server.updateValue(state.withLock { $0.lastFrame }, handle: handles.sip)
        state.changing { s in
            s.link?.bearer.interrupt()
            s.link = (server, pair.server)
            if !linkOutlivesSockets {
                s.handshakeStep = 0
                s.awaitingAck = false
            }
            s.connects += 1
        }
        _ = WorkerThread(name: "hidrate-spark \(address)") { [self] in
            _ = try? server.run()
            pair.server.close()
            state.changing { s in if s.link?.server === server { s.link = nil } }
        }
        return pair.client
    }

    /// What the central wrote: the handshake, step by step, or `57` on the sip characteristic.
    private func written(_ handle: UInt16, _ value: [UInt8]) {
        let now = Timestamp.wallClockNow.secondsSince1970
        let reply = state.changing { s -> (GATTServer, [UInt8])? in
            guard let link = s.link else { return nil }
            // A subscription once handshaken is greeted with an empty frame too (then reads return it).
            if handle == handles.sipConfiguration, value != [0, 0], s.handshakeStep == HidrateSpark.handshake.count {
                s.lastFrame = frame(for: nil, count: 0, total: s.totalML, now: now)
                return (link.server, s.lastFrame)
            }
            if s.handshakeStep < HidrateSpark.handshake.count {
                let expected = HidrateSpark.handshake[s.handshakeStep]
                let target = expected.target == .debug ? handles.debug : handles.setPoint
                s.handshakeStep = handle == target && value == expected.bytes ? s.handshakeStep + 1 : 0
                // Handshaken and subscribed: the bottle greets with an empty frame.
                guard s.handshakeStep == HidrateSpark.handshake.count else { return nil }
                s.lastFrame = frame(for: nil, count: 0, total: s.totalML, now: now)
                return (link.server, s.lastFrame)
            }
            guard handle == handles.sip, value == HidrateSpark.drainRequest else { return nil }
            if s.awaitingAck, !s.kept.isEmpty {
                s.kept.removeFirst()
                s.acknowledged += 1
            }
            s.awaitingAck = !s.kept.isEmpty
            s.lastFrame = frame(for: s.kept.first, count: s.kept.count, total: s.kept.first?.totalML ?? s.totalML, now: now)
            return (link.server, s.lastFrame)
        }
        if let (server, bytes) = reply { _ = try? server.updateValue(bytes, handle: handles.sip) }
    }

    private func frame(for kept: Kept?, count: Int, total: UInt16, now: Double) -> [UInt8] {
        let pending = UInt8(clamping: kept == nil ? 0 : count)
        guard let kept else { return HidrateSparkFrame(pending: 0, totalML: total, record: nil).encoded() }
        let record: HidrateSparkFrame.Record
        switch layout {
        case .legacy:
            record = .legacy(type: .sip, bottleTime: UInt32(clamping: Int(saturating: (kept.sip.time + clockAhead).rounded())),
                             ml: UInt16(clamping: Int(saturating: kept.sip.ml.rounded())))
        case .modern:
            record = .modern(percent: UInt8(clamping: max(1, Int(saturating: (kept.sip.ml / capacityML * 100).rounded()))),
                             secondsAgo: UInt32(clamping: max(0, Int(saturating: (now - kept.sip.time).rounded()))))
        }
        return HidrateSparkFrame(pending: pending, totalML: kept.totalML, record: record).encoded()
    }
}
#endif

#if os(Linux)
import Glibc
import CBlueZ
import BluetoothWire
import Threading

/// How to scan for LE advertisements.
public struct ScanOptions: Sendable, Hashable {
    /// Which kernel interface to scan through.
    public enum Method: Sendable, Hashable {
        /// Management discovery, falling back to raw HCI when it fails.
        case automatic
        /// mgmt Start Discovery: coexists with bluetoothd; needs CAP_NET_ADMIN.
        case management
        /// Raw HCI LE scan commands: needs CAP_NET_RAW and an otherwise idle scanner.
        case rawHCI
    }

    /// The adapter index (`hci0` = 0); nil for the first the kernel lists.
    public var adapter: UInt16?
    public var method: Method
    /// Raw HCI only: send scan requests (active) or just listen (passive).
    /// Management discovery is always active.
    public var active: Bool
    /// Raw HCI only: use the LE Set Extended Scan commands (BT 5 controllers).
    public var extendedCommands: Bool

    public init(adapter: UInt16? = nil, method: Method = .automatic, active: Bool = false, extendedCommands: Bool = false) {
        self.adapter = adapter
        self.method = method
        self.active = active
        self.extendedCommands = extendedCommands
    }
}

/// A running LE scan on one adapter, through mgmt discovery or raw HCI, read
/// one `AdvertisingReport` at a time. Duplicate reports are not filtered.
/// Use from one thread; `BluetoothCancellation` stops a waiting `next` from any.
public final class ScanSession {
    public enum Method: Sendable, Hashable { case management, rawHCI }

    enum Backend {
        case management(ManagementSocket, ownsDiscovery: Bool)
        case rawHCI(RawHCISocket, extended: Bool)
    }

    public let adapter: UInt16
    private var backend: Backend
    private var queue: [AdvertisingReport] = []
    private let cancellation: BluetoothCancellation?
    private var stopped = false
    /// Management discovery: when to ask for it again unless a sign that it runs comes first
    /// (a report, or a Discovering event). Nothing heard for `quietRetry`, it may be off: its
    /// start was refused as busy (someone else's runs, or the kernel was busy for now), or its
    /// end went unnoticed. A gateway frozen for 12 s while discovering never heard a broadcast
    /// scale again without this (FrozenGatewayVMTests), nor did a starved CI guest (2026-11-28).
    private var askAt: ContinuousClock.Instant?
    static let quietRetry = Duration.seconds(2)

    public var method: Method {
        switch backend {
        case .management: .management
        case .rawHCI: .rawHCI
        }
    }

    private init(adapter: UInt16, backend: Backend, cancellation: BluetoothCancellation?) {
        self.adapter = adapter
        self.backend = backend
        self.cancellation = cancellation
        if case .management = backend { askAt = .now + Self.quietRetry }
    }

    /// Brings the adapter up if needed and starts scanning. With `.automatic`,
    /// a failure of management discovery (no CAP_NET_ADMIN, say) falls back to
    /// raw HCI; when both fail the error carries both causes.
    public static func start(_ options: ScanOptions = ScanOptions(),
                             cancellation: BluetoothCancellation? = nil) throws(BluetoothLinuxError) -> ScanSession {
        let index = try BluetoothAdapter.resolve(options.adapter)
        switch options.method {
        case .management:
            return try startManagement(index, cancellation)
        case .rawHCI:
            return try startRaw(index, options, cancellation)
        case .automatic:
            let managementError: BluetoothLinuxError
            do throws(BluetoothLinuxError) {
                return try startManagement(index, cancellation)
            } catch {
                managementError = error
            }
            do throws(BluetoothLinuxError) {
                return try startRaw(index, options, cancellation)
            } catch {
                throw .scanUnavailable(management: managementError, rawHCI: error)
            }
        }
    }

    private static func startManagement(_ index: UInt16, _ c: BluetoothCancellation?) throws(BluetoothLinuxError) -> ScanSession {
        let mgmt = try ManagementSocket()
        let owns = try startDiscovery(mgmt, index)
        return ScanSession(adapter: index, backend: .management(mgmt, ownsDiscovery: owns), cancellation: c)
    }

    /// Starts LE discovery; false when refused as busy: a discovery runs (bluetoothd's,
    /// whose Device Found events every mgmt socket receives too, or ours), or the kernel
    /// is busy for now (`askAt` asks again).
    private static func startDiscovery(_ mgmt: ManagementSocket, _ index: UInt16) throws(BluetoothLinuxError) -> Bool {
        do throws(BluetoothLinuxError) {
            try mgmt.execute(.startDiscovery(MgmtIndex(index), .le))
            return true
        } catch {
            if case .management(_, _, .busy) = error { return false }
            throw error
        }
    }

    private static func startRaw(_ index: UInt16, _ options: ScanOptions, _ c: BluetoothCancellation?) throws(BluetoothLinuxError) -> ScanSession {
        let hci = try RawHCISocket(adapter: index)
        let type: LEScanType = options.active ? .active : .passive
        // Duplicate filtering off: a broadcast scale's new readings must not be hidden.
        if options.extendedCommands {
            try hci.execute(LESetExtendedScanParameters(le1M: .init(scanType: type)).command)
            try hci.execute(LESetExtendedScanEnable(enable: true, filterDuplicates: false).command)
        } else {
            try hci.execute(LESetScanParameters(scanType: type).command)
            try hci.execute(LESetScanEnable(enable: true, filterDuplicates: false).command)
        }
        return ScanSession(adapter: index, backend: .rawHCI(hci, extended: options.extendedCommands), cancellation: c)
    }

    /// The next report; nil when the deadline passes first. Throws `.cancelled`
    /// when the session's cancellation fires.
    public func next(until deadline: ContinuousClock.Instant) throws(BluetoothLinuxError) -> AdvertisingReport? {
        while true {
            if !queue.isEmpty { return queue.removeFirst() }
            switch backend {
            case .management(let mgmt, _):
                if let due = askAt, ContinuousClock.now >= due {
                    try askForDiscovery(mgmt, ended: false)
                }
                guard let packet = try mgmt.nextEvent(until: askAt.map { min($0, deadline) } ?? deadline, cancellation: cancellation) else {
                    if ContinuousClock.now < deadline { continue }
                    return nil
                }
                guard packet.index.rawValue == adapter else { continue }
                switch packet.event {
                case .deviceFound(let found):
                    askAt = .now + Self.quietRetry
                    if let report = AdvertisingReport(found) { return report }
                case .discovering(let d) where !d.isDiscovering && !stopped:
                    // The kernel ends LE discovery after about 10 s: start it again.
                    try askForDiscovery(mgmt, ended: true)
                case .discovering:
                    // Someone's discovery runs (ours, or bluetoothd's): its reports reach this socket too.
                    askAt = .now + Self.quietRetry
                default:
                    continue
                }
            case .rawHCI(let hci, _):
                guard let event = try hci.nextEvent(until: deadline, cancellation: cancellation) else { return nil }
                queue.append(contentsOf: AdvertisingReport.reports(in: event))
            }
        }
    }

    /// Starts discovery: again after one `ended`, or after `quietRetry` without a sign of it.
    /// Refused as busy after an end, the discovery that runs is not ours to stop; after a quiet
    /// spell it may be ours still. Either way it is asked again after another `quietRetry`.
    private func askForDiscovery(_ mgmt: ManagementSocket, ended: Bool) throws(BluetoothLinuxError) {
        let started = try Self.startDiscovery(mgmt, adapter)
        if case .management(_, let owned) = backend {
            backend = .management(mgmt, ownsDiscovery: started || (owned && !ended))
        }
        askAt = .now + Self.quietRetry
    }

    /// Stops scanning (best effort: the adapter may already be gone).
    public func stop() {
        guard !stopped else { return }
        stopped = true
        switch backend {
        case .management(let mgmt, let owns):
            if owns { _ = try? mgmt.execute(.stopDiscovery(MgmtIndex(adapter), .le)) }
            mgmt.close()
        case .rawHCI(let hci, let extended):
            let disable = extended ? LESetExtendedScanEnable(enable: false, filterDuplicates: false).command
                                   : LESetScanEnable(enable: false, filterDuplicates: false).command
            _ = try? hci.execute(disable)
            hci.close()
        }
    }

    deinit { stop() }
}

/// Scanning as an asynchronous sequence.
public enum Scanner {
    /// Advertising reports until `timeout` seconds pass (nil: until the
    /// consumer stops iterating). The scan runs on its own thread, blocked in
    /// poll, and stops when the sequence ends or its task is cancelled.
    /// Errors are `BluetoothLinuxError`.
    public static func reports(_ options: ScanOptions = ScanOptions(),
                               timeout: Double? = nil) -> AsyncThrowingStream<AdvertisingReport, any Error> {
        AsyncThrowingStream { continuation in
            let cancellation: BluetoothCancellation
            do throws(BluetoothLinuxError) {
                cancellation = try BluetoothCancellation()
            } catch {
                continuation.finish(throwing: error)
                return
            }
            continuation.onTermination = { _ in cancellation.cancel() }
            let end = timeout.map { deadline(after: $0) } ?? ContinuousClock.now.advanced(by: .seconds(Int64(Int32.max)))
            // Its own thread, so a blocking poll never occupies one of the few threads of Swift's cooperative pool.
            _ = WorkerThread(name: "scan stream") {
                do throws(BluetoothLinuxError) {
                    let session = try ScanSession.start(options, cancellation: cancellation)
                    defer { session.stop() }
                    while let report = try session.next(until: end) {
                        if case .terminated = continuation.yield(report) { break }
                    }
                    continuation.finish()
                } catch {
                    if case .cancelled = error { continuation.finish() } else { continuation.finish(throwing: error) }
                }
            }
        }
    }
}

#endif

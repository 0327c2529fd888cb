import BluetoothWire
import Logging
import QuenchCore
import QuenchProfiles
#if os(Linux)
import BluetoothLinux
import Threading
#endif
import Synchronization

/// A stream of advertising reports: the kernel's scan, or a fake broadcaster in tests.
public protocol AdvertisementSource: AnyObject {
    /// The next report; nil when `deadline` passes first. Throws `LiveError.stopped` once stopped.
    func next(until deadline: ContinuousClock.Instant) throws(LiveError) -> AdvertisingReport?
    func stop()
}

#if os(Linux)
/// A kernel scan (mgmt discovery, else raw HCI with duplicate filtering off).
public final class KernelScan: AdvertisementSource {
    private let session: ScanSession

    public init(_ options: ScanOptions = ScanOptions(), stop: StopSignal) throws(LiveError) {
        do { session = try ScanSession.start(options, cancellation: stop.bluetooth) } catch .cancelled {
            throw .stopped
        } catch {
            throw .bluetooth(error)
        }
    }

    public func next(until deadline: ContinuousClock.Instant) throws(LiveError) -> AdvertisingReport? {
        do { return try session.next(until: deadline) } catch .cancelled {
            throw .stopped
        } catch {
            throw .bluetooth(error)
        }
    }

    public func stop() { session.stop() }
}
#endif

/// Listens to one shared scan for every broadcast device (Mi scales, service-
/// or manufacturer-data profiles), on its own thread: decodes each device's
/// payload, drops repeats of the same frame (scales repeat each reading many
/// times, and the controller may report each advertisement twice), and feeds
/// the device's pipeline. A failed scan is restarted with backoff.
public final class BroadcastListener: Sendable {
    public let pipelines: [BluetoothAddress: DevicePipeline]
    private let makeSource: @Sendable (StopSignal) throws(LiveError) -> any AdvertisementSource
    private let stop: StopSignal
    private let backoff: Backoff
    private let logger: Logger
    private let supervisor: AdapterSupervisor
    /// Connected bottles whose advertising tells which gateway should hold them (nil: none).
    private let handOver: HandOverBoard?
    private let worker = ThreadSlot()
    private struct Seen {
        var repeats: [BluetoothAddress: BroadcastRepeats] = [:]
        var frames = 0
    }
    private let seen = Mutex(Seen())

    public init(pipelines: [DevicePipeline], stop: StopSignal, backoff: Backoff = Backoff(), logger: Logger,
                supervisor: AdapterSupervisor? = nil, handOver: HandOverBoard? = nil,
                source: @escaping @Sendable (StopSignal) throws(LiveError) -> any AdvertisementSource) {
        self.pipelines = Dictionary(pipelines.map { ($0.device.address, $0) }, uniquingKeysWith: { a, _ in a })
        self.makeSource = source
        self.handOver = handOver
        self.stop = stop
        self.backoff = backoff
        self.logger = logger
        self.supervisor = supervisor ?? AdapterSupervisor(control: nil, stop: stop, logger: logger)
    }

    /// New frames fed to pipelines so far.
    public var framesSeen: Int { seen.withLock { $0.frames } }

    public func start() {
        worker.start(name: "broadcast scan") { [self] in run() }
    }

    public func join() { worker.join() }

    /// Handles one report (exposed for tests): true when it fed a new reading.
    @discardableResult
    public func handle(_ report: AdvertisingReport) -> Bool {
        guard let pipeline = pipelines[report.address] else {
            handOver?.heard(report.address.description, rssi: report.rssi)
            return false
        }
        let ad: AdvertisingData
        do { ad = try AdvertisingData(decoding: report.data) } catch {
            logger.debug("advertisement does not decode", metadata: ["device": "\(report.address)", "error": "\(error)"])
            return false
        }
        let profile = pipeline.device.profile
        guard let payload = profile.payload(in: ad) else { return false }
        let identity = profile.payloadIdentity(payload)
        let heard = pipeline.clock.now()
        let isNew = seen.withLock { s -> Bool in
            guard s.repeats[report.address, default: BroadcastRepeats()].isReading(identity, at: heard) else { return false }
            s.frames += 1
            return true
        }
        guard isNew else { return false }
        pipeline.handle(payload: payload)
        return true
    }

    private func run() {
        var backoff = self.backoff
        var attempt = 0
        // Often enough to notice silence in good time; at most every 30 s.
        let silenceCheck = Duration.seconds(min(30, max(0.05, supervisor.policy.quietLimit / 4)))
        while !stop.isStopped {
            do throws(LiveError) {
                let generation = supervisor.discoveryGeneration
                let source = try makeSource(stop)
                defer { source.stop() }
                logger.info("listening for broadcasts", metadata: ["devices": "\(pipelines.keys.sorted().map(\.description).joined(separator: " "))",
                                                                   "hand_over": "\(handOver?.devices.sorted().joined(separator: " ") ?? "")"])
                for p in pipelines.values { p.linkChanged(up: true) }
                attempt = 0
                // Any advertisement, anyone's, shows the adapter works (said at most once a second).
                var lastAlive = ContinuousClock.now - .seconds(2)
                while !stop.isStopped, supervisor.discoveryGeneration == generation {
                    guard let report = try source.next(until: .now + silenceCheck) else {
                        // Silence means a stuck adapter only where broadcasters should be heard: a bottle
                        // scanned for its hand-over is silent while it holds a link.
                        if !pipelines.isEmpty { supervisor.checkSilence() }
                        continue
                    }
                    if ContinuousClock.now - lastAlive >= .seconds(1) {
                        lastAlive = .now
                        supervisor.alive()
                    }
                    handle(report)
                }
            } catch .stopped {
                break
            } catch {
                if stop.isStopped { break }
                supervisor.report(error)
                let delay = backoff.delay(attempt: attempt)
                logger.log(level: RepeatedNotice.worthSaying(occurrence: attempt) ? .warning : .debug, "scan failed; retrying",
                           metadata: ["error": "\(error)", "retry_in_s": "\(TraceWriter.fixed(delay, places: 1))", "attempt": "\(attempt + 1)"])
                attempt += 1
                stop.wait(seconds: delay)
            }
        }
    }
}

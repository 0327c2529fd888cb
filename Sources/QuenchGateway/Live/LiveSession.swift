#if os(Linux)
import BluetoothLinux
import Glibc
import BluetoothWire
import Dispatch
import Logging
import QuenchCore
import QuenchProfiles
import QuenchStore
import Threading

/// Logging for the live commands: swift-log to standard error at `level`
/// (`trace` … `critical`; `QUENCH_LOG` when not given, else `info`).
public enum LiveLogging {
    public static func bootstrap(level: String?) -> Logger {
        let name = level ?? getenv("QUENCH_LOG").map { String(cString: $0) } ?? "info"
        let parsed = Logger.Level(rawValue: name.lowercased()) ?? .info
        LoggingSystem.bootstrap { label in
            var h = StreamLogHandler.standardError(label: label)
            h.logLevel = parsed
            return h
        }
        return Logger(label: "quench")
    }
}

/// SIGINT and SIGTERM as a clean stop: the default action is switched off
/// and the signals handled on a dispatch queue, never interrupting a write.
public final class StopOnSignals: @unchecked Sendable {
    private var sources: [any DispatchSourceSignal] = []

    public init(_ action: @escaping @Sendable (Int32) -> Void) {
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let s = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            s.setEventHandler { action(sig) }
            s.resume()
            sources.append(s)
        }
    }

    deinit { for s in sources { s.cancel() } }
}

/// Writes whole lines to standard output at once (stdout may be a pipe, where
/// `print` would hold them back).
public enum LineOutput {
    private static let lock = ConditionLock()
    public static func write(_ line: String) {
        lock.lock()
        defer { lock.unlock() }
        // A closed stdout must not stop the gateway: the line is dropped.
        try? writeAll(Array((line + "\n").utf8), to: 1)
    }
}

/// One device for a while, without the store: what `watch`, `record` and
/// `calibrate` listen with. Ends after `seconds`, or when `stop` fires (a
/// signal, with `stopOnSignals`); with neither, only a stop ends it.
public enum LiveSession {
    public static func run(_ device: LiveDevice, seconds: Double?, observer: LiveObserver, logger: Logger,
                           options: Gateway.Options = .init(), transport: LiveTransport = .kernel(),
                           stop: StopSignal = StopSignal(), stopOnSignals: Bool = true) -> Gateway {
        let gateway = Gateway(devices: [device], store: nil, options: options, observer: observer, logger: logger,
                              transport: transport, stop: stop)
        let signals = stopOnSignals ? StopOnSignals { _ in gateway.stop() } : nil
        gateway.start()
        gateway.stopSignal.wait(seconds: seconds ?? .infinity)
        gateway.stop()
        gateway.wait()
        _ = signals
        return gateway
    }
}

extension Gateway {
    /// Every paired device (or those named), from the store.
    public static func devices(in store: IntakeStore, only addresses: [String]) throws(LiveError) -> [LiveDevice] {
        let records: [Device]
        do { records = try store.listDevices() } catch { throw .store(error) }
        var chosen = records
        if !addresses.isEmpty {
            chosen = []
            for a in addresses {
                let wanted = BluetoothAddress(a)?.description ?? a
                guard let r = records.first(where: { $0.address == wanted }) else { throw .unknownDevice(a) }
                chosen.append(r)
            }
        }
        guard !chosen.isEmpty else { throw .noDevices }
        var out: [LiveDevice] = []
        for r in chosen { out.append(try LiveDevice(r)) }
        return out
    }
}
#endif

extension Gateway {
    /// What `quench run` (and `quenchd`) does: every chosen device from the
    /// store, events printed as they are stored, until `seconds` pass or
    /// SIGINT/SIGTERM; then pending events are judged and stored.
    public struct RunRequest: Sendable {
        public var databasePath: String
        public var devices: [String] = []
        public var seconds: Double?
        public var json = false
        public var logLevel: String?
        public var options = Gateway.Options()

        public init(databasePath: String) { self.databasePath = databasePath }
    }

    public static func runUntilStopped(_ request: RunRequest) throws {
        let logger = LiveLogging.bootstrap(level: request.logLevel)
        let store: IntakeStore
        do { store = try IntakeStore(path: request.databasePath, mode: .create) } catch { throw LiveError.store(error) }
        let devices = try Gateway.devices(in: store, only: request.devices)
        let json = request.json
        let gateway = Gateway(devices: devices, store: store, options: request.options, observer: LiveObserver(event: { d, e, started in
            LineOutput.write(json ? EventFormat.jsonLine(e, started: started, device: d.label)
                                  : d.label + EventFormat.tableRow(e, started: started))
        }), logger: logger)
        let signals = StopOnSignals { sig in
            logger.notice("signal \(sig): stopping")
            gateway.stop()
        }
        gateway.start()
        gateway.stopSignal.wait(seconds: request.seconds ?? .infinity)
        gateway.stop()
        gateway.wait()
        withExtendedLifetime(signals) {}
    }
}

import Logging
import QuenchGateway
import Synchronization
import Threading

/// One device for a while, without the store: what `watch`, `record` and
/// `calibrate` listen with. Ends after `seconds`, when `endWhen` says so (asked
/// ten times a second), or when `stop` fires (a signal, with `stopOnSignals`);
/// with none of them, only a stop ends it.
public enum LiveSession {
    public static func run(_ device: LiveDevice, seconds: Double?, observer: LiveObserver, logger: Logger,
                           options: Gateway.Options = .init(), transport: LiveTransport,
                           stop: StopSignal = StopSignal(), stopOnSignals: Bool = true,
                           onEvent: EventSubscriber? = nil, endWhen: (() -> Bool)? = nil) -> Gateway {
        let gateway = Gateway(devices: [device], store: nil, options: options, observer: observer, logger: logger,
                              transport: transport, stop: stop)
        if let onEvent { gateway.subscribe(onEvent) }
        let signals = stopOnSignals ? StopSignals.handle { _ in gateway.stop() } : nil
        gateway.run(seconds: seconds, endWhen: endWhen, endCheckInterval: 0.1)
        signals?.cancel()
        return gateway
    }
}

/// Writes whole lines to standard output at once (stdout may be a pipe, where
/// `print` would hold them back), one writer at a time.
public enum LineOutput {
    private static let lock = Mutex(())
    public static func write(_ line: String) {
        lock.withLock { _ in
            // A closed stdout must not stop the tool: the line is dropped.
            try? writeAll(Array((line + "\n").utf8), to: 1)
        }
    }
}

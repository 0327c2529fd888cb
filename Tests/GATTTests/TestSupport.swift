import BluetoothWire
import Dispatch
import Foundation
import GATT
import Synchronization
import QuenchTestSupport
import Testing


/// Shared mutable state for test threads (a class, so closures can capture it).
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func withLock<R: Sendable>(_ body: (inout sending Value) -> sending R) -> R { mutex.withLock(body) }
    var value: Value { mutex.withLock { $0 } }
}

/// Runs `body` on its own thread; `wait` joins it.
final class Background: Sendable {
    private let done = DispatchSemaphore(value: 0)

    init(_ body: @escaping @Sendable () -> Void) {
        let done = self.done
        // A real thread: the bodies block in poll, which would starve Dispatch's small pool.
        Thread.detachNewThread {
            body()
            done.signal()
        }
    }

    /// True when the thread finished within `seconds`.
    @discardableResult
    func wait(seconds: Double = 10) -> Bool {
        done.wait(timeout: .now() + seconds) == .success
    }
}

/// A client and a live `GATTServer` on the two ends of a socketpair, the
/// server serving on its own thread.
final class LivePair {
    let client: GATTClient
    let server: GATTServer
    let serverBearer: DescriptorBearer
    private var serving: Background!
    let serverResult = Locked<BearerError?>(nil)

    init(_ services: [GATTServiceDefinition], maximumMTU: UInt16 = 517, transactionTimeout: Double = 5,
         indicationTimeout: Double = 5,
         upgradeSecurity: (@Sendable (ATTErrorCode) throws(BearerError) -> Void)? = nil,
         onWrite: (@Sendable (UInt16, [UInt8]) -> Void)? = nil) throws {
        let (c, s) = try DescriptorBearer.makePair(upgradeSecurity: upgradeSecurity)
        serverBearer = s
        client = GATTClient(bearer: c, transactionTimeout: transactionTimeout)
        server = GATTServer(database: GATTDatabase(services: services), bearer: s, maximumMTU: maximumMTU,
                            indicationTimeout: indicationTimeout, onWrite: onWrite)
        let server = self.server
        let result = serverResult
        serving = Background {
            do throws(BearerError) { try server.run() } catch { result.withLock { $0 = error } }
        }
    }

    /// Closes the client's end; the server's `run` must then return.
    func finish(sourceLocation: SourceLocation = #_sourceLocation) {
        client.bearer.close()
        #expect(serving.wait(), "server did not stop when the link closed", sourceLocation: sourceLocation)
        #expect(serverResult.withLock { $0 } == nil, sourceLocation: sourceLocation)
        serverBearer.close()
    }
}

/// A scripted peer in the style of BlueZ unit/test-gatt.c: it expects exact
/// PDUs from the client and replies with exact bytes, on its own thread.
final class ScriptedPeer: Sendable {
    enum Step: Sendable {
        /// The next PDU from the client must be exactly these bytes.
        case expect(String)
        case send(String)
        /// Receive one PDU and do not answer it.
        case swallow
        /// Expect silence for this long.
        case silence(Double)
        case close
    }

    let failures = Locked<[String]>([])
    /// Kept open until `finish`, so the client does not see the link end early.
    let bearer: DescriptorBearer
    private let running: Background

    init(bearer: DescriptorBearer, _ steps: [Step]) {
        self.bearer = bearer
        let failures = self.failures
        running = Background {
            func fail(_ text: String) { failures.withLock { $0.append(text) } }
            for (i, step) in steps.enumerated() {
                do {
                    switch step {
                    case .expect(let text):
                        guard let got = try bearer.receive(timeout: 5) else { fail("step \(i): nothing received, expected \(text)"); return }
                        if got != hex(text) { fail("step \(i): received \(got.hexString), expected \(hex(text).hexString)"); return }
                    case .send(let text):
                        try bearer.send(hex(text))
                    case .swallow:
                        guard try bearer.receive(timeout: 5) != nil else { fail("step \(i): nothing to swallow"); return }
                    case .silence(let seconds):
                        if let got = try bearer.receive(timeout: seconds) { fail("step \(i): expected silence, got \(got.hexString)"); return }
                    case .close:
                        bearer.interrupt()
                    }
                } catch {
                    fail("step \(i): \(error)")
                    return
                }
            }
        }
    }

    /// Waits for the script to end and records every mismatch as a test failure.
    func finish(sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(running.wait(), "script did not finish", sourceLocation: sourceLocation)
        bearer.close()
        for f in failures.withLock({ $0 }) { Issue.record(Comment(rawValue: f), sourceLocation: sourceLocation) }
    }
}

/// A client on one end of a socketpair and a scripted peer on the other.
func scripted(_ steps: [ScriptedPeer.Step], transactionTimeout: Double = 5,
              upgradeSecurity: (@Sendable (ATTErrorCode) throws(BearerError) -> Void)? = nil) throws -> (GATTClient, ScriptedPeer) {
    let (c, s) = try DescriptorBearer.makePair(upgradeSecurity: upgradeSecurity)
    return (GATTClient(bearer: c, transactionTimeout: transactionTimeout), ScriptedPeer(bearer: s, steps))
}

/// The database of BlueZ unit/test-gatt.c `make_service_data_1_db`: 0x1801
/// with Device Name "BlueZ" and a User Description, 0x180D with Manufacturer
/// Name String (0x2A29) "BlueZ" and a User Description. Same handles.
let serviceData1: [GATTServiceDefinition] = [
    GATTServiceDefinition(uuid: BluetoothUUID(uuid16: 0x1801), characteristics: [
        GATTCharacteristicDefinition(uuid: BluetoothUUID(uuid16: 0x2A00), properties: .read, value: Array("BlueZ".utf8),
                                     descriptors: [.userDescription("Device Name")]),
    ]),
    GATTServiceDefinition(uuid: BluetoothUUID(uuid16: 0x180D), characteristics: [
        GATTCharacteristicDefinition(uuid: BluetoothUUID(uuid16: 0x2A29), properties: .read, value: Array("BlueZ".utf8),
                                     descriptors: [.userDescription("Manufacturer Name")]),
    ]),
]

/// BlueZ unit/test-gatt.c SERVICE_DATA_1_PDUS (MTU exchange, primary service,
/// characteristic and descriptor discovery), client request then server reply,
/// minus the secondary-service and include probes this client does not make.
let serviceData1PDUs: [(request: String, response: String)] = [
    ("02 0002", "03 0002"),
    ("10 0100 ffff 0028", "11 06 0100 0400 0118"),
    ("10 0500 ffff 0028", "11 06 0500 0800 0d18"),
    ("10 0900 ffff 0028", "01 10 0900 0a"),
    ("08 0100 0400 0328", "09 07 0200 02 0300 002a"),
    ("08 0300 0400 0328", "01 08 0300 0a"),
    ("04 0400 0400", "05 01 0400 0129"),
    ("08 0500 0800 0328", "09 07 0600 02 0700 292a"),
    ("08 0700 0800 0328", "01 08 0700 0a"),
    ("04 0800 0800", "05 01 0800 0129"),
]

#if os(Linux)
import BluetoothWire
import Foundation
import Glibc
import QuenchCore
import QuenchProfiles
import QuenchService
import QuenchSimulatedDevices
import QuenchStore
import QuenchTestSupport
import Testing
import Threading
@testable import QuenchGateway

/// quenchd's first run (`Gateway.serve`): nothing paired is no failure. It says
/// so to systemd and waits; a pairing saved by another process starts the device
/// in the same process, whose sips are then stored.
@Suite("the service before and after its first pairing", .serialized)
struct FirstPairingTests {
    typealias NotifySocket = ServiceNotifierTests.NotifySocket

    /// Messages until one satisfies `done`, or `seconds` pass.
    func receive(_ socket: NotifySocket, within seconds: Double, until done: (String) -> Bool) -> [String] {
        var said: [String] = []
        let end = Date().addingTimeInterval(seconds)
        while Date() < end, !said.contains(where: done) { said += socket.receive(for: 0.1) }
        return said
    }

    @Test("nothing paired: READY=1 with a waiting STATUS; a device paired meanwhile runs at once, its sip stored; STOPPING=1 at the end")
    func waitsThenStartsTheDevicePaired() throws {
        let folder = try TemporaryFolder()
        let socket = try NotifySocket(path: folder.path + "/notify")
        let path = folder.path + "/q.sqlite"
        let address = BluetoothAddress("C8:2A:3F:00:3F:2A")!
        let bottle = SimulatedHidrateSpark(address: address, layout: .legacy)
        var request = Gateway.RunRequest(databasePath: path)
        request.options.connectTimeout = 2
        request.seconds = 40
        let serving = request
        let shutdown = StopSignal()
        let transport = LiveTransport(connector: bottle, advertisements: { _ throws(LiveError) in throw .noDevices })
        let outcome = Condition<Result<Void, LiveError>?>(nil)
        let running = Thread {
            let result = Result { () throws(LiveError) in
                try Gateway.serve(serving, notifier: ServiceNotifier(socketPath: socket.path, watchdogInterval: 1), transport: transport,
                                  shutdown: shutdown, onEvent: { _ in })
            }
            outcome.changing { $0 = result }
        }
        running.start()

        let waiting = receive(socket, within: 5) { $0.hasPrefix("READY=1") }
        #expect(waiting.contains("READY=1\nSTATUS=waiting for a pairing: no paired devices"), "\(waiting)")
        // Still there, and the watchdog fed, while nothing is paired.
        let meanwhile = socket.receive(for: 1.2)
        #expect(meanwhile.contains("WATCHDOG=1") && outcome.withLock { $0 } == nil, "\(meanwhile)")
        // And the gateway runs, as Home Assistant's "Bluetooth gateway" says (it said offline until a pairing).
        #expect(try IntakeStore(path: path, mode: .existing).roleHolder("gateway")?.pid == getpid())

        // `quench pair` saves the device from another process: another connection to the file.
        let pairing = try IntakeStore(path: path, mode: .existing)
        try pairing.saveDevice(Device(address: address.description, profile: ProfileRegistry.identifier(.hidrateSpark),
                                      calibration: try defaultCalibration(for: .hidrateSpark, levelCurve: nil, capacityML: nil, tareG: nil),
                                      addedAt: .wallClockNow, addressType: "public"))
        let started = receive(socket, within: 8) { $0.contains("1 of 1 connected") }
        #expect(started.contains { $0.contains("STATUS=1 of 1 connected") }, "\(started)")

        bottle.log(.init(time: Timestamp.wallClockNow.secondsSince1970 - 5, ml: 40))
        let end = Date().addingTimeInterval(10)
        while Date() < end, (try? pairing.events(EventQuery(limit: 10)))?.isEmpty ?? true { Thread.sleep(forTimeInterval: 0.1) }
        let events = try pairing.events(EventQuery(limit: 10))
        #expect(events.count == 1 && events.first?.device == address.description, "\(events)")

        shutdown.stop()
        // The signal handler stops the running gateway too; here the test stands in for it.
        let last = receive(socket, within: 25) { $0 == "STOPPING=1" }
        #expect(last.last == "STOPPING=1", "\(last)")
        let end2 = Date().addingTimeInterval(25)
        while Date() < end2, outcome.withLock({ $0 }) == nil { Thread.sleep(forTimeInterval: 0.05) }
        #expect(throws: Never.self) { try outcome.withLock { $0 }?.get() }
        #expect(try pairing.roleHolder("gateway") == nil, "let go when it stops")
    }

    @Test("the selection: a configured device not paired and a record without calibration are each a problem, the rest run")
    func selection() throws {
        let t0 = Timestamp(secondsSince1970: 1_795_000_000)
        let calibration = try defaultCalibration(for: .hidrateSpark, levelCurve: nil, capacityML: nil, tareG: nil)
        let records = [Device(address: "C8:2A:3F:00:3F:2A", profile: "hidrate-spark", calibration: calibration, addedAt: t0),
                       Device(address: "C8:2A:3F:00:3F:2B", profile: "hidrate-spark", addedAt: t0)]
        let all = Gateway.usable(records, only: [])
        #expect(all.devices.map(\.label) == ["C8:2A:3F:00:3F:2A"])
        #expect(all.problems.map(\.address) == ["C8:2A:3F:00:3F:2B"] && "\(all.problems[0].error)".contains("no calibration"))
        let named = Gateway.usable(records, only: ["c8:2a:3f:00:3f:2a", "AA:BB:CC:DD:EE:FF"])
        #expect(named.devices.map(\.label) == ["C8:2A:3F:00:3F:2A"])
        #expect(named.problems == [.init(address: "AA:BB:CC:DD:EE:FF", error: .unknownDevice("AA:BB:CC:DD:EE:FF"))])
        #expect(Gateway.waitingStatus(DeviceSelection(), explain: { "\($0)" }) == "waiting for a pairing: no paired devices")
        #expect(Gateway.waitingStatus(named, explain: { "\($0)" }) == "waiting for a usable device: no paired device AA:BB:CC:DD:EE:FF")
    }
}
#endif

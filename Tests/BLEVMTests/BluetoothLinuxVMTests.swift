#if os(Linux)
import Foundation
import QuenchTestSupport
import Testing
import Threading
import BLEVMHarness
import BluetoothWire
import GATT
@testable import BluetoothLinux

// Tests on the real Linux Bluetooth stack: ../shared/ble-vm (beside the
// package) boots a kernel with an emulated controller and peripherals, and
// runs this very test binary inside, filtered to `VMInner` tests. Each outer
// test fails when its inner one fails, and is cancelled (a visible skip) only
// when the harness cannot start: setup.sh fails or run.sh exits 125.

func environment(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }

let insideVM = environment("QUENCH_VM") == "1"

enum BleVM {
    static let packageRoot = TestPackage.root

    /// What one boot gave: the harness's result and how long it took, or why it did not run.
    enum Boot: Sendable {
        case ran(BLEVMHarness.Result, Duration)
        case unavailable(String)
        case failed(String)
    }

    /// Boots a VM with these peripherals and runs the inner `tests` in it, one after the other.
    static func boot(_ tests: [String], controller: String, peripherals: [String]) -> Boot {
        if let reason = BLEVMHarness.unavailableReason(packageRoot: packageRoot) { return .unavailable(reason) }
        do {
            let binary = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
            let start = ContinuousClock.now
            func run() throws -> BLEVMHarness.Result {
                try BLEVMHarness.boot(
                    packageRoot: packageRoot, options: ["--timeout", "240", "--controller", controller], peripherals: peripherals,
                    command: [binary, "--testing-library", "swift-testing", "--filter", "VMInner/(\(tests.joined(separator: "|")))\\(\\)"])
            }
            // These guests end in 15-45 s, a loaded CI machine's in twice that, a starved one's later still (CI of
            // 9f56fa2: the adapter up at 45 s, the two tests not done at 150 s, twice). One that ran out of time had
            // printed nothing (its output is buffered, and lost when it is killed), once in a dozen CI runs at 300 s:
            // it is run once more on a fresh VM, and the first run is said.
            var result = try run()
            if result.status == 124 {
                print("ble-vm \(tests.joined(separator: ", ")) (\(controller)): the guest ran out of time (exit 124)\n\(result.output)\nble-vm: running it once more")
                result = try run()
            }
            let took = ContinuousClock.now - start
            print("ble-vm \(tests.joined(separator: ", ")) (\(controller)): exit \(result.status) after \(took)\n\(result.output)")
            return result.harnessFailed ? .unavailable("the ble-vm harness could not start (exit 125)") : .ran(result, took)
        } catch {
            return .failed("\(error)")
        }
    }

    /// The legacy controller's inner tests share one boot: their devices coexist (the link-loss scale
    /// has an address of its own, and its clock starts only when linkLoss subscribes). The first
    /// outer test to get here boots it; the other reads the same run.
    static let legacyBoot = boot(["legacyController", "linkLoss"], controller: "legacy", peripherals: [
        "--profile weight-scale --value 1.2",
        "--profile level-bottle --random --value 100",
        "--profile weight-scale --addr \(VMInner.linkLossAddress) --trace \(packageRoot.deletingLastPathComponent().path)"
            + "/shared/traces/real/coffee-pot/pot-two-pours-17min.csv --start-on subscribe --drop-at \(VMInner.linkLossDropAt):4",
    ])

    /// Fails the calling test when its inner `test` did not pass in `boot`, cancels it when the harness cannot start.
    static func expectPassed(_ test: String, in boot: Boot) throws {
        switch boot {
        case .unavailable(let reason):
            print("SKIPPED: \(reason)")
            try Test.cancel(Comment(rawValue: reason))
        case .failed(let error):
            Issue.record("the ble-vm harness could not be run: \(error)")
        case .ran(let result, _):
            // A filter that matched nothing would pass vacuously: require the run to name the test as passed.
            // Exit 1 is another inner test's failure, which its own outer test reports.
            #expect(result.output.contains("Test \(test)() passed"), "inner test \(test) did not pass in the VM (exit \(result.status))")
            #expect(result.status == 0 || result.status == 1, "the VM run ended with exit \(result.status)")
        }
    }
}

@Suite("ble-vm", .serialized, .enabled(if: !insideVM, "this is the outer side of the VM tests"))
struct BleVMTests {
    @Test("mgmt and raw HCI scans, ATT over L2CAP, random address, absent device (legacy controller)")
    func legacyController() throws {
        try BleVM.expectPassed("legacyController", in: BleVM.legacyBoot)
    }

    @Test("a dropped link ends the bearer with ETIMEDOUT; reconnecting works")
    func linkLoss() throws {
        try BleVM.expectPassed("linkLoss", in: BleVM.legacyBoot)
    }

    @Test("extended advertising reports and extended scan commands (BT 5 controller)")
    func bt5Controller() throws {
        try BleVM.expectPassed("bt5Controller", in: BleVM.boot(["bt5Controller"], controller: "bt5", peripherals: ["--profile weight-scale --value 1.2"]))
    }
}

// MARK: - Inside the guest

struct VMPeripheral {
    var address: BluetoothAddress
    var type: AddressType
    var profile: String

    static func all() -> [VMPeripheral] {
        var out: [VMPeripheral] = []
        var n = 1
        while let a = environment("QUENCH_VM_P\(n)_ADDR"), let address = BluetoothAddress(a),
              let t = environment("QUENCH_VM_P\(n)_TYPE"), let type = AddressType(t) {
            out.append(VMPeripheral(address: address, type: type, profile: environment("QUENCH_VM_P\(n)_PROFILE") ?? ""))
            n += 1
        }
        return out
    }
}

/// Scans until every wanted address was seen (the last report of each) or the time is up.
func scan(_ options: ScanOptions, for wanted: [VMPeripheral], seconds: Double) throws -> (ScanSession.Method, [BluetoothAddress: AdvertisingReport], Int) {
    let session = try ScanSession.start(options)
    defer { session.stop() }
    let end = deadline(after: seconds)
    let addresses = Set(wanted.map(\.address))
    var seen: [BluetoothAddress: AdvertisingReport] = [:]
    var count = 0
    while !addresses.isSubset(of: Set(seen.keys)), let r = try session.next(until: end) {
        count += 1
        if addresses.contains(r.address) { seen[r.address] = r }
    }
    return (session.method, seen, count)
}

/// One ATT request and its response (skipping anything else the server sends).
func request(_ bearer: DescriptorBearer, _ pdu: [UInt8]) throws -> [UInt8] {
    try bearer.send(pdu)
    while let r = try bearer.receive(timeout: 10) {
        if r.first == pdu[0] + 1 || r.first == 0x01 { return r }
    }
    throw BearerError.system(operation: "no ATT response to 0x\([pdu[0]].hexString)", errno: ETIMEDOUT)
}

func exchangeAndDiscover(_ p: VMPeripheral, expecting service: BluetoothUUID) throws {
    let start = ContinuousClock.now
    let bearer = try L2CAPBearer.connect(to: p.address, type: p.type, timeout: 15)
    defer { bearer.close() }
    print("VM: connected to \(p.address) \(p.type) in \(ContinuousClock.now - start)")
    let mtu = try request(bearer, [0x02, 0x05, 0x02])  // Exchange MTU Request, 517
    #expect(mtu.first == 0x03 && mtu.count == 3, "MTU response \(mtu.hexString)")
    // Read By Group Type Requests: primary services (0x2800), continuing after
    // the last group until Attribute Not Found (Core Spec Vol 3, Part G, 4.4.1).
    var services: [BluetoothUUID] = []
    var startHandle: UInt16 = 0x0001
    while true {
        let rsp = try request(bearer, [0x10, UInt8(startHandle & 0xFF), UInt8(startHandle >> 8), 0xFF, 0xFF, 0x00, 0x28])
        print("VM: Read By Group Type Response \(rsp.hexString)")
        guard rsp.first == 0x11, rsp.count >= 2 else {
            #expect(rsp.first == 0x01 && rsp.last == 0x0A, "expected Attribute Not Found: \(rsp.hexString)")
            break
        }
        let length = Int(rsp[1])
        var end: UInt16 = 0xFFFF
        for i in stride(from: 2, to: rsp.count - length + 1, by: length) {
            end = UInt16(rsp[i + 2]) | UInt16(rsp[i + 3]) << 8
            if let uuid = BluetoothUUID(littleEndian: Array(rsp[(i + 4)..<(i + length)])) { services.append(uuid) }
        }
        guard end < 0xFFFF else { break }
        startHandle = end + 1
    }
    print("VM: services \(services)")
    #expect(services.contains(service), "service \(service) not in \(services)")
    #expect(try L2CAPBearer.securityLevel(of: bearer) == .low)
}

@Suite(.serialized, .enabled(if: insideVM, "runs inside the ble-vm guest (QUENCH_VM=1)"))
struct VMInner {
    let peripherals = VMPeripheral.all()

    /// linkLoss's own scale (beside legacyController's devices in the same boot), and the trace time
    /// (from linkLoss's subscription, which starts the clock) at which it drops the link.
    static let linkLossAddress = "F0:F1:F2:F3:F4:D0"
    static let linkLossDropAt = 2

    @Test func legacyController() throws {
        let devices = peripherals.filter { $0.address != BluetoothAddress(Self.linkLossAddress) }
        try #require(devices.count == 2, "expects a public weight scale and a random-address level bottle")
        let (scale, bottle) = (devices[0], devices[1])
        #expect(scale.type == .lePublic && bottle.type == .leRandom)

        let adapters = try BluetoothAdapter.list()
        print("VM: adapters \(adapters)")
        #expect(adapters.contains { $0.index == 0 && $0.isUp })
        #expect(try BluetoothAdapter.ensureUp(0).isUp)
        let version = try ManagementSocket().version()
        print("VM: mgmt version \(version.version).\(version.revision)")
        #expect(try ManagementSocket().controllerIndexes().contains(0))

        // Management discovery, kept going past the kernel's ~10 s discovery end.
        let mgmtStart = ContinuousClock.now
        let session = try ScanSession.start(ScanOptions(method: .management))
        var seen: [BluetoothAddress: AdvertisingReport] = [:]
        var late = 0
        let mgmtEnd = deadline(after: 16)
        while let r = try session.next(until: mgmtEnd) {
            seen[r.address] = r
            if ContinuousClock.now - mgmtStart > .seconds(12) { late += 1 }
        }
        session.stop()
        print("VM: mgmt saw \(seen.values.map { "\($0.address) \($0.addressType) rssi \($0.rssi.map(String.init) ?? "-") \($0.data.hexString)" }), \(late) reports after 12 s")
        #expect(late > 0, "discovery was not restarted after the kernel ended it")
        for p in devices {
            let r = try #require(seen[p.address], "mgmt scan did not see \(p.address)")
            #expect(r.addressType == p.type)
            #expect(r.isConnectable)
            #expect(!r.data.isEmpty)
            guard case .management = r.source else { Issue.record("source \(r.source)"); continue }
        }

        // Raw HCI, passive then active; the emulated controller sends legacy reports.
        for active in [false, true] {
            let (method, raw, count) = try scan(ScanOptions(method: .rawHCI, active: active), for: devices, seconds: 10)
            print("VM: raw HCI (active \(active)) \(count) reports: \(raw.values.map { "\($0.address) \($0.addressType) \($0.source)" })")
            #expect(method == .rawHCI)
            for p in devices {
                let r = try #require(raw[p.address], "raw scan did not see \(p.address)")
                #expect(r.addressType == p.type)
                guard case .legacy = r.source else { Issue.record("source \(r.source)"); continue }
            }
        }

        // The automatic scanner prefers mgmt (root has CAP_NET_ADMIN).
        let (method, _, _) = try scan(ScanOptions(), for: devices, seconds: 8)
        #expect(method == .management)

        try exchangeAndDiscover(scale, expecting: BluetoothUUID(uuid16: 0x181D))
        try exchangeAndDiscover(bottle, expecting: BluetoothUUID("6e0a0000-51a5-4c5b-9f1d-7e57b0771e00")!)

        // An absent device: the connect gives up at our timeout, not the kernel's 40 s.
        let absent = BluetoothAddress("12:34:56:78:9A:BC")!
        let start = ContinuousClock.now
        #expect(throws: BluetoothLinuxError.timeout(operation: "connect(L2CAP ATT 12:34:56:78:9A:BC public)", seconds: 3)) {
            _ = try L2CAPBearer.connect(to: absent, type: .lePublic, timeout: 3)
        }
        // The typed error carries our 3 s: the kernel's own timeout (40.7 s) would end it as EINPROGRESS.
        // Not bounded by wall time: the emulated guest is as slow as the host is busy.
        print("VM: absent device timed out after \(ContinuousClock.now - start)")
        // Cancelling a pending connect.
        let cancellation = try BluetoothCancellation()
        _ = WorkerThread(name: "test") { cancellation.cancel() }
        #expect(throws: BluetoothLinuxError.cancelled) {
            _ = try L2CAPBearer.connect(to: absent, type: .lePublic, timeout: 30, cancellation: cancellation)
        }
        // The adapter still works after the abandoned connects.
        try exchangeAndDiscover(scale, expecting: BluetoothUUID(uuid16: 0x181D))

        // Powered off, the adapter is brought up again before any connect.
        let off = try ManagementSocket().setPowered(0, false)
        #expect(!off.contains(.powered))
        #expect(try BluetoothAdapter.info(0).isUp == false)
        try exchangeAndDiscover(scale, expecting: BluetoothUUID(uuid16: 0x181D))
        #expect(try BluetoothAdapter.info(0).isUp)
    }

    @Test func linkLoss() throws {
        let scale = try #require(peripherals.first { $0.address == BluetoothAddress(Self.linkLossAddress) }, "expects the link-loss scale")
        let bearer = try L2CAPBearer.connect(to: scale.address, type: scale.type, timeout: 15)
        // ATT traffic before the drop. Without any, closing the socket after the
        // drop hit a kernel BUG in 6.1 (hci_chan_del list corruption), 2 runs of 2.
        let mtu = try request(bearer, [0x02, 0x05, 0x02])
        #expect(mtu.first == 0x03)
        // Subscribing starts the scale's trace clock (--start-on subscribe): it drops the link
        // `linkLossDropAt` trace seconds later, whenever this test got here.
        let cccd = try clientConfiguration(bearer, service: 0x181D)
        #expect(try request(bearer, [0x12, UInt8(cccd & 0xFF), UInt8(cccd >> 8), 0x02, 0x00]) == [0x13])
        let start = ContinuousClock.now
        var ended: BearerError?
        var indications = 0
        while ended == nil, ContinuousClock.now - start < .seconds(30) {
            do {
                // Each indication confirmed (ATT 0x1E) so the scale sends the next.
                if let pdu = try bearer.receive(timeout: 30), pdu.first == 0x1D {
                    indications += 1
                    // A confirmation sent as the link drops fails with ENOTCONN (the socket is no longer
                    // connected) before a read reports the cause: the read after it says why.
                    do { try bearer.send([0x1E]) } catch .closed(errno: ENOTCONN) { continue }
                }
            } catch {
                ended = error
            }
        }
        print("VM: link ended after \(ContinuousClock.now - start) and \(indications) indications: \(ended.map { "\($0)" } ?? "no")")
        #expect(ended == .closed(errno: ETIMEDOUT))
        #expect(throws: BearerError.self) { try bearer.send([0x02, 0x05, 0x02]) }
        bearer.close()
        // The device advertises again 4 s later; the adapter is still fine.
        try exchangeAndDiscover(scale, expecting: BluetoothUUID(uuid16: 0x181D))
    }

    /// The handle of the Client Characteristic Configuration descriptor (0x2902) in the primary service `uuid16`.
    func clientConfiguration(_ bearer: DescriptorBearer, service uuid16: UInt16) throws -> UInt16 {
        // Find By Type Value: the primary service (0x2800) with this UUID, and its group's end.
        let found = try request(bearer, [0x06, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28, UInt8(uuid16 & 0xFF), UInt8(uuid16 >> 8)])
        try #require(found.first == 0x07 && found.count >= 5, "service 0x\(String(uuid16, radix: 16)) not found: \(found.hexString)")
        // Read By Type 0x2902 within the group: handle-value pairs, the first one's handle.
        let read = try request(bearer, [0x08, found[1], found[2], found[3], found[4], 0x02, 0x29])
        try #require(read.first == 0x09 && read.count >= 4, "no CCCD in service 0x\(String(uuid16, radix: 16)): \(read.hexString)")
        return UInt16(read[2]) | UInt16(read[3]) << 8
    }

    @Test func bt5Controller() async throws {
        let scale = try #require(peripherals.first)
        for extended in [false, true] {
            let (_, raw, count) = try scan(ScanOptions(method: .rawHCI, extendedCommands: extended), for: [scale], seconds: 10)
            let r = try #require(raw[scale.address], "raw scan (extended commands \(extended)) did not see \(scale.address)")
            print("VM: raw HCI (extended commands \(extended)) \(count) reports, \(r.source) \(r.data.hexString)")
            guard case .extended(let type) = r.source else { Issue.record("expected an extended report: \(r.source)"); continue }
            // Bumble's BT 5 controller reports legacy ADV_IND as 0x0001 (connectable, legacy bit clear).
            #expect(type.isConnectable && !type.isScanResponse)
            #expect(r.addressType == .lePublic)
        }
        // While mgmt discovery scans, the controller refuses a second scanner with
        // Command Disallowed, which must surface as such. (Bumble accepts the
        // extended scan commands meanwhile, so only the legacy ones are checked.)
        do {
            let discovery = try ScanSession.start(ScanOptions(method: .management))
            defer { discovery.stop() }
            #expect(throws: BluetoothLinuxError.hci(opcode: .leSetScanParameters, status: .commandDisallowed)) {
                _ = try ScanSession.start(ScanOptions(method: .rawHCI))
            }
        }
        var mgmtSeen = false
        for try await r in Scanner.reports(ScanOptions(method: .management), timeout: 10) where r.address == scale.address {
            mgmtSeen = true
            break
        }
        #expect(mgmtSeen)
        try exchangeAndDiscover(scale, expecting: BluetoothUUID(uuid16: 0x181D))
    }
}
#endif

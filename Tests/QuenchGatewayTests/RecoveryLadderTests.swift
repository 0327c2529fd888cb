import QuenchCore
import Testing
@testable import QuenchGateway
#if os(Linux)
import BluetoothLinux
import BluetoothWire
import GATT
import Glibc
#endif

/// The recovery ladder alone, on an injected clock (seconds).
@Suite("recovery ladder")
struct RecoveryLadderTests {
    func ladder(quiet: Double = 600, spacing: Double = 6 * 3600, settle: Double = 5) -> RecoveryLadder {
        var p = RecoveryLadder.Policy()
        p.quietLimit = quiet
        p.silentPowerCycleSpacing = spacing
        p.settle = settle
        return RecoveryLadder(policy: p, now: 0)
    }

    @Test("silence restarts discovery, then power-cycles, and never gives up on silence alone")
    func silence() {
        var l = ladder()
        var r: RecoveryLadder.Action
        r = l.checkSilence(at: 599)
        #expect(r == .none)
        r = l.checkSilence(at: 600)
        #expect(r == .restartDiscovery)
        #expect(l.rung == .discoveryRestarted)
        // The restarted discovery gets its own quiet period.
        r = l.checkSilence(at: 1100)
        #expect(r == .none)
        r = l.checkSilence(at: 1200)
        #expect(r == .powerCycleAdapter)
        // Still silent: a quiet room, not a stuck adapter. No restart of the service.
        for t in stride(from: 1800.0, through: 6 * 3600, by: 600) {
            r = l.checkSilence(at: t)
            #expect(r == .none, "at \(t)")
        }
        #expect(l.rung == .adapterPowerCycled)
        // After the spacing, one more power cycle.
        r = l.checkSilence(at: 1200 + 6 * 3600 + 600)
        #expect(r == .powerCycleAdapter)
        #expect(l.counters.discoveryRestarts == 1)
        #expect(l.counters.powerCycles == 2)
    }

    @Test("anything heard puts the ladder back at the bottom")
    func aliveResets() {
        var l = ladder()
        var r: RecoveryLadder.Action
        r = l.checkSilence(at: 600)
        #expect(r == .restartDiscovery)
        l.alive(at: 700)
        #expect(l.rung == .healthy)
        r = l.checkSilence(at: 1299)
        #expect(r == .none)
        r = l.checkSilence(at: 1300)
        #expect(r == .restartDiscovery)
        #expect(l.counters.discoveryRestarts == 2)
        #expect(l.counters.powerCycles == 0)
    }

    @Test("faults climb one rung at a time, each rung given time to work, then give up")
    func faults() {
        var l = ladder()
        var r: RecoveryLadder.Action
        r = l.fault(.notAnswering, at: 10)
        #expect(r == .restartDiscovery)
        // Several threads reporting the same trouble at once count once.
        r = l.fault(.notAnswering, at: 11)
        #expect(r == .none)
        r = l.fault(.discoveryRefused, at: 16)
        #expect(r == .powerCycleAdapter)
        r = l.fault(.notAnswering, at: 17)
        #expect(r == .none)
        r = l.fault(.notAnswering, at: 22)
        #expect(r == .giveUp(.notAnswering))
        #expect(l.rung == .gaveUp)
        // Once given up, nothing more (and being heard does not undo it: the process is ending).
        l.alive(at: 23)
        #expect(l.rung == .gaveUp)
        r = l.fault(.notAnswering, at: 40)
        #expect(r == .none)
    }

    @Test("a fault after recovery starts from the bottom again")
    func recoveredThenFault() {
        var l = ladder()
        var r: RecoveryLadder.Action
        _ = l.fault(.wontPower, at: 0)
        _ = l.fault(.wontPower, at: 10)
        #expect(l.rung == .adapterPowerCycled)
        l.alive(at: 12)
        r = l.fault(.wontPower, at: 100)
        #expect(r == .restartDiscovery)
    }

    @Test("a missing adapter is waited for, counted once, never climbed")
    func missing() {
        var l = ladder()
        var r: RecoveryLadder.Action
        var came: Bool
        for t in stride(from: 0.0, to: 5000, by: 30) {
            r = l.fault(.missing, at: t)
            #expect(r == .none)
            r = l.checkSilence(at: t)
            #expect(r == .none, "silence while the adapter is gone is no news")
        }
        #expect(l.adapterMissing)
        #expect(l.counters.adapterLosses == 1)
        came = l.alive(at: 5000)
        #expect(came, "came back")
        #expect(!l.adapterMissing)
        came = l.alive(at: 5001)
        #expect(came == false)
        _ = l.fault(.missing, at: 6000)
        #expect(l.counters.adapterLosses == 2)
        l.alive(at: 6001)
        r = l.fault(.blocked, at: 6002)
        #expect(r == .none && l.adapterMissing, "rfkill is waited out too")
        #expect(l.rung == .healthy)
    }

    #if os(Linux)
    @Test("the adapter's faults are told from the device's")
    func classification() {
        func fault(_ e: BluetoothLinuxError) -> AdapterFault? { AdapterFault(LiveError.bluetooth(e)) }
        #expect(fault(.noAdapter(index: 0)) == .missing)
        #expect(fault(.system(BluetoothSocketError(operation: "read(mgmt)", errno: ENODEV))) == .missing)
        #expect(fault(.controllerTimeout(command: "Start Discovery on hci0", seconds: 5)) == .notAnswering)
        #expect(fault(.adapterDown(index: 0, attempts: [])) == .wontPower)
        #expect(fault(.adapterDown(index: 0, attempts: [.management(opcode: .setPowered, index: MgmtIndex(0), status: .rfkilled)])) == .blocked)
        #expect(fault(.adapterDown(index: 0, attempts: [.management(opcode: .setPowered, index: MgmtIndex(0), status: .invalidIndex)])) == .missing)
        #expect(fault(.management(opcode: .startDiscovery, index: MgmtIndex(0), status: .failed)) == .discoveryRefused)
        #expect(fault(.hci(opcode: .leSetScanEnable, status: .commandDisallowed)) == .discoveryRefused)
        #expect(fault(.scanUnavailable(management: .controllerTimeout(command: "x", seconds: 5),
                                       rawHCI: .hci(opcode: .leSetScanEnable, status: .commandDisallowed))) == .notAnswering)
        // The device's business: it did not answer, or the link dropped.
        #expect(fault(.timeout(operation: "connect(L2CAP ATT F0:F1:F2:F3:F4:F5 public)", seconds: 10)) == nil)
        #expect(fault(.system(BluetoothSocketError(operation: "connect(L2CAP ATT F0:F1:F2:F3:F4:F5 public)", errno: ETIMEDOUT))) == nil)
        #expect(AdapterFault(LiveError.gatt(.bearer(.closed(errno: ETIMEDOUT)))) == nil)
        #expect(AdapterFault(LiveError.connectTimeout(address: "x", seconds: 1)) == nil)
    }

    @Test("a lost bond is recognised on the link, and nothing else is taken for one")
    func staleBond() {
        let connect = "connect(L2CAP ATT F0:F1:F2:F3:F4:F5 public)"
        #expect(LiveError.bluetooth(.system(BluetoothSocketError(operation: connect, errno: EBADE))).isStaleBond)
        #expect(LiveError.bluetooth(.system(BluetoothSocketError(operation: connect, errno: EACCES))).isStaleBond)
        #expect(LiveError.gatt(.bearer(.closed(errno: EBADE))).isStaleBond)
        #expect(LiveError.gatt(.securityUpgradeFailed(ATTErrorResponse(requestOpcode: .readRequest, handle: 3, errorCode: .insufficientEncryption),
                                                      .system(operation: "BT_SECURITY medium", errno: EACCES))).isStaleBond)
        // EACCES from making a socket is a missing capability, not a bond.
        #expect(!LiveError.bluetooth(.system(BluetoothSocketError(operation: "socket(AF_BLUETOOTH, SOCK_RAW, BTPROTO_HCI)", errno: EACCES))).isStaleBond)
        #expect(!LiveError.bluetooth(.system(BluetoothSocketError(operation: connect, errno: ETIMEDOUT))).isStaleBond)
        let advice = LiveError.staleBondAdvice(device: "F0:F1:F2:F3:F4:F5")
        #expect(advice.contains("bluetoothctl remove F0:F1:F2:F3:F4:F5"))
        #expect(advice.contains("quench pair F0:F1:F2:F3:F4:F5 --bond"))
    }
    #endif

    /// A bottle out of range for a day: its retries at the 30 s most are a warning the first five
    /// times, then at doublings and hourly (a Pi trial's journal had 2,900 alike a day); the rest at debug.
    @Test func aRetryIsWarnedOfRarerAsItGoesOn() {
        var backoff = Backoff()
        var elapsed = 0.0, warned: [Int] = []
        for attempt in 0..<100_000 where elapsed < 86_400 {
            elapsed += backoff.delay(attempt: attempt)
            if RepeatedNotice.worthSaying(occurrence: attempt) { warned.append(attempt + 1) }
        }
        #expect(Array(warned.prefix(8)) == [1, 2, 3, 4, 5, 8, 16, 32], "\(warned)")
        #expect((24...40).contains(warned.count), "\(warned.count) warnings in a day: \(warned)")
    }
}

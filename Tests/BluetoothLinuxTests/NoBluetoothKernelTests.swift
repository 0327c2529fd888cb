#if os(Linux)
import Glibc
import Testing
import Threading
import BluetoothWire
import GATT
@testable import BluetoothLinux

/// Whether this kernel has the Bluetooth socket family at all (the build
/// machines do not; the ble-vm guest does).
let kernelHasBluetooth: Bool = {
    let fd = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue), BTPROTO_HCI_VALUE)
    if fd >= 0 { close(fd); return true }
    return errno != EAFNOSUPPORT
}()

let BTPROTO_HCI_VALUE: Int32 = 1

/// The error every entry point must give where the kernel has no Bluetooth.
let noBluetooth = BluetoothLinuxError.system(
    BluetoothSocketError(operation: "socket(AF_BLUETOOTH, SOCK_RAW, BTPROTO_HCI)", errno: EAFNOSUPPORT))

@Suite(.enabled(if: !kernelHasBluetooth, "this kernel has Bluetooth; these check the typed error where it has none"))
struct NoBluetoothKernelTests {
    @Test func managementSocketReportsTheMissingAddressFamily() {
        #expect(throws: noBluetooth) { try ManagementSocket() }
    }

    @Test func rawHCISocketReportsTheMissingAddressFamily() {
        #expect(throws: noBluetooth) { try RawHCISocket(adapter: 0) }
    }

    @Test func adapterListReportsTheMissingAddressFamily() {
        #expect(throws: noBluetooth) { try BluetoothAdapter.list() }
        #expect(throws: noBluetooth) { try BluetoothAdapter.ensureUp(0) }
    }

    @Test func scanReportsTheMissingAddressFamily() async {
        #expect(throws: noBluetooth) { try ScanSession.start() }
        #expect(throws: noBluetooth) { try ScanSession.start(ScanOptions(adapter: 0, method: .rawHCI)) }
        await #expect(throws: noBluetooth) {
            for try await _ in Scanner.reports(timeout: 1) {}
        }
    }

    @Test func connectReportsTheMissingAddressFamilyBeforeTouchingL2CAP() {
        let peer = BluetoothAddress("F0:F1:F2:F3:F4:F5")!
        #expect(throws: noBluetooth) { try L2CAPBearer.connect(to: peer, type: .lePublic, timeout: 1) }
        #expect(throws: noBluetooth) { try L2CAPBearer.connect(to: peer, type: .leRandom, adapter: 0, timeout: 1) }
    }

    @Test func errorDescriptionNamesTheOperationAndErrno() {
        let text = noBluetooth.description
        #expect(text.contains("socket(AF_BLUETOOTH, SOCK_RAW, BTPROTO_HCI)"))
        #expect(text.contains("errno 97"))
        #expect(text.contains("Address family not supported"))
        #expect(noBluetooth.errno == EAFNOSUPPORT)
    }
}

/// The poll-based plumbing, on sockets every kernel has.
struct PollPlumbingTests {
    func socketPair() -> (Int32, Int32) {
        var fds: [Int32] = [0, 0]
        let r = socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds)
        precondition(r == 0)
        return (fds[0], fds[1])
    }

    @Test func cancellationWakesAWaitWithoutWaitingForTheDeadline() throws {
        let (a, b) = socketPair()
        defer { close(b) }
        let socket = PacketSocket(fd: a, name: "test")
        let cancellation = try BluetoothCancellation()
        _ = WorkerThread(name: "test") { cancellation.cancel() }
        let start = ContinuousClock.now
        #expect(throws: BluetoothLinuxError.cancelled) {
            _ = try socket.receive(until: deadline(after: 20), cancellation: cancellation)
        }
        #expect(ContinuousClock.now - start < .seconds(5))
        #expect(cancellation.isCancelled)
    }

    @Test func receiveReturnsNilAtTheDeadlineAndPacketsWhole() throws {
        let (a, b) = socketPair()
        defer { close(b) }
        let socket = PacketSocket(fd: a, name: "test")
        #expect(try socket.receive(until: deadline(after: 0.05)) == nil)
        let pdu: [UInt8] = [0x02, 0xF7, 0x00]
        #expect(pdu.withUnsafeBytes { write(b, $0.baseAddress, $0.count) } == 3)
        #expect(try socket.receive(until: deadline(after: 1)) == pdu)
    }

    @Test func closeWakesAReaderAndLaterCallsFailTyped() throws {
        let (a, b) = socketPair()
        defer { close(b) }
        let socket = PacketSocket(fd: a, name: "test")
        socket.close()
        #expect(throws: BluetoothLinuxError.system(BluetoothSocketError(operation: "read(test)", errno: EBADF))) {
            _ = try socket.receive(until: deadline(after: 1))
        }
    }
}
#endif

import Glibc
import BluetoothWire
import GATT
import QuenchTestSupport
import Testing

@Suite struct DescriptorBearerTests {
    @Test func keepsMessageBoundaries() throws {
        let (a, b) = try DescriptorBearer.makePair()
        try a.send([0x0A, 0x03, 0x00])
        try a.send([0x1E])
        try a.send([UInt8](repeating: 7, count: 517))
        #expect(try b.receive(timeout: 1) == [0x0A, 0x03, 0x00])
        #expect(try b.receive(timeout: 1) == [0x1E])
        #expect(try b.receive(timeout: 1) == [UInt8](repeating: 7, count: 517))
        a.close()
        b.close()
    }

    @Test func socketPairIsCloseOnExecAndNonBlocking() throws {
        let (x, y) = try DescriptorBearer.makeSocketPair()
        for fd in [x, y] {
            #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0)
            #expect(fcntl(fd, F_GETFL) & O_NONBLOCK != 0)
        }
        Glibc.close(x)
        Glibc.close(y)
    }

    @Test func adoptedDescriptorBecomesNonBlocking() throws {
        var fds: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &fds) == 0)
        #expect(fcntl(fds[0], F_GETFL) & O_NONBLOCK == 0)
        let a = try DescriptorBearer(fileDescriptor: fds[0])
        #expect(fcntl(fds[0], F_GETFL) & O_NONBLOCK != 0)
        let b = try DescriptorBearer(fileDescriptor: fds[1])
        try b.send([1])
        #expect(try a.receive(timeout: 1) == [1])
        a.close()
        b.close()
    }

    @Test func receiveTimesOutWithNil() throws {
        let (a, b) = try DescriptorBearer.makePair()
        let start = ContinuousClock.now
        #expect(try a.receive(timeout: 0.15) == nil)
        let elapsed = ContinuousClock.now - start
        #expect(elapsed >= .milliseconds(150) && elapsed < .seconds(1))
        #expect(try a.receive(timeout: 0) == nil)
        a.close()
        b.close()
    }

    /// A bearer that found its link lost waits its linger before the descriptor is closed (the L2CAP
    /// layer's, so the kernel's teardown ends first); one closed while its link was up (the peer's
    /// side here) does not wait.
    @Test func closeAfterALostLinkLingersFirst() throws {
        let (x, y) = try DescriptorBearer.makeSocketPair()
        let lingering = try DescriptorBearer(fileDescriptor: x, lingerAfterLinkLoss: 0.4)
        let peer = try DescriptorBearer(fileDescriptor: y, lingerAfterLinkLoss: 30)
        let peerStart = ContinuousClock.now
        peer.close()
        #expect(ContinuousClock.now - peerStart < .seconds(10), "the side that lost nothing closes at once")
        #expect(throws: BearerError.closed(errno: nil)) { try lingering.receive(timeout: 1) }
        let start = ContinuousClock.now
        lingering.close()
        #expect(ContinuousClock.now - start >= .milliseconds(400), "closed before its linger")
        #expect(throws: BearerError.closed(errno: EBADF), "and then closed") { try lingering.send([1]) }
    }

    @Test func peerCloseIsClosed() throws {
        let (a, b) = try DescriptorBearer.makePair()
        try b.send([0x1B, 0x01, 0x00])
        b.close()
        // Data sent before the close is still delivered, then the end.
        #expect(try a.receive(timeout: 1) == [0x1B, 0x01, 0x00])
        #expect(throws: BearerError.closed(errno: nil)) { try a.receive(timeout: 1) }
        #expect(throws: BearerError.closed(errno: EPIPE)) { try a.send([1]) }
        a.close()
    }

    @Test func useAfterCloseAndDoubleClose() throws {
        let (a, b) = try DescriptorBearer.makePair()
        a.close()
        a.close()
        #expect(throws: BearerError.closed(errno: EBADF)) { try a.send([1]) }
        #expect(throws: BearerError.closed(errno: EBADF)) { try a.receive(timeout: 0) }
        b.close()
    }

    @Test func interruptWakesABlockedReceiver() throws {
        let (a, b) = try DescriptorBearer.makePair()
        let outcome = Locked<BearerError?>(nil)
        let receiver = Background {
            do throws(BearerError) { _ = try a.receive(timeout: .infinity) } catch { outcome.withLock { $0 = error } }
        }
        #expect(try b.receive(timeout: 0.1) == nil)
        a.interrupt()
        #expect(receiver.wait(seconds: 2))
        #expect(outcome.value == .closed(errno: nil))
        a.close()
        b.close()
    }

    @Test func oversizedPDUIsRefused() throws {
        let (x, y) = try DescriptorBearer.makeSocketPair()
        let small = try DescriptorBearer(fileDescriptor: x, maximumPDUSize: 8)
        let big = try DescriptorBearer(fileDescriptor: y)
        try big.send([UInt8](repeating: 1, count: 9))
        #expect(throws: BearerError.system(operation: "recv (PDU of 9 bytes)", errno: EMSGSIZE)) { try small.receive(timeout: 1) }
        small.close()
        big.close()
    }

    @Test func fullBufferSendTimesOut() throws {
        let (x, y) = try DescriptorBearer.makeSocketPair()
        let sender = try DescriptorBearer(fileDescriptor: x, sendTimeout: 0.1)
        let idle = try DescriptorBearer(fileDescriptor: y)
        var caught: BearerError?
        do throws(BearerError) {
            for _ in 0..<100_000 { try sender.send([UInt8](repeating: 0, count: 512)) }
        } catch {
            caught = error
        }
        #expect(caught == .system(operation: "send (waiting for buffer space)", errno: ETIMEDOUT))
        sender.close()
        idle.close()
    }

    @Test func securityUpgradeDelegates() throws {
        let calls = Locked<[ATTErrorCode]>([])
        let (a, b) = try DescriptorBearer.makePair(upgradeSecurity: { code throws(BearerError) in calls.withLock { $0.append(code) } })
        try a.upgradeSecurity(for: .insufficientAuthentication)
        #expect(calls.value == [.insufficientAuthentication])
        #expect(throws: BearerError.unsupported("security upgrade")) { try b.upgradeSecurity(for: .insufficientEncryption) }
        a.close()
        b.close()
    }

    /// The level each error asks for, as BlueZ's bt_att (att.c, change_security) picks it.
    @Test func securityLevelFromTheError() {
        typealias L = ATTSecurityLevel
        #expect(L.raised(for: .insufficientEncryption, from: .low) == .medium)
        #expect(L.raised(for: .insufficientEncryption, from: .medium) == nil, "already encrypted: raising cannot help")
        #expect(L.raised(for: .insufficientAuthentication, from: .low) == .medium)
        #expect(L.raised(for: .insufficientAuthentication, from: .medium) == .high)
        #expect(L.raised(for: .insufficientAuthentication, from: .high) == .fips)
        #expect(L.raised(for: .insufficientAuthentication, from: .fips) == nil)
        #expect(L.raised(for: .readNotPermitted, from: .low) == nil)
    }

    /// A session's stop wakes a receive that waits without a time limit: no polling loop.
    @Test func wakeupEndsABlockedReceive() throws {
        // Any readable descriptor will do (sessions use an eventfd): a pipe here.
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        defer { for e in ends { Glibc.close(e) } }
        let (a, b) = try DescriptorBearer.makePair(wakeup: ends[0])
        let outcome = Locked<BearerError?>(nil)
        let receiver = Background {
            do throws(BearerError) { _ = try a.receive(timeout: .infinity) } catch { outcome.withLock { $0 = error } }
        }
        #expect(!receiver.wait(seconds: 0.2), "still waiting")
        var one: UInt8 = 1
        _ = Glibc.write(ends[1], &one, 1)
        #expect(receiver.wait(seconds: 2))
        #expect(outcome.value == .cancelled)
        // The link itself is untouched: the peer can still talk to it.
        try b.send([0x1B, 0x03, 0x00, 0x01])
        a.close()
        b.close()
    }

    @Test func errorsSayWhatFailed() {
        #expect(BearerError.system(operation: "connect", errno: ECONNREFUSED).description == "connect failed: Connection refused (errno 111)")
        #expect(BearerError.closed(errno: ECONNRESET).description == "link lost: Connection reset by peer (errno 104)")
        #expect(BearerError.closed(errno: ECONNRESET).errno == ECONNRESET)
    }
}

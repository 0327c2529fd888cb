import Glibc
import GATT
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
        let calls = Locked(0)
        let (a, b) = try DescriptorBearer.makePair(upgradeSecurity: { () throws(BearerError) in calls.withLock { $0 += 1 } })
        try a.upgradeSecurity()
        #expect(calls.value == 1)
        #expect(throws: BearerError.unsupported("security upgrade")) { try b.upgradeSecurity() }
        a.close()
        b.close()
    }

    @Test func errorsSayWhatFailed() {
        #expect(BearerError.system(operation: "connect", errno: ECONNREFUSED).description == "connect failed: Connection refused (errno 111)")
        #expect(BearerError.closed(errno: ECONNRESET).description == "link lost: Connection reset by peer (errno 104)")
        #expect(BearerError.closed(errno: ECONNRESET).errno == ECONNRESET)
    }
}

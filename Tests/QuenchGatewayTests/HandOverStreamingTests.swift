#if os(Linux)
import BluetoothWire
import Foundation
import GATT
import QuenchCore
import QuenchGateway
import QuenchProfiles
import QuenchSimulatedDevices
import QuenchSimulator
import QuenchStore
import QuenchTestSupport
import Synchronization
import Testing

/// A bottle that streams its level (and keeps no sips) carried out of this gateway's room
/// and back. Whether its level change across the gap is a sip here depends on whether
/// another gateway held it meanwhile: if one did, that gateway stored those sips, and
/// counting the change here would double them at the hub (issue 25). The other gateway
/// is its claim in the store, as `quench mqtt run` keeps it.
@Suite("a streaming bottle back from another gateway's room: its level is learnt afresh")
struct HandOverStreamingTests {
    static let address = BluetoothAddress("C3:11:22:33:44:66")!
    static let scenario = Scenario(.clean(unit: .mm, sampleRate: 5).with(.noise), seed: 11, initialML: 600)
        // Back 12 s after the second sip, 78 s before the third: time to be taken again, and its level learnt.
        .idle(15).sip(ml: 40).idle(30).sip(ml: 50).idle(90).sip(ml: 30).idle(20)

    /// The room: the bottle is in range or not; while in range and not connected it advertises.
    final class Room: ATTConnector, AdvertisementSource {
        let bottle: SimulatedPeripheral
        let inRange = Atomic<Bool>(true)
        let stopSignal = Mutex<StopSignal?>(nil)
        init(bottle: SimulatedPeripheral) { self.bottle = bottle }

        func connect(to device: LiveDevice, timeout: Double, stop: StopSignal) throws(LiveError) -> any ATTBearer {
            guard inRange.load(ordering: .relaxed) else {
                if stop.wait(seconds: min(timeout, 0.2)) { throw .stopped }
                throw .connectTimeout(address: device.label, seconds: timeout)
            }
            return try bottle.connect(to: device, timeout: timeout, stop: stop)
        }

        func next(until deadline: ContinuousClock.Instant) throws(LiveError) -> AdvertisingReport? {
            let stop = stopSignal.withLock { $0 }
            while ContinuousClock.now < deadline {
                if stop?.wait(seconds: min(0.1, max(0, (deadline - .now).seconds))) == true { throw .stopped }
                guard inRange.load(ordering: .relaxed), !bottle.isConnected else { continue }
                return .connectable(HandOverStreamingTests.address, rssi: -50)
            }
            return nil
        }

        func stop() {}
    }

    /// What the other gateway's claims say while the bottle is away.
    enum Elsewhere {
        /// Nothing: nobody held it.
        case nobody
        /// That it holds the bottle, every 0.3 s, then that it let it go.
        case held
        /// Only that it let it go (its claims while holding were missed: a broker outage, a short hold).
        case onlyItsRelease
    }

    /// Runs the scenario with the bottle carried away after its first sip (once stored) and
    /// back after its second, the other gateway's claims saying `elsewhere`; the sips stored.
    static func sipsStored(_ elsewhere: Elsewhere) throws -> (stored: [Double], truth: [TruthEvent]) {
        let (readings, truth) = scenario.run()
        let sips = truth.filter { $0.kind == .sip }
        let carriedAway = sips[0].tEnd + 12, broughtBack = sips[1].tEnd + 12
        let store = try LiveFixture.temporaryStore()
        let bottle = SimulatedPeripheral(address: address, profile: .custom(ProfileRegistry.levelBottle), readings: readings, unit: .mm,
                                         streaming: SimulatedStreaming(speed: LiveFixture.speed))
        defer { bottle.shutdown() }
        let room = Room(bottle: bottle)
        var options = Gateway.Options()
        options.clockRate = LiveFixture.speed
        options.connectTimeout = 1
        options.backoff = Backoff(initial: 0.05, factor: 2, maximum: 0.2)
        var rule = HandOverRule()
        rule.settle = 0.5
        rule.refreshEvery = 1
        rule.freshFor = 4
        options.handOver = rule
        let device = LiveDevice(address: address, profile: .custom(ProfileRegistry.levelBottle), calibration: scenario.configuration.calibration)
        let gateway = Gateway(devices: [device], store: store, options: options, logger: LiveFixture.logger, connector: room,
                              advertisements: { stop throws(LiveError) in
                                  room.stopSignal.withLock { $0 = stop }
                                  return room
                              })
        // `run` is the main loop, which reads the claims every second.
        let finished = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            gateway.run(seconds: 120)
            finished.signal()
        }
        var running = true
        func stopGateway() {
            guard running else { return }
            running = false
            gateway.stop()
            finished.wait()
        }
        defer { stopGateway() }
        func claim(holding: Bool) throws {
            let now = Timestamp.wallClockNow
            try store.saveClaim(device: address.description, DeviceClaim(gateway: "the-other-room", rssi: holding ? -45 : nil, heardAt: holding ? now : nil,
                                                                         holding: holding, at: now, heldUntil: holding ? nil : now))
        }
        try #require(LiveFixture.waitFor(30) { (bottle.traceTime ?? 0) >= carriedAway && !((try? LiveFixture.sips(store, address)) ?? []).isEmpty },
                     "the first sip was not stored by trace time \(carriedAway)")
        room.inRange.store(false, ordering: .relaxed)
        bottle.dropLink()
        try #require(LiveFixture.waitFor(30) {
            if elsewhere == .held { try? claim(holding: true) }
            return (bottle.traceTime ?? 0) >= broughtBack
        }, "the bottle's trace never reached \(broughtBack)")
        if elsewhere != .nobody {
            try claim(holding: false)
            // Read by the gateway's next look at the claims (every second) before it can hear the bottle again.
            Thread.sleep(forTimeInterval: 1.5)
        }
        room.inRange.store(true, ordering: .relaxed)
        try #require(bottle.waitUntilFinished(timeout: 60))
        stopGateway()
        return (try LiveFixture.sips(store, address).map(\.ml), truth)
    }

    @Test("another gateway held it meanwhile (its claims said so, then that it let go): the sip drunk there is not counted here again",
          arguments: [Elsewhere.held, .onlyItsRelease])
    func heldElsewhere(_ elsewhere: Elsewhere) throws {
        let (stored, truth) = try Self.sipsStored(elsewhere)
        let sips = truth.filter { $0.kind == .sip }.map(\.ml)
        let here = [sips[0], sips[2]]
        #expect(stored.count == 2, "stored \(stored), drunk here \(here)")
        for (s, t) in zip(stored, here) { #expect(abs(s - t) <= 3, "stored \(stored), drunk here \(here)") }
    }

    @Test("nobody held it meanwhile: the sip hidden by the gap is counted, as on one gateway")
    func heldByNobody() throws {
        let (stored, truth) = try Self.sipsStored(.nobody)
        let sips = truth.filter { $0.kind == .sip }.map(\.ml)
        #expect(stored.count == 3, "stored \(stored), drunk \(sips)")
        for (s, t) in zip(stored, sips) { #expect(abs(s - t) <= 3, "stored \(stored), drunk \(sips)") }
    }
}

/// `HandOverBoard.took` on its own: what another gateway's claims say against when this one let the bottle go.
@Suite("the hand-over board: whether another gateway held a bottle since this one did")
struct HeldElsewhereTests {
    static let device = "C3:11:22:33:44:77"

    static func otherClaim(holding: Bool, at: Timestamp, heldUntil: Timestamp?) -> DeviceClaim {
        DeviceClaim(gateway: "the-other-room", rssi: -50, heardAt: at, holding: holding, at: at, heldUntil: heldUntil)
    }

    @Test("held after this gateway let go (holding now, or let go since): yes; before, or never: no; and across a restart")
    func heldAfterThisGatewayLetGo() throws {
        let store = try LiveFixture.temporaryStore()
        let board = try #require(HandOverBoard(store: store, devices: [Self.device], logger: LiveFixture.logger))
        // Never held here: nothing to learn again, whatever the others say.
        try store.saveClaim(device: Self.device, Self.otherClaim(holding: true, at: .wallClockNow, heldUntil: nil))
        board.refresh()
        #expect(!board.took(Self.device))
        board.setHolding(Self.device, false, lost: true)
        let letGo = Timestamp.wallClockNow
        // The other's hold ended before this gateway let go: no.
        try store.saveClaim(device: Self.device, Self.otherClaim(holding: false, at: letGo, heldUntil: letGo.adding(-5)))
        board.refresh()
        #expect(!board.took(Self.device))
        board.setHolding(Self.device, false)
        Thread.sleep(forTimeInterval: 0.01)
        // Only its release came (its claims while holding were missed): yes.
        try store.saveClaim(device: Self.device, Self.otherClaim(holding: false, at: .wallClockNow, heldUntil: .wallClockNow))
        board.refresh()
        #expect(board.took(Self.device))
        // The gateway stops while holding (its sessions let go); started again, its own claim says when: the other's hold after it counts.
        board.setHolding(Self.device, false)
        Thread.sleep(forTimeInterval: 0.01)
        try store.saveClaim(device: Self.device, Self.otherClaim(holding: true, at: .wallClockNow, heldUntil: nil))
        let restarted = try #require(HandOverBoard(store: store, devices: [Self.device], logger: LiveFixture.logger))
        restarted.refresh()
        #expect(restarted.took(Self.device))
    }
}
#endif

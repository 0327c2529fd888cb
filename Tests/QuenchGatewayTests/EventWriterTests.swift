#if os(Linux)
import BluetoothWire
import Foundation
import Logging
import QuenchCore
import QuenchGateway
import QuenchProfiles
@testable import QuenchStore
import Synchronization
import QuenchTestSupport
import Testing

/// The one place final events go: the store on the writer's thread, then
/// subscribers in commit order; refused events quarantined, busy ones retried.
@Suite("event writer: store, then subscribers in commit order")
struct EventWriterTests {
    static let device = LiveDevice(address: BluetoothAddress("F0:F1:F2:F3:F4:F5")!, profile: .weightScale,
                                   calibration: try! BottleCalibration(unit: .g))
    static let started = Timestamp(secondsSince1970: 1_790_000_000)

    static func sip(at t: Double, ml: Double) -> FinalEvent {
        FinalEvent(device: device, event: DetectedEvent(kind: .sip, t: t + 6, start: t, end: t + 5, ml: ml), started: started)
    }

    /// Collects what subscribers receive, from the writer's thread.
    final class Received: Sendable {
        let events = Mutex<[CommittedEvent]>([])
        func add(_ e: CommittedEvent) { events.withLock { $0.append(e) } }
        var all: [CommittedEvent] { events.withLock { $0 } }
    }

    /// Submits `events` to a fresh writer on `store`, drains it, and returns what subscribers got.
    static func write(_ events: [FinalEvent], to store: IntakeStore?) -> (EventWriter, Received) {
        let writer = EventWriter(store: store, logger: LiveFixture.logger)
        let received = Received()
        writer.subscribe(received.add)
        writer.start()
        writer.submit(events)
        writer.drain()
        return (writer, received)
    }

    @Test("a refused event is quarantined and the events after it are stored, in order")
    func permanentErrorDoesNotBlock() throws {
        let store = try LiveFixture.temporaryStore()
        // 200 L breaks the schema's CHECK (ml <= 100000): the event's own fault.
        let (writer, received) = Self.write([Self.sip(at: 10, ml: 30), Self.sip(at: 20, ml: 200_000), Self.sip(at: 30, ml: 40)], to: store)
        #expect(received.all.map(\.final.event.ml) == [30, 40])
        #expect(received.all.allSatisfy { $0.isNew })
        let c = writer.counts
        #expect(c.stored == 2 && c.quarantined == 1)
        let stored = try store.events(.init()).map(\.ml)
        #expect(stored.sorted() == [30, 40])
    }

    @Test("each event is stamped with the device's owner when it is stored; handing the device over leaves the past")
    func eventsTakeTheOwner() throws {
        let store = try LiveFixture.temporaryStore()
        let ann = try store.addPerson(name: "ann")
        try store.saveDevice(Device(address: Self.device.address.description, addedAt: Self.started, person: "ann"))
        _ = Self.write([Self.sip(at: 10, ml: 30)], to: store)
        try store.assignDevice(address: Self.device.address.description, to: try #require(try store.person(named: "me")).id)
        _ = Self.write([Self.sip(at: 20, ml: 40)], to: store)
        let stored = try store.events(EventQuery(order: .byID))
        #expect(stored.map(\.person) == ["ann", "me"])
        #expect(try store.events(EventQuery(person: ann.id)).map(\.ml) == [30])
    }

    @Test("a database locked by another process: retried with back-off until it is free, then stored in order")
    func transientErrorIsRetried() throws {
        let path = try LiveFixture.temporaryStore().path
        let store = try IntakeStore(path: path, busyTimeout: 0.05)
        let writer = EventWriter(store: store, logger: LiveFixture.logger,
                                 retry: Backoff(initial: 0.05, factor: 2, maximum: 0.2, jitter: 0))
        let received = Received()
        writer.subscribe(received.add)
        // Another connection holds the write lock for a while.
        let other = try SQLiteConnection(path: path, readOnly: false, busyTimeout: 1)
        try other.execute("BEGIN IMMEDIATE")
        writer.start()
        writer.submit([Self.sip(at: 10, ml: 30), Self.sip(at: 20, ml: 50)])
        Thread.sleep(forTimeInterval: 0.6)
        #expect(received.all.isEmpty, "nothing is delivered before it is committed")
        try other.execute("COMMIT")
        writer.drain()
        #expect(received.all.map(\.final.event.ml) == [30, 50])
        #expect(writer.counts.retries > 0)
        #expect(writer.counts.stored == 2)
    }

    @Test("the same event judged twice (a restart) is stored once; subscribers are told it is not new")
    func resendIsNotDoubled() throws {
        let store = try LiveFixture.temporaryStore()
        for round in 0..<2 {
            let (_, received) = Self.write([Self.sip(at: 10, ml: 30)], to: store)
            #expect(received.all.map(\.isNew) == [round == 0])
            #expect(received.all.first?.row?.identity == "F0:F1:F2:F3:F4:F5|sip|1790000010000")
        }
        #expect(try store.events(.init()).count == 1)
    }

    @Test("drain stores everything submitted before it, and nothing after")
    func drainStoresWhatWasFinal() throws {
        let store = try LiveFixture.temporaryStore()
        let (writer, _) = Self.write((0..<50).map { Self.sip(at: Double($0) * 10, ml: 10 + Double($0)) }, to: store)
        #expect(try store.events(.init()).count == 50)
        writer.submit([Self.sip(at: 1000, ml: 5)])
        #expect(try store.events(.init()).count == 50)
    }

    @Test("without a store (watch), events still reach subscribers, with no row")
    func noStore() {
        let (_, received) = Self.write([Self.sip(at: 10, ml: 30)], to: nil)
        #expect(received.all.count == 1 && received.all[0].row == nil)
    }
}
#endif

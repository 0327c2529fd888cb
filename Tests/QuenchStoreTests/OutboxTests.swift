import QuenchCore
import QuenchTestSupport
import Testing
@testable import QuenchStore

/// The MQTT outbox: filled by triggers in the writing transaction, bounded.
@Suite("MQTT outbox")
struct OutboxTests {
    func store() throws -> IntakeStore {
        try IntakeStore(path: try TemporaryFolder.create("quench-outbox") + "/q.sqlite")
    }

    func sip(_ identity: String, ml: Double = 100) -> IntakeEvent {
        IntakeEvent(identity: identity, kind: .sip, ml: ml, time: Timestamp(secondsSince1970: 1_790_000_000), source: .manual,
                    recordedAt: Timestamp(secondsSince1970: 1_790_000_000))
    }

    @Test("nothing enters until publishing starts; then every kind of change, in order, whoever writes")
    func changesEnter() throws {
        let s = try store()
        _ = try s.insert([(sip("a"), [])])
        #expect(try s.outboxStatus() == OutboxStatus(enabled: false, pending: 0, dropped: 0, bound: 100_000, oldest: nil))
        try s.setOutbox(enabled: true)
        let b = try s.addManual(ml: 250, at: Timestamp(secondsSince1970: 1_790_000_100), note: nil, identity: "b")
        _ = try s.setDeleted(id: b.id!, true)
        _ = try s.setDeleted(id: b.id!, false)
        _ = try s.setDeleted(id: b.id!, false)  // no change, no row
        _ = try s.restamp([("a", Timestamp(secondsSince1970: 1_790_000_050))])
        // A duplicate insert (same identity) is no change.
        _ = try s.insert([(sip("a"), [])])
        let entries = try s.outbox(after: 0, limit: 100)
        #expect(entries.map { "\($0.identity) \($0.change)" } == ["b new", "b deleted", "b restored", "a changed"])
        #expect(entries.map(\.seq) == entries.map(\.seq).sorted())
        #expect(entries.last?.event?.time == Timestamp(secondsSince1970: 1_790_000_050), "each entry carries the event as it is now")
        #expect(try s.acknowledgeOutbox(through: entries[1].seq) == 2)
        #expect(try s.outbox(after: 0, limit: 100).map(\.change) == ["restored", "changed"])
        // A write that fails leaves no outbox row either: one transaction.
        #expect(throws: StoreError.self) { _ = try s.insert([(sip("c", ml: -1), [])]) }
        #expect(try s.outboxStatus().pending == 2)
        // A reminder given enters too; a snooze does not.
        try s.markReminded(at: Timestamp(secondsSince1970: 1_790_000_200))
        try s.snoozeReminders(until: Timestamp(secondsSince1970: 1_790_003_000))
        #expect(try s.outbox(after: 0, limit: 100).map(\.change) == ["restored", "changed", "reminder"])
        // A note is a change too (one set at a gateway never reached the hub: a carer trial); the same note again is none.
        _ = try s.editEvent(id: b.id!, ml: nil, time: nil, note: .some("juice"))
        _ = try s.editEvent(id: b.id!, ml: nil, time: nil, note: .some("juice"))
        #expect(try s.outbox(after: 0, limit: 100).map { "\($0.identity) \($0.change)" }.suffix(1) == ["b changed"])
        #expect(try s.outbox(after: 0, limit: 100).count == 4)
    }

    /// `quench edit --to`: a drink's new drinker is a change to publish (Home Assistant's and the
    /// hub's totals of both people follow it); an edit that names its own drinker is none.
    @Test func aDrinkGivenToAnotherPersonGoesOutAsAChange() throws {
        let s = try store()
        let ann = try s.addPerson(name: "Ann")
        try s.setOutbox(enabled: true)
        let b = try s.addManual(ml: 250, at: Timestamp(secondsSince1970: 1_790_000_100), note: nil, identity: "b")
        let moved = try s.editEvent(id: b.id!, ml: nil, time: nil, note: nil, person: ann.id)
        #expect(moved.person == "Ann")
        _ = try s.editEvent(id: b.id!, ml: nil, time: nil, note: nil, person: ann.id)  // already hers: no row
        let entries = try s.outbox(after: 0, limit: 100)
        #expect(entries.map { "\($0.identity) \($0.change)" } == ["b new", "b changed"])
        #expect(entries.last?.event?.person == "Ann", "the entry carries the drink's drinker now")
    }

    @Test("bounded: past the bound the oldest rows go and are counted")
    func bounded() throws {
        let s = try store()
        try s.setOutbox(enabled: true, bound: 5)
        for i in 0..<12 { _ = try s.insert([(sip("e\(i)"), [])]) }
        let status = try s.outboxStatus()
        #expect(status.pending == 5 && status.dropped == 7 && status.bound == 5)
        #expect(try s.outbox(after: 0, limit: 100).map(\.identity) == ["e7", "e8", "e9", "e10", "e11"])
        #expect(throws: StoreError.self) { try s.setOutbox(enabled: true, bound: 0) }
    }
}

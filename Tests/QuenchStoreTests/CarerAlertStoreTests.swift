import QuenchCore
import QuenchStore
import QuenchTestSupport
import Testing

/// A carer's alert claimed for sending, and put back when the push never arrived
/// (`releaseCarerAlert`): each claim returns to what it was, and one that changed meanwhile is left.
@Suite("carer's alerts in the store")
struct CarerAlertStoreTests {
    let at = Timestamp(secondsSince1970: 1_790_000_000)

    /// A store with an alert raised at `at` about its first person, for the spell after drink "d1".
    func raised() throws -> (IntakeStore, Int64, TemporaryDirectory) {
        let dir = TemporaryDirectory()
        let store = try IntakeStore(path: dir.file("q.sqlite"))
        let me = try #require(try store.people().first).id
        #expect(try store.raiseCarerAlert(person: me, lastDrink: "d1", at: at))
        return (store, me, dir)
    }

    @Test("raised, then not delivered: gone, and raised again by the next run")
    func aRaisedAlertGoes() throws {
        let (store, me, dir) = try raised()
        _ = dir
        #expect(try store.releaseCarerAlert(person: me, lastDrink: "d1", sends: 1, at: at, before: nil))
        #expect(try store.carerAlert(person: me, lastDrink: "d1") == nil)
        #expect(try store.raiseCarerAlert(person: me, lastDrink: "d1", at: at.adding(300)), "the next run raises it")
        // Acknowledged between the claim and the failure: the carer saw it on the page; it stays.
        _ = try store.acknowledgeCarerAlert(person: me, lastDrink: "d1", at: at.adding(310))
        #expect(try !store.releaseCarerAlert(person: me, lastDrink: "d1", sends: 1, at: at.adding(300), before: nil))
        #expect(try store.carerAlert(person: me, lastDrink: "d1")?.acknowledgedAt == at.adding(310))
    }

    /// Claims a sending with `claim`, then puts back what it claimed (`sends` at `time`): the alert is as before.
    func claimAndPutBack(_ store: IntakeStore, _ me: Int64, sends: Int, at time: Timestamp, _ claim: () throws -> Bool) throws {
        let before = try #require(try store.carerAlert(person: me, lastDrink: "d1"))
        #expect(try claim())
        #expect(try store.releaseCarerAlert(person: me, lastDrink: "d1", sends: sends, at: time, before: before))
        #expect(try store.carerAlert(person: me, lastDrink: "d1") == before)
    }

    @Test("sent again, then not delivered: its count and time as before; claimed again meanwhile, left")
    func aSendingAgainIsUndone() throws {
        let (store, me, dir) = try raised()
        _ = dir
        let before = try #require(try store.carerAlert(person: me, lastDrink: "d1"))
        try claimAndPutBack(store, me, sends: 2, at: at.adding(7200)) {
            try store.sendCarerAlertAgain(person: me, lastDrink: "d1", after: 1, for: 2, at: at.adding(7200))
        }
        // Another timer claimed it again before this one put it back: that claim stands.
        #expect(try store.sendCarerAlertAgain(person: me, lastDrink: "d1", after: 1, for: 2, at: at.adding(7300)))
        #expect(try !store.releaseCarerAlert(person: me, lastDrink: "d1", sends: 2, at: at.adding(7200), before: before))
        #expect(try store.carerAlert(person: me, lastDrink: "d1")?.lastSentAt == at.adding(7300))
    }

    @Test("reopened after a lapsed acknowledgement, then not delivered: acknowledged as it was, so the next run reopens it")
    func aReopeningIsUndone() throws {
        let (store, me, dir) = try raised()
        _ = dir
        _ = try store.acknowledgeCarerAlert(person: me, lastDrink: "d1", at: at.adding(600))
        try claimAndPutBack(store, me, sends: 4, at: at.adding(50_000)) {
            let reopened = try store.reopenCarerAlert(person: me, lastDrink: "d1", acknowledged: at.adding(600), sends: 4, at: at.adding(50_000))
            #expect(try store.carerAlert(person: me, lastDrink: "d1")?.acknowledgedAt == nil)
            return reopened
        }
        #expect(try store.reopenCarerAlert(person: me, lastDrink: "d1", acknowledged: at.adding(600), sends: 4, at: at.adding(50_300)))
    }
}

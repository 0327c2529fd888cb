import QuenchCore
import Testing

/// Which gateway connects a bottle several can reach (docs/hub.md): the rule every
/// gateway applies alike to the same claims.
@Suite("hand-over rule: the best signal, with hysteresis")
struct HandOverRuleTests {
    let rule = HandOverRule()
    let now = Timestamp(secondsSince1970: 1_800_000_000)

    func claim(_ gateway: String, _ rssi: Int?, heard: Double? = 0, holding: Bool = false, said: Double = 0) -> DeviceClaim {
        DeviceClaim(gateway: gateway, rssi: rssi, heardAt: heard.map { Timestamp(secondsSince1970: now.secondsSince1970 - $0) }, holding: holding,
                    at: Timestamp(secondsSince1970: now.secondsSince1970 - said))
    }

    @Test func aGatewayAloneTakesItOnceItHearsIt() {
        #expect(rule.decide(mine: claim("a", -80), others: [], now: now) == .take)
        #expect(rule.decide(mine: claim("a", nil, heard: nil), others: [], now: now) == .unheard)
        #expect(rule.decide(mine: claim("a", -80, heard: rule.freshFor + 1), others: [], now: now) == .unheard)
        #expect(rule.decide(mine: claim("a", nil, heard: nil, holding: true), others: [], now: now) == .keep)
        // Claims gone stale (a gateway that died, or has not heard the bottle for a while) are no rivals.
        let stale = [claim("b", -40, heard: rule.freshFor + 1), claim("c", -40, holding: true, said: rule.freshFor + 1)]
        #expect(rule.decide(mine: claim("a", -90), others: stale, now: now) == .take)
    }

    @Test func nobodyHoldsItTheStrongestTakesItAndTiesGoAlike() {
        #expect(rule.decide(mine: claim("a", -60), others: [claim("b", -75)], now: now) == .take)
        #expect(rule.decide(mine: claim("b", -75), others: [claim("a", -60)], now: now) == .leave(to: "a"))
        // Equal signals (the VM's radio reports -50 for all): the lower gateway id, on both sides.
        #expect(rule.decide(mine: claim("a", -50), others: [claim("b", -50)], now: now) == .take)
        #expect(rule.decide(mine: claim("b", -50), others: [claim("a", -50)], now: now) == .leave(to: "a"))
        // One that does not hear it waits for one that does.
        #expect(rule.decide(mine: claim("a", -40, heard: nil), others: [claim("b", -90)], now: now) == .leave(to: "b"))
    }

    @Test func aHolderKeepsItUntilAnotherHearsItBetterByTheMargin() {
        let mine = claim("b", -64, holding: true)
        #expect(rule.decide(mine: mine, others: [claim("a", -64 + rule.marginDB - 1)], now: now) == .keep)
        #expect(rule.decide(mine: mine, others: [claim("a", -64 + rule.marginDB)], now: now) == .release(to: "a"))
        // The challenger waits for the release, whatever it hears.
        #expect(rule.decide(mine: claim("a", -30), others: [mine], now: now) == .leave(to: "b"))
        // A holder that never heard the bottle (it connected alone) keeps it.
        #expect(rule.decide(mine: claim("b", nil, heard: nil, holding: true), others: [claim("a", -30)], now: now) == .keep)
    }

    @Test func twoHoldersTheWeakerLetsGo() {
        #expect(rule.decide(mine: claim("a", -70, holding: true), others: [claim("b", -60, holding: true)], now: now) == .release(to: "b"))
        #expect(rule.decide(mine: claim("b", -60, holding: true), others: [claim("a", -70, holding: true)], now: now) == .keep)
    }

    @Test func aReleasedHoldersOldSignalDoesNotOutrankOneHeardNow() {
        // It heard the bottle before it connected, a while ago; it lost the link since: the one that hears it now takes it.
        let released = claim("a", -40, heard: rule.freshFor + 5)
        #expect(rule.decide(mine: claim("b", -70), others: [released], now: now) == .take)
        #expect(rule.decide(mine: released, others: [claim("b", -70)], now: now) == .leave(to: "b"))
    }
}

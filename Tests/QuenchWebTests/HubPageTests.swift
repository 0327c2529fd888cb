#if canImport(Glibc)
import Foundation
import QuenchCore
import QuenchStore
import QuenchTestSupport
import Testing

/// Issue 25's carers at the hub: the page (`quench serve`) on the hub's database, filled by a
/// real hub from two gateways on a real mosquitto, is the carer's view of every resident of both
/// rooms, sorted, with the alert the hub's timer sent; at a phone's width.
@Suite(.serialized, .enabled(if: quenchBinary != nil, "SKIPPED: quench is not built (swift build)"),
       .enabled(if: MosquittoBroker.isInstalled, Comment(rawValue: MosquittoBroker.missing)))
struct HubPageTests {
    @Test(.enabled(if: WebDriver.isInstalled, Comment(rawValue: WebDriver.missing)))
    func theHubsPageIsTheCarersViewOfEveryRoom() async throws {
        let broker = try MosquittoBroker()
        let folder = try TemporaryFolder("quench-hub-page")
        let now = Date().timeIntervalSince1970
        // Two rooms, a resident each: Ada drank 20 minutes ago in the kitchen, Bo 5 hours ago in the bedroom.
        var processes: [Process] = []
        defer { for p in processes { p.terminate(); p.waitUntilExit() } }
        for (node, person, minutesAgo) in [("kitchen", "Ada", 20.0), ("bedroom", "Bo", 300.0)] {
            let path = folder.file("\(node).sqlite")
            let store = try IntakeStore(path: path)
            let resident = try store.addPerson(name: person)
            _ = try store.addManual(ml: 200, at: Timestamp(secondsSince1970: now - minutesAgo * 60), note: nil,
                                    identity: "\(node)|tea", person: resident.id)
            processes.append(try startQuench(["mqtt", "run", "--db", path, "--broker", broker.url, "--node-id", node, "--seconds", "120"]))
        }
        // The hub's household in a zone where it is afternoon now: everyone awake, whatever the hour here.
        let hub = folder.file("hub.sqlite")
        try IntakeStore(path: hub).saveSettings(Settings(units: .ml, dayStartHour: 4, timeZone: WebFixture.afternoon(now).zone))
        processes.append(try startQuench(["hub", "run", "--db", hub, "--broker", broker.url, "--seconds", "120"]))
        let arrived = await Self.waitFor(seconds: 60) {
            let carer = try runQuench(["carer", "--json", "--db", hub]).stdout
            return carer.contains(#""person":"Ada""#) && carer.contains(#""person":"Bo""#)
        }
        try #require(arrived, "the hub did not get both rooms' residents")
        // A threshold set at the hub, and the hub's timer: an alert about Bo, over his hour.
        #expect(try runQuench(["person", "alert", "Bo", "1h", "--db", hub]).status == 0)
        let sent = try runQuench(["carer", "--notify", "--db", hub]).stdout
        #expect(sent.hasPrefix("carer's alert: Bo has had nothing to drink for 5 h"), "\(sent)")

        let server = try await ServerProcess(database: hub)
        defer { _ = server.stop() }
        try await WebDriver.session { browser in
            try await browser.open(server.url + "/?view=carer")
            #expect(try await browser.waitUntil(BrowserTests.loaded) != nil)
            // Every room's resident, the one longest without a drink first (Bo, over his hour when awake).
            let order = try await CarerAndHistoryPageTests.carerOrder(browser)
            #expect(order.starts(with: ["Bo"]) && order.contains("Ada"), "\(order)")
            let row = try await browser.run("return document.querySelector('#carer-list li[data-person=\"Bo\"]').textContent") as? String ?? ""
            #expect(row.contains("5 h") && row.contains("without a drink") && row.contains("Alert sent ") && row.contains("Acknowledge"), "\(row)")
            #expect(try await FamilyPageTests.text(browser, "carer-summary") == "Bo is over their threshold.")
            // Ada came from the kitchen's gateway with no threshold: said, or no alert would ever come about her.
            #expect(try await FamilyPageTests.text(browser, "carer-unwatched") == "No alert is set for Ada: choose when to flag them beside their name.")
            _ = try await browser.fullPageScreenshot(to: screenshotFolder + "/phone-hub-carer.png", width: 390)
            try await FamilyPageTests.noConsoleErrors(browser)
        }
    }

    static func waitFor(seconds: Double, _ condition: () throws -> Bool) async -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if (try? condition()) == true { return true }
            try? await Task.sleep(for: .milliseconds(200))
        }
        return (try? condition()) == true
    }
}
#endif

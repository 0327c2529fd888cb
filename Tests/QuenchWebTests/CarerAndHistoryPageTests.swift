import Foundation
import QuenchCore
import QuenchHistory
import QuenchStore
import QuenchTestSupport
import Testing

/// Issue 21's second list, as a family and a carer use it: the carer's view (who has gone longest
/// without a drink, sorted, a threshold per person), the streak with its days, earlier months, the
/// phone's share sheet for the card, the home screen's icons, and gzip.
@Suite(.serialized, .enabled(if: quenchBinary != nil, "SKIPPED: quench is not built (swift build)"))
struct CarerAndHistoryPageTests {
    static func carerOrder(_ browser: WebDriver) async throws -> [String] {
        try await browser.run("return [...document.querySelectorAll('#carer-list li')].map((li) => li.dataset.person)") as? [String] ?? []
    }

    /// An instant `minutes` ago, as `--at` takes it.
    static func ago(minutes: Double) -> String {
        let formatter = ISO8601DateFormatter()
        return formatter.string(from: Date(timeIntervalSinceNow: -minutes * 60))
    }

    @Test(.enabled(if: WebDriver.isInstalled, Comment(rawValue: WebDriver.missing)))
    func theCarersViewPutsWhoHasGoneLongestWithoutADrinkFirstWithAThresholdEach() async throws {
        let fixture = try WebFixture()  // its clock is about 15:00, inside the waking hours 08:00–22:00
        _ = try fixture.quench(["person", "add", "Gran"])
        // Bob was added at 07:00 and has no drink recorded since: seven of his waking hours, counted from there.
        _ = try IntakeStore(path: fixture.database).addPerson(name: "Bob Lee", units: .usFluidOunce, at: .wallClockNow.adding(-8 * 3600))
        _ = try fixture.quench(["add", "200ml", "--person", "Gran", "--at", Self.ago(minutes: 5 * 60)])
        _ = try fixture.quench(["person", "alert", "Gran", "2h"])
        let server = try await ServerProcess(database: fixture.database)
        defer { _ = server.stop() }
        // The API is `quench carer --json`: the same people in the same order.
        let cli = try JSONSerialization.jsonObject(with: Data(fixture.quench(["carer", "--json"]).utf8)) as? [String: Any]
        let api = try await server.client.get("/api/carer").json as? [String: Any]
        let names = { (report: [String: Any]?) in (report?["people"] as? [[String: Any]])?.compactMap { $0["person"] as? String } ?? [] }
        #expect(names(api) == names(cli) && names(api) == ["Gran", "Bob Lee", "me"], "\(names(api)) \(names(cli))")
        // The timer sent the alert about Gran two hours ago, at 3 h (raised here as it would have), and
        // nobody acknowledged it: its run now, at twice her 2 h, sends it again (no [notify] url: to the journal alone).
        let store = try IntakeStore(path: fixture.database)
        let granID = try #require(try store.people().first { $0.name == "Gran" }?.id)
        let last = try #require(try store.lastSip(before: .wallClockNow, person: granID))
        #expect(try store.raiseCarerAlert(person: granID, lastDrink: CarerAlert.spell(after: last), at: .wallClockNow.adding(-2 * 3600)))
        let sent = try fixture.quench(["carer", "--notify"])
        // (5 h, or 5 h and a minute on a slow machine: her drink was put 5 h before the fixture's now.)
        #expect(sent.hasPrefix("carer's alert: Gran has still had nothing to drink for 5 h"), "\(sent)")
        // And one about Bob (never a drink) sent yesterday, unanswered: its time says its day.
        let bobID = try #require(try store.people().first { $0.name == "Bob Lee" }?.id)
        #expect(try store.raiseCarerAlert(person: bobID, lastDrink: CarerAlert.noDrink, at: .wallClockNow.adding(-26 * 3600)))

        try await WebDriver.session { browser in
            // A phone whose own zone is a day away from the household's: "today" is the household's (the
            // card read Gran's alert of two hours ago as "Monday 30 November 13:05" from 00:00 to 03:00 UTC).
            try await browser.timeZone(WebFixture.zoneADayAway(from: fixture.zone))
            // And whose clock is 12 h ahead of the Pi's: what is "today" and how long ago comes from the Pi's clock.
            try await browser.clockAhead(hours: 12)
            try await browser.open(server.url + "/?view=carer")
            #expect(try await browser.waitUntil(BrowserTests.loaded) != nil)
            // Gran, over her 2 h: first, marked, and said. Bob has none in 7 h since his adding; `me` drank 40 min ago.
            #expect(try await Self.carerOrder(browser) == ["Gran", "Bob Lee", "me"])
            #expect(try await FamilyPageTests.text(browser, "carer-summary") == "Gran is over their threshold.")
            // A household's carer chose whom to watch: nobody unwatched is said (at a hub they are).
            #expect(try await browser.run("return document.getElementById('carer-unwatched').hidden") as? Bool == true)
            let gran = try await browser.run("return document.querySelector('#carer-list li[data-person=\"Gran\"]').textContent") as? String ?? ""
            #expect(gran.contains("5 h") && gran.contains("without a drink") && gran.contains("(over 2 h)"), "\(gran)")
            #expect(try await browser.run("return document.querySelector('#carer-list li[data-person=\"Gran\"]').classList.contains('overdue')") as? Bool == true)
            #expect(gran.contains("Alert sent ") && gran.contains(", again "), "\(gran)")
            let bobRow = try await browser.run("return document.querySelector('#carer-list li[data-person=\"Bob Lee\"]').textContent") as? String ?? ""
            // 7 h and the fixture's minutes past 15:00; 8 h when the hour turned since the fixture was made (CI at 17:59 UTC).
            #expect(bobRow.range(of: #"(7 h( \d+ min)?|8 h) without a drink.*No drink recorded since added 07:\d\d · today 0"#, options: .regularExpression) != nil, "\(bobRow)")
            // Yesterday's alert with its day; today's with its time alone (it read "Alert sent 13:30" at 12:51).
            let alertState = { (who: String) async throws -> String in
                try await browser.run("return document.querySelector('#carer-list li[data-person=\"\(who)\"] .alert-state').textContent") as? String ?? ""
            }
            let bobAlert = try await alertState("Bob Lee"), granAlert = try await alertState("Gran")
            #expect(bobAlert.range(of: #"^Alert sent [A-Z][a-z]+day \d{1,2} [A-Z][a-z]+ \d\d:\d\d$"#, options: .regularExpression) != nil, "\(bobAlert)")
            #expect(granAlert.range(of: #"^Alert sent \d\d:\d\d, again \d\d:\d\d$"#, options: .regularExpression) != nil, "\(granAlert)")
            // The household's cards say an unanswered alert too, linking to the carer's view: "On pace"
            // beside it let a glance at the household miss it.
            try await browser.open(server.url + "/")
            #expect(try await browser.waitUntil(BrowserTests.loaded) != nil)
            let cards = try await browser.run("""
                return [...document.querySelectorAll('#people li')].map((li) => li.dataset.person + ': ' + (li.querySelector('.alert-state')?.textContent ?? ''))
                """) as? [String] ?? []
            #expect(cards.count == 3 && cards.contains("me: "), "\(cards)")
            #expect(cards.contains { $0.range(of: #"^Gran: Carer alert sent \d\d:\d\d, not acknowledged$"#, options: .regularExpression) != nil }, "\(cards)")
            #expect(cards.contains { $0.range(of: #"^Bob Lee: Carer alert sent [A-Z][a-z]+day \d{1,2} [A-Z][a-z]+ \d\d:\d\d, not acknowledged$"#,
                                              options: .regularExpression) != nil }, "\(cards)")
            #expect(try await browser.run("return document.querySelector('#people li[data-person=\"Gran\"] .alert-state a').getAttribute('href')") as? String == "/?view=carer")
            // Gran's drink of 5 h ago, today, on the Pi's clock (on the phone's, 12 h ahead: yesterday's, "17 h ago").
            let lastDrinks = try await browser.run("""
                return [...document.querySelectorAll('#people li .last')].map((p) => p.closest('li').dataset.person + ': ' + p.textContent)
                """) as? [String] ?? []
            #expect(lastDrinks.contains { $0.range(of: #"^Gran: Last drink \d\d:\d\d \(5 h( 1 min)? ago\)$"#, options: .regularExpression) != nil }, "\(lastDrinks)")
            _ = try await browser.fullPageScreenshot(to: screenshotFolder + "/phone-household-alert.png", width: 390)
            try await browser.open(server.url + "/?view=carer")
            #expect(try await browser.waitUntil(BrowserTests.loaded) != nil)
            _ = try await browser.fullPageScreenshot(to: screenshotFolder + "/phone-carer.png", width: 390)
            // A carer acknowledges it: said, shown, and the button gone (a second one would say when the first was).
            try await browser.click("#carer-list li[data-person='Gran'] button[data-focus='ack-Gran']")
            #expect(try await browser.waitUntil("return document.getElementById('edit-status').textContent === 'Acknowledged the alert about Gran'") != nil)
            #expect(try await browser.waitUntil("return document.querySelector('#carer-list li[data-person=\"Gran\"] .alert-state').textContent.includes(', acknowledged ')") != nil)
            #expect(try await browser.run("return document.querySelector(\"#carer-list li[data-person='Gran'] button[data-focus='ack-Gran']\") === null") as? Bool == true)
            #expect(try fixture.quench(["carer", "--json"]).contains(#""alert_acknowledged_at":"#))

            // Bob is watched from now, after an hour: with none in the 7 h since his adding he is over it, and first.
            _ = try await browser.run("""
                const s = document.querySelector('#carer-list li[data-person="Bob Lee"] select'); s.value = '60';
                s.dispatchEvent(new Event('change', { bubbles: true })); return true
                """)
            #expect(try await browser.waitUntil("return document.getElementById('carer-summary').textContent === 'Bob Lee, Gran are over their threshold.'") != nil)
            #expect(try await Self.carerOrder(browser) == ["Bob Lee", "Gran", "me"])
            let stored = try fixture.quench(["carer", "--json"])
            #expect(stored.contains(#""alert_after_minutes":60"#) && stored.contains(#""overdue":2"#), "\(stored)")
            #expect(try await FamilyPageTests.text(browser, "edit-status") == "Bob Lee is flagged after 1 h without a drink")

            // A carer gives Gran a glass: logged for her, she is no longer over. The rows keep their
            // places (the next button must not slide under the finger) until "Sort again".
            try await browser.click("#carer-list li[data-person='Gran'] button.add")
            #expect(try await browser.waitUntil("return document.getElementById('carer-summary').textContent === 'Bob Lee is over their threshold.'") != nil)
            #expect(try await Self.carerOrder(browser) == ["Bob Lee", "Gran", "me"])
            #expect(try await browser.run("return document.getElementById('carer-resort').hidden") as? Bool == false)
            try await browser.click("#carer-resort")
            #expect(try await browser.waitUntil("return [...document.querySelectorAll('#carer-list li')].map((li) => li.dataset.person).join('|') === 'Bob Lee|me|Gran'") != nil)
            #expect(try await browser.run("return document.getElementById('carer-resort').hidden") as? Bool == true)
            #expect(try fixture.json(["today", "--person", "Gran"])["intake_ml"] as? Double == 450)
            // Bob's units are his own, and his quick add is in them.
            let bob = try await browser.run("return document.querySelector('#carer-list li[data-person=\"Bob Lee\"] button.add').textContent") as? String
            #expect(bob == "+8 fl oz")
            // Not watched any more: off.
            _ = try await browser.run("""
                const s = document.querySelector('#carer-list li[data-person="Bob Lee"] select'); s.value = 'off';
                s.dispatchEvent(new Event('change', { bubbles: true })); return true
                """)
            #expect(try await browser.waitUntil("return document.getElementById('carer-summary').textContent === 'Nobody is over their threshold.'") != nil)
            // His alert from yesterday, still open, is answered with it: no Acknowledge left on his row.
            #expect(try await FamilyPageTests.text(browser, "edit-status") == "Bob Lee is no longer flagged, and the alert about them is acknowledged")
            #expect(try await browser.run("return document.querySelector(\"#carer-list li[data-person='Bob Lee'] button[data-focus='ack-Bob Lee']\") === null") as? Bool == true)
            // A threshold out of range is refused in words, naming what is allowed.
            let refused = try await server.client.postJSON("/api/person/alert", ["person": "Gran", "after": "26h"])
            #expect(refused.status == 400 && refused.body.contains("after: invalid amount '26h': between 15 min and 24 h, please"), "\(refused.body)")
            // On a desktop, light and dark: across the page, nothing beyond it.
            try await browser.command("POST", "/goog/cdp/execute", ["cmd": "Emulation.setDeviceMetricsOverride",
                                                                   "params": ["width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": false]])
            for dark in [false, true] {
                try await browser.command("POST", "/goog/cdp/execute", ["cmd": "Emulation.setEmulatedMedia",
                                                                       "params": ["features": [["name": "prefers-color-scheme", "value": dark ? "dark" : "light"]]]])
                try await browser.open(server.url + "/?view=carer")
                #expect(try await browser.waitUntil(BrowserTests.loaded) != nil)
                #expect(try await browser.run("return document.documentElement.scrollWidth <= document.documentElement.clientWidth") as? Bool == true)
                let wide = try await browser.run("return document.getElementById('carer').getBoundingClientRect().width") as? Double ?? 0
                #expect(wide > 900, "the carer's view spans the page at 1280 px: \(wide)")
                _ = try await browser.screenshot(to: screenshotFolder + "/desktop-carer\(dark ? "-dark" : "").png")
            }
            try await FamilyPageTests.noConsoleErrors(browser)
        }
    }

    /// At night nobody is over (waking hours 08:00-22:00), yet the day's alert is still open: the
    /// summary says so, as `quench carer` does, not "Nobody is over their threshold." above it.
    @Test(.enabled(if: WebDriver.isInstalled, Comment(rawValue: WebDriver.missing)))
    func atNightAnOpenAlertIsSaidSo() async throws {
        let fixture = try WebFixture(hour: 23)
        _ = try fixture.quench(["person", "alert", "me", "2h"])
        let store = try IntakeStore(path: fixture.database)
        let me = try #require(try store.people().first { $0.name == "me" }?.id)
        let last = try #require(try store.lastSip(before: .wallClockNow, person: me))
        #expect(try store.raiseCarerAlert(person: me, lastDrink: CarerAlert.spell(after: last), at: .wallClockNow.adding(-3 * 3600)))
        let server = try await ServerProcess(database: fixture.database)
        defer { _ = server.stop() }
        try await WebDriver.session { browser in
            try await browser.open(server.url + "/?view=carer")
            #expect(try await browser.waitUntil(BrowserTests.loaded) != nil)
            #expect(try await FamilyPageTests.text(browser, "carer-summary")
                    == "Nobody is over their threshold now: it counts in waking hours, and me is outside theirs (the alert is still open).")
        }
    }

    @Test(.enabled(if: WebDriver.isInstalled, Comment(rawValue: WebDriver.missing)))
    func theStreakShowsItsDaysAndTheCalendarOpensEarlierMonths() async throws {
        let fixture = try WebFixture()
        // A goal met on each of the fixture's 42 days and today: a streak that began in an earlier month.
        let today = try #require(fixture.json(["today"])["date"] as? String)
        let start = try #require(fixture.json(["stats", "--days", "43"])["from"] as? String)
        _ = try fixture.quench(["goal", "set", "100ml", "--from", start])
        let stats = try fixture.json(["stats", "--days", "7"])
        let from = try #require(stats["current_streak_from"] as? String)
        #expect(stats["current_streak_through"] as? String == today && stats["current_streak"] as? Int == 43, "\(stats)")
        let server = try await ServerProcess(database: fixture.database)
        defer { _ = server.stop() }
        try await WebDriver.session { browser in
            try await browser.open(server.url + "/")
            #expect(try await browser.waitUntil(BrowserTests.loaded) != nil)
            // Its first day is named, and a link to it.
            let link = try await browser.run("return document.getElementById('streak-start').getAttribute('href')") as? String
            #expect(link == "/?date=" + from)
            #expect(try await FamilyPageTests.text(browser, "streaks").hasPrefix("Streak: 43 days, since "))
            // This month's days of the streak are marked on the calendar: every day up to today.
            let marked = try await browser.run("return document.querySelectorAll('#calendar td.streak').length") as? Int
            #expect(marked == Int(today.suffix(2)), "\(marked ?? -1) days marked, today is \(today)")
            #expect(try await browser.run("return document.getElementById('later-month').hidden") as? Bool == true, "no month after this one")
            let thisMonth = try await FamilyPageTests.text(browser, "calendar-title")

            // The month before: its days are `quench calendar --month`'s.
            try await browser.click("#earlier-month")
            #expect(try await browser.waitUntil("return document.getElementById('calendar-title').textContent !== '\(thisMonth)'") != nil)
            let previous = try #require(Calendar(identifier: .gregorian).date(byAdding: .month, value: -1,
                                                                              to: ISO8601DateFormatter().date(from: today + "T12:00:00Z")!))
            let month = String(ISO8601DateFormatter().string(from: previous).prefix(7))
            let calendar = try fixture.json(["calendar", "--month", month])
            let days = (calendar["days"] as? [[String: Any]]) ?? []
            let shown = try await browser.run("return document.querySelectorAll('#calendar a.day').length") as? Int
            #expect(shown == days.count && days.count >= 28, "\(month): \(shown ?? -1) days shown, \(days.count) in the month")
            let metShown = try await browser.run("return document.querySelectorAll('#calendar td.met').length") as? Int
            #expect(metShown == days.filter { $0["met"] as? Bool == true }.count)
            #expect(try await browser.run("return document.getElementById('later-month').hidden") as? Bool == false)
            _ = try await browser.screenshot(to: screenshotFolder + "/phone-earlier-month.png")
            try await browser.click("#later-month")
            #expect(try await browser.waitUntil("return document.getElementById('calendar-title').textContent === '\(thisMonth)'") != nil)
            #expect(try await browser.run("return document.getElementById('later-month').hidden") as? Bool == true)
            try await FamilyPageTests.noConsoleErrors(browser)
        }
    }

    @Test(.enabled(if: WebDriver.isInstalled, Comment(rawValue: WebDriver.missing)),
          .enabled(if: SVGRasterizer.find().executable != nil, "SKIPPED: rsvg-convert is not installed: \(SVGRasterizer.installCommand) (the CI's .ci/run does)"))
    func theCardGoesToThePhonesShareSheetWhereThereIsOne() async throws {
        let fixture = try WebFixture()
        let server = try await ServerProcess(database: fixture.database)
        defer { _ = server.stop() }
        try await WebDriver.session { browser in
            try await browser.open(server.url + "/")
            #expect(try await browser.waitUntil(BrowserTests.loaded) != nil)
            // Without a share sheet (desktop Chromium on Linux, any page over plain HTTP) the link downloads the PNG.
            let link = try await browser.run("""
                const a = document.querySelector('a.card[data-card="share/day.png"]');
                return [a.getAttribute('download'), a.getAttribute('href')]
                """) as? [String]
            #expect(link == ["quench-today.png", "/api/share/day.png"], "\(link ?? [])")
            // A phone's browser has one (Web Share, level 2): what it is handed is the card as a PNG file.
            _ = try await browser.run("""
                window.handed = null;
                navigator.canShare = (data) => !!(data && data.files && data.files.every((f) => f.type === 'image/png'));
                navigator.share = async (data) => {
                  const f = data.files[0], head = new Uint8Array(await f.slice(0, 8).arrayBuffer());
                  window.handed = { name: f.name, type: f.type, size: f.size, head: Array.from(head), title: data.title };
                };
                return true
                """)
            try await browser.click("a.card[data-card='share/day.png']")
            #expect(try await browser.waitUntil("return window.handed !== null") != nil)
            let handed = try await browser.run("return window.handed") as? [String: Any]
            #expect(handed?["name"] as? String == "quench-today.png" && handed?["type"] as? String == "image/png", "\(handed ?? [:])")
            #expect((handed?["head"] as? [Int]) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], "a PNG's signature")
            #expect((handed?["size"] as? Int ?? 0) > 5_000)
            #expect(try await FamilyPageTests.text(browser, "edit-status") == "Shared today's card")
            // Cancelled in the sheet: nothing said as an error.
            _ = try await browser.run("navigator.share = async () => { throw new DOMException('cancelled', 'AbortError') }; return true")
            try await browser.click("a.card[data-card='share/week.png']")
            try await Task.sleep(for: .milliseconds(800))
            #expect(try await browser.run("return document.getElementById('edit-status').classList.contains('failed')") as? Bool == false)
            // A browser that no longer counts the tap (the card took long to come): the card is saved instead.
            _ = try await browser.run("navigator.share = async () => { throw new DOMException('no activation', 'NotAllowedError') }; return true")
            try await browser.click("a.card[data-card='share/day.png']")
            #expect(try await browser.waitUntil("return document.getElementById('edit-status').textContent === \"Saved today's card (this browser would not share it)\"") != nil)
            try await FamilyPageTests.noConsoleErrors(browser)
        }
    }

    /// What a person trying the page through a day ran into (a review by someone who had not built it).
    @Test(.enabled(if: WebDriver.isInstalled, Comment(rawValue: WebDriver.missing)))
    func aDayAsAFamilyTriedIt() async throws {
        let fixture = try WebFixture()  // about 15:00 on its clock
        _ = try fixture.quench(["person", "add", "Sam", "--units", "oz"])
        _ = try fixture.quench(["add", "300ml", "--person", "Sam"])
        let server = try await ServerProcess(database: fixture.database)
        defer { _ = server.stop() }
        try await WebDriver.session { browser in
            // Sam's day chart is Sam's: his 300 mL, not the household's day.
            let chart = try await server.client.get("/api/chart/day.svg?person=Sam")
            #expect(chart.body.contains("10.1 oz in 1 sip against a 67.6 oz goal"), "\(chart.body.prefix(600))")
            try await browser.open(server.url + "/?person=me")
            #expect(try await browser.waitUntil(BrowserTests.loaded) != nil)
            let before = try #require(try await FamilyPageTests.intake(browser))
            // A time later than now is said, not filed as yesterday's.
            try await browser.type("#custom-amount", "200")
            _ = try await browser.run("document.getElementById('add-more').open = true; document.getElementById('custom-time').value = '23:50'; return true")
            try await browser.click("#quick-add button[type=submit]")
            #expect(try await browser.waitUntil("return document.getElementById('edit-status').textContent === '23:50 has not come yet today (nothing was changed)'") != nil)
            #expect(try fixture.quench(["log", "--since", "yesterday", "--person", "me", "--json"]).contains("\"ml\":200") == false, "nothing stored")
            // "1.5" on a mL page is not a drop of 1.5 mL: said, with what to type.
            _ = try await browser.run("document.getElementById('custom-time').value = ''; document.getElementById('custom-amount').value = '1.5'; return true")
            try await browser.click("#quick-add button[type=submit]")
            #expect(try await browser.waitUntil("return document.getElementById('edit-status').textContent.startsWith('1.5 mL is a few drops: type 1.5l')") != nil)
            #expect(try await FamilyPageTests.intake(browser) == before)
            // A time before the day start (04:00) is yesterday's drink: said which day, not left to vanish from today's ring.
            _ = try await browser.run("document.getElementById('custom-time').value = '03:00'; document.getElementById('custom-amount').value = '200'; return true")
            let loadedBefore = try await browser.run("return document.body.dataset.loaded") as? String ?? ""
            try await browser.click("#quick-add button[type=submit]")
            let countsFor = #"return /^Added 200 mL at 03:00 \(it counts for \w+day \d+ \w+, whose day runs until your day starts\)$/.test(document.getElementById('edit-status').textContent)"#
            let waited = try await browser.waitUntil(countsFor)
            let addStatus = try await browser.run("return document.getElementById('edit-status').textContent") as? String
            #expect(waited != nil, "\(addStatus ?? "")")
            // The add is said before the page is drawn again: its rows are waited for, or the tap below lands on one redrawn.
            #expect(try await browser.waitUntil("return document.body.dataset.loaded !== '\(loadedBefore)'") != nil, "drawn again")
            #expect(try await FamilyPageTests.intake(browser) == before, "not today's")
            // A drink moved to a time to come is said in the page's words, and nothing changes.
            _ = try await browser.run("document.getElementById('custom-amount').value = ''; return true")
            try await browser.click("#sips tbody tr[data-id] button[data-focus^='edit-']")
            #expect(try await browser.waitUntil("return document.getElementById('edit-time') !== null") != nil)
            _ = try await browser.run("document.getElementById('edit-time').value = '23:55'; return true")
            try await browser.click(".edit-form button[type=submit]")
            #expect(try await browser.waitUntil("return document.getElementById('edit-status').textContent === '23:55 has not come yet today (nothing was changed)'") != nil)
            // A finished day has no pace tick on its ring.
            try await browser.open(server.url + "/?person=me&date=" + (try #require(fixture.json(["stats", "--days", "2", "--person", "me"])["from"] as? String)))
            #expect(try await browser.waitUntil(BrowserTests.loaded) != nil)
            #expect(try await browser.run("return getComputedStyle(document.getElementById('ring-pace')).visibility") as? String == "hidden")
            // Its quick adds are not there: they add a drink now, to today, while the page shows that day.
            #expect(try await browser.run("return getComputedStyle(document.getElementById('quick-buttons')).display") as? String == "none")
            #expect(try await browser.run("return document.getElementById('add-more').open") as? Bool == true)

            // In the household, Sam's quick add is said in his units, and so is its Undo.
            try await browser.open(server.url + "/?view=household")
            #expect(try await browser.waitUntil(BrowserTests.loaded) != nil)
            try await browser.click("#people li[data-person='Sam'] button.add")
            let said = try await browser.waitUntil("return /^Added 8\\.0 fl oz at \\d\\d:\\d\\d for Sam$/.test(document.getElementById('edit-status').textContent)")
            let status = try await FamilyPageTests.text(browser, "edit-status")
            #expect(said != nil, "\(status)")
            let undo = try await FamilyPageTests.text(browser, "undo")
            #expect(undo.hasSuffix(" for Sam") && undo.contains("8.0 fl oz"), "\(undo)")
            // Its name whole, not cut to a few letters.
            let cut = try await browser.run("const n = document.querySelector('#people li[data-person=\"Sam\"] .person-name'); return n.scrollWidth > n.clientWidth") as? Bool
            #expect(cut == false)
            try await FamilyPageTests.noConsoleErrors(browser)
        }
    }

    /// A card is rasterized once while nothing changes; a drink stored makes the next one anew.
    @Test(.enabled(if: SVGRasterizer.find().executable != nil, "SKIPPED: rsvg-convert is not installed: \(SVGRasterizer.installCommand) (the CI's .ci/run does)"))
    func aCardIsMadeAgainOnceTheHistoryChanges() async throws {
        let fixture = try WebFixture()
        let server = try await ServerProcess(database: fixture.database)
        defer { _ = server.stop() }
        let first = try await server.client.get("/api/share/day.png?person=me", headers: [("Accept-Encoding", "gzip")])
        let again = try await server.client.get("/api/share/day.png?person=me", headers: [("Accept-Encoding", "gzip")])
        #expect(first.status == 200 && Self.pngSize(first.bytes) != nil && again.bytes == first.bytes)
        #expect(first.header("Content-Encoding") == nil, "a PNG is not deflated again")
        // Another person's card is theirs, not this one.
        _ = try fixture.quench(["person", "add", "Ann"])
        let added = try await server.client.postJSON("/api/add", ["amount": "500ml"], headers: []).status
        #expect(added == 400, "several people now: whose is needed")
        let mine = try await server.client.postJSON("/api/add?person=me", ["amount": "500ml"])
        #expect(mine.status == 200, "\(mine.body)")
        let after = try await server.client.get("/api/share/day.png?person=me")
        #expect(after.status == 200 && after.bytes != first.bytes, "the card after a drink is not the one before it")
        let ann = try await server.client.get("/api/share/day.png?person=Ann")
        #expect(ann.status == 200 && ann.bytes != after.bytes)
    }

    /// The PNG's width and height from its IHDR chunk (PNG §11.2.2).
    static func pngSize(_ bytes: [UInt8]) -> (Int, Int)? {
        guard bytes.count > 24, bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]), Array(bytes[12..<16]) == Array("IHDR".utf8) else { return nil }
        let number = { (at: Int) in bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        return (number(16), number(20))
    }

    @Test func theHomeScreenHasPNGIconsAndEveryIconTheManifestNamesIsServed() async throws {
        let fixture = try WebFixture()
        let server = try await ServerProcess(database: fixture.database)
        defer { _ = server.stop() }
        let manifest = try #require(try await server.client.get("/manifest.webmanifest").json as? [String: Any])
        #expect(manifest["display"] as? String == "standalone")
        let icons = (manifest["icons"] as? [[String: String]]) ?? []
        for size in [192, 512] {
            #expect(icons.contains { $0["src"] == "/icon-\(size).png" && $0["sizes"] == "\(size)x\(size)" && $0["type"] == "image/png" })
        }
        #expect(icons.contains { $0["purpose"] == "maskable" }, "Android's adaptive icon")
        for icon in icons {
            let answer = try await server.client.get(icon["src"] ?? "")
            #expect(answer.status == 200 && answer.header("Content-Type") == icon["type"], "\(icon)")
            if icon["type"] == "image/png" {
                let size = try #require(Self.pngSize(answer.bytes), "\(icon["src"] ?? "") is not a PNG")
                #expect("\(size.0)x\(size.1)" == icon["sizes"])
            }
        }
        // iOS takes its home-screen icon from the page, as PNG only.
        #expect(try await server.client.get("/").body.contains(#"<link rel="apple-touch-icon" href="/icon-192.png">"#))
    }

    /// `gzip -dc`: Debian's gzip reads what the server wrote, so it is gzip and not only zlib's idea of it.
    static func gunzip(_ bytes: [UInt8]) throws -> [UInt8] {
        let folder = try TemporaryFolder.create("quench-gzip")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data(bytes).write(to: URL(fileURLWithPath: folder + "/body.gz"))
        let r = try runProgram("/bin/gzip", ["-dc", folder + "/body.gz"])
        guard r.status == 0 else { throw WebDriver.Failure("gzip -dc: \(r.stderr)") }
        return Array(r.stdout.utf8)
    }

    @Test func thePageAndLargeAnswersAreGzippedForAClientThatTakesIt() async throws {
        let fixture = try WebFixture()
        let server = try await ServerProcess(database: fixture.database)
        defer { _ = server.stop() }
        var compressed = 0, plain = 0
        for path in ["/", "/app.js", "/app.css", "/api/log?since=2000-01-01", "/api/chart/30days.svg"] {
            let asIs = try await server.client.get(path)
            let gzipped = try await server.client.get(path, headers: [("Accept-Encoding", "gzip, deflate, br")])
            #expect(asIs.header("Content-Encoding") == nil && asIs.status == 200, "\(path)")
            #expect(gzipped.header("Content-Encoding") == "gzip" && gzipped.header("Vary") == "Accept-Encoding", "\(path): \(gzipped.headers)")
            #expect(gzipped.bytes.count * 2 < asIs.bytes.count, "\(path): \(gzipped.bytes.count) of \(asIs.bytes.count) bytes")
            #expect(try Self.gunzip(gzipped.bytes) == asIs.bytes, "\(path): the same page once unpacked")
            compressed += gzipped.bytes.count
            plain += asIs.bytes.count
        }
        // A small answer goes as it is; gzip refused (q=0) is respected.
        let small = try await server.client.get("/api/goal", headers: [("Accept-Encoding", "gzip")])
        #expect(small.header("Content-Encoding") == nil && small.json != nil)
        let refused = try await server.client.get("/app.js", headers: [("Accept-Encoding", "gzip;q=0, identity")])
        #expect(refused.header("Content-Encoding") == nil)
        // The first load (page, script, style, icon) is far under the issue's 100 KB compressed.
        var firstLoad = 0
        for path in ["/", "/app.js", "/app.css", "/icon.svg", "/manifest.webmanifest"] {
            firstLoad += try await server.client.get(path, headers: [("Accept-Encoding", "gzip")]).bytes.count
        }
        #expect(firstLoad < 30_000, "first load \(firstLoad) bytes gzipped (\(compressed) of \(plain) for the five above)")
    }
}

import Foundation
import QuenchTestSupport
import Threading
#if canImport(Glibc)
import Glibc
#endif

/// Debian's chromedriver driving headless Chromium over W3C WebDriver: what a
/// person does on the page (open it, click, read), from the test.
final class WebDriver: Sendable {
    static let chromium = ["/usr/lib/chromium/chromium", "/usr/bin/chromium"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static let driverPath = ["/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static var isInstalled: Bool { chromium != nil && driverPath != nil }
    static let missing = "SKIPPED: Chromium and chromedriver are not installed: apt-get install -y chromium chromium-driver (the CI's .ci/run does)"

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    private let driver: ChildProcess.Running
    private let client: HTTPTestClient
    let session: String
    let log: String

    /// Starts chromedriver and a headless browser at `width`×`height` CSS pixels.
    init(width: Int, height: Int) async throws {
        let port = try TestPorts.next()
        log = try TemporaryFolder.create("quench-chromedriver") + "/chromedriver.log"
        driver = try ChildProcess.start(Self.driverPath!, ["--port=\(port)"], logFile: log).get()
        client = HTTPTestClient(port: port)
        var ready = false
        for _ in 0..<100 {
            if let answer = try? await client.get("/status"), answer.status == 200 { ready = true; break }
            try await Task.sleep(for: .milliseconds(100))
        }
        guard ready else { driver.signal(SIGKILL); _ = driver.wait(); throw Failure("chromedriver did not answer on port \(port) (log: \(log))") }
        let capabilities: [String: Any] = ["capabilities": ["alwaysMatch": [
            "browserName": "chrome",
            "goog:chromeOptions": ["binary": Self.chromium!, "args": [
                "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--window-size=\(width),\(height)", "--hide-scrollbars", "--force-device-scale-factor=1",
            ]],
            "goog:loggingPrefs": ["browser": "ALL"],
        ]]]
        let answer = try await client.postJSON("/session", capabilities)
        guard answer.status == 200, let value = (answer.json as? [String: Any])?["value"] as? [String: Any],
              let session = value["sessionId"] as? String else {
            driver.signal(SIGKILL); _ = driver.wait()
            throw Failure("chromedriver refused the session: \(answer.status) \(answer.body.prefix(500))")
        }
        self.session = session
        try await viewport(width: width, height: height)
    }

    /// A phone's viewport (Chrome's window cannot be narrower than 500 px), touch and all.
    func viewport(width: Int, height: Int) async throws {
        try await command("POST", "/goog/cdp/execute", ["cmd": "Emulation.setDeviceMetricsOverride",
                                                       "params": ["width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600]])
    }

    /// The phone's own time zone (IANA), as its settings would have it: the household's may be another.
    func timeZone(_ identifier: String) async throws {
        try await command("POST", "/goog/cdp/execute", ["cmd": "Emulation.setTimezoneOverride", "params": ["timezoneId": identifier]])
    }

    /// The phone's clock set `hours` ahead of the true time, for every page opened from now on (`Date.now()` and
    /// `new Date()`; a time given to `Date` is read as it is).
    func clockAhead(hours: Double) async throws {
        let source = """
            (() => { const ahead = \(hours * 3_600_000), Real = Date;
              class Phone extends Real { constructor(...given) { super(...(given.length ? given : [Real.now() + ahead])); }
                static now() { return Real.now() + ahead; } }
              globalThis.Date = Phone; })();
            """
        try await command("POST", "/goog/cdp/execute", ["cmd": "Page.addScriptToEvaluateOnNewDocument", "params": ["source": source]])
    }

    /// The whole page, not only the viewport: the viewport stretched to the document for the shot.
    func fullPageScreenshot(to path: String, width: Int) async throws -> [UInt8] {
        let height = try await run("return Math.ceil(document.documentElement.scrollHeight)") as? Int ?? 1000
        try await viewport(width: width, height: height)
        return try await screenshot(to: path)
    }

    /// A browser at `width` × `height` for `body`, closed however `body` ends.
    static func session(width: Int = 390, height: Int = 844, _ body: (WebDriver) async throws -> Void) async throws {
        let browser = try await WebDriver(width: width, height: height)
        do { try await body(browser) } catch {
            await browser.close()
            throw error
        }
        await browser.close()
    }

    func close() async {
        _ = try? await client.request("DELETE", "/session/\(session)")
        driver.signal(SIGTERM)
        _ = driver.wait()
    }

    @discardableResult
    func command(_ method: String, _ path: String, _ body: [String: Any]? = nil) async throws -> Any? {
        let answer = body == nil && method == "GET"
            ? try await client.get("/session/\(session)\(path)")
            : try await client.postJSON("/session/\(session)\(path)", body ?? [:])
        guard answer.status == 200 else { throw Failure("WebDriver \(method) \(path): \(answer.status) \(answer.body.prefix(500))") }
        return (answer.json as? [String: Any])?["value"]
    }

    func open(_ url: String) async throws { try await command("POST", "/url", ["url": url]) }

    /// Runs `script` (a function body) in the page and returns its value.
    func run(_ script: String, _ args: [Any] = []) async throws -> Any? {
        try await command("POST", "/execute/sync", ["script": script, "args": args])
    }

    /// Clicks the element `selector` finds, scrolled to the middle of the screen first as a person
    /// brings what they tap into view (chromedriver clicks one at the screen's edge where it is, under
    /// the page's bar at the foot); found again if the page redrew it in between (a live update
    /// replaces the list's rows).
    func click(_ selector: String) async throws {
        for attempt in 1...3 {
            guard let element = try await command("POST", "/element", ["using": "css selector", "value": selector]) as? [String: Any],
                  let id = element.values.first as? String else { throw Failure("no element \(selector)") }
            do {
                _ = try await run("arguments[0].scrollIntoView({ block: 'center', inline: 'nearest' }); return true", [element])
                try await command("POST", "/element/\(id)/click", [:])
                return
            } catch let failure as Failure where failure.description.contains("stale element reference") && attempt < 3 {
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    func type(_ selector: String, _ text: String) async throws {
        guard let element = try await command("POST", "/element", ["using": "css selector", "value": selector]) as? [String: Any],
              let id = element.values.first as? String else { throw Failure("no element \(selector)") }
        try await command("POST", "/element/\(id)/value", ["text": text])
    }

    /// Waits until `script` returns true; the time it took, or nil. It returns as soon as the page
    /// is there, so the bound is only how long a starved CI machine may take: an edit's round trip
    /// took over 10 s once, beside six emulated guests on two cores (CI of 9f56fa2).
    func waitUntil(_ script: String, timeout: Double = 30) async throws -> Double? {
        let start = ContinuousClock.now
        let deadline = Deadline(seconds: timeout)
        while !deadline.hasPassed {
            if try await run(script) as? Bool == true { return (ContinuousClock.now - start).seconds }
            try await Task.sleep(for: .milliseconds(50))
        }
        return nil
    }

    func screenshot(to path: String) async throws -> [UInt8] {
        guard let base64 = try await command("GET", "/screenshot") as? String, let data = Data(base64Encoded: base64) else {
            throw Failure("no screenshot")
        }
        try data.write(to: URL(fileURLWithPath: path))
        return Array(data)
    }

    /// The browser console's entries (chromedriver's log endpoint).
    func consoleEntries() async throws -> [(level: String, message: String)] {
        let entries = try await command("POST", "/se/log", ["type": "browser"]) as? [[String: Any]] ?? []
        return entries.map { ($0["level"] as? String ?? "", $0["message"] as? String ?? "") }
    }
}

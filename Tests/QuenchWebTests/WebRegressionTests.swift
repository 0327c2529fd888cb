import Foundation
import QuenchTestSupport
import Testing

extension RegressionManifest.Case: CustomTestStringConvertible {}

/// MANIFEST.tsv's requests (queries that once killed the server: a chart of a
/// year before 1000 trapped it): each answered with its status and the API's
/// error shape, and the server still answering afterwards.
@Suite(.serialized, .enabled(if: quenchBinary != nil, "SKIPPED: quench is not built (swift build)"))
struct WebRegressionTests {
    static let cases = RegressionManifest.cases.filter(\.isWebRequest)

    /// The JSON error's text, when the answer has the one shape `{"error":"…"}`.
    static func error(_ answer: HTTPTestClient.Answer) -> String? {
        guard answer.header("Content-Type") == "application/json; charset=utf-8",
              let object = answer.json as? [String: Any], object.count == 1 else { return nil }
        return object["error"] as? String
    }

    @Test func eachRequestIsAnsweredAndTheServerStaysUp() async throws {
        #expect(Self.cases.count >= 5, "MANIFEST.tsv has no web requests")
        let fixture = try WebFixture(days: 3)
        let server = try await ServerProcess(database: fixture.database)
        defer { _ = server.stop() }
        // A query value, every byte but letters and digits percent-encoded (`+` is not a space).
        let plain = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-")
        for c in Self.cases {
            let value = try c.contents().addingPercentEncoding(withAllowedCharacters: plain) ?? ""
            let path = String(c.arguments.dropFirst("GET ".count)).replacingOccurrences(of: "{contents}", with: value)
            let answer = try await server.client.get(path)
            #expect(answer.status == Int(c.status), "\(c.testDescription): \(answer.body.prefix(300))")
            if let message = c.message {
                let error = Self.error(answer)
                #expect(error?.contains(message) == true, "\(c.testDescription): \(answer.body.prefix(300))")
            }
            let alive = try await server.client.get("/api/today")
            #expect(alive.status == 200, "\(c.testDescription) left the server unable to answer")
        }
    }

    /// Random and boundary dates and numbers at every query the API parses: each
    /// answered (200 or a 4xx with the error shape), never a dead server.
    @Test func randomAndBoundaryQueriesNeverStopTheServer() async throws {
        let fixture = try WebFixture(days: 3)
        let server = try await ServerProcess(database: fixture.database)
        defer { _ = server.stop() }
        var random = FuzzRandom(seed: 24)
        var dates = ["0000-01-01", "0001-01-01", "0999-12-31", "1000-01-01", "1969-12-31", "1970-01-01", "1970-01-02", "9999-12-31",
                     "9999-12-30", "10000-01-01", "+999-01-01", "-001-01-01", "2026-02-29", "2024-02-29", "2026-13-01", "today", "yesterday",
                     "9999-12", "0999-12", "1970-01", "", "%00", "2026-01-01T00:00:00Z", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59-14:00"]
        func padded(_ n: UInt64, _ width: Int) -> String { String(repeating: "0", count: max(0, width - String(n).count)) + String(n) }
        for _ in 0..<40 {
            dates.append("\(padded(random.next() % 12_000, 4))-\(padded(random.next() % 14, 2))-\(padded(random.next() % 33, 2))")
        }
        let numbers = ["0", "1", "-1", "366", "367", "36600", "36601", "9223372036854775807", "-9223372036854775808",
                       "9223372036854775808", "1e308", "nan", "inf", "0x10", "1.5", ""]
        var paths: [String] = []
        for date in dates {
            let q = date.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            paths += ["/api/chart/week.svg?date=\(q)", "/api/chart/30days.svg?date=\(q)", "/api/chart/month.svg?date=\(q)",
                      "/api/chart/day.svg?date=\(q)", "/api/calendar?month=\(q.prefix(7))", "/api/log?since=\(q)&until=\(q)"]
        }
        for n in numbers {
            paths += ["/api/stats?days=\(n)", "/api/log?limit=\(n)"]
        }
        paths += ["/api/share/day.svg?name=\(String(repeating: "x", count: 41))", "/api/today?person=%00", "/api/share/week.svg?name=%E2%80%AE"]
        for path in paths {
            let answer = try await server.client.get(path)
            #expect(answer.status == 200 || (400..<500).contains(answer.status), "\(path): \(answer.status) \(answer.body.prefix(200))")
            if answer.status != 200 {
                #expect(Self.error(answer) != nil, "\(path): not the API's error shape: \(answer.body.prefix(200))")
            }
        }
        #expect(try await server.client.get("/api/today").status == 200)
    }
}

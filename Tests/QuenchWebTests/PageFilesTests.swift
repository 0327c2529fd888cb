import Foundation
import QuenchTestSupport
import Testing

/// The page's files (Sources/QuenchWeb/Page) are compiled in by the EmbedPage
/// plugin: what the server sends is each file byte for byte, but for the one
/// final newline an editor adds.
@Suite("the page's files, embedded")
struct PageFilesTests {
    @Test("each URL serves its file exactly", arguments: [
        ("/", "index.html"), ("/app.css", "page.css"), ("/app.js", "page.js"), ("/icon.svg", "icon.svg"),
        ("/sw.js", "sw.js"), ("/manifest.webmanifest", "manifest.webmanifest"),
    ])
    func servedAsWritten(path: String, file: String) async throws {
        var expected = [UInt8](try Data(contentsOf: TestPackage.root.appendingPathComponent("Sources/QuenchWeb/Page/\(file)")))
        #expect(expected.last == UInt8(ascii: "\n"), "\(file) ends with a newline, as editors write it")
        if expected.last == UInt8(ascii: "\n") { expected.removeLast() }
        #expect(expected.count > 100, "\(file) is the page's real file")
        let fixture = try WebFixture()
        let server = try await ServerProcess(database: fixture.database)
        defer { _ = server.stop() }
        let answer = try await server.client.get(path)
        #expect(answer.status == 200)
        #expect(Array(answer.body.utf8) == expected, "\(path) differs from Page/\(file)")
    }
}

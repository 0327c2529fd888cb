import Foundation
import QuenchTestSupport
import Testing

/// Every relative link and image in README.md, CONTRIBUTING.md and docs/*.md
/// points at a file that exists and, with `#anchor`, at a heading of it.
@Suite struct DocLinksTests {
    @Test(arguments: DocFiles.markdown)
    func relativeLinksResolve(file: String) throws {
        let lines = try DocFiles.lines(file)
        let folder = (file as NSString).deletingLastPathComponent
        for (number, target) in DocLinks.targets(lines) {
            guard !target.contains("://"), !target.hasPrefix("mailto:") else { continue }
            let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            let path = parts[0].removingPercentEncoding ?? parts[0]
            let linked = path.isEmpty ? file : (folder as NSString).appendingPathComponent(path)
            let normalised = (linked as NSString).standardizingPath
            let url = TestPackage.root.appendingPathComponent(normalised)
            guard FileManager.default.fileExists(atPath: url.path) else {
                Issue.record("\(file):\(number): \(target): no such file \(normalised)")
                continue
            }
            if parts.count == 2, !parts[1].isEmpty {
                guard normalised.hasSuffix(".md") else { continue }
                let anchors = DocLinks.anchors(try DocFiles.lines(normalised))
                #expect(anchors.contains(parts[1]), "\(file):\(number): \(target): \(normalised) has no heading #\(parts[1])")
            }
        }
    }

    @Test func anchorsAreGitHubs() {
        let anchors = DocLinks.anchors(["# Quench", "## A day with Quench", "### 1. Find it: `quench scan`", "## Charts, and a card to share",
                                        "## Charts, and a card to share", "```", "# not a heading", "```"])
        #expect(anchors == ["quench", "a-day-with-quench", "1-find-it-quench-scan", "charts-and-a-card-to-share",
                            "charts-and-a-card-to-share-1"])
        let links = DocLinks.targets(["See [a](docs/a.md#x) and `[b](not-a-link)`, <img src=\"docs/images/phone.png\" alt=\"p\">",
                                      "```", "[c](inside-code.md)", "```", "[d](#here)"]).map(\.target)
        #expect(links == ["docs/a.md#x", "docs/images/phone.png", "#here"])
    }
}

enum DocLinks {
    /// Each link target outside code, with its line (1-based): `[text](target)`, `src="..."`, `href="..."`.
    static func targets(_ lines: [String]) -> [(line: Int, target: String)] {
        let pattern = try! NSRegularExpression(pattern: "\\]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)|(?:src|href)=\"([^\"]+)\"")
        var result: [(Int, String)] = []
        let code = Markdown.codeLines(lines)
        for (i, raw) in lines.enumerated() where !code[i] {
            let line = withoutInlineCode(raw)
            for match in pattern.matches(in: line, range: NSRange(line.startIndex..., in: line)) {
                for group in 1...2 {
                    if let range = Range(match.range(at: group), in: line) { result.append((i + 1, String(line[range]))) }
                }
            }
        }
        return result
    }

    /// GitHub's anchors for the headings of a file (and `<a id="...">`/`<a name="...">`).
    static func anchors(_ lines: [String]) -> [String] {
        var seen: [String: Int] = [:]
        var result: [String] = []
        let code = Markdown.codeLines(lines)
        let explicit = try! NSRegularExpression(pattern: "<a (?:id|name)=\"([^\"]+)\"")
        for (i, line) in lines.enumerated() where !code[i] {
            for match in explicit.matches(in: line, range: NSRange(line.startIndex..., in: line)) {
                if let r = Range(match.range(at: 1), in: line) { result.append(String(line[r])) }
            }
            guard line.hasPrefix("#"), let space = line.firstIndex(of: " "), line[..<space].allSatisfy({ $0 == "#" }) else { continue }
            var text = String(line[line.index(after: space)...])
            // [text](link) → text
            text = text.replacingOccurrences(of: "\\[([^\\]]*)\\]\\([^)]*\\)", with: "$1", options: .regularExpression)
            let slug = String(text.lowercased().compactMap { c -> Character? in
                if c == " " { return "-" }
                if c.isLetter || c.isNumber || c == "-" || c == "_" { return c }
                return nil
            })
            let count = seen[slug, default: 0]
            seen[slug] = count + 1
            result.append(count == 0 ? slug : "\(slug)-\(count)")
        }
        return result
    }

    static func withoutInlineCode(_ line: String) -> String {
        line.replacingOccurrences(of: "`[^`]*`", with: "", options: .regularExpression)
    }
}

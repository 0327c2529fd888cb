import QuenchCore

/// Which line of a file a key is on. toml++ gives positions for syntax errors
/// only, so once it has accepted the text this looks at the lines the way a
/// person would: the `[table]` header in force, and `key =` (dotted, quoted)
/// at the start of a line. It answers "which line" and nothing else; the
/// values come from toml++.
struct KeyLocator {
    /// Each header or key line: its number (from 1) and the full dotted path it names.
    private var entries: [(line: Int, path: [String])] = []

    init(_ text: String) {
        var table: [String] = []
        // Inside a multi-line string, lines are text: `"""` or `'''`.
        var openString: String?
        for (index, raw) in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).enumerated() {
            let line = raw.drop { $0 == " " || $0 == "\t" }
            if let delimiter = openString {
                if Self.count(delimiter, in: line) % 2 == 1 { openString = nil }
                continue
            }
            if line.hasPrefix("[") {
                let inside = line.drop { $0 == "[" }.prefix { $0 != "]" }
                table = Self.keyPath(inside).path
                entries.append((index + 1, table))
            } else if let first = line.first, first.isLetter || first.isNumber || "_-\"'".contains(first) {
                let (path, rest) = Self.keyPath(line)
                guard rest.first == "=", !path.isEmpty else { continue }
                entries.append((index + 1, table + path))
                for delimiter in ["\"\"\"", "'''"] where Self.count(delimiter, in: rest) % 2 == 1 { openString = delimiter }
            }
        }
    }

    /// The line of `path`, else of the nearest table or key that holds it (an
    /// inline table, a section header), else of the first key inside it (a
    /// table made by dotted keys, `mqtt.host = …`); nil when the text never names it.
    func line(of path: [String]) -> Int? {
        var best: (line: Int, depth: Int)?
        for entry in entries where entry.path.count <= path.count && Array(path.prefix(entry.path.count)) == entry.path {
            if entry.path.count > best?.depth ?? 0 { best = (entry.line, entry.path.count) }
        }
        return best?.line ?? entries.first { Array($0.path.prefix(path.count)) == path }?.line
    }

    /// The dotted key at the start of `text` (`a."b.c" . d`), and what follows it.
    private static func keyPath(_ text: Substring) -> (path: [String], rest: Substring) {
        var path: [String] = []
        var part = ""
        var quote: Character?
        var escaped = false
        var index = text.startIndex
        while index < text.endIndex {
            let c = text[index]
            if let q = quote {
                if escaped { escaped = false; part.append(c) } else if c == "\\" && q == "\"" { escaped = true } else if c == q { quote = nil } else { part.append(c) }
            } else if c == "\"" || c == "'" {
                quote = c
            } else if c == "." || c == "=" || c == "]" {
                path.append(String(part.trimmingWhitespace))
                part = ""
                if c != "." { break }
            } else {
                part.append(c)
            }
            index = text.index(after: index)
        }
        if index == text.endIndex, !part.isEmpty { path.append(String(part.trimmingWhitespace)) }
        return (path, text[index...])
    }

    private static func count(_ needle: String, in text: Substring) -> Int {
        text.split(separator: needle, omittingEmptySubsequences: false).count - 1
    }
}


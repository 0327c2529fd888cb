import Foundation

/// A block of a Markdown file marked to be run: `<!-- sample -->` (or `<!-- sample: fresh mask=uuid -->`)
/// right before a fenced block whose `$ ` lines are commands, each followed by what it printed.
/// `<!-- sample-file: PATH -->` before a fenced block writes its text to PATH (under the sandbox's
/// home) instead. CONTRIBUTING.md ("Samples in the docs") is the user's side of this.
struct DocSample {
    /// The file, relative to the package root, and the line of the opening fence (1-based).
    var file: String
    var line: Int
    /// Line indices (0-based) of the block's content: `bodyStart..<bodyEnd`, fences excluded.
    var bodyStart: Int
    var bodyEnd: Int
    /// `fresh`: the sandbox is made anew before this sample.
    var fresh: Bool
    var masks: [Mask]
    /// The environment set by the last `<!-- sample-env: ... -->` above it in the file.
    var environment: [String: String]
    var steps: [Step]
    /// A `sample-file` block: the path its text is written to, and the text.
    var writes: (path: String, text: [String])?

    struct Step {
        var command: String
        /// The command's line in the file (1-based).
        var line: Int
        var expected: [String]
    }

    /// What must vary between runs, masked in both the document and the output before they are compared.
    enum Mask: String, CaseIterable {
        /// A random UUID (a manual event's identity): `<uuid>`.
        case uuid
        /// An ISO 8601 date-time (`2026-11-23T08:15:12.103Z`, `2026-11-23T08:15:12+00:00`): `<time>`.
        case time

        var pattern: NSRegularExpression {
            switch self {
            case .uuid: try! NSRegularExpression(pattern: "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
            case .time: try! NSRegularExpression(pattern: "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?(Z|[+-][0-9]{2}:?[0-9]{2})")
            }
        }

        func apply(_ text: String) -> String {
            pattern.stringByReplacingMatches(in: text, range: NSRange(text.startIndex..., in: text), withTemplate: "<\(rawValue)>")
        }
    }

    /// A line of the expected output that stands for lines left out for brevity.
    static let elision = "…"
}

enum DocSampleError: Error, CustomStringConvertible {
    case malformed(file: String, line: Int, String)
    var description: String {
        switch self {
        case .malformed(let file, let line, let why): "\(file):\(line): \(why)"
        }
    }
}

/// Finds the marked samples of one Markdown file.
enum DocSampleParser {
    static func samples(file: String, lines: [String]) throws -> [DocSample] {
        var samples: [DocSample] = []
        var environment: [String: String] = [:]
        let code = Markdown.codeLines(lines)
        var i = 0
        while i < lines.count {
            let trimmed = lines[i].trimmingCharacters(in: .whitespaces)
            if code[i] {
                // Inside a fenced block (an example of a marker is not one).
            } else if let spec = comment(trimmed, tag: "sample-env") {
                environment = [:]
                for word in try words(spec, file: file, line: i + 1) {
                    guard let eq = word.firstIndex(of: "="), eq != word.startIndex else {
                        throw DocSampleError.malformed(file: file, line: i + 1, "sample-env: expected NAME=value, got \(word)")
                    }
                    environment[String(word[..<eq])] = String(word[word.index(after: eq)...])
                }
            } else if let path = comment(trimmed, tag: "sample-file") {
                let (open, close) = try fence(after: i, lines: lines, file: file)
                let target = path.trimmingCharacters(in: .whitespaces)
                guard !target.isEmpty, !target.hasPrefix("/"), !target.split(separator: "/").contains("..") else {
                    throw DocSampleError.malformed(file: file, line: i + 1, "sample-file: a path inside the sandbox's home, got \(path)")
                }
                samples.append(DocSample(file: file, line: open + 1, bodyStart: open + 1, bodyEnd: close, fresh: false, masks: [],
                                         environment: environment, steps: [], writes: (target, Array(lines[(open + 1)..<close]))))
                i = close
            } else if let spec = comment(trimmed, tag: "sample") {
                var fresh = false
                var masks: [DocSample.Mask] = []
                for word in try words(spec, file: file, line: i + 1) {
                    if word == "fresh" {
                        fresh = true
                    } else if word.hasPrefix("mask=") {
                        for name in word.dropFirst(5).split(separator: ",") {
                            guard let mask = DocSample.Mask(rawValue: String(name)) else {
                                throw DocSampleError.malformed(file: file, line: i + 1, "unknown mask \(name) (known: \(DocSample.Mask.allCases.map(\.rawValue).joined(separator: ", ")))")
                            }
                            masks.append(mask)
                        }
                    } else {
                        throw DocSampleError.malformed(file: file, line: i + 1, "unknown sample option \(word) (fresh, mask=NAME,...)")
                    }
                }
                let (open, close) = try fence(after: i, lines: lines, file: file)
                let steps = try self.steps(Array(lines[(open + 1)..<close]), file: file, firstLine: open + 2)
                samples.append(DocSample(file: file, line: open + 1, bodyStart: open + 1, bodyEnd: close, fresh: fresh, masks: masks,
                                         environment: environment, steps: steps, writes: nil))
                i = close
            }
            i += 1
        }
        return samples
    }

    /// The opening and closing fence lines of the block right after the marker on line `marker`.
    static func fence(after marker: Int, lines: [String], file: String) throws -> (Int, Int) {
        var open = marker + 1
        while open < lines.count, lines[open].trimmingCharacters(in: .whitespaces).isEmpty { open += 1 }
        guard open < lines.count, lines[open].hasPrefix("```") else {
            throw DocSampleError.malformed(file: file, line: marker + 1, "a sample marker must come right before a fenced block")
        }
        var close = open + 1
        while close < lines.count, !lines[close].hasPrefix("```") { close += 1 }
        guard close < lines.count else { throw DocSampleError.malformed(file: file, line: open + 1, "the fenced block is not closed") }
        return (open, close)
    }

    /// `<!-- TAG -->` or `<!-- TAG: SPEC -->`: SPEC ("" when none); nil for any other line.
    static func comment(_ line: String, tag: String) -> String? {
        guard line.hasPrefix("<!--"), line.hasSuffix("-->") else { return nil }
        let inner = line.dropFirst(4).dropLast(3).trimmingCharacters(in: .whitespaces)
        if inner == tag { return "" }
        guard inner.hasPrefix(tag + ":") else { return nil }
        return String(inner.dropFirst(tag.count + 1))
    }

    static func steps(_ body: [String], file: String, firstLine: Int) throws -> [DocSample.Step] {
        var steps: [DocSample.Step] = []
        for (k, line) in body.enumerated() {
            if line.hasPrefix("$ ") {
                steps.append(DocSample.Step(command: String(line.dropFirst(2)), line: firstLine + k, expected: []))
            } else if steps.isEmpty {
                guard line.trimmingCharacters(in: .whitespaces).isEmpty else {
                    throw DocSampleError.malformed(file: file, line: firstLine + k, "a sample's block starts with a `$ ` command line")
                }
            } else {
                steps[steps.count - 1].expected.append(line)
            }
        }
        for s in steps.indices { steps[s].expected = trimmed(steps[s].expected) }
        guard !steps.isEmpty else { throw DocSampleError.malformed(file: file, line: firstLine - 1, "a sample without a `$ ` command") }
        return steps
    }

    /// Lines without trailing white space (invisible in Markdown) nor trailing empty lines.
    static func trimmed(_ lines: [String]) -> [String] {
        var result = lines.map { line in
            var l = Substring(line)
            while let last = l.last, last == " " || last == "\t" { l = l.dropLast() }
            return String(l)
        }
        while result.last?.isEmpty == true { result.removeLast() }
        return result
    }

    /// Shell-like words: white space separates, '…' and "…" quote (no expansion).
    static func words(_ text: String, file: String, line: Int) throws -> [String] {
        var words: [String] = []
        var current = ""
        var inWord = false
        var quote: Character?
        for c in text {
            if let q = quote {
                if c == q { quote = nil } else { current.append(c) }
            } else if c == "'" || c == "\"" {
                quote = c
                inWord = true
            } else if c == " " || c == "\t" {
                if inWord { words.append(current) }
                current = ""
                inWord = false
            } else {
                current.append(c)
                inWord = true
            }
        }
        guard quote == nil else { throw DocSampleError.malformed(file: file, line: line, "unclosed quote in \(text)") }
        if inWord { words.append(current) }
        return words
    }
}

enum Markdown {
    /// Whether each line is part of a fenced code block (its fences included). A block
    /// closes at a line of at least as many backticks as opened it, so a ```` block can
    /// show ``` blocks.
    static func codeLines(_ lines: [String]) -> [Bool] {
        var result: [Bool] = []
        var open: Int?
        for line in lines {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            let ticks = trimmed.prefix { $0 == "`" }.count
            if let fence = open {
                result.append(true)
                if ticks >= fence, trimmed.allSatisfy({ $0 == "`" }) { open = nil }
            } else if ticks >= 3 {
                result.append(true)
                open = ticks
            } else {
                result.append(false)
            }
        }
        return result
    }
}

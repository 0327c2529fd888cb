/// The sample file (`quench config sample`, committed as config/quench.toml)
/// and the documentation's table (`quench config keys --markdown`, in
/// docs/service.md), both from the key table, `KeySpec.all`; tests hold the
/// committed copies to them. Bytes only (no `Character` operations), so quenchd
/// links no Unicode tables for them.
extension KeySpec {
    /// Every key commented out, with what it means, its option and variable,
    /// its default, and its default or an example as the value.
    public static var sampleFile: String {
        var out = sampleHeader
        var section: String?
        for spec in all {
            if spec.key.section != section, let name = spec.key.section {
                section = name
                let intro = sectionIntros.first { $0.name == name }?.intro
                out += "\n" + (intro.map { comment($0) } ?? "") + "[\(name)]\n"
            }
            var words = spec.meaning
            let ways = (spec.flags.isEmpty ? [] : ["Command line: " + spec.flags.joined(separator: ", ")])
                + (spec.environment.map { ["environment: " + $0] } ?? [])
            if !ways.isEmpty { words += " " + ways.joined(separator: "; ") + "." }
            words += " Expects " + spec.expected + ". Default: " + spec.defaultText + "."
            if let note = spec.note { words += " " + note }
            out += "\n" + comment(words) + "# \(spec.key.name) = \(spec.example)\n"
        }
        return out
    }

    static let sampleHeader = """
        # Quench configuration: /etc/quench/quench.toml
        #
        # Read by quenchd (the service) and by the `quench` command line. The command
        # line also reads a file of your own, ~/.config/quench/quench.toml (or
        # $XDG_CONFIG_HOME/quench/quench.toml), which wins over this one. What wins
        # over both: the command line's options, then the environment ($QUENCH_DB,
        # $QUENCH_LOG, ...).
        # $QUENCH_CONFIG (or quenchd --config PATH) names one file to read instead.
        #
        # Every key is commented out: the value shown is the built-in default, or an
        # example. `quench config show` prints what is in force and where each value
        # came from. A key or section this version does not know is an error (with
        # the file and line), never ignored. The keys: docs/service.md, "Configuration",
        # and `quench config keys`. This file is `quench config sample`'s output.

        """

    /// The keys as a Markdown table: key, what it takes, default, variable, options, meaning.
    public static var markdownTable: String {
        func code(_ text: String) -> String { "`" + text + "`" }
        var out = "| key | takes | default | environment | command line | meaning |\n|---|---|---|---|---|---|\n"
        for spec in all {
            let key = (spec.key.section.map { code("[\($0)]") + " " } ?? "") + code(spec.key.name)
            let cells = [key, spec.expected, spec.defaultText, spec.environment.map(code) ?? "",
                         spec.flags.map(code).joined(separator: ", "), spec.meaning]
            out += "| " + cells.map { $0.replacingPipes }.joined(separator: " | ") + " |\n"
        }
        return out
    }

    /// `text` as `# ` lines of at most 78 bytes, broken at spaces.
    static func comment(_ text: String, width: Int = 78) -> String {
        var out = ""
        var line = "#"
        for word in text.utf8.split(separator: UInt8(ascii: " ")) {
            let word = String(decoding: word, as: UTF8.self)
            if line.utf8.count + 1 + word.utf8.count > width, line.utf8.count > 1 {
                out += line + "\n"
                line = "#"
            }
            line += " " + word
        }
        return out + line + "\n"
    }
}

private extension String {
    /// A `|` would end a Markdown table's cell.
    var replacingPipes: String {
        String(decoding: utf8.flatMap { $0 == UInt8(ascii: "|") ? Array("\\|".utf8) : [$0] }, as: UTF8.self)
    }
}

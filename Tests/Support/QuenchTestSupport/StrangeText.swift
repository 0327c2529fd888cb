import QuenchStore

/// The largest and strangest text each door takes (issue 19): every field at
/// its limit, in several scripts, right to left, emoji of several scalars,
/// quotes, commas, backslashes, and a note's lines and tabs. A history built of
/// them must export and import back unchanged.
public enum StrangeText {
    static let pieces = ["שלום ", "مرحبا ", "👩‍👩‍👧", "\"quoted\", ", "'single' ", "line\nbreak\t", "日本語", "e\u{301}", "\\back\\", "🚰"]

    /// `count` Unicode scalars drawn from `pieces` (those `allowed` keeps).
    public static func text(_ count: Int, allowed: (Unicode.Scalar) -> Bool = { _ in true }) -> String {
        var scalars = String.UnicodeScalarView()
        var i = 0
        while scalars.count < count {
            for scalar in pieces[i % pieces.count].unicodeScalars where scalars.count < count && allowed(scalar) { scalars.append(scalar) }
            i += 1
        }
        return String(scalars)
    }

    /// A note at its limit, lines and tabs included.
    public static let longestNote = text(TextField.note.maxCharacters)

    /// One line of `count` characters: no line breaks or tabs.
    public static func line(_ count: Int) -> String { text(count) { $0.value >= 0x20 } }

    /// A person's name at its limit: no ',', '/', '+' or '#', no spaces at either end.
    public static let longestName: String = {
        let name = String(text(Person.maximumNameLength) { $0.value >= 0x20 && !",/+#\\ ".unicodeScalars.contains($0) }.unicodeScalars)
        precondition(Person.problem(withName: name) == nil, "\(name): \(Person.problem(withName: name) ?? "")")
        return name
    }()
}

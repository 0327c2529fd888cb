/// What a typo was meant to be: a command, a config key, a profile file's field.
public enum Spelling {
    /// The candidate nearest to `typed` (case ignored), when within `max(2, typed.count / perEdit)`
    /// edits: close enough to be a slip of the keys, not another word.
    public static func nearest(to typed: String, among candidates: some Sequence<String>, perEdit: Int = 3) -> String? {
        let best = candidates.map { (text: $0, distance: editDistance($0.lowercased(), typed.lowercased())) }
            .min { $0.distance < $1.distance }
        guard let best, best.distance <= max(2, typed.count / perEdit) else { return nil }
        return best.text
    }

    /// Levenshtein distance over characters: insertions, deletions and substitutions (a swap of two is two).
    public static func editDistance(_ a: String, _ b: String) -> Int {
        let (a, b) = (Array(a), Array(b))
        guard !a.isEmpty, !b.isEmpty else { return a.count + b.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var row = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                row[j] = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = row
        }
        return previous[b.count]
    }
}

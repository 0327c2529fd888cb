extension StringProtocol {
    /// Without the spaces and tabs at either end: what Foundation's
    /// `trimmingCharacters(in: .whitespaces)` removed (tab and Unicode's space
    /// separators, not line breaks), which FoundationEssentials does not have.
    func trimmingSpaces() -> String {
        func isSpace(_ scalar: Unicode.Scalar) -> Bool { scalar == "\t" || scalar.properties.generalCategory == .spaceSeparator }
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !isSpace($0) }) else { return "" }
        let last = scalars.lastIndex(where: { !isSpace($0) })!
        return String(String.UnicodeScalarView(scalars[first...last]))
    }
}

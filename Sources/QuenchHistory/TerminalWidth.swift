/// How many terminal columns text takes: a CJK character or an emoji takes two, a combining
/// mark none (it is part of its grapheme). Tables pad by this, not by characters: a household
/// with "李明" or "👵 Gran" in it lined up one column short per wide character.
extension String {
    var terminalWidth: Int { reduce(0) { $0 + $1.terminalWidth } }
}

extension Character {
    var terminalWidth: Int {
        let scalars = unicodeScalars
        guard let first = scalars.first else { return 0 }
        // An emoji sequence (a flag, a family, a keycap, a character asked to show as emoji) is one picture.
        if first.properties.isEmojiPresentation || scalars.contains(where: { $0.value == 0xFE0F }) { return 2 }
        if scalars.count > 1, first.properties.isEmoji, scalars.dropFirst().contains(where: { $0.properties.isEmojiModifier || $0.value == 0x200D }) { return 2 }
        return first.isEastAsianWide ? 2 : (first.properties.generalCategory == .format ? 0 : 1)
    }
}

extension Unicode.Scalar {
    /// East Asian Wide and Fullwidth (UAX #11), by the blocks that hold them.
    var isEastAsianWide: Bool {
        switch value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
             0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19,
             0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1B000...0x1B2FF, 0x20000...0x3FFFD:
            true
        default:
            false
        }
    }
}

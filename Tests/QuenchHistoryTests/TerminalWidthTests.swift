import Testing
@testable import QuenchHistory

/// Tables line up in a terminal whatever the names are written in: a CJK character or an emoji
/// takes two columns, a combining mark none. (They were padded by characters, so each wide one
/// pushed the rest of its row a column right.)
@Suite struct TerminalWidthTests {
    @Test func tablesPadByTheColumnsATerminalGives() {
        let zoe = "Zoe\u{0308}"  // "Zoë" with a combining diaeresis: three columns
        let table = Format.table(["Name", "Today"], [["李明", "1.2 L"], ["Al", "0.5 L"], ["👵 Gran", "2 L"], [zoe, "0.9 L"], ["🇬🇧", "1 L"]],
                                 align: [.left, .left])
        #expect(table.split(separator: "\n").map(String.init) == [
            "Name     Today",
            "李明     1.2 L",
            "Al       0.5 L",
            "👵 Gran  2 L",
            "\(zoe)      0.9 L",
            "🇬🇧       1 L",
        ])
    }

    @Test func labelsLineUpTheirValues() {
        #expect(Format.fields([("水", "1"), ("Goal", "2")]) == "  水    1\n  Goal  2")
    }

    @Test(arguments: [("a", 1), ("é", 1), ("e\u{0301}", 1), ("李", 2), ("한", 2), ("ｱ", 1), ("Ａ", 2), ("👍🏽", 2), ("👨‍👩‍👧", 2), ("❤️", 2), ("\u{200B}", 0)])
    func widthOfOneCharacter(text: String, columns: Int) {
        #expect(text.terminalWidth == columns)
    }
}

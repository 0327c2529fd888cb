import QuenchCore
import Testing

@Suite struct VolumeTextTests {
    @Test func volumesAsTheTablesAndChartsShowThem() {
        #expect(VolumeText.volume(1250, .ml) == "1,250 mL")
        #expect(VolumeText.volume(999.5, .ml) == "1,000 mL")
        #expect(VolumeText.volume(2000, .usFluidOunce) == "67.6 oz")
        #expect(VolumeText.amount(1_234_567, .ml) == "1,234,567")
        #expect(VolumeText.grouped(-1234) == "-1,234" && VolumeText.grouped(Int.min) == "-9,223,372,036,854,775,808")
        #expect(VolumeText.decimal(-0.04, places: 1) == "0.0" && VolumeText.decimal(-0.4, places: 1) == "-0.4" && VolumeText.decimal(1234.5, places: 2) == "1,234.50")
        #expect(VolumeText.decimal(2.5, places: 0) == "3")
        // A drop is not nothing (a Pi trial's `add 1ml` in ounces said "sip 0.0 oz"); nothing is.
        #expect(VolumeText.volume(1, .usFluidOunce) == "0.034 oz" && VolumeText.volume(0.3, .ml) == "0.3 mL")
        #expect(VolumeText.volume(0, .usFluidOunce) == "0.0 oz" && VolumeText.volume(0, .ml) == "0 mL")
    }
}

/// `shownSafely`, the one way input is echoed: what could hide or rewrite text is shown as a code,
/// what a name is written with is not.
@Suite struct ShownSafelyTests {
    @Test func invisibleCharactersAreShownJoinersInsideEmojiAndWordsAreNot() {
        #expect("red \u{1B}[31m".shownSafely() == "red \\u{1B}[31m")
        #expect("tea \u{202E}lm 052".shownSafely() == "tea \\u{202E}lm 052")
        // A family trial: "Dad 👨‍🍳" came out as "Dad 👨\u{200D}🍳" in every table.
        #expect("Dad 👨\u{200D}🍳".shownSafely() == "Dad 👨\u{200D}🍳")
        #expect("👩\u{200D}👩\u{200D}👧\u{200D}👦".shownSafely() == "👩\u{200D}👩\u{200D}👧\u{200D}👦")
        #expect("می\u{200C}خواهم".shownSafely() == "می\u{200C}خواهم", "Persian's non-joiner")
        // Between ASCII letters, at an end, or beside another invisible one, it would only make names look alike.
        #expect("Da\u{200D}d".shownSafely() == "Da\\u{200D}d")
        #expect("👨\u{200D}".shownSafely() == "👨\\u{200D}")
        #expect("👨\u{200D}\u{200D}🍳".shownSafely() == "👨\\u{200D}\\u{200D}🍳")
        #expect("👨\u{200D}\u{202E}🍳".shownSafely() == "👨\\u{200D}\\u{202E}🍳")
        #expect("❤\u{FE0F}\u{200D}🔥 and 👍🏽\u{200D}".shownSafely() == "❤\u{FE0F}\u{200D}🔥 and 👍🏽\\u{200D}", "after VS16 it joins; at the end it does not")
        // In a script with no joining, beyond ASCII or not, it is only invisible (the review: "Мама" and "Ма‍ма").
        #expect("Ма\u{200D}ма".shownSafely() == "Ма\\u{200D}ма" && "Lé\u{200D}é".shownSafely() == "Lé\\u{200D}é")
        #expect("Ма\u{200C}ма".shownSafely() == "Ма\\u{200C}ма" && "1\u{200D}2".shownSafely() == "1\\u{200D}2")
        // The isolates and the word joiner are shown too.
        #expect("a\u{2066}b\u{2069}\u{2060}".shownSafely() == "a\\u{2066}b\\u{2069}\\u{2060}")
    }
}

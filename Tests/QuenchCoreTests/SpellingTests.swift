import QuenchCore
import Testing

/// What a typo was meant to be: one rule for commands, config keys and profile fields.
@Suite struct SpellingTests {
    @Test func theNearestWithinAFewEditsInAnyCase() {
        #expect(Spelling.nearest(to: "snyc", among: ["sync", "status", "run"]) == "sync")
        #expect(Spelling.nearest(to: "Sensor", among: ["sensor"]) == "sensor")
        #expect(Spelling.nearest(to: "units", among: ["unit", "name"]) == "unit")
        #expect(Spelling.nearest(to: "xyz", among: ["today", "log"]) == nil, "another word, not a typo")
        #expect(Spelling.nearest(to: "anything", among: [String]()) == nil)
        // A long word allows more edits, by the caller's measure (a config key: one edit in four letters).
        #expect(Spelling.nearest(to: "notfy.urll", among: ["notify.url"], perEdit: 4) == "notify.url")
        #expect(Spelling.editDistance("", "abc") == 3 && Spelling.editDistance("kitten", "sitting") == 3)
        #expect(Spelling.editDistance("ab", "ba") == 2, "a swap is two edits")
    }
}

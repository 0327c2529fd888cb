import Foundation
import QuenchCore
import QuenchTestSupport
import Testing
@testable import QuenchHistory

/// `LocalZone` (the system's TZif files) against Foundation's `TimeZone` (ICU's own copy of the
/// tz database): the same offset at every instant tried and the same next change, in zones of
/// every kind: both hemispheres, half and quarter hours, no daylight time, rules that changed.
@Suite struct LocalZoneTests {
    static let zones = [
        "Europe/London", "Europe/Berlin", "Europe/Dublin", "Europe/Moscow", "America/New_York", "America/Los_Angeles",
        "America/Sao_Paulo", "America/St_Johns", "America/Argentina/Buenos_Aires", "Australia/Sydney", "Australia/Lord_Howe",
        "Australia/Adelaide", "Pacific/Auckland", "Pacific/Chatham", "Asia/Kolkata", "Asia/Kathmandu", "Asia/Tehran",
        "Africa/Casablanca", "Asia/Jerusalem", "America/Santiago", "Pacific/Apia", "Etc/GMT+5", "UTC", "Asia/Tokyo",
    ]

    @Test(arguments: zones)
    func theSameOffsetsAndChangesAsICU(name: String) throws {
        let zone = try #require(LocalZone(identifier: name), "\(name) is not in /usr/share/zoneinfo")
        let icu = try #require(TimeZone(identifier: name))
        var random = FuzzRandom(seed: UInt64(abs(name.hashValue % 1000)) + 7)
        // 1970 to 2100: the transitions' table, then the footer's rule past its end.
        for _ in 0..<3000 {
            let t = Double(random.next() % 4_102_444_800)
            #expect(zone.secondsFromGMT(at: t) == icu.secondsFromGMT(for: Date(timeIntervalSince1970: t)),
                    "\(name) at \(Date(timeIntervalSince1970: t))")
        }
        // Each change from 2020 to 2040, one after another, as DayCalendar.segments walks them.
        var t = 1_577_836_800.0
        for _ in 0..<50 {
            let mine = zone.nextTransition(after: t)
            let theirs = icu.nextDaylightSavingTimeTransition(after: Date(timeIntervalSince1970: t))?.timeIntervalSince1970
            guard let theirs, theirs < 2_208_988_800 else { break }
            #expect(mine == theirs, "\(name): the change after \(Date(timeIntervalSince1970: t))")
            t = theirs
        }
    }

    @Test func namesAreNamesNotPaths() {
        for bad in ["", "/etc/passwd", "../../etc/passwd", "Europe/../../etc/passwd", "Europe//London", "Europe/London\n", "Nowhere/Atlantis"] {
            #expect(LocalZone(identifier: bad) == nil, "\(bad.debugDescription)")
        }
        #expect(LocalZone(identifier: "UTC")?.secondsFromGMT(at: 1e9) == 0)
        #expect(LocalZone.system().identifier.isEmpty == false)
    }

    /// A TZif file cut or garbled anywhere is refused with where, never read past its end.
    @Test func aDamagedFileIsRefusedWithWhere() throws {
        let bytes = try #require(LocalZone.read(LocalZone.directory + "/Europe/London"))
        #expect(throws: TZifError.self) { try LocalZone(tzif: Array(bytes.prefix(10)), identifier: "x") }
        var random = FuzzRandom(seed: 3)
        for _ in 0..<2000 {
            var damaged = bytes
            let cut = Int(random.next() % UInt64(bytes.count))
            if random.next() % 2 == 0 { damaged = Array(damaged.prefix(cut)) } else { damaged[cut] = UInt8(truncatingIfNeeded: random.next()) }
            // Either read (a byte that changes nothing, or an offset) or refused: never a trap.
            if let zone = try? LocalZone(tzif: damaged, identifier: "x") {
                _ = zone.secondsFromGMT(at: Double(random.next() % 4_000_000_000))
                _ = zone.nextTransition(after: Double(random.next() % 4_000_000_000))
            }
        }
        let error = try #require(throws: TZifError.self) { try LocalZone(tzif: Array(bytes.prefix(60)), identifier: "x") }
        #expect(error.description.hasPrefix("TZif: byte "), "\(error)")
    }

    @Test func posixRules() throws {
        // Southern hemisphere: daylight time across the new year.
        let sydney = try #require(PosixRule("AEST-10AEDT,M10.1.0,M4.1.0/3"))
        #expect(sydney.offset(at: 1_735_689_600) == 39_600, "1 January 2025: AEDT")
        #expect(sydney.offset(at: 1_751_328_000) == 36_000, "1 July 2025: AEST")
        // Hours past 24 (RFC 8536's extension) and names in angle brackets.
        #expect(PosixRule("IST-2IDT,M3.4.4/26,M10.5.0") != nil)
        #expect(PosixRule("<+0330>-3:30")?.offset(at: 0) == 12_600)
        #expect(PosixRule("EST5EDT4,0/0,J365/25")?.offset(at: 1_751_328_000) == -14_400, "daylight all year")
        for bad in ["", "E5", "EST", "EST5EDT,M13.1.0,M1.1.0", "EST5EDT,M3.2.0", "<EST5", "EST5EDT,M3.2.0/200,M11.1.0"] {
            #expect(PosixRule(bad) == nil, "\(bad)")
        }
    }
}

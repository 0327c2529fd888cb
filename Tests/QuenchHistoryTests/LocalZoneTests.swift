import Foundation
import QuenchCore
import QuenchStore
import QuenchTestSupport
import Testing
@testable import QuenchHistory

/// `LocalZone` (the system's TZif files) against glibc's reading of the same files (`zdump`, and
/// `date` for a zone's offset in 1970): the same offset at every instant tried and the same next
/// change, in zones of every kind: both hemispheres, half and quarter hours, no daylight time,
/// rules that changed. Until 2026-12 the reference was Foundation's `TimeZone`, ICU's own copy of
/// the tz database, which ages with the toolchain: with Debian's tzdata 2026f (Morocco's +01 ends in
/// September 2026) the system was right and the test failed 1514 times on Africa/Casablanca.
@Suite struct LocalZoneTests {
    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    static let zones = [
        "Europe/London", "Europe/Berlin", "Europe/Dublin", "Europe/Moscow", "America/New_York", "America/Los_Angeles",
        "America/Sao_Paulo", "America/St_Johns", "America/Argentina/Buenos_Aires", "Australia/Sydney", "Australia/Lord_Howe",
        "Australia/Adelaide", "Pacific/Auckland", "Pacific/Chatham", "Asia/Kolkata", "Asia/Kathmandu", "Asia/Tehran",
        "Africa/Casablanca", "Asia/Jerusalem", "America/Santiago", "Pacific/Apia", "Etc/GMT+5", "UTC", "Asia/Tokyo",
    ]

    /// What glibc makes of the zone from 1970 to 2100: its offset at the start of 1970, and each
    /// instant its offset changes with the offset from then on (`zdump -V` lists each transition
    /// as the second before it and the second it starts, in UT, with `gmtoff=`).
    static func glibcOffsets(_ name: String) throws -> (initial: Int, changes: [(at: Double, offset: Int)]) {
        let date = try runProgram("/bin/date", ["-d", "@0", "+%z"], environment: ["TZ": name])
        let z = date.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        guard date.status == 0, z.count == 5, let hours = Int(z.dropFirst().prefix(2)), let minutes = Int(z.suffix(2)) else {
            throw Failure("date +%z in \(name): \(date.stdout)\(date.stderr)")
        }
        let initial = (z.hasPrefix("-") ? -1 : 1) * (hours * 3600 + minutes * 60)
        let dump = try runProgram("/usr/bin/zdump", ["-V", "-c", "1970,2100", name])
        guard dump.status == 0 else { throw Failure("zdump \(name): \(dump.stderr)") }
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        var lines: [(at: Double, offset: Int)] = []
        for line in dump.stdout.split(separator: "\n") {
            // `Europe/London  Sun Oct 31 02:00:00 1971 UT = Sun Oct 31 02:00:00 1971 GMT isdst=0 gmtoff=0`
            let words = line.split(separator: " ")
            guard words.count >= 7, let month = months.firstIndex(of: String(words[2])), let day = Int(words[3]),
                  let year = Int(words[5]), words[6] == "UT", let offset = words.last.flatMap({ Int($0.dropFirst("gmtoff=".count)) }),
                  let civil = CivilDay(year: year, month: month + 1, day: day) else { throw Failure("zdump \(name): \(line)") }
            let clock = words[4].split(separator: ":").compactMap { Int($0) }
            guard clock.count == 3 else { throw Failure("zdump \(name): \(line)") }
            let seconds: Int = civil.number * 86_400 + clock[0] * 3600 + clock[1] * 60 + clock[2]
            lines.append((Double(seconds), offset))
        }
        // The second of each pair starts a transition; one that keeps the offset (a name or isdst alone) is no change.
        var changes: [(at: Double, offset: Int)] = []
        for (before, after) in zip(lines, lines.dropFirst()) where after.at == before.at + 1 && after.offset != before.offset {
            changes.append(after)
        }
        return (initial, changes)
    }

    @Test(arguments: zones)
    func theSameOffsetsAndChangesAsGlibc(name: String) throws {
        let zone = try #require(LocalZone(identifier: name), "\(name) is not in /usr/share/zoneinfo")
        let glibc = try Self.glibcOffsets(name)
        func expected(_ t: Double) -> Int { glibc.changes.last { $0.at <= t }?.offset ?? glibc.initial }
        var random = FuzzRandom(seed: UInt64(name.utf8.reduce(0) { $0 &* 31 &+ Int($1) } & 0xFFFF) + 7)
        // 1970 to 2100: the transitions' table, then the footer's rule past its end.
        for _ in 0..<3000 {
            let t = Double(random.next() % 4_102_444_800)
            #expect(zone.secondsFromGMT(at: t) == expected(t), "\(name) at \(Date(timeIntervalSince1970: t))")
        }
        // Each change from 2020 to 2040, one after another, as DayCalendar.segments walks them.
        var t = 1_577_836_800.0
        for change in glibc.changes where change.at > t && change.at < 2_208_988_800 {
            #expect(zone.nextTransition(after: t) == change.at, "\(name): the change after \(Date(timeIntervalSince1970: t))")
            t = change.at
        }
        if let next = zone.nextTransition(after: t), next < 2_208_988_800 {
            // A transition glibc does not see as a change (a name alone) must at least keep the offset.
            #expect(zone.secondsFromGMT(at: next) == zone.secondsFromGMT(at: next - 1), "\(name): a change at \(next) glibc does not list")
        }
        // Every zone here but the fixed ones changes in these 130 years: the reference is not empty.
        #expect(!glibc.changes.isEmpty || ["Etc/GMT+5", "UTC", "Asia/Tokyo", "Asia/Kolkata"].contains(name), "\(name)")
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

import FoundationEssentials
import QuenchCore
#if canImport(Glibc)
import Glibc
#endif

/// A time zone from the system's tz database (`/usr/share/zoneinfo`, Debian's tzdata), read
/// from its TZif file (RFC 8536): the UTC offset at an instant and the next change, which is
/// all a `DayCalendar` needs. In place of Foundation's `TimeZone`, whose zones come from ICU
/// (FoundationInternationalization): about 4 MB of the web server's resident memory for two
/// questions (docs/benchmarks-web.md).
public struct LocalZone: Sendable, Hashable {
    /// The IANA name (`Europe/London`), or `localtime` for /etc/localtime under no name.
    public let identifier: String
    /// Instants (seconds since 1970, UTC) at which the offset changes, ascending, each with the
    /// offset from then on (east of UTC positive).
    let transitions: [Int64]
    let offsets: [Int32]
    /// The offset before the first transition (RFC 8536 §3.2: the first time type).
    let initialOffset: Int32
    /// The footer's rule, for instants after the last transition.
    let rule: PosixRule?

    /// UTC itself.
    public static let utc = LocalZone(identifier: "UTC", transitions: [], offsets: [], initialOffset: 0, rule: nil)

    init(identifier: String, transitions: [Int64], offsets: [Int32], initialOffset: Int32, rule: PosixRule?) {
        self.identifier = identifier
        self.transitions = transitions
        self.offsets = offsets
        self.initialOffset = initialOffset
        self.rule = rule
    }

    /// The zone of that IANA name, from /usr/share/zoneinfo (`$TZDIR` if set); nil for a name
    /// that is not one (or a path out of the database).
    public init?(identifier: String, directory: String = LocalZone.directory) {
        guard Self.isName(identifier) else { return nil }
        // UTC under its usual names, with no file to read (a container may have no tzdata).
        if identifier == "UTC" || identifier == "Etc/UTC" || identifier == "GMT" {
            self.init(identifier: identifier, transitions: [], offsets: [], initialOffset: 0, rule: nil)
            return
        }
        guard let bytes = Self.read(directory + "/" + identifier), let zone = try? Self(tzif: bytes, identifier: identifier) else { return nil }
        self = zone
    }

    /// A zone given as a POSIX TZ rule (`EST+5`, `CET-1CEST,M3.5.0,M10.5.0/3`), as `TZ` may hold one: the
    /// same every year, named by the rule. Nil for text that is not a whole rule (a daylight name without
    /// its two dates, which glibc fills with US rules of 1987, included).
    public init?(posixRule text: String) {
        guard text.utf8.count <= 100, let rule = PosixRule(text) else { return nil }
        self.init(identifier: text, transitions: [], offsets: [], initialOffset: rule.standard, rule: rule)
    }

    /// A TZif file given by its path (`/etc/localtime`, or `TZ=/usr/share/zoneinfo/Europe/Paris`): the
    /// zone named by where it is (or where its link points) in a zoneinfo folder, else `unnamed`; nil when
    /// it cannot be read as one.
    public init?(file path: String, unnamed: String? = nil, directory: String = LocalZone.directory) {
        var buffer = [CChar](repeating: 0, count: 4096)
        let length = readlink(path, &buffer, buffer.count - 1)
        let target = length > 0 ? String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self) : path
        if let range = target.firstRange(of: "zoneinfo/"), let zone = LocalZone(identifier: String(target[range.upperBound...]), directory: directory) {
            self = zone
            return
        }
        guard let bytes = Self.read(path), let zone = try? LocalZone(tzif: bytes, identifier: unnamed ?? path) else { return nil }
        self = zone
    }

    /// The system's zone: /etc/localtime, named by where its link points; UTC when there is none.
    public static func system(localtime: String = "/etc/localtime", directory: String = LocalZone.directory) -> LocalZone {
        LocalZone(file: localtime, unnamed: "localtime", directory: directory) ?? .utc
    }

    public static var directory: String {
        if let dir = getenv("TZDIR"), dir.pointee != 0 { return String(cString: dir) }
        return "/usr/share/zoneinfo"
    }

    /// `Europe/London`, `America/Argentina/Buenos_Aires`, `Etc/GMT+5`: letters, digits, `_+-`, and
    /// `/` between parts; never `..` or a leading `/`.
    static func isName(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= 100, !name.hasPrefix("/") else { return false }
        return name.split(separator: "/", omittingEmptySubsequences: false).allSatisfy { part in
            !part.isEmpty && part != "." && part != ".."
                && part.utf8.allSatisfy { b in (65...90).contains(b) || (97...122).contains(b) || (48...57).contains(b) || b == 95 || b == 43 || b == 45 }
        }
    }

    /// A file of at most 1 MB (a TZif file is a few kB); nil when it cannot be read.
    static func read(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while bytes.count <= 1 << 20 {
            let n = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
            bytes += chunk.prefix(n)
            if n < chunk.count { return ferror(file) == 0 ? bytes : nil }
        }
        return nil
    }

    /// The offset from UTC at `time`, in seconds, east positive.
    public func secondsFromGMT(at time: Double) -> Int {
        let t = Int64(clamping: Int(saturating: time.rounded(.down)))
        if let rule, transitions.last.map({ t >= $0 }) ?? true { return rule.offset(at: t) }
        let passed = transitionCount(atOrBefore: t)
        return Int(passed == 0 ? initialOffset : offsets[passed - 1])
    }

    /// The first instant after `time` at which the offset changes; nil when it never does again.
    public func nextTransition(after time: Double) -> Double? {
        let t = Int64(clamping: Int(saturating: time.rounded(.down)))
        let passed = transitionCount(atOrBefore: t)
        if passed < transitions.count { return Double(transitions[passed]) }
        return rule?.nextChange(after: max(t, transitions.last ?? t)).map(Double.init)
    }

    /// How many transitions are at or before `t` (a binary search: they ascend).
    private func transitionCount(atOrBefore t: Int64) -> Int {
        var lo = 0, hi = transitions.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if transitions[mid] <= t { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    public static func == (a: LocalZone, b: LocalZone) -> Bool { a.identifier == b.identifier }
    public func hash(into hasher: inout Hasher) { hasher.combine(identifier) }
}

/// What is wrong with a TZif file, and where.
public struct TZifError: Error, Sendable, CustomStringConvertible {
    public let offset: Int
    public let reason: String
    public var description: String { "TZif: byte \(offset): \(reason)" }
}

extension LocalZone {
    /// Reads a TZif file (RFC 8536): version 2 or later's 64-bit data and footer (a version 1
    /// file, 32-bit only, is read as it is). Every count is checked against the bytes there are.
    public init(tzif bytes: [UInt8], identifier: String) throws(TZifError) {
        var at = 0
        func need(_ n: Int, _ what: String) throws(TZifError) {
            guard n >= 0, at + n <= bytes.count else { throw TZifError(offset: at, reason: "\(what): the file ends (\(bytes.count) bytes)") }
        }
        func u32() -> UInt32 { let v = bytes[at..<at + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }; at += 4; return v }
        func header() throws(TZifError) -> (version: UInt8, counts: [Int]) {
            try need(44, "header")
            guard Array(bytes[at..<at + 4]) == Array("TZif".utf8) else { throw TZifError(offset: at, reason: "no TZif magic") }
            let version = bytes[at + 4]
            at += 20
            let counts = (0..<6).map { _ in Int(u32()) }  // isut, isstd, leap, time, type, char
            guard counts.allSatisfy({ $0 <= 1 << 20 }), counts[4] >= 1 else { throw TZifError(offset: at - 24, reason: "implausible counts \(counts)") }
            return (version, counts)
        }
        func block(_ counts: [Int], timeSize: Int) throws(TZifError) -> (times: [Int64], types: [Int], offsets: [Int32]) {
            let (isut, isstd, leap, time, type, char) = (counts[0], counts[1], counts[2], counts[3], counts[4], counts[5])
            let total = time * timeSize + time + type * 6 + char + leap * (timeSize + 4) + isstd + isut
            try need(total, "data block")
            var times: [Int64] = []
            for _ in 0..<time {
                if timeSize == 8 {
                    let hi = UInt64(u32()), lo = UInt64(u32())
                    times.append(Int64(bitPattern: hi << 32 | lo))
                } else {
                    times.append(Int64(Int32(bitPattern: u32())))
                }
            }
            let types = bytes[at..<at + time].map(Int.init)
            at += time
            var offsets: [Int32] = []
            for _ in 0..<type {
                offsets.append(Int32(bitPattern: u32()))
                at += 2  // isdst, desigidx
            }
            guard types.allSatisfy({ $0 < type }) else { throw TZifError(offset: at, reason: "a transition names a time type there is not") }
            guard zip(times, times.dropFirst()).allSatisfy({ $0 < $1 }) else { throw TZifError(offset: at, reason: "transitions out of order") }
            at += char + leap * (timeSize + 4) + isstd + isut
            return (times, types, offsets)
        }
        let first = try header()
        var data = try block(first.counts, timeSize: 4)
        var rule: PosixRule?
        if first.version >= 0x32 {  // "2", "3", "4": the 64-bit block and the footer follow
            let second = try header()
            data = try block(second.counts, timeSize: 8)
            try need(1, "footer")
            guard bytes[at] == 0x0A, let end = bytes[(at + 1)...].firstIndex(of: 0x0A) else { throw TZifError(offset: at, reason: "footer not between newlines") }
            let text = String(decoding: bytes[(at + 1)..<end], as: UTF8.self)
            if !text.isEmpty {
                guard let parsed = PosixRule(text) else { throw TZifError(offset: at + 1, reason: "footer '\(text.shownSafely(limit: 60))' is not a POSIX TZ rule") }
                rule = parsed
            }
        }
        // Only the changes of offset: zic writes transitions that change nothing but the name or the
        // daylight flag, and one at 2^31 - 1 where 32-bit readers stop; none of them is a change here.
        var times: [Int64] = [], offsets: [Int32] = []
        for (time, type) in zip(data.times, data.types) where data.offsets[type] != (offsets.last ?? data.offsets[0]) {
            times.append(time)
            offsets.append(data.offsets[type])
        }
        self.init(identifier: identifier, transitions: times, offsets: offsets, initialOffset: data.offsets[0], rule: rule)
    }
}

/// A POSIX TZ string (POSIX.1-2017 §8.3, with RFC 8536 §3.3's extensions: hours −167…167 in
/// the rules' times): standard time, and daylight time between two rules each year.
struct PosixRule: Sendable, Hashable {
    /// East of UTC positive (POSIX writes them west positive).
    let standard: Int32
    let daylight: Int32?
    let start: Rule?
    let end: Rule?

    enum Day: Sendable, Hashable {
        /// `Jn`: day 1…365, 29 February never counted.
        case julian(Int)
        /// `n`: day 0…365, 29 February counted.
        case zeroBased(Int)
        /// `Mm.w.d`: month, week 1…5 (5: the last), weekday 0 (Sunday)…6.
        case month(Int, Int, Int)
    }

    struct Rule: Sendable, Hashable {
        let day: Day
        /// Local time of day, seconds (may be negative or past 24 h).
        let time: Int
    }

    init?(_ text: String) {
        var s = Substring(text)
        func name() -> Bool {
            if s.first == "<" {
                guard let close = s.firstIndex(of: ">") else { return false }
                s = s[s.index(after: close)...]
                return true
            }
            let letters = s.prefix { $0.isASCII && $0.isLetter }
            guard letters.count >= 3 else { return false }
            s = s.dropFirst(letters.count)
            return true
        }
        func time(allowHours range: ClosedRange<Int>) -> Int? {
            var sign = 1
            if s.first == "+" { s = s.dropFirst() } else if s.first == "-" { sign = -1; s = s.dropFirst() }
            var parts: [Int] = []
            while parts.count < 3 {
                let digits = s.prefix { $0.isASCII && $0.isNumber }
                guard !digits.isEmpty, digits.count <= 3, let n = Int(digits) else { return nil }
                parts.append(n)
                s = s.dropFirst(digits.count)
                guard s.first == ":" else { break }
                s = s.dropFirst()
            }
            guard range.contains(parts[0]), parts.dropFirst().allSatisfy({ (0...59).contains($0) }) else { return nil }
            let seconds = parts[0] * 3600 + (parts.count > 1 ? parts[1] * 60 : 0) + (parts.count > 2 ? parts[2] : 0)
            return sign * seconds
        }
        func rule() -> Rule? {
            let day: Day
            if s.first == "M" {
                s = s.dropFirst()
                let fields = s.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }.split(separator: ".", omittingEmptySubsequences: false)
                s = s.dropFirst(fields.reduce(0) { $0 + $1.count } + max(0, fields.count - 1))
                guard fields.count == 3, let m = Int(fields[0]), let w = Int(fields[1]), let d = Int(fields[2]),
                      (1...12).contains(m), (1...5).contains(w), (0...6).contains(d) else { return nil }
                day = .month(m, w, d)
            } else if s.first == "J" {
                s = s.dropFirst()
                let digits = s.prefix { $0.isASCII && $0.isNumber }
                guard let n = Int(digits), (1...365).contains(n) else { return nil }
                s = s.dropFirst(digits.count)
                day = .julian(n)
            } else {
                let digits = s.prefix { $0.isASCII && $0.isNumber }
                guard let n = Int(digits), (0...365).contains(n) else { return nil }
                s = s.dropFirst(digits.count)
                day = .zeroBased(n)
            }
            var at = 2 * 3600
            if s.first == "/" {
                s = s.dropFirst()
                guard let t = time(allowHours: 0...167) else { return nil }
                at = t
            }
            return Rule(day: day, time: at)
        }

        guard name(), let std = time(allowHours: 0...24) else { return nil }
        standard = Int32(-std)
        if s.isEmpty {
            daylight = nil; start = nil; end = nil
            return
        }
        guard name() else { return nil }
        var dst = -std + 3600
        if let first = s.first, first != "," {
            guard let t = time(allowHours: 0...24) else { return nil }
            dst = -t
        }
        daylight = Int32(dst)
        guard s.first == "," else { return nil }
        s = s.dropFirst()
        guard let from = rule(), s.first == "," else { return nil }
        s = s.dropFirst()
        guard let to = rule(), s.isEmpty else { return nil }
        start = from
        end = to
    }

    /// The instant (UTC) a rule falls on in `year`; `offset`: the local time it is written in.
    func instant(_ rule: Rule, year: Int, offset: Int32) -> Int64 {
        let dayNumber: Int
        switch rule.day {
        case let .julian(n):
            // 1…365 without 29 February: day 60 is always 1 March.
            let leap = Timestamp.daysIn(month: 2, year: year) == 29
            dayNumber = Timestamp.daysFromCivil(year: year, month: 1, day: 1) + n - 1 + (leap && n >= 60 ? 1 : 0)
        case let .zeroBased(n):
            dayNumber = Timestamp.daysFromCivil(year: year, month: 1, day: 1) + n
        case let .month(m, w, d):
            let first = Timestamp.daysFromCivil(year: year, month: m, day: 1)
            let firstWeekday = ((first % 7) + 7 + 4) % 7
            var day = 1 + (d - firstWeekday + 7) % 7 + (w - 1) * 7
            let length = Timestamp.daysIn(month: m, year: year)
            while day > length { day -= 7 }
            dayNumber = first + day - 1
        }
        return Int64(dayNumber) * 86_400 + Int64(rule.time) - Int64(offset)
    }

    /// When daylight time starts and ends in `year` (UTC); nil without daylight time.
    func changes(in year: Int) -> (start: Int64, end: Int64)? {
        guard let daylight, let start, let end else { return nil }
        // The start is written in standard time, the end in daylight time.
        return (instant(start, year: year, offset: standard), instant(end, year: year, offset: daylight))
    }

    static func year(of t: Int64) -> Int {
        Timestamp.civilFromDays(Int(t >= 0 ? t / 86_400 : (t - 86_399) / 86_400)).0
    }

    func offset(at t: Int64) -> Int {
        guard let daylight else { return Int(standard) }
        let year = Self.year(of: t)
        guard let (start, end) = changes(in: year) else { return Int(standard) }
        // Northern: daylight between start and end; southern (end first in the year): outside them.
        let inDaylight = start < end ? (t >= start && t < end) : !(t >= end && t < start)
        return Int(inDaylight ? daylight : standard)
    }

    func nextChange(after t: Int64) -> Int64? {
        guard daylight != nil else { return nil }
        let year = Self.year(of: t)
        var candidates: [Int64] = []
        for y in (year - 1)...(year + 1) {
            if let (start, end) = changes(in: y) { candidates += [start, end] }
        }
        return candidates.filter { $0 > t }.min()
    }
}

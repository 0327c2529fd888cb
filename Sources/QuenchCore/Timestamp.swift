/// Wall-clock time as seconds since the Unix epoch (UTC), kept as a plain
/// Double so the core needs no Foundation formatters on hot paths.
public struct Timestamp: Sendable, Hashable, Comparable, Codable {
    public var secondsSince1970: Double

    public init(secondsSince1970: Double) { self.secondsSince1970 = secondsSince1970 }

    public static func < (a: Timestamp, b: Timestamp) -> Bool { a.secondsSince1970 < b.secondsSince1970 }

    public func adding(_ seconds: Double) -> Timestamp { Timestamp(secondsSince1970: secondsSince1970 + seconds) }

    /// Parses RFC 3339 / ISO 8601 date-times: `2026-03-02T07:30:00Z`,
    /// `2026-03-02T07:30:00.25+01:00`, `2026-03-02 07:30:00Z`. Returns nil when malformed.
    public init?(iso8601 text: some StringProtocol) {
        let b = Array(text.utf8)
        var i = 0
        func number(_ digits: Int) -> Int? {
            guard i + digits <= b.count else { return nil }
            var n = 0
            for k in i..<(i + digits) {
                let d = b[k] &- 48
                guard d < 10 else { return nil }
                n = n * 10 + Int(d)
            }
            i += digits
            return n
        }
        func expect(_ c: UInt8) -> Bool {
            guard i < b.count, b[i] == c else { return false }
            i += 1
            return true
        }
        guard let year = number(4), expect(0x2D), let month = number(2), expect(0x2D), let day = number(2),
              i < b.count, b[i] == 0x54 || b[i] == 0x74 || b[i] == 0x20
        else { return nil }
        i += 1
        guard let hour = number(2), expect(0x3A), let minute = number(2), expect(0x3A), let second = number(2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= Self.daysIn(month: month, year: year),
              hour < 24, minute < 60, second < 61
        else { return nil }
        var fraction = 0.0
        if i < b.count, b[i] == 0x2E {
            i += 1
            var scale = 0.1
            let start = i
            while i < b.count, b[i] &- 48 < 10 {
                fraction += Double(b[i] - 48) * scale
                scale /= 10
                i += 1
            }
            guard i > start else { return nil }
        }
        var offset = 0
        guard i < b.count else { return nil }  // a zone is required: local time is ambiguous
        if b[i] == 0x5A || b[i] == 0x7A {
            i += 1
        } else if b[i] == 0x2B || b[i] == 0x2D {
            let sign = b[i] == 0x2D ? -1 : 1
            i += 1
            guard let oh = number(2) else { return nil }
            _ = expect(0x3A)
            guard let om = number(2), oh < 24, om < 60 else { return nil }
            offset = sign * (oh * 3600 + om * 60)
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        let days = Self.daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset
        self.secondsSince1970 = Double(seconds) + fraction
    }

    /// `2026-03-02T07:30:00Z`, with milliseconds when there are any.
    public var iso8601: String {
        // Any Double, so a row no check ever saw (time 1e300) is shown, not trapped on:
        // clamped to ±2^53 s, where a Double has no fraction left and nothing below overflows.
        let limit = 9_007_199_254_740_992.0
        let value = secondsSince1970.isNaN ? 0 : min(max(secondsSince1970, -limit), limit)
        let whole = value.rounded(.down)
        var millis = Int(((value - whole) * 1000).rounded())
        var seconds = Int(whole)
        if millis == 1000 { millis = 0; seconds += 1 }
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let (y, m, d) = Self.civilFromDays(days)
        let s = seconds - days * 86_400
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let yyyy = String(y).count < 4 ? String(repeating: "0", count: 4 - String(y).count) + String(y) : String(y)
        var text = "\(yyyy)-\(two(m))-\(two(d))T\(two(s / 3600)):\(two(s % 3600 / 60)):\(two(s % 60))"
        if millis != 0 {
            text += "." + (millis < 10 ? "00" : millis < 100 ? "0" : "") + String(millis)
        }
        return text + "Z"
    }

    public static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    // Howard Hinnant's days_from_civil / civil_from_days (proleptic Gregorian).
    public static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    public static func civilFromDays(_ z0: Int) -> (Int, Int, Int) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}

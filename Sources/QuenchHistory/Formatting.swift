import FoundationEssentials
import QuenchCore
import QuenchStore

/// Text formatting shared by the history commands.
enum Format {
    /// `1,250 mL` or `42.3 oz` (QuenchCore's, which the charts use too).
    static func volume(_ ml: Double, _ unit: VolumeUnit) -> String { VolumeText.volume(ml, unit) }

    /// A number only (for tables whose header names the unit).
    static func amount(_ ml: Double, _ unit: VolumeUnit) -> String { VolumeText.amount(ml, unit) }

    static func unitName(_ unit: VolumeUnit) -> String { unit == .ml ? "mL" : "oz" }

    static func grouped(_ n: Int) -> String { VolumeText.grouped(n) }

    static func decimal(_ x: Double, places: Int) -> String { VolumeText.decimal(x, places: places) }

    static func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }

    /// A quotient as JSON carries it: to a hundredth, so an average of 333.3 mL over three sips
    /// reads 111.1, not 111.10000000000001 (a binary fraction's noise, in every client's display).
    /// Sums stay as stored: clients add to them and compare.
    static func hundredths(_ x: Double) -> Double { (x * 100).rounded() / 100 }

    /// A sum of stored amounts to a billionth of a mL: its float noise (1201.1599999999999 in the JSON,
    /// on the page and in Home Assistant) is far below that, and 8 fl oz stays 236.5882365 mL.
    static func sum(_ amounts: some Sequence<Double>) -> Double { (amounts.reduce(0, +) * 1e9).rounded() / 1e9 }

    /// A person's name as a shell takes it in a command we suggest: "Ann Lee" is one word.
    static func shellWord(_ name: String) -> String { name.shownSafely(limit: 40).quotedForShell }

    /// `HH:MM` on the local wall clock.
    static func clock(_ time: Timestamp, _ calendar: DayCalendar) -> String {
        let w = calendar.wallClock(time)
        return "\(two(w.hour)):\(two(w.minute))"
    }

    /// `HH:MM` on the local wall clock.
    static func time(_ time: Timestamp, _ calendar: DayCalendar) -> String {
        let w = calendar.wallClock(time)
        return "\(two(w.hour)):\(two(w.minute))"
    }

    /// `2026-03-02 10:42` on the local wall clock; in the hour the clocks go back, which it shows
    /// twice, with the offset that tells them apart (`2026-10-25 01:30 +01:00`, then `… +00:00`):
    /// two drinks an hour apart read as one logged twice.
    static func dateTime(_ time: Timestamp, _ calendar: DayCalendar) -> String {
        let w = calendar.wallClock(time)
        let shown = "\(w.date) \(two(w.hour)):\(two(w.minute))"
        // Only a time a calendar holds: a row another program wrote at 1e300 s would overflow the search (a trap).
        let local = calendar.localSeconds(time).rounded(.down)
        guard abs(local) < 1e12, case .repeated = calendar.fit(localSeconds: Int(local)).fit else { return shown }
        return shown + " " + offset(calendar.utcOffset(at: time))
    }

    /// `+01:00`, `-05:00`, `+05:45`.
    static func offset(_ seconds: Int) -> String {
        (seconds < 0 ? "-" : "+") + two(abs(seconds) / 3600) + ":" + two(abs(seconds) % 3600 / 60)
    }

    /// ISO 8601 with the local offset: `2026-03-02T10:42:05+01:00`.
    static func localISO(_ time: Timestamp, _ calendar: DayCalendar) -> String {
        let w = calendar.wallClock(time)
        return "\(w.date)T\(two(w.hour)):\(two(w.minute)):\(two(w.second))" + offset(calendar.utcOffset(at: time))
    }

    static let weekdays = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
    static let months = ["January", "February", "March", "April", "May", "June", "July", "August",
                         "September", "October", "November", "December"]

    /// `Monday 2 March 2026`.
    static func longDate(_ day: CivilDay) -> String {
        let c = day.components
        return "\(weekdays[day.weekday]) \(c.day) \(months[c.month - 1]) \(c.year)"
    }

    /// `45 min`, `3 h`, `7 h 5 min`, `58 h`: a time without a drink in waking hours, a
    /// threshold. Never in days: 58 waking hours are four days of the calendar, and
    /// "2 days 10 h" read as two (the last drink's date says when).
    static func span(minutes: Int) -> String {
        let m = max(0, minutes)
        if m < 60 { return "\(m) min" }
        if m < 48 * 60 { return m % 60 == 0 ? "\(m / 60) h" : "\(m / 60) h \(m % 60) min" }
        return "\(m / 60) h"
    }

    /// `just now`, `23 min ago`, `2 h 5 min ago`, `3 days ago`.
    static func ago(_ seconds: Double) -> String {
        let s = max(0, Int(saturating: seconds))
        if s < 60 { return "just now" }
        if s < 3600 { return "\(s / 60) min ago" }
        if s < 86_400 { return s % 3600 / 60 == 0 ? "\(s / 3600) h ago" : "\(s / 3600) h \(s % 3600 / 60) min ago" }
        let days = s / 86_400
        return days == 1 ? "1 day ago" : "\(days) days ago"
    }

    /// `[##########..............]`, `width` cells, full at `fraction` ≥ 1.
    static func bar(_ fraction: Double, width: Int, color: Bool) -> String {
        let filled = max(0, min(width, Int((min(1, max(0, fraction)) * Double(width)).rounded(.down))))
        let done = String(repeating: "#", count: filled), rest = String(repeating: ".", count: width - filled)
        guard color else { return "[\(done)\(rest)]" }
        let tint = fraction >= 1 ? ANSI.green : ANSI.cyan
        return "[\(tint)\(done)\(ANSI.reset)\(ANSI.dim)\(rest)\(ANSI.reset)]"
    }

    /// Rounded down (99.6 % of the goal is not 100 %), past binary fractions'
    /// dust: 2 300 of 2 000 mL is 1.15, and 1.15 × 100 is 114.999…, not 114.
    static func percent(_ fraction: Double) -> String { "\(grouped(Int(saturating: (fraction * 100 + 1e-9).rounded(.down)))) %" }

    /// Left-aligned label column: rows of (label, value).
    static func fields(_ rows: [(String, String)], indent: Int = 2) -> String {
        let width = rows.map(\.0.terminalWidth).max() ?? 0
        return rows.map { label, value in
            String(repeating: " ", count: indent) + label + String(repeating: " ", count: width - label.terminalWidth + 2) + value
        }.joined(separator: "\n")
    }

    enum Alignment { case left, right }

    /// A table with a header, columns padded to their widest cell. Every cell
    /// is shown safely (control characters escaped): names, devices and notes
    /// come from people and files, and a table never lets the terminal obey them.
    static func table(_ header: [String], _ rows: [[String]], align: [Alignment]) -> String {
        var layout = TableLayout(header, align: align)
        for row in rows { layout.measure(row) }
        return ([layout.line(header)] + rows.map(layout.line)).joined(separator: "\n")
    }

    /// Column widths measured from the rows first, then each line laid out on
    /// its own: a table can be written row by row.
    struct TableLayout {
        private var widths: [Int]
        private let align: [Alignment]
        private(set) var rows = 0

        init(_ header: [String], align: [Alignment]) {
            widths = header.map(\.terminalWidth)
            self.align = align
        }

        mutating func measure(_ row: [String]) {
            for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.shownSafely(limit: .max).terminalWidth) }
            rows += 1
        }

        func line(_ cells: [String]) -> String {
            var parts: [String] = []
            for (i, cell) in cells.lazy.map({ $0.shownSafely(limit: .max) }).enumerated() {
                let pad = String(repeating: " ", count: max(0, widths[i] - cell.terminalWidth))
                parts.append(align[i] == .right ? pad + cell : (i == cells.count - 1 ? cell : cell + pad))
            }
            var line = parts.joined(separator: "  ")
            while line.hasSuffix(" ") { line.removeLast() }
            return line
        }
    }
}

enum ANSI {
    static let reset = "\u{1B}[0m"
    static let dim = "\u{1B}[2m"
    static let bold = "\u{1B}[1m"
    static let green = "\u{1B}[32m"
    static let yellow = "\u{1B}[33m"
    static let red = "\u{1B}[31m"
    static let cyan = "\u{1B}[36m"
}

/// The history's output conventions, for reports composed above this layer
/// (`quench config show`): the same tables and the same JSON.
public enum OutputText {
    /// Left-aligned columns padded to their widest cell, under a header.
    public static func table(_ header: [String], _ rows: [[String]]) -> String {
        Format.table(header, rows, align: header.map { _ in .left })
    }

    /// As every `--json` output writes it.
    public static func json(_ value: some Encodable) -> String { JSONOutput.encode(value) }
}

/// JSON output: snake_case keys, stable key order.
public enum JSONOutput {
    public static func encode(_ value: some Encodable, pretty: Bool = false) -> String {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        // A number that is not finite (a row written before imports were
        // checked) is spelled out rather than failing the whole output.
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        do {
            return String(decoding: try encoder.encode(value), as: UTF8.self)
        } catch {
            // Plain value types with that strategy do not fail; should one, the output says so instead of trapping.
            return "{\"error\":\"cannot encode as JSON: \(error)\"}"
        }
    }
}

/// Volumes as people read them, shared by the terminal output (QuenchHistory)
/// and the charts (QuenchCharts), so a chart's "1,250 mL" is the table's.
public enum VolumeText {
    /// `1,250 mL` or `42.3 oz`.
    public static func volume(_ ml: Double, _ unit: VolumeUnit) -> String {
        amount(ml, unit) + (unit == .ml ? " mL" : " oz")
    }

    /// The number only (for an axis or a table whose header names the unit).
    public static func amount(_ ml: Double, _ unit: VolumeUnit) -> String {
        // A drop is not nothing: `add 1ml` in ounces said "sip 0.0 oz".
        let amount = unit.amount(fromMillilitres: ml), places = unit == .ml ? 0 : 1
        if amount != 0, decimal(abs(amount), places: places) == decimal(0, places: places) { return decimal(amount, places: unit == .ml ? 1 : 3) }
        return decimal(amount, places: places)
    }

    /// `1,250`: thousands separated by commas.
    public static func grouped(_ n: Int) -> String {
        let digits = String(n.magnitude)
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0, (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return n < 0 ? "-" + out : out
    }

    /// `1 sip`, `3 sips`, `3,649 days`: a count of things, grouped as amounts are.
    public static func count(_ n: Int, _ noun: String) -> String { n == 1 ? "1 \(noun)" : "\(grouped(n)) \(noun)s" }

    /// `1,250.5` with exactly `places` decimals.
    public static func decimal(_ x: Double, places: Int) -> String {
        var scale = 1.0
        for _ in 0..<max(0, places) { scale *= 10 }
        let rounded = (x * scale).rounded() / scale
        let whole = Int(saturating: rounded.rounded(.towardZero))
        let fraction = Int(saturating: (abs(rounded - Double(whole)) * scale).rounded())
        var text = grouped(whole)
        if rounded < 0, whole == 0 { text = "-" + text }
        guard places > 0 else { return text }
        let f = String(fraction)
        return text + "." + String(repeating: "0", count: max(0, places - f.count)) + f
    }
}

extension String {
    /// One word to a shell, in a command we suggest: as it is when nothing in it is special to one
    /// ("Ann Lee" and a path with a space are quoted, a quote inside them closed and escaped).
    public var quotedForShell: String {
        guard contains(where: { !($0.isLetter || $0.isNumber || "/._-+:@%,".contains($0)) }) else { return self }
        return "'" + replacing("'", with: "'\\''") + "'"
    }
}

/// What a bottle's sensor measures.
public enum SensorKind: String, Sendable, Hashable, CaseIterable, Codable {
    /// A load cell: the bottle stands on a scale (or the scale is in its base).
    case weight
    /// A level sensor inside the bottle (ultrasonic, capacitive, ToF).
    case level
}

/// The unit a sensor reports in. Weight units convert to grams; level units
/// are mapped to mL by a `LevelCurve`.
public enum MeasurementUnit: String, Sendable, Hashable, CaseIterable, Codable {
    case g, kg, lb, oz
    case mm, percent, raw

    public var sensor: SensorKind {
        switch self {
        case .g, .kg, .lb, .oz: .weight
        case .mm, .percent, .raw: .level
        }
    }

    /// Grams per unit for weight units (avoirdupois pound and ounce); nil for level units.
    public var gramsPerUnit: Double? {
        switch self {
        case .g: 1
        case .kg: 1000
        case .lb: 453.59237
        case .oz: 28.349523125
        case .mm, .percent, .raw: nil
        }
    }
}

/// A volume the way people type it: `250ml`, `0.5l`, `8oz` (US fluid ounces).
public enum VolumeUnit: String, Sendable, Hashable, CaseIterable, Codable {
    case ml
    case usFluidOunce = "oz"

    /// `ml`, `mL`, `millilitres`, `oz`, `fl oz`, `floz`: as a person names units, on the command line
    /// and in the config file alike (the file refused "fl oz", which `--units` took).
    public init?(parsingUnitName text: String) {
        switch String(text.lowercased().trimmingSpaces) {
        case "ml", "millilitre", "millilitres", "milliliter", "milliliters": self = .ml
        case "oz", "floz", "fl oz", "fl.oz", "us fl oz": self = .usFluidOunce
        default: return nil
        }
    }

    /// Millilitres in one US fluid ounce (exactly 29.5735295625 mL).
    public static let millilitresPerUSFluidOunce = 29.5735295625

    public func millilitres(_ amount: Double) -> Double {
        switch self {
        case .ml: amount
        case .usFluidOunce: amount * Self.millilitresPerUSFluidOunce
        }
    }

    public func amount(fromMillilitres ml: Double) -> Double {
        switch self {
        case .ml: ml
        case .usFluidOunce: ml / Self.millilitresPerUSFluidOunce
        }
    }
}

extension FixedWidthInteger where Self: SignedInteger {
    /// A Double as an integer that never traps: NaN is 0, values beyond the
    /// type's range are its ends. For numbers that came from input or a database.
    public init(saturating value: Double) {
        // Double(max) rounds up to 2^(bits-1), itself out of range: hence >=.
        if value.isNaN { self = 0 } else if value >= Double(Self.max) { self = .max } else if value <= Double(Self.min) { self = .min } else { self = Self(value) }
    }
}

extension Unicode.Scalar {
    /// C0 controls, DEL and C1 controls (general category Cc), and the bidirectional embeddings,
    /// overrides and isolates (U+202A–U+202E, U+2066–U+2069), which make a terminal or a page
    /// show text in another order than it is ("Trojan Source", CVE-2021-42574): what no name
    /// Quench keeps or shows may hold. Arabic and Hebrew names need none of them.
    public var isControlOrBidiOverride: Bool {
        value < 0x20 || (0x7F...0x9F).contains(value) || (0x202A...0x202E).contains(value) || (0x2066...0x2069).contains(value)
    }
}

extension String {
    /// The text with the password of each `scheme://user:password@host` in it
    /// replaced by `***` (the journal and a terminal's scroll-back keep what is shown).
    public func redactingURLPassword() -> String {
        func afterScheme(_ s: Substring) -> Substring.Index? {
            var i = s.startIndex
            while i < s.endIndex {
                if s[i...].hasPrefix("://") { return s.index(i, offsetBy: 3) }
                i = s.index(after: i)
            }
            return nil
        }
        var out = ""
        var rest = Substring(self)
        while let start = afterScheme(rest) {
            out += rest[..<start]
            rest = rest[start...]
            // The authority ends at the first '/', '?', '#' or space; its user info at its last '@'.
            let end = rest.firstIndex { "/?# \n\t\"'".contains($0) } ?? rest.endIndex
            let authority = rest[..<end]
            if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
                out += authority[...colon] + "***" + authority[at...]
                rest = rest[end...]
            }
        }
        return out + rest
    }

    /// Text from a file or a person, safe to show on a terminal: control
    /// bytes (ESC, BEL, CR, NUL, DEL, C1), a byte-order mark and other
    /// invisible format characters become `\u{…}`, and anything longer than
    /// `limit` characters is cut with "...". The one way input is echoed.
    /// A password in a URL (`mqtt://user:secret@host`) is never echoed: `***`.
    /// A zero-width joiner between two emoji is part of them (👨‍🍳) and stays, as a
    /// non-joiner between two letters of a script that writes with one (Persian,
    /// the Indic scripts); anywhere else either is invisible and would make "Мама"
    /// and "Ма‍ма" look alike, so it is shown.
    public func shownSafely(limit: Int = 60) -> String {
        var out = ""
        var count = 0
        let scalars = Array(redactingURLPassword().unicodeScalars)
        // Besides the controls and bidirectional ones: a byte-order mark, zero-width spaces and joiners, the
        // direction marks, line and paragraph separators, and the word joiner and invisible operators.
        func invisible(_ s: Unicode.Scalar) -> Bool {
            s.isControlOrBidiOverride || s.value == 0xFEFF || (0x200B...0x200F).contains(s.value) || (0x2028...0x2029).contains(s.value)
                || (0x2060...0x2065).contains(s.value)
        }
        func at(_ i: Int, _ test: (Unicode.Scalar) -> Bool) -> Bool { scalars.indices.contains(i) && test(scalars[i]) }
        // An emoji (not the ASCII digits and signs that are emoji too), or what ends one: VS16, a skin tone.
        func emoji(_ s: Unicode.Scalar) -> Bool { !s.isASCII && (s.properties.isEmoji || s.value == 0xFE0F) }
        // Arabic (Persian, Urdu) and the Indic scripts, Devanagari to Malayalam.
        func joinedScript(_ s: Unicode.Scalar) -> Bool {
            ((0x0600...0x06FF).contains(s.value) || (0x0750...0x077F).contains(s.value) || (0x0900...0x0D7F).contains(s.value))
                && s.properties.isAlphabetic
        }
        for (i, scalar) in scalars.enumerated() {
            guard count < limit else { return out + "..." }
            let v = scalar.value
            let joins = (v == 0x200D && at(i - 1, emoji) && at(i + 1, emoji)) || (v == 0x200C && at(i - 1, joinedScript) && at(i + 1, joinedScript))
            if invisible(scalar), !joins {
                out += "\\u{" + String(v, radix: 16, uppercase: true) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
            count += 1
        }
        return out
    }
}

/// Writing SVG text: escaping, compact numbers, and an element writer.
///
/// Everything here is a pure function of its input, so the same data gives the
/// same bytes (tests compare outputs, and a web page can cache a chart by them).
public enum SVGText {
    /// Text and attribute values escaped for XML: `&`, `<`, `>`, `"` and `'`
    /// as entities, and characters XML 1.0 forbids (C0 controls other than tab,
    /// newline and return; U+FFFE, U+FFFF) replaced by U+FFFD, so a name typed with
    /// a stray control character still gives a document a parser accepts.
    public static func escaped(_ text: String) -> String {
        var out = ""
        out.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\t", "\n", "\r": out.unicodeScalars.append(scalar)
            case _ where scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF:
                out.unicodeScalars.append("\u{FFFD}")
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// A coordinate to a tenth of a unit, without trailing zeros: `12`, `12.5`,
    /// `-3.1`. A tenth of a viewBox unit is below a pixel at any size a chart is
    /// shown, and it keeps `0.30000000000000004` out of the output. Not-finite is 0.
    public static func number(_ x: Double) -> String {
        guard x.isFinite else { return "0" }
        let tenths = Int(saturating: (x * 10).rounded())
        let magnitude = tenths.magnitude
        let text = magnitude % 10 == 0 ? "\(magnitude / 10)" : "\(magnitude / 10).\(magnitude % 10)"
        return tenths < 0 ? "-" + text : text
    }
}

/// Builds an SVG document one element per line.
struct SVGWriter {
    private(set) var text = ""
    private var depth = 0

    /// An attribute list: numbers go through `SVGText.number`, strings are escaped.
    enum Value {
        case number(Double)
        case text(String)
    }

    private static func attributes(_ pairs: KeyValuePairs<String, Value>) -> String {
        var out = ""
        for (name, value) in pairs {
            switch value {
            case .number(let x): out += " \(name)=\"\(SVGText.number(x))\""
            case .text(let s): out += " \(name)=\"\(SVGText.escaped(s))\""
            }
        }
        return out
    }

    private mutating func line(_ s: String) {
        text += String(repeating: " ", count: depth * 2) + s + "\n"
    }

    /// `<name …/>`, or `<name …><title>…</title></name>` when a title is given
    /// (a tooltip in browsers, read by screen readers).
    mutating func element(_ name: String, _ attributes: KeyValuePairs<String, Value>, title: String? = nil) {
        if let title {
            line("<\(name)\(Self.attributes(attributes))><title>\(SVGText.escaped(title))</title></\(name)>")
        } else {
            line("<\(name)\(Self.attributes(attributes))/>")
        }
    }

    mutating func text(_ content: String, _ attributes: KeyValuePairs<String, Value>) {
        line("<text\(Self.attributes(attributes))>\(SVGText.escaped(content))</text>")
    }

    mutating func open(_ name: String, _ attributes: KeyValuePairs<String, Value> = [:]) {
        line("<\(name)\(Self.attributes(attributes))>")
        depth += 1
    }

    mutating func close(_ name: String) {
        depth -= 1
        line("</\(name)>")
    }

    /// Raw markup the caller has already escaped (the style sheet).
    mutating func raw(_ markup: String) {
        for piece in markup.split(separator: "\n", omittingEmptySubsequences: true) { line(String(piece)) }
    }

    /// The root element with what every Quench graphic carries: the SVG
    /// namespace, a viewBox, `role="img"` with an `aria-label` summarising the
    /// data, `<title>` and `<desc>`, the font stack (DejaVu Sans is on every
    /// Debian machine with fonts-dejavu-core, Verdana on most others; no web
    /// fonts to fetch) and the style sheet. No `id` anywhere: a page that
    /// inlines several charts would otherwise get duplicate ids.
    mutating func openDocument(
        width: Double, height: Double, classes: String, fixedSize: Bool, title: String, label: String, description: String,
        style: String
    ) {
        let size = fixedSize ? " width=\"\(SVGText.number(width))\" height=\"\(SVGText.number(height))\"" : " width=\"100%\""
        line("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(SVGText.number(width)) \(SVGText.number(height))\"\(size)"
             + " role=\"img\" aria-label=\"\(SVGText.escaped(label))\" class=\"\(classes)\""
             + " font-family=\"DejaVu Sans, Verdana, sans-serif\">")
        depth += 1
        line("<title>\(SVGText.escaped(title))</title>")
        line("<desc>\(SVGText.escaped(description))</desc>")
        line("<style>")
        depth += 1
        raw(style)
        depth -= 1
        line("</style>")
    }

    mutating func closeDocument() { close("svg") }
}

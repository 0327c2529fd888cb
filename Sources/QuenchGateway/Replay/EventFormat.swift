import QuenchCore

/// How detected events are printed: one JSON object a line, or a table.
public enum EventFormat {
    /// `{"type":"sip","t":123.456,"start":118.2,"end":121.9,"ml":23.45,"at":"…"}`;
    /// `at` (ISO-8601, UTC) only when the trace's start time is known.
    public static func jsonLine(_ event: DetectedEvent, started: Timestamp?, device: String? = nil) -> String {
        var s = "{\"type\":\"\(event.kind.rawValue)\",\"t\":\(TraceWriter.fixed(event.t, places: 3))"
        s += ",\"start\":\(TraceWriter.fixed(event.start, places: 3)),\"end\":\(TraceWriter.fixed(event.end, places: 3))"
        s += ",\"ml\":\(TraceWriter.fixed(event.ml, places: 2))"
        if let started {
            s += ",\"at\":\"\(started.adding(event.t).iso8601)\",\"start_at\":\"\(started.adding(event.start).iso8601)\""
        }
        if let remaining = event.remainingML { s += ",\"remaining_ml\":\(TraceWriter.fixed(remaining, places: 1))" }
        if let device { s += ",\"device\":\"\(jsonEscaped(device))\"" }
        return s + "}"
    }

    public static let tableHeader = "  when                     event        mL   lift → settled     left"

    /// One aligned table row: wall-clock time when known (`wallClock` spells it; ISO 8601 in UTC by default), else trace seconds.
    public static func tableRow(_ event: DetectedEvent, started: Timestamp?, wallClock: (Timestamp) -> String = { $0.iso8601 }) -> String {
        let when = started.map { wallClock($0.adding(event.start)) } ?? "t=" + TraceWriter.fixed(event.start, places: 1) + " s"
        let duration = TraceWriter.fixed(event.end - event.start, places: 1) + " s"
        let left = event.remainingML.map { TraceWriter.fixed($0, places: 0) + " mL" } ?? ""
        let ml = event.kind.isDiagnostic ? "" : TraceWriter.fixed(event.ml, places: 1)
        return "  " + pad(when, 25) + pad(event.kind.rawValue, 7) + leftPad(ml, 8) + "   " + pad(duration, 16) + leftPad(left, 8)
    }

    public static func summary(_ s: ReplaySummary) -> String {
        var lines = [
            "\(s.readings) reading\(s.readings == 1 ? "" : "s") over \(duration(s.duration))",
            "intake  \(TraceWriter.fixed(s.sipML, places: 1)) mL in \(s.sips) sip\(s.sips == 1 ? "" : "s")"
                + (s.sips > 0 ? " (average \(TraceWriter.fixed(s.sipML / Double(s.sips), places: 1)) mL)" : ""),
            "refills \(s.refills) (\(TraceWriter.fixed(s.refillML, places: 0)) mL)   pours \(s.pours) (\(TraceWriter.fixed(s.pourML, places: 0)) mL, not intake)",
        ]
        if let left = s.remainingML { lines.append("left in the bottle: \(TraceWriter.fixed(left, places: 0)) mL") }
        return lines.joined(separator: "\n")
    }

    /// The summary as one JSON object (`quench demo --json`); amounts in mL, durations in seconds.
    public static func summaryJSON(_ s: ReplaySummary) -> String {
        var fields = [
            "\"readings\":\(s.readings)", "\"duration_s\":\(number(s.duration, 3))",
            "\"sips\":\(s.sips)", "\"sip_ml\":\(number(s.sipML, 2))", "\"refills\":\(s.refills)", "\"refill_ml\":\(number(s.refillML, 2))",
            "\"pours\":\(s.pours)", "\"pour_ml\":\(number(s.pourML, 2))",
        ]
        if let left = s.remainingML { fields.append("\"remaining_ml\":\(number(left, 1))") }
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// A JSON number, or null where JSON has none (not finite).
    public static func number(_ value: Double?, _ places: Int) -> String {
        guard let value, value.isFinite else { return "null" }
        return TraceWriter.fixed(value, places: places)
    }

    /// A span as the summaries say it: `45 s`, `30 min`, `16 h 0 min`.
    public static func duration(_ seconds: Double) -> String {
        // A garbage trace can span 1e19 s: shown as days, never an integer overflow.
        guard seconds.isFinite, seconds < 1e12 else { return seconds.isFinite ? "\(TraceWriter.fixed(seconds / 86400, places: 0)) days" : "\(seconds) s" }
        let s = Int(seconds.rounded())
        if s < 120 { return "\(s) s" }
        if s < 7200 { return "\(s / 60) min" }
        return "\(s / 3600) h \(s % 3600 / 60) min"
    }

    public static func pad(_ s: String, _ width: Int) -> String {
        s.count >= width ? s + " " : s + String(repeating: " ", count: width - s.count)
    }

    public static func leftPad(_ s: String, _ width: Int) -> String {
        s.count >= width ? s : String(repeating: " ", count: width - s.count) + s
    }

    public static func jsonEscaped(_ s: String) -> String {
        var out = ""
        for c in s.unicodeScalars {
            switch c {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case _ where c.value < 0x20: out += "\\u00" + [UInt8(c.value)].map { String($0, radix: 16) }.joined().leftPadded(2)
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }
}

extension String {
    fileprivate func leftPadded(_ n: Int) -> String { count >= n ? self : String(repeating: "0", count: n - count) + self }
}

/// The one-letter escapes JSON (RFC 8259 §7) and TOML (v1.0.0, "String") share (a file of its own, without
/// imports: `.ci/fuzz-config` compiles it beside the TOML parser): `\b \t \n \f \r \" \\`.
public enum ShortEscape {
    /// The byte `\` followed by `letter` stands for; nil for any other letter.
    public static func byte(for letter: UInt8) -> UInt8? {
        switch letter {
        case UInt8(ascii: "b"): 0x08
        case UInt8(ascii: "t"): 0x09
        case UInt8(ascii: "n"): 0x0A
        case UInt8(ascii: "f"): 0x0C
        case UInt8(ascii: "r"): 0x0D
        case UInt8(ascii: "\""): 0x22
        case UInt8(ascii: "\\"): 0x5C
        default: nil
        }
    }
}

/// A value that JSON holds as its printed form (`F0:F1:F2:F3:F4:F5`, `181D`):
/// saved devices and profile files stay readable and hand-editable.
public protocol TextCodable: Codable, CustomStringConvertible {
    /// Parses the printed form; nil when the text is not one.
    init?(_ text: String)
    /// What the text should have been, for the error: "a Bluetooth address".
    static var textKind: String { get }
}

extension TextCodable {
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let value = Self(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not \(Self.textKind): \(text)"))
        }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

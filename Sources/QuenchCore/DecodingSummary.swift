extension DecodingError {
    /// What is wrong and where, in words a person can act on: "field
    /// `events[3].ml`: expected a number", not the decoder's debug dump.
    /// `snakeCase` shows keys as the file spells them when they were decoded
    /// with `convertFromSnakeCase`.
    public func summary(snakeCase: Bool = false) -> String {
        func place(_ path: [any CodingKey]) -> String {
            var text = ""
            for key in path {
                if let index = key.intValue {
                    text += "[\(index)]"
                } else {
                    let name = snakeCase ? Self.snakeCased(key.stringValue) : key.stringValue
                    text += (text.isEmpty ? "" : ".") + name.shownSafely(limit: 40)
                }
            }
            return text
        }
        func field(_ path: [any CodingKey]) -> String { path.isEmpty ? "" : "field `\(place(path))`: " }
        switch self {
        case .typeMismatch(let type, let context):
            return field(context.codingPath) + "expected \(Self.kind(of: type))"
        case .valueNotFound(let type, let context):
            return field(context.codingPath) + "expected \(Self.kind(of: type)), found null"
        case .keyNotFound(let key, let context):
            return "field `\(place(context.codingPath + [key]))` is missing"
        case .dataCorrupted(let context):
            // The parser's own words (line and column) are in the underlying error.
            let detail = context.underlyingError.map { "\($0)" } ?? context.debugDescription
            guard !context.codingPath.isEmpty else { return "not valid JSON: \(detail.shownSafely(limit: 200))" }
            // An enum's refusal is in the decoder's words ("Cannot initialize VolumeUnit from invalid String value
            // gallon"): the value is said, not the type's name in the source.
            if let range = context.debugDescription.firstRange(of: " from invalid "), context.debugDescription.hasPrefix("Cannot initialize "),
               let value = context.debugDescription[range.upperBound...].firstRange(of: " value ").map({ context.debugDescription[$0.upperBound...] }) {
                return field(context.codingPath) + "'\(String(value).shownSafely(limit: 40))' is not one of the values it takes"
            }
            return field(context.codingPath) + context.debugDescription.shownSafely(limit: 200)
        @unknown default:
            return "\(self)".shownSafely(limit: 200)
        }
    }

    private static func kind(of type: Any.Type) -> String {
        switch type {
        case is String.Type: "text"
        case is Bool.Type: "true or false"
        case is Int.Type, is Int64.Type, is Int32.Type, is UInt8.Type, is UInt16.Type, is UInt32.Type: "an integer"
        case is Double.Type, is Float.Type: "a number"
        case is [Any].Type: "a list"
        default:
            "\(type)".hasPrefix("Array") ? "a list" : (("\(type)".hasPrefix("Dictionary")) ? "an object" : "\(type)")
        }
    }

    static func snakeCased(_ name: String) -> String {
        var out = ""
        for c in name {
            if c.isUppercase { out += "_" + c.lowercased() } else { out.append(c) }
        }
        return out
    }
}

extension String {
    /// The offset of the first byte that is not part of valid UTF-8, or nil
    /// when all of `bytes` is: errors about text files name the byte.
    public static func firstInvalidUTF8Offset(_ bytes: some Collection<UInt8>) -> Int? {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded): offset += encoded.count
            case .emptyInput: return nil
            case .error: return offset
            }
        }
    }
}

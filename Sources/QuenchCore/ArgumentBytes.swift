/// Swift's `CommandLine.arguments` repairs bytes that are not UTF-8 (U+FFFD in their place), so a
/// file named in Latin-1 became another file: `import` said a file that was there was missing, and
/// `add --db` or `chart --out` wrote a file of another name, exit 0; a note lost its byte. The programs
/// take names, notes and paths in UTF-8 and refuse any other argument before parsing one.
public enum ArgumentBytes {
    /// The first argument (counted from 1, after the program's name) that is not UTF-8, with
    /// where its first bad byte is; nil when every one is. Reads the process's own argv.
    public static func firstNotUTF8() -> String? {
        let argv = (1..<Int(CommandLine.argc)).map { index -> [UInt8] in
            guard let pointer = CommandLine.unsafeArgv[index] else { return [] }
            var bytes: [UInt8] = []
            var offset = 0
            while pointer[offset] != 0 {
                bytes.append(UInt8(bitPattern: pointer[offset]))
                offset += 1
            }
            return bytes
        }
        return firstNotUTF8(argv)
    }

    /// `argument 2 ('f\xFF.csv') is not UTF-8 text (byte 0xFF at offset 1)`, or nil.
    public static func firstNotUTF8(_ arguments: [[UInt8]]) -> String? {
        for (index, bytes) in arguments.enumerated() {
            guard let offset = String.firstInvalidUTF8Offset(bytes) else { continue }
            let byte = "0x" + String(bytes[offset], radix: 16, uppercase: true)
            return "argument \(index + 1) ('\(shown(bytes))') is not UTF-8 text (byte \(byte) at offset \(offset)); "
                + "names, notes and file names are taken in UTF-8 (rename the file, or pass its name in UTF-8)"
        }
        return nil
    }

    /// The argument as text, each byte that is not UTF-8 (and each control) as `\xNN`, at most 80 bytes of it.
    static func shown(_ bytes: [UInt8]) -> String {
        func hex(_ value: UInt32) -> String { "\\x" + (value < 0x10 ? "0" : "") + String(value, radix: 16, uppercase: true) }
        let kept = Array(bytes.prefix(80))
        var iterator = kept.makeIterator()
        var parser = Unicode.UTF8.ForwardParser()
        var text = "", offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                let scalar = Unicode.UTF8.decode(encoded)
                if scalar.value < 0x20 || scalar.value == 0x7F { text += hex(scalar.value) } else { text.unicodeScalars.append(scalar) }
                offset += encoded.count
            case .error(let length):
                for byte in kept[offset..<min(offset + length, kept.count)] { text += hex(UInt32(byte)) }
                offset += length
            case .emptyInput:
                return bytes.count > kept.count ? text + "…" : text
            }
        }
    }
}

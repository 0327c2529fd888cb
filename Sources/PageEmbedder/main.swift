// PageEmbedder OUTPUT FILE...: writes a Swift source holding each FILE's text
// as a string constant (`enum PageFiles`), for the EmbedPage build-tool plugin;
// a PNG as its base64 (a string literal compiles at once, an array of bytes does not).
// The page ships inside quench-web, which is installed alone and reads no files
// at run time. Each file's text is kept byte for byte, but for one final
// newline, which editors add and the page never had. Glibc only: this tool is
// built on every clean build, so it stays small.
import Glibc

/// Reads a whole file, or exits naming it.
func contents(of path: String) -> [UInt8] {
    guard let file = fopen(path, "rb") else { fail("\(path): cannot open: \(String(cString: strerror(errno)))") }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let n = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
        bytes += chunk[0..<n]
        if n < chunk.count {
            if ferror(file) != 0 { fail("\(path): cannot read") }
            return bytes
        }
    }
}

func fail(_ message: String) -> Never {
    let line = Array("PageEmbedder: \(message)\n".utf8)
    _ = line.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count) }
    exit(1)
}

/// `index.html` → `indexHTML`, `page.js` → `pageJS`, `app-icon.svg` → `appIconSVG`.
func constantName(_ fileName: String) -> String {
    let parts = fileName.split(separator: ".", omittingEmptySubsequences: false)
    let words = parts[0].split(whereSeparator: { !$0.isLetter && !$0.isNumber })
    var name = words.enumerated().map { $0.offset == 0 ? $0.element.lowercased() : $0.element.prefix(1).uppercased() + $0.element.dropFirst() }.joined()
    name += parts.dropFirst().map { $0.uppercased() }.joined()
    guard let first = name.first, first.isLetter, name.allSatisfy({ $0.isLetter || $0.isNumber }) else {
        fail("\(fileName): cannot name a Swift constant after this file")
    }
    return name
}

/// A one-line Swift string literal whose value is exactly `text`.
func literal(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\\": out += "\\\\"
        case "\"": out += "\\\""
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case _ where scalar.value < 0x20 || scalar.value == 0x7F:
            out += "\\u{" + String(scalar.value, radix: 16) + "}"
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}

/// RFC 4648 §4 base64, with padding.
func base64(_ bytes: [UInt8]) -> String {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    var out: [UInt8] = []
    out.reserveCapacity((bytes.count + 2) / 3 * 4)
    var i = 0
    while i < bytes.count {
        let n = min(3, bytes.count - i)
        let b0 = UInt32(bytes[i]), b1 = n > 1 ? UInt32(bytes[i + 1]) : 0, b2 = n > 2 ? UInt32(bytes[i + 2]) : 0
        let triple = b0 << 16 | b1 << 8 | b2
        for k in 0..<4 { out.append(k <= n ? alphabet[Int(triple >> (18 - 6 * UInt32(k)) & 63)] : UInt8(ascii: "=")) }
        i += 3
    }
    return String(decoding: out, as: UTF8.self)
}

let arguments = CommandLine.arguments.dropFirst()
guard let output = arguments.first, arguments.count > 1 else { fail("usage: PageEmbedder OUTPUT FILE...") }
var source = "// Generated at build time by PageEmbedder (the EmbedPage plugin) from the page's files: edit those, not this.\n\n"
source += "enum PageFiles {\n"
var names: Set<String> = []
for path in arguments.dropFirst().sorted() {
    let fileName = String(path.split(separator: "/").last ?? Substring(path))
    var bytes = contents(of: path)
    let name = constantName(fileName)
    guard names.insert(name).inserted else { fail("\(path): a second file named \(name)") }
    if fileName.hasSuffix(".png") {
        guard bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) else { fail("\(path): not a PNG (no PNG signature)") }
        source += "    /// \(fileName), base64\n    static let \(name) = \"\(base64(bytes))\"\n"
        continue
    }
    if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
    guard let text = String(validating: bytes, as: UTF8.self) else { fail("\(path): not UTF-8") }
    source += "    /// \(fileName)\n    static let \(name) = \(literal(text))\n"
}
source += "}\n"

// Written whole to a temporary file and renamed, so a failed build leaves no half a source.
let temporary = output + ".partial"
guard let file = fopen(temporary, "wb") else { fail("\(temporary): cannot create: \(String(cString: strerror(errno)))") }
let bytes = Array(source.utf8)
let written = bytes.withUnsafeBufferPointer { fwrite($0.baseAddress, 1, $0.count, file) }
guard written == bytes.count, fclose(file) == 0 else { fail("\(temporary): cannot write") }
guard rename(temporary, output) == 0 else { fail("\(output): cannot rename into place: \(String(cString: strerror(errno)))") }

import CZlib
import FoundationEssentials
import HTTPTypes
import Hummingbird

/// gzip for the page and the larger answers (RFC 9110 §8.4.1.3): a phone on a weak Wi-Fi
/// gets the script in a third of the bytes. The page's files are compressed once; an answer
/// is compressed when it is worth it.
enum Gzip {
    /// Below this an answer goes as it is: it fits one packet either way.
    static let worthwhile = 1_400

    /// Whether gzip can shrink `bytes` of `type`: text of some size. A PNG is compressed already
    /// (the card, 64 kB, was deflated again on every request for nothing).
    static func isWorthwhile(_ bytes: [UInt8], type: String) -> Bool {
        bytes.count >= worthwhile && !type.hasPrefix("image/png")
    }

    /// `bytes` as one gzip member; nil only when zlib refuses (out of memory).
    static func compress(_ bytes: [UInt8], level: Int32 = 6) -> [UInt8]? {
        var stream = z_stream()
        guard quench_deflate_gzip_init(&stream, level) == Z_OK else { return nil }
        defer { deflateEnd(&stream) }
        var out = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(bytes.count))) + 32)
        let status = bytes.withUnsafeBufferPointer { input in
            out.withUnsafeMutableBufferPointer { output in
                // zlib reads through a mutable pointer but does not write the input.
                stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                stream.avail_in = uInt(input.count)
                stream.next_out = output.baseAddress
                stream.avail_out = uInt(output.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else { return nil }
        return Array(out.prefix(Int(stream.total_out)))
    }

    /// Whether the request takes gzip: `Accept-Encoding` names `gzip` (or `*`) with a
    /// weight above 0 (RFC 9110 §12.5.3).
    static func accepted(by request: Request) -> Bool {
        accepted(request.headers[values: .acceptEncoding].joined(separator: ","))
    }

    static func accepted(_ header: String) -> Bool {
        for item in header.split(separator: ",") {
            let parts = item.split(separator: ";").map { $0.filter { $0 != " " && $0 != "\t" }.lowercased() }
            guard let coding = parts.first, coding == "gzip" || coding == "x-gzip" || coding == "*" else { continue }
            let weight = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            return weight > 0
        }
        return false
    }
}

/// A page file with its gzip (when worth it) made once, on first use.
struct PageFile: Sendable {
    let plain: [UInt8]
    let gzipped: [UInt8]?

    init(_ text: String) {
        plain = Array(text.utf8)
        gzipped = Gzip.isWorthwhile(plain, type: "text") ? Gzip.compress(plain, level: 9) : nil
    }

    /// A PNG, as PageEmbedder keeps it (base64). Decoded at the first request for it.
    init(png base64: String) {
        plain = Data(base64Encoded: base64).map { Array($0) } ?? []
        gzipped = nil
    }
}

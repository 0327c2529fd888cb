import NIOHTTP1

/// What NIO's HTTP parser refused, in words a person reading the answer can act on: its own
/// names ("unknown (http_parser error)", "strict mode assertion", "invalid constant string") said
/// nothing to the one who sent the request.
enum ParserWords {
    static func describe(_ error: any Error) -> String {
        guard let parser = error as? HTTPParserError else { return "\(error)" }
        return switch parser {
        case .invalidVersion: "the HTTP version is not 1.0 or 1.1, or the request line does not end in CRLF"
        case .invalidConstant: "the request line is not METHOD PATH HTTP/1.1 (a space in the path?)"
        case .invalidMethod: "an unknown method"
        case .invalidURL, .invalidPath, .invalidQueryString, .invalidFragment, .invalidHost, .invalidPort: "the path is not a valid URL"
        case .invalidHeaderToken: "a header's name holds a character header names may not"
        case .invalidCharactersUsed: "characters HTTP does not allow there"
        // llhttp's codes: 11 for a bad, empty or too large length, and for one after Transfer-Encoding; 4 for a second one;
        // a Transfer-Encoding after Content-Length is 15, which NIO calls unknown.
        case .invalidContentLength: "Content-Length is not a number this server can take, or is sent beside Transfer-Encoding (one or the other)"
        case .unexpectedContentLength: "Content-Length is given twice"
        case .invalidChunkSize: "a chunk's size is not a hexadecimal number"
        case .strictModeAssertion: "the chunks are not framed as HTTP/1.1 says (a chunk without its CRLF?)"
        case .lfExpected: "a line ends in CR without LF"
        case .headerOverflow: "the request's head is too long"
        case .paused: "not HTTP/1.x (an HTTP/2 preface?)"
        case .unknown: "a Transfer-Encoding this server does not take (chunked, once, is the one it reads), or one beside Content-Length (one or the other)"
        default: "\(parser)"
        }
    }
}

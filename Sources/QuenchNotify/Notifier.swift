import CCurl
import FoundationEssentials
import QuenchCore
import Threading
#if canImport(Glibc)
import Glibc
#endif

/// Where notifications go and how: `[notify]` in the configuration.
public struct NotifierSettings: Sendable, Equatable {
    /// What the server expects.
    public enum Format: String, Sendable, CaseIterable {
        /// ntfy (ntfy.sh or one's own): the message as the body, the title, priority and tags as headers.
        case ntfy
        /// Any webhook: one JSON object (`kind`, `title`, `message`, `priority`, `tags`, `fields`).
        case json
    }

    /// `https://ntfy.sh/my-topic`; `http://` only to this machine (a server on loopback).
    public var url: String
    public var format: Format
    /// A file whose first line is the access token, sent as `Authorization: Bearer`.
    public var tokenFile: String?
    /// The CA certificate that signed the server's (one's own server); nil: the system's CAs.
    public var caFile: String?
    /// Seconds each attempt may take, connection and answer together.
    public var timeout: Double
    /// Tries in all: a server that is down, slow, or answers 429 / 5xx is tried again.
    public var attempts: Int
    /// Seconds before the second try; doubled for each one after.
    public var retryDelay: Double

    public static let defaultTimeout = 10.0
    public static let defaultAttempts = 3

    public init(url: String, format: Format = .ntfy, tokenFile: String? = nil, caFile: String? = nil,
                timeout: Double = NotifierSettings.defaultTimeout, attempts: Int = NotifierSettings.defaultAttempts, retryDelay: Double = 1) {
        self.url = url
        self.format = format
        self.tokenFile = tokenFile
        self.caFile = caFile
        self.timeout = timeout
        self.attempts = attempts
        self.retryDelay = retryDelay
    }
}

/// Why a notification did not arrive, each naming what and where.
public enum NotifyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The URL is not one Quench sends to (not https, a scheme curl would not speak, no host).
    case badURL(String, String)
    /// The token file could not be read, or holds no token.
    case tokenFile(String, String)
    /// The token or CA file, or a folder above it, is writable by another user.
    case untrusted(UntrustedFile)
    /// The server's certificate was not accepted, or TLS failed (curl's words).
    case tls(url: String, String)
    /// No answer within the time limit.
    case timedOut(url: String, seconds: Double)
    /// The server could not be reached (name, connection), after every try.
    case unreachable(url: String, String)
    /// The server answered with an error status (and the start of what it said).
    case refused(url: String, status: Int, body: String)
    case other(url: String, String)
    /// libcurl, loaded when first needed, is not installed (dlopen's words).
    case libcurlMissing(String)

    /// Whether the configuration is what must change (exit 78 for the timer's service).
    public var isConfigurationProblem: Bool {
        switch self {
        case .badURL, .tokenFile, .untrusted, .libcurlMissing: true
        default: false
        }
    }

    public var description: String {
        switch self {
        case let .badURL(url, why): "notify URL '\(url.shownSafely())': \(why)"
        case let .tokenFile(path, why): "notify token file \(path.shownSafely()): \(why)"
        case let .untrusted(problem): problem.description
        case let .tls(url, why): "notify \(Self.place(url)): TLS failed: \(why) (a server with its own CA: set ca_file under [notify])"
        case let .timedOut(url, seconds): "notify \(Self.place(url)): no answer within \(seconds.compactDescription) s"
        case let .unreachable(url, why): "notify \(Self.place(url)): \(why)"
        case let .refused(url, status, body):
            "notify \(Self.place(url)): the server answered \(status)" + (body.isEmpty ? "" : ": \(body.shownSafely(limit: 200))")
                + (status == 401 || status == 403 ? " (check the token in token_file under [notify])" : "")
        case let .other(url, why): "notify \(Self.place(url)): \(why)"
        case let .libcurlMissing(why): "notify: libcurl cannot be loaded (\(why)): pushes need Debian's libcurl4 (sudo apt install libcurl4)"
        }
    }

    /// The URL without its path: a topic's name is as good as a password on ntfy.sh.
    static func place(_ url: String) -> String {
        let afterScheme = url.firstRange(of: "://").map { url[$0.upperBound...] } ?? Substring(url)
        let host = afterScheme.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        return "\(url.lowercased().hasPrefix("http://") ? "http" : "https")://\(String(host).shownSafely(limit: 80))"
    }
}

/// Sends notifications over HTTPS with libcurl: one POST to the configured URL,
/// nothing else (no redirects followed, only http and https spoken), each try
/// bounded in time, retried after a pause when the server is away or busy.
public struct Notifier: Sendable {
    public let settings: NotifierSettings
    private let token: String?

    /// Checks the settings and reads the token: what is wrong is said before anything is sent.
    public init(_ settings: NotifierSettings) throws(NotifyError) {
        try Self.checkURL(settings.url)
        for path in [settings.tokenFile, settings.caFile].compactMap({ $0 }) {
            if let problem = FileTrust.check(path) { throw .untrusted(problem) }
        }
        self.settings = settings
        token = try settings.tokenFile.map { path throws(NotifyError) in try Self.readToken(path) }
    }

    /// Where it sends, for messages: the scheme and host, not the path (an ntfy topic is as good as a password).
    public var destination: String { NotifyError.place(settings.url) }

    /// What one `send` did.
    public struct Receipt: Sendable, Equatable {
        /// The server's status (2xx).
        public var status: Int
        /// Tries it took.
        public var attempts: Int
    }

    /// Sends `notification`, trying again (up to `attempts` in all) when the server
    /// is unreachable, slow, or says 408, 429 or 5xx; a TLS failure or another
    /// refusal is final at once.
    public func send(_ notification: PushMessage) throws(NotifyError) -> Receipt {
        let request = self.request(for: notification)
        var delay = settings.retryDelay
        var attempt = 1
        while true {
            let failure: NotifyError
            do throws(NotifyError) {
                return Receipt(status: try post(request), attempts: attempt)
            } catch {
                failure = error
            }
            guard attempt < settings.attempts, Self.isWorthRetrying(failure) else { throw failure }
            sleepSeconds(delay)
            delay *= 2
            attempt += 1
        }
    }

    static func isWorthRetrying(_ error: NotifyError) -> Bool {
        switch error {
        case .timedOut, .unreachable: true
        case .refused(_, let status, _): status == 408 || status == 429 || status >= 500
        default: false
        }
    }

    /// The request's headers and body, in the server's format.
    struct Request: Sendable, Equatable {
        var headers: [String]
        var body: [UInt8]
    }

    func request(for n: PushMessage) -> Request {
        var headers = ["User-Agent: quench/\(QuenchVersion.string)"]
        if let token { headers.append("Authorization: Bearer \(token)") }
        switch settings.format {
        case .ntfy:
            headers += ["Content-Type: text/plain; charset=utf-8", "Title: \(Self.headerValue(n.title))",
                        "Priority: \(n.priority.rawValue)", "X-Quench-Kind: \(Self.headerValue(n.kind.rawValue))"]
            if !n.tags.isEmpty { headers.append("Tags: " + n.tags.map(Self.headerValue).joined(separator: ",")) }
            return Request(headers: headers, body: Array(n.message.utf8))
        case .json:
            headers.append("Content-Type: application/json")
            let payload = WebhookPayload(kind: n.kind.rawValue, title: n.title, message: n.message, priority: n.priority.rawValue,
                                         tags: n.tags, fields: n.fields)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            return Request(headers: headers, body: Array((try? encoder.encode(payload)) ?? Data("{}".utf8)))
        }
    }

    struct WebhookPayload: Encodable {
        var kind: String
        var title: String
        var message: String
        var priority: Int
        var tags: [String]
        var fields: [String: String]
    }

    /// A header value, one line: visible ASCII as it is, anything else as RFC 2047
    /// encoded-words (`=?UTF-8?B?…?=`, §2 and §5), which ntfy decodes (2.4.0 on).
    /// A name such as "Renée" had arrived as "Ren?e", and "Zoë" and "Zoé" alike.
    /// Control characters become spaces, so a value cannot start another header.
    static func headerValue(_ text: String) -> String {
        let scalars = text.unicodeScalars.prefix(200).map { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) ? " " : $0 }
        if scalars.allSatisfy(\.isASCII) { return String(String.UnicodeScalarView(scalars)) }
        // An encoded-word is at most 75 characters (§2): 45 bytes of UTF-8 make 60 of base64 inside
        // its 12 of frame. Words break between characters, and the space between two is not text (§6.2).
        var words: [[UInt8]] = [[]]
        for scalar in scalars {
            let bytes = Array(String(scalar).utf8)
            if words[words.count - 1].count + bytes.count > 45 { words.append([]) }
            words[words.count - 1] += bytes
        }
        return words.map { "=?UTF-8?B?\(Data($0).base64EncodedString())?=" }.joined(separator: " ")
    }

    /// One POST; the status when it is 2xx.
    private func post(_ request: Request) throws(NotifyError) -> Int {
        let url = settings.url
        guard let curl = quench_curl_easy_init() else { throw .other(url: url, "libcurl could not start a transfer") }
        defer { quench_curl_easy_cleanup(curl) }
        let transfer = UnsafeMutablePointer<quench_curl_transfer>.allocate(capacity: 1)
        transfer.initialize(to: quench_curl_transfer())
        defer { transfer.deallocate() }
        var list: UnsafeMutablePointer<curl_slist>?
        for header in request.headers { list = quench_curl_slist_append(list, header) }
        defer { quench_curl_slist_free_all(list) }
        let milliseconds = Int(min(max(settings.timeout, 0.05), 3600) * 1000)
        var rc = quench_curl_capture(curl, transfer)
        for (option, value) in [(CURLOPT_NOSIGNAL, 1), (CURLOPT_FOLLOWLOCATION, 0), (CURLOPT_POST, 1),
                                (CURLOPT_TIMEOUT_MS, milliseconds), (CURLOPT_CONNECTTIMEOUT_MS, milliseconds),
                                (CURLOPT_POSTFIELDSIZE, request.body.count)] where rc == CURLE_OK {
            rc = quench_curl_set_long(curl, option, value)
        }
        var strings: [(CURLoption, String)] = [(CURLOPT_URL, url), (CURLOPT_PROTOCOLS_STR, "https,http")]
        if let ca = settings.caFile { strings.append((CURLOPT_CAINFO, ca)) }
        for (option, value) in strings where rc == CURLE_OK { rc = quench_curl_set_string(curl, option, value) }
        if rc == CURLE_OK { rc = quench_curl_set_list(curl, CURLOPT_HTTPHEADER, list) }
        // Copied by curl: the body may hold any byte, and need not outlive this call.
        if rc == CURLE_OK {
            // Terminated, so an empty body is a valid pointer too; POSTFIELDSIZE says where it ends.
            rc = (request.body.map { CChar(bitPattern: $0) } + [0]).withUnsafeBufferPointer { bytes in
                quench_curl_set_string(curl, CURLOPT_COPYPOSTFIELDS, bytes.baseAddress)
            }
        }
        if rc == CURLE_OK { rc = quench_curl_easy_perform(curl) }
        guard rc == CURLE_OK else { throw Self.failure(rc, url: url, detail: Self.text(transfer.pointee), seconds: settings.timeout) }
        let status = quench_curl_response_code(curl)
        guard (200..<300).contains(status) else {
            let body = withUnsafeBytes(of: transfer.pointee.body) { Array($0.prefix(min(transfer.pointee.count, 512))) }
            throw .refused(url: url, status: status, body: String(String(decoding: body, as: UTF8.self).trimmingWhitespace))
        }
        return status
    }

    static func text(_ t: quench_curl_transfer) -> String {
        withUnsafeBytes(of: t.error) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }

    /// curl's result as the error a person can act on; curl's own words kept.
    static func failure(_ rc: CURLcode, url: String, detail: String, seconds: Double) -> NotifyError {
        let words = detail.isEmpty ? String(cString: quench_curl_easy_strerror(rc)) : detail
        switch rc {
        case CURLE_OPERATION_TIMEDOUT: return .timedOut(url: url, seconds: seconds)
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CACERT_BADFILE,
             CURLE_SSL_CIPHER, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS:
            return .tls(url: url, words)
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_CONNECT, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING:
            return .unreachable(url: url, words)
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT: return .badURL(url, words)
        default: return .other(url: url, words)
        }
    }

    /// Loads libcurl, the first time only (Sources/CCurl): every Notifier checks its URL
    /// before anything else, so nothing calls into libcurl before this.
    static func loadLibcurl() throws(NotifyError) {
        var why = [CChar](repeating: 0, count: 256)
        guard quench_curl_load(&why, why.count) == 0 else {
            throw .libcurlMissing(String(nulTerminated: why))
        }
    }

    /// https to anywhere; http only to this machine (a token or a health fact in clear over a network, never).
    static func checkURL(_ url: String) throws(NotifyError) {
        try loadLibcurl()
        guard let handle = quench_curl_url() else { throw .badURL(url, "libcurl could not parse it") }
        defer { quench_curl_url_cleanup(handle) }
        guard quench_curl_url_set(handle, CURLUPART_URL, url, 0) == CURLUE_OK else { throw .badURL(url, "not a URL") }
        func part(_ what: CURLUPart) -> String? {
            var value: UnsafeMutablePointer<CChar>?
            guard quench_curl_url_get(handle, what, &value, 0) == CURLUE_OK, let value else { return nil }
            defer { quench_curl_free(value) }
            return String(cString: value)
        }
        guard let scheme = part(CURLUPART_SCHEME)?.lowercased(), let host = part(CURLUPART_HOST), !host.isEmpty else {
            throw .badURL(url, "no scheme or host")
        }
        if scheme == "https" { return }
        guard scheme == "http" else { throw .badURL(url, "only https:// (or http:// to this machine)") }
        let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        var v4 = in_addr()
        guard bare == "localhost" || bare == "::1" || (inet_pton(AF_INET, bare, &v4) == 1 && v4.s_addr & 0xFF == 127) else {
            throw .badURL(url, "http:// only to this machine (localhost); elsewhere https://, so the token and the message are not sent in clear")
        }
    }

    /// The first line of the token file (at most 4 KiB read).
    static func readToken(_ path: String) throws(NotifyError) -> String {
        let line: String
        switch SecretFile.firstLine(path) {
        case let .success(first): line = first
        case let .failure(problem): throw .tokenFile(path, problem.reason)
        }
        let token = line[...].trimmingWhitespace
        guard !token.isEmpty else { throw .tokenFile(path, "its first line is empty") }
        // It goes into a header line: visible ASCII only, or a request could be split.
        guard token.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value < 0x7F }) else {
            throw .tokenFile(path, "the token has characters a header cannot carry (spaces, control or non-ASCII characters)")
        }
        return String(token)
    }

    private func sleepSeconds(_ seconds: Double) {
        guard seconds > 0 else { return }
        var wanted = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - seconds.rounded(.down)) * 1e9))
        var left = timespec()
        while nanosleep(&wanted, &left) != 0 && errno == EINTR { wanted = left }
    }
}

/// Who may read and write, decided from a request's parts alone (no server
/// needed to test it).
///
/// - On a loopback listener only this machine can connect: no token, but the
///   `Host` must name loopback, so a web page elsewhere cannot reach the server
///   through a DNS name rebound to 127.0.0.1.
/// - On any other listener every request (page, API, write) needs the token: as
///   `?token=` once (answered with a cookie and a redirect that drops it from the
///   address bar), then the cookie, or `Authorization: Bearer` for scripts.
/// - Writes also need a same-origin request: `Origin` (when the browser sends
///   it) naming this host, `Sec-Fetch-Site` not cross-site, and a JSON body,
///   which a cross-site form cannot send without the browser asking first.
public struct AccessPolicy: Sendable {
    public var listener: ListenAddress
    /// Nil on a loopback listener.
    public var token: AccessToken?

    public static let cookieName = "quench_token"

    public init(listener: ListenAddress, token: AccessToken?) {
        self.listener = listener
        self.token = token
    }

    /// What a request carries that matters here.
    public struct Request: Sendable {
        public var method: String
        public var path: String
        /// The query as sent (without its `?`): a link's other parameters (`person=`) outlive the redirect.
        public var query: String?
        public var queryToken: String?
        public var cookieToken: String?
        public var authorization: String?
        public var host: String?
        public var origin: String?
        public var fetchSite: String?
        public var contentType: String?
        /// False only for a path the routes know asked with a method it does not
        /// take: that is answered as such (405, by the router), not refused for
        /// its body. An unknown path keeps every check.
        public var pathTakesMethod: Bool

        public init(method: String, path: String, query: String? = nil, queryToken: String? = nil, cookieToken: String? = nil,
                    authorization: String? = nil, host: String? = nil, origin: String? = nil,
                    fetchSite: String? = nil, contentType: String? = nil, pathTakesMethod: Bool = true) {
            self.method = method
            self.path = path
            self.query = query
            self.queryToken = queryToken
            self.cookieToken = cookieToken
            self.authorization = authorization
            self.host = host
            self.origin = origin
            self.fetchSite = fetchSite
            self.contentType = contentType
            self.pathTakesMethod = pathTakesMethod
        }

        var isWrite: Bool { !["GET", "HEAD", "OPTIONS"].contains(method) }
    }

    public enum Decision: Sendable, Equatable {
        case allow
        /// The token was right in the query: set the cookie, go to `location` without it.
        case setCookieAndRedirect(location: String)
        case refuse(status: Int, reason: String)
    }

    public func decide(_ request: Request) -> Decision {
        if let token {
            if let given = request.queryToken {
                guard token.matches(given) else { return .refuse(status: 401, reason: "wrong access token") }
                // Only for pages: a write must never be one a link can trigger.
                if !request.isWrite { return .setCookieAndRedirect(location: Self.sameOriginLocation(request.path, query: request.query)) }
            } else {
                let bearer = request.authorization.flatMap { header -> Substring? in
                    header.lowercased().hasPrefix("bearer ") ? header.dropFirst(7) : nil
                }
                let presented = bearer ?? request.cookieToken.map { Substring($0) }
                guard let presented else {
                    return .refuse(status: 401, reason: "this server needs its access token: open the link `quench serve token` prints")
                }
                guard token.matches(presented) else { return .refuse(status: 401, reason: "wrong access token") }
            }
        } else {
            guard let host = request.host, Self.namesLoopback(host) else {
                return .refuse(status: 403, reason: "this server answers only to localhost, 127.0.0.1 or [::1]")
            }
        }
        if request.isWrite {
            if let site = request.fetchSite, site != "same-origin", site != "none" {
                return .refuse(status: 403, reason: "cross-site write refused")
            }
            if let origin = request.origin {
                // A scheme and a host are case-insensitive (RFC 3986 §3.1, §3.2.2): a page opened as http://LOCALHOST:8080.
                let site = origin.lowercased()
                guard let host = request.host?.lowercased(), site == "http://\(host)" || site == "https://\(host)" else {
                    return .refuse(status: 403, reason: "cross-origin write refused (" + (origin.isEmpty ? "an empty Origin" : "Origin \(origin)") + ")")
                }
            }
            guard !request.pathTakesMethod || request.contentType.map(Self.isJSON) == true else {
                return .refuse(status: 415, reason: "writes take a JSON body (Content-Type: application/json)")
            }
        }
        return .allow
    }

    /// Where the token link goes once the cookie is set: its own path when that
    /// is plainly one of this server's (one leading `/`, then letters, digits and
    /// `/ . _ - ~`), else the page. A browser reads `//evil.com`, `/\evil.com`
    /// and their encoded forms as another site.
    /// Where the link's redirect goes: its path (`sameOriginPath`) and its query without the token
    /// (a carer's link to `/?person=Mum&token=…` opened on everyone's page). A pair with bytes a
    /// query cannot hold as they are (spaces, quotes, angle brackets, controls, non-ASCII) is left out.
    static func sameOriginLocation(_ path: String, query: String?) -> String {
        func plain(_ c: UInt8) -> Bool {
            (0x30...0x39).contains(c) || (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c) || "-._~%+=,:@!$'()*;/?".utf8.contains(c)
        }
        let kept = Query.pairs(of: query, without: "token").filter { $0.utf8.allSatisfy(plain) }
        let location = sameOriginPath(path)
        return kept.isEmpty ? location : location + "?" + kept.joined(separator: "&")
    }

    static func sameOriginPath(_ path: String) -> String {
        func plain(_ c: UInt8) -> Bool {
            (0x30...0x39).contains(c) || (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c) || "/._-~".utf8.contains(c)
        }
        guard path.hasPrefix("/"), !path.contains("//"), path.utf8.allSatisfy(plain) else { return "/" }
        return path
    }

    /// `application/json`, with parameters or none (RFC 9110 §8.3.1: the type and subtype are
    /// case-insensitive); not `application/jsonx` or `application/json-seq`, which a prefix let by.
    static func isJSON(_ contentType: String) -> Bool {
        let mediaType = contentType.prefix { $0 != ";" }.filter { $0 != " " && $0 != "\t" }
        return mediaType.lowercased() == "application/json"
    }

    /// `Host: localhost:8080`, `127.0.0.1`, `[::1]:8080`; a name in any case, and as a
    /// fully qualified one (`localhost.`), as a browser sends what was typed.
    static func namesLoopback(_ host: String) -> Bool {
        var name = Substring(host.lowercased())
        if name.hasPrefix("[") {
            guard let close = name.firstIndex(of: "]") else { return false }
            name = name[name.index(after: name.startIndex)..<close]
            return name == "::1"
        }
        if let colon = name.lastIndex(of: ":") { name = name[..<colon] }
        if name == "localhost." { return true }
        let octets = name.split(separator: ".", omittingEmptySubsequences: false)
        return name == "localhost" || (octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil })
    }
}

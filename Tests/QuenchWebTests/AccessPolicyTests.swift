import Foundation
import NIOCore
import QuenchTestSupport
import QuenchWeb
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Who gets in: loopback without a token (only by a loopback name), the network
/// only with it, writes only from the page's own origin.
@Suite struct AccessPolicyTests {
    static let token = try! AccessToken.loadOrCreate(at: TemporaryFolder.create("token") + "/web-token")
    let network = AccessPolicy(listener: ListenAddress(host: "0.0.0.0", port: 8080), token: token)
    let loopback = AccessPolicy(listener: .loopbackDefault, token: nil)

    @Test func theNetworkNeedsTheTokenForPagesAPIAndWrites() {
        for (method, path) in [("GET", "/"), ("GET", "/api/today"), ("GET", "/app.js"), ("GET", "/api/events"), ("POST", "/api/add")] {
            let refused = network.decide(.init(method: method, path: path, host: "192.168.1.5:8080", contentType: "application/json"))
            #expect(refused == .refuse(status: 401, reason: "this server needs its access token: open the link `quench serve token` prints"),
                    "\(method) \(path)")
            let wrong = network.decide(.init(method: method, path: path, cookieToken: String(repeating: "0", count: 64), host: "192.168.1.5:8080"))
            #expect(wrong == .refuse(status: 401, reason: "wrong access token"), "\(method) \(path)")
        }
        let right = Self.token.value
        #expect(network.decide(.init(method: "GET", path: "/api/today", cookieToken: right, host: "pi:8080")) == .allow)
        #expect(network.decide(.init(method: "GET", path: "/api/today", authorization: "Bearer \(right)", host: "pi:8080")) == .allow)
        #expect(network.decide(.init(method: "GET", path: "/api/today", authorization: "Bearer x\(right.dropFirst())", host: "pi:8080"))
                == .refuse(status: 401, reason: "wrong access token"))
    }

    @Test func theLinkSetsTheCookieOnceAndNeverWrites() {
        let right = Self.token.value
        #expect(network.decide(.init(method: "GET", path: "/", queryToken: right, host: "pi:8080")) == .setCookieAndRedirect(location: "/"))
        #expect(network.decide(.init(method: "GET", path: "/", queryToken: "nope", host: "pi:8080")) == .refuse(status: 401, reason: "wrong access token"))
        // Always to a path of this server: a browser reads these as another site.
        for path in ["//evil.com", "/\\evil.com", "/%2F%2Fevil.com", "/%5Cevil.com", "/.//evil.com", "/\t/evil.com", "", "evil.com", "/a//b", "/%0d%0aSet-Cookie:x"] {
            #expect(network.decide(.init(method: "GET", path: path, queryToken: right, host: "pi:8080")) == .setCookieAndRedirect(location: "/"), "\(path)")
        }
        for path in ["/", "/api/today", "/app.js", "/a-b/c_d.e~f"] {
            #expect(network.decide(.init(method: "GET", path: path, queryToken: right, host: "pi:8080")) == .setCookieAndRedirect(location: path))
        }
        // The link's other parameters stay (a carer's link to one resident's page), the token does not,
        // nor a pair a Location header could not carry as it is.
        for (query, location) in [("token=\(right)&person=Ann+Lee", "/?person=Ann+Lee"), ("person=%F0%9F%92%A7&token=\(right)", "/?person=%F0%9F%92%A7"),
                                  ("token=\(right)", "/"), ("to%6Ben=\(right)&token=\(right)&date=2026-11-30", "/?date=2026-11-30"),
                                  ("token=\(right)&a=<b>&b=\r\nSet-Cookie:x&c=d e&person=Ann", "/?person=Ann")] {
            #expect(network.decide(.init(method: "GET", path: "/", query: query, queryToken: right, host: "pi:8080")) == .setCookieAndRedirect(location: location), "\(query)")
        }
        // A link (a GET) never writes; a POST carrying the token in its query still needs the same-origin checks.
        #expect(network.decide(.init(method: "POST", path: "/api/add", queryToken: right, host: "pi:8080", origin: "http://evil.example",
                                     contentType: "application/json")) == .refuse(status: 403, reason: "cross-origin write refused (Origin http://evil.example)"))
    }

    @Test func writesMustComeFromThePageItself() {
        let right = Self.token.value
        func write(origin: String? = nil, site: String? = nil, type: String? = "application/json") -> AccessPolicy.Decision {
            network.decide(.init(method: "POST", path: "/api/add", cookieToken: right, host: "pi.local:8080", origin: origin,
                                 fetchSite: site, contentType: type))
        }
        #expect(write(origin: "http://pi.local:8080", site: "same-origin") == .allow)
        #expect(write() == .allow, "a script with the cookie or bearer token and no browser headers")
        #expect(write(origin: "http://pi.local:8081") == .refuse(status: 403, reason: "cross-origin write refused (Origin http://pi.local:8081)"))
        #expect(write(origin: "null") == .refuse(status: 403, reason: "cross-origin write refused (Origin null)"))
        #expect(write(origin: "") == .refuse(status: 403, reason: "cross-origin write refused (an empty Origin)"))
        // Scheme and host in any case (the page opened as http://PI.LOCAL:8080): the same origin.
        #expect(write(origin: "HTTP://PI.Local:8080") == .allow)
        #expect(write(site: "cross-site") == .refuse(status: 403, reason: "cross-site write refused"))
        #expect(write(site: "same-site") == .refuse(status: 403, reason: "cross-site write refused"))
        #expect(write(type: "application/x-www-form-urlencoded")
                == .refuse(status: 415, reason: "writes take a JSON body (Content-Type: application/json)"))
        #expect(write(type: nil) == .refuse(status: 415, reason: "writes take a JSON body (Content-Type: application/json)"))
        // The media type, not a prefix of it; its parameters and case do not matter.
        for type in ["application/jsonx", "application/json-seq", "application/json+x; charset=utf-8"] {
            #expect(write(type: type) == .refuse(status: 415, reason: "writes take a JSON body (Content-Type: application/json)"), "\(type)")
        }
        for type in ["application/json; charset=utf-8", "Application/JSON", "application/json ;charset=UTF-8"] {
            #expect(write(type: type) == .allow, "\(type)")
        }
        // A method the path does not take goes on to its 405, whatever the body; the same-origin rules still hold.
        let elsewhere = AccessPolicy.Request(method: "DELETE", path: "/api/today", cookieToken: right, host: "pi.local:8080", pathTakesMethod: false)
        #expect(network.decide(elsewhere) == .allow)
        var crossSite = elsewhere
        crossSite.fetchSite = "cross-site"
        #expect(network.decide(crossSite) == .refuse(status: 403, reason: "cross-site write refused"))
        // The same rules on loopback: a page on another site could otherwise post to 127.0.0.1.
        #expect(loopback.decide(.init(method: "POST", path: "/api/add", host: "127.0.0.1:8080", origin: "https://evil.example",
                                      contentType: "application/json")) == .refuse(status: 403, reason: "cross-origin write refused (Origin https://evil.example)"))
        #expect(loopback.decide(.init(method: "POST", path: "/api/add", host: "LOCALHOST:8080", origin: "http://localhost:8080",
                                      contentType: "application/json")) == .allow)
    }

    @Test func loopbackAnswersOnlyToLoopbackNames() {
        for host in ["127.0.0.1:8080", "localhost:8080", "[::1]:8080", "127.0.0.1", "localhost", "LOCALHOST:8080", "LocalHost", "localhost.:8080",
                     "127.0.0.2:8080"] {
            #expect(loopback.decide(.init(method: "GET", path: "/", host: host)) == .allow, "\(host)")
        }
        // DNS rebinding: evil.example resolving to 127.0.0.1 carries its own name.
        for host in ["evil.example:8080", "127.0.0.1.evil.example", "[::2]:8080", "", "127.0.0.256:8080", "localhost.evil.example", "127.0.0.1.:8080"] {
            #expect(loopback.decide(.init(method: "GET", path: "/api/today", host: host))
                    == .refuse(status: 403, reason: "this server answers only to localhost, 127.0.0.1 or [::1]"), "\(host)")
        }
        #expect(loopback.decide(.init(method: "GET", path: "/api/today", host: nil)) != .allow)
    }
}

@Suite struct ListenAddressTests {
    /// Loopback is the address the socket holds, never what the name looks like
    /// (`127.example.com` may resolve to the home network: NetworkListenerTests).
    @Test func loopbackIsTheBoundAddressNotTheName() throws {
        func bound(_ ip: String) throws -> BoundAddress? { BoundAddress(try SocketAddress(ipAddress: ip, port: 8080)) }
        for ip in ["127.0.0.1", "127.255.3.9", "::1", "::ffff:127.0.0.1"] {
            #expect(try bound(ip)?.isLoopback == true, "\(ip)")
        }
        for ip in ["0.0.0.0", "192.168.1.5", "10.0.0.127", "126.255.255.255", "128.0.0.1", "::", "::2", "::ffff:192.168.1.5", "fe80::1", "::127.0.0.1"] {
            #expect(try bound(ip)?.isLoopback == false, "\(ip)")
        }
        #expect(try bound("::1")?.description == "[::1]:8080")
        #expect(try bound("192.168.1.5")?.address == ListenAddress(host: "192.168.1.5", port: 8080))
        #expect(BoundAddress(try SocketAddress(unixDomainSocketPath: "/tmp/quench.sock")) == nil, "no IP address: never loopback")
    }


    @Test func parsesHostsAndPortsAndSaysWhatIsWrong() throws {
        #expect(try ListenAddress(parsing: "0.0.0.0:8080") == ListenAddress(host: "0.0.0.0", port: 8080))
        #expect(try ListenAddress(parsing: "[::1]:9000") == ListenAddress(host: "::1", port: 9000))
        #expect(ListenAddress(host: "::", port: 1).description == "[::]:1")
        let cases = [("8080", "no port"), (":8080", "no host (0.0.0.0 for every interface)"), ("h:80808", "the port must be a number from 0 to 65535"),
                     ("::1:80", "an IPv6 address goes in brackets, [::1]:8080"), ("[::1]8080", "no port after ]"), ("h:x", "the port must be a number from 0 to 65535")]
        for (text, reason) in cases {
            #expect(throws: WebError.self) { try ListenAddress(parsing: text) }
            do { _ = try ListenAddress(parsing: text) } catch {
                #expect(error.description == "--listen \(text): \(reason) (expected HOST:PORT, e.g. 127.0.0.1:8080 or 0.0.0.0:8080)")
            }
        }
    }
}

@Suite struct AccessTokenTests {
    @Test func isMadeOnceOwnerOnlyAndKept() throws {
        let dir = try TemporaryFolder("token")
        let path = dir.file("web-token")
        let first = try AccessToken.loadOrCreate(at: path)
        #expect(first.value.count == 64 && first.value.allSatisfy(\.isHexDigit))
        #expect(try AccessToken.loadOrCreate(at: path) == first)
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        let rotated = try AccessToken.rotate(at: path)
        #expect(rotated != first)
        #expect(try AccessToken.loadOrCreate(at: path) == rotated)
        #expect(first.matches(first.value) && !first.matches(rotated.value) && !first.matches(first.value.dropLast()))
    }

    /// As ssh refuses a private key others can read: a token others can read is no secret.
    @Test func aTokenOthersCanReadIsRefused() throws {
        let dir = try TemporaryFolder("token")
        let path = dir.file("web-token")
        let token = try AccessToken.loadOrCreate(at: path)
        #expect(chmod(path, 0o644) == 0)
        do {
            _ = try AccessToken.loadOrCreate(at: path)
            Issue.record("a token file of mode 0644 was used")
        } catch {
            #expect(error.description == "the access token file \(path) can be read by other users (mode 0644): "
                    + "anyone on this machine could open the page (fix: chmod 600 '\(path)')")
            #expect(error.isConfigurationProblem, "the service's 78: restarting would not fix it")
        }
        #expect(throws: WebError.self, "the server does not start with it") { try TokenFile(path: path) }
        #expect(chmod(path, 0o600) == 0)
        #expect(try AccessToken.loadOrCreate(at: path) == token, "fixed, the same token")
    }

    @Test func aDamagedFileIsRefusedNotReplaced() throws {
        let dir = try TemporaryFolder("token")
        let path = dir.file("web-token")
        let file = fopen(path, "w")!
        fputs("not a token\n", file)
        fclose(file)
        #expect(chmod(path, 0o600) == 0)
        #expect(throws: WebError.self) { try AccessToken.loadOrCreate(at: path) }
        do { _ = try AccessToken.loadOrCreate(at: path) } catch {
            #expect(error.description.contains("does not hold a token; remove it and run `quench serve token`"))
        }
    }
}

@Suite struct TokenFileTests {
    @Test func aRotationTakesEffectAtOnceAndAMissingFileLetsNobodyIn() throws {
        let dir = try TemporaryFolder("token-file")
        let path = dir.file("web-token")
        let file = try TokenFile(path: path)
        let first = try #require(file.current())
        #expect(file.current() == first, "unchanged file, same token")
        let rotated = try AccessToken.rotate(at: path)
        #expect(file.current() == rotated && rotated != first, "the server follows the file without a restart")
        // Made readable to others while the server runs: a secret no longer, so nobody (it was still obeyed).
        #expect(chmod(path, 0o644) == 0)
        #expect(file.current() == nil, "a token others can read lets nobody in")
        // Why, in `quench serve token`'s words (the page said "cannot be read" of a file anyone could read), said once.
        guard case .failure(let exposed) = file.currentOrProblem() else { Issue.record("a token others can read was taken"); return }
        #expect(exposed.description.hasPrefix("the access token file \(path) can be read by other users (mode 0644)")
                && exposed.description.hasSuffix("(fix: chmod 600 '\(path)')"), "\(exposed)")
        #expect(file.isNew(problem: exposed.description) && !file.isNew(problem: exposed.description), "logged once, not per request")
        #expect(chmod(path, 0o600) == 0)
        #expect(file.current() == rotated, "owner-only again, the same token")
        #expect(!file.isNew(problem: nil) && file.isNew(problem: exposed.description), "good again, then the same problem: said again")
        #expect(unlink(path) == 0)
        #expect(file.current() == nil, "no file: nobody, rather than everybody")
        guard case .failure(let gone) = file.currentOrProblem() else { Issue.record("a token without its file"); return }
        #expect(gone.description == "the access token file \(path) is not there; `quench serve token` makes one", "\(gone)")
    }

    @Test(.enabled(if: getuid() == 0, "SKIPPED: handing a file to another user needs root (CI runs as root)"))
    func madeByRootTheTokenIsTheDatabaseOwners() throws {
        let dir = try TemporaryFolder("token-owner")
        let database = dir.file("quench.sqlite")
        #expect(FileManager.default.createFile(atPath: database, contents: nil))
        #expect(chown(database, 65534, 65534) == 0)
        let path = dir.file("web-token")
        _ = try AccessToken.loadOrCreate(at: path)
        try AccessToken.giveToDatabaseOwner(path, database: database)
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_uid == 65534 && info.st_gid == 65534 && info.st_mode & 0o777 == 0o600)
    }
}

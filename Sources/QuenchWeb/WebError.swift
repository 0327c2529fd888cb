import NIOCore
import QuenchHistory
import QuenchStore

/// What stops `quench serve`, each with what to do about it.
public enum WebError: Error, CustomStringConvertible, Sendable {
    /// `--listen` that is not HOST:PORT.
    case badListenAddress(String, reason: String)
    /// The token file could not be read or written.
    case tokenFile(path: String, errno: Int32, doing: String)
    /// A token file holding something else (edited by hand, truncated).
    case badTokenFile(path: String)
    /// The token file went away while the server ran (or cannot be seen).
    case tokenMissing(path: String)
    /// The token's path names a folder, a pipe or a device.
    case tokenNotAFile(path: String)
    /// A token file (or its folder) another user could have written: they would know the token.
    case untrustedTokenFile(UntrustedFile)
    /// A token file other users can read (as ssh refuses a private key they can read): they could open the page.
    case exposedTokenFile(path: String, mode: UInt32)
    /// The address is taken, or not ours to bind.
    case cannotListen(String, cause: any Error)
    /// `listen` names an address this machine does not have, or a name that does not resolve (`ListenAddressCheck`);
    /// `source`: where it was set.
    case listenAddress(String, ListenAddressCheck, source: String)
    case history(HistoryError)
    /// The process may open too few descriptors for the connections and what it needs besides.
    case tooFewFiles(limit: Int, needed: Int)

    /// A problem only a change of configuration fixes (an address this machine does
    /// not have, a port it may not use): the service's exit 78, which it is not
    /// restarted on. An address in use is not: the other server may go away.
    public var isConfigurationProblem: Bool {
        switch self {
        case .badListenAddress, .untrustedTokenFile, .exposedTokenFile, .tokenNotAFile: true
        case .cannotListen(_, let cause): [EACCES, EADDRNOTAVAIL].contains(Self.errno(of: cause))
        // A name may resolve once the network is up: that one is worth a restart.
        case .listenAddress(_, let check, _): if case .notOnThisMachine = check { true } else { false }
        // The database, as the gateway's: damaged, not one, a newer Quench's, writable by others.
        case .history(.store(let error)): error.restartCannotMend
        default: false
        }
    }

    /// The system's error number behind a failure to bind (SwiftNIO's `IOError`).
    static func errno(of error: any Error) -> Int32? {
        (error as? IOError)?.errnoCode
    }

    public var description: String {
        switch self {
        case let .badListenAddress(text, reason):
            return "--listen \(text): \(reason) (expected HOST:PORT, e.g. 127.0.0.1:8080 or 0.0.0.0:8080)"
        case let .tokenFile(path, errno, doing):
            return "\(doing) the access token \(path): \(String(cString: strerror(errno)))"
        case let .tokenNotAFile(path):
            return "the access token \(path) is not a regular file (a folder, a pipe or a device); remove it and run `quench serve token` to make a new one"
        case let .tokenMissing(path):
            return "the access token file \(path) is not there; `quench serve token` makes one"
        case let .badTokenFile(path):
            return "the access token file \(path) does not hold a token; remove it and run `quench serve token` to make a new one"
        case let .untrustedTokenFile(problem):
            return "the access token " + problem.description
        case let .exposedTokenFile(path, mode):
            return "the access token file \(path) can be read by other users (mode 0\(String(mode & 0o777, radix: 8))): "
                + "anyone on this machine could open the page (fix: chmod 600 '\(path)')"
        case let .cannotListen(address, cause):
            switch Self.errno(of: cause) {
            case EADDRINUSE:
                return "\(address) is already in use (another quench serve?): stop it, or choose another port with --listen"
            case EACCES:
                return "not allowed to listen on \(address) (ports below 1024 need privileges): choose another port with --listen"
            case EADDRNOTAVAIL:
                return "cannot listen on \(address): no interface of this machine has that address (check --listen, or `listen` under [web])"
            default:
                return "cannot listen on \(address): \(cause) (another `quench serve`? choose another port with --listen)"
            }
        case let .listenAddress(listen, .notOnThisMachine(address, here), source):
            let port = listen.split(separator: ":").last.map(String.init) ?? "8080"
            let has = here.isEmpty ? "it has no address but loopback" : "it has " + here.joined(separator: ", ")
            return "cannot listen on \(listen) (set by \(source)): no interface of this machine has the address \(address) (\(has)); "
                + "set one of those, 127.0.0.1:\(port) for this machine only, or 0.0.0.0:\(port) for every interface (then with the access token)"
        case let .listenAddress(listen, .unresolved(name, reason), source):
            return "cannot listen on \(listen) (set by \(source)): the name \(name) does not resolve (\(reason)); if the network is "
                + "still coming up, a restart gets past this; a numeric address such as 0.0.0.0:\(listen.split(separator: ":").last ?? "8080") needs no name"
        case .listenAddress(let listen, .ok, _):
            return "cannot listen on \(listen)"
        case let .history(error):
            return error.description
        case let .tooFewFiles(limit, needed):
            return "this process may open only \(limit) files (ulimit -n; LimitNOFILE= in a unit); quench serve needs at least \(needed)"
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
import Threading

#if canImport(Glibc)
import Glibc
#endif

/// An errno as people read it: `strerror`'s text and the number, e.g.
/// "Connection reset by peer (errno 104)". The one formatter every layer uses.
public func errnoDescription(_ code: Int32) -> String {
    #if canImport(Glibc)
    if let text = strerror(code) { return "\(String(cString: text)) (errno \(code))" }
    #endif
    return "errno \(code)"
}

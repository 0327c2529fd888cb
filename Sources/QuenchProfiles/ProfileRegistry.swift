import BluetoothWire
import Threading
#if canImport(Glibc)
import Glibc
#endif

/// Every profile Quench knows by name, in the order a scan tries them: the
/// built-in profiles plus the DIY level bottle, and whatever else a registry
/// is made with (`adding`). Pairing, the gateway, `scan` and `replay --btsnoop`
/// all resolve names in `standard`, so a name one of them accepts, every one accepts.
public struct ProfileRegistry: Sendable {
    /// The built-in profiles, one type each (`ProfileDefinition`), in the order
    /// scans try them. A new built-in profile is its file and a line here.
    public static let builtIn: [DeviceProfile] = [.miScale, .miBodyScale, .weightScale, .decentScale, .hidrateSpark]

    /// The DIY level bottle (docs/profiles/diy-level-bottle.json): service
    /// 6e0a0000-…, notify 6e0a0001-…, u16 little-endian level in 0.1 mm.
    public static let levelBottle = CustomProfile(
        name: "level-bottle", sensor: .level, unit: .mm,
        source: .characteristic(service: BluetoothUUID("6e0a0000-51a5-4c5b-9f1d-7e57b0771e00")!,
                                characteristic: BluetoothUUID("6e0a0001-51a5-4c5b-9f1d-7e57b0771e00")!, delivery: .notify),
        value: .init(offset: 0, type: .u16, scale: 0.1),
        matchService: BluetoothUUID("6e0a0000-51a5-4c5b-9f1d-7e57b0771e00")!)

    /// The registry every command uses.
    public static let standard = ProfileRegistry(profiles: builtIn + [.custom(levelBottle)])

    /// Everything a scan tries, in order.
    public let profiles: [DeviceProfile]

    public init(profiles: [DeviceProfile]) { self.profiles = profiles }

    /// This registry with `more` profiles after its own (a name already known keeps its first profile).
    public func adding(_ more: [DeviceProfile]) -> ProfileRegistry { ProfileRegistry(profiles: profiles + more) }

    /// The saved names, in order.
    public var identifiers: [String] { profiles.map(\.name) }

    /// A known profile by its saved name.
    public func named(_ name: String) -> DeviceProfile? { profiles.first { $0.name == name } }

    /// The known profiles that fit an advertisement, in order.
    public func matching(_ ad: AdvertisingData) -> [DeviceProfile] { DeviceProfile.matching(ad, among: profiles) }

    /// Profile files are small (a few hundred bytes); a larger file is refused
    /// before it is read whole. The store keeps a device's profile file up to
    /// this size (`Device.largestProfileDefinition`), so an export's devices re-import.
    public static let largestProfileFile = 64 << 10

    /// A known profile by name, else a profile file (docs/profiles.md) at that
    /// path; a file's text comes back too, to be saved with a device.
    public func resolve(_ nameOrPath: String) throws(ProfileLookupError) -> (profile: DeviceProfile, definition: String?) {
        if let known = named(nameOrPath) { return (known, nil) }
        // Only something that looks like a path, or a file that is there, is read, so a misspelt name says
        // so (`aqua.profile` in the current folder was "unknown profile"; `./aqua.profile` was read).
        guard nameOrPath.contains("/") || nameOrPath.hasSuffix(".json") || access(nameOrPath, F_OK) == 0 else {
            throw .unknown(nameOrPath, known: identifiers)
        }
        let bytes = try Self.readFile(nameOrPath)
        do {
            return (.custom(try CustomProfile(json: bytes)), String(decoding: bytes, as: UTF8.self))
        } catch {
            throw .badFile(path: nameOrPath, error)
        }
    }

    // The standard registry's, for the commands.

    /// Everything a scan tries, in order.
    public static var all: [DeviceProfile] { standard.profiles }
    /// `mi-scale`, `mi-body-scale`, `weight-scale`, `decent-scale`, `hidrate-spark`, `level-bottle`.
    public static var identifiers: [String] { standard.identifiers }
    /// The name a profile is saved under: custom profiles by their file's `name`.
    public static func identifier(_ profile: DeviceProfile) -> String { profile.name }
    public static func named(_ name: String) -> DeviceProfile? { standard.named(name) }
    public static func resolve(_ nameOrPath: String) throws(ProfileLookupError) -> (profile: DeviceProfile, definition: String?) {
        try standard.resolve(nameOrPath)
    }


    private static func readFile(_ path: String) throws(ProfileLookupError) -> [UInt8] {
        let fd: Int32
        switch RegularFile.openForReading(path) {
        case .success(let opened): fd = opened
        case .failure(.errno(let code)): throw .cannotRead(path: path, errno: code)
        case .failure(.notRegular): throw .notAFile(path: path)
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .cannotRead(path: path, errno: errno)
            }
            if n == 0 { return bytes }
            bytes += chunk[0..<n]
            if bytes.count > largestProfileFile { throw .tooLarge(path: path, limit: largestProfileFile) }
        }
    }
}

/// A profile name or file that cannot be used.
public enum ProfileLookupError: Error, Sendable, CustomStringConvertible {
    case unknown(String, known: [String])
    case cannotRead(path: String, errno: Int32)
    case notAFile(path: String)
    case tooLarge(path: String, limit: Int)
    case badFile(path: String, ProfileFileError)

    public var description: String {
        switch self {
        case .unknown(let name, let known):
            "unknown profile '\(name.shownSafely())': not one of \(known.joined(separator: ", ")) nor a profile file (a path, or a name ending in .json)"
        case .cannotRead(let path, let e): "cannot read the profile file \(path): \(errnoDescription(e))"
        case .notAFile(let path): "the profile file \(path) is not a regular file"
        case .tooLarge(let path, let limit): "the profile file \(path) is larger than \(limit / 1024) KiB; profile files are small JSON"
        case .badFile(let path, let e): "\(path): \(e)"
        }
    }
}

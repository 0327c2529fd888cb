// Management commands and their return parameters (BlueZ doc/mgmt-api.txt,
// "Management Commands").

/// A management command packet: opcode, controller index and parameters.
public struct MgmtCommand: Sendable, Hashable {
    public var opcode: MgmtOpcode
    public var index: MgmtIndex
    public var parameters: [UInt8]

    public init(opcode: MgmtOpcode, index: MgmtIndex, parameters: [UInt8] = []) {
        self.opcode = opcode
        self.index = index
        self.parameters = parameters
    }

    public init(decoding bytes: [UInt8]) throws(DecodeError) {
        let (header, parameters) = try decodeMgmtPacket(bytes, context: "mgmt command")
        self.init(opcode: MgmtOpcode(rawValue: header.code), index: header.index, parameters: parameters)
    }

    public var encoded: [UInt8] { encodeMgmtPacket(code: opcode.rawValue, index: index, parameters: parameters) }

    /// Read Management Version Information (0x0001); returns `MgmtVersion`.
    public static let readVersion = MgmtCommand(opcode: .readVersion, index: .none)
    /// Read Controller Index List (0x0003); returns `MgmtIndexList`.
    public static let readIndexList = MgmtCommand(opcode: .readIndexList, index: .none)
    /// Read Controller Information (0x0004); returns `MgmtControllerInfo`.
    public static func readInfo(_ index: MgmtIndex) -> MgmtCommand { MgmtCommand(opcode: .readInfo, index: index) }
    /// Set Powered (0x0005); returns the current `MgmtSettings`.
    public static func setPowered(_ index: MgmtIndex, _ on: Bool) -> MgmtCommand {
        MgmtCommand(opcode: .setPowered, index: index, parameters: [on ? 1 : 0])
    }
    /// Set Bondable (0x0009): whether pairing stores keys; returns the current `MgmtSettings`.
    public static func setBondable(_ index: MgmtIndex, _ on: Bool) -> MgmtCommand {
        MgmtCommand(opcode: .setBondable, index: index, parameters: [on ? 1 : 0])
    }
    /// Start Discovery (0x0023); returns the address type. The kernel ends an LE
    /// discovery by itself after about 10 s (a Discovering event with 0).
    public static func startDiscovery(_ index: MgmtIndex, _ type: MgmtDiscoveryType = .le) -> MgmtCommand {
        MgmtCommand(opcode: .startDiscovery, index: index, parameters: [type.rawValue])
    }
    /// Stop Discovery (0x0024); returns the address type.
    public static func stopDiscovery(_ index: MgmtIndex, _ type: MgmtDiscoveryType = .le) -> MgmtCommand {
        MgmtCommand(opcode: .stopDiscovery, index: index, parameters: [type.rawValue])
    }
}

/// Return parameters of Read Management Version Information: version (1), revision (2).
public struct MgmtVersion: Sendable, Hashable {
    public var version: UInt8
    public var revision: UInt16
    public init(version: UInt8, revision: UInt16) { self.version = version; self.revision = revision }

    public init(decoding bytes: [UInt8]) throws(DecodeError) {
        var r = ByteReader(bytes, context: "mgmt Read Version reply")
        version = try r.uint8("version")
        revision = try r.uint16("revision")
        try r.expectEnd()
    }

    public var encoded: [UInt8] {
        var w = ByteWriter()
        w.uint8(version); w.uint16(revision)
        return w.bytes
    }
}

/// Return parameters of Read Controller Index List: count (2), then that many indexes (2 each).
public struct MgmtIndexList: Sendable, Hashable {
    public var indexes: [UInt16]
    public init(_ indexes: [UInt16]) { self.indexes = indexes }

    public init(decoding bytes: [UInt8]) throws(DecodeError) {
        var r = ByteReader(bytes, context: "mgmt Read Index List reply")
        let count = try r.uint16("number of controllers")
        indexes = []
        for i in 0..<Int(count) { indexes.append(try r.uint16("controller index \(i)")) }
        try r.expectEnd()
    }

    public var encoded: [UInt8] {
        var w = ByteWriter()
        w.uint16(UInt16(indexes.count))
        for i in indexes { w.uint16(i) }
        return w.bytes
    }
}

/// Return parameters of Read Controller Information: address (6), Bluetooth
/// version (1), manufacturer (2), supported and current settings (4 each),
/// class of device (3), name (249, NUL-padded), short name (11).
public struct MgmtControllerInfo: Sendable, Hashable {
    public static let nameSize = 249
    public static let shortNameSize = 11
    public var address: BluetoothAddress
    public var bluetoothVersion: UInt8
    public var manufacturer: UInt16
    public var supportedSettings: MgmtSettings
    public var currentSettings: MgmtSettings
    public var classOfDevice: UInt32
    public var name: String
    public var shortName: String

    public init(address: BluetoothAddress, bluetoothVersion: UInt8, manufacturer: UInt16,
                supportedSettings: MgmtSettings, currentSettings: MgmtSettings,
                classOfDevice: UInt32, name: String, shortName: String) {
        self.address = address
        self.bluetoothVersion = bluetoothVersion
        self.manufacturer = manufacturer
        self.supportedSettings = supportedSettings
        self.currentSettings = currentSettings
        self.classOfDevice = classOfDevice
        self.name = name
        self.shortName = shortName
    }

    public init(decoding bytes: [UInt8]) throws(DecodeError) {
        var r = ByteReader(bytes, context: "mgmt Read Controller Information reply")
        address = BluetoothAddress(littleEndian: try r.bytes(6, "address"))!
        bluetoothVersion = try r.uint8("bluetooth version")
        manufacturer = try r.uint16("manufacturer")
        supportedSettings = MgmtSettings(rawValue: try r.uint32("supported settings"))
        currentSettings = MgmtSettings(rawValue: try r.uint32("current settings"))
        classOfDevice = try r.uint24("class of device")
        name = Self.cString(try r.bytes(Self.nameSize, "name"))
        shortName = Self.cString(try r.bytes(Self.shortNameSize, "short name"))
        try r.expectEnd()
    }

    public var encoded: [UInt8] {
        var w = ByteWriter(capacity: 280)
        w.append(address.littleEndianBytes)
        w.uint8(bluetoothVersion)
        w.uint16(manufacturer)
        w.uint32(supportedSettings.rawValue)
        w.uint32(currentSettings.rawValue)
        w.uint24(classOfDevice)
        w.append(Self.padded(name, Self.nameSize))
        w.append(Self.padded(shortName, Self.shortNameSize))
        return w.bytes
    }

    static func cString(_ bytes: [UInt8]) -> String {
        String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
    }

    /// UTF-8, cut to leave room for the terminating NUL.
    static func padded(_ s: String, _ size: Int) -> [UInt8] {
        let utf8 = Array(s.utf8.prefix(size - 1))
        return utf8 + [UInt8](repeating: 0, count: size - utf8.count)
    }
}

/// One advertisement seen while scanning, whichever path reported it: an HCI
/// LE Advertising Report (legacy, Vol 4, Part E, 7.7.65.2), an LE Extended
/// Advertising Report (7.7.65.13), or a mgmt Device Found event (BlueZ
/// doc/mgmt-api.txt), which the kernel builds from either.
public struct AdvertisingReport: Sendable, Hashable {
    /// Where the report came from, with the event type that path carries.
    public enum Source: Sendable, Hashable {
        case legacy(LEAdvertisingEventType)
        case extended(LEExtendedAdvertisingEventType)
        case management(MgmtDeviceFoundFlags)
    }

    public var address: BluetoothAddress
    /// HCI LE address type: 0 public, 1 random (2/3 identity addresses resolved by the controller).
    public var addressType: AddressType
    /// dBm; nil when the controller said "not available" (127).
    public var rssi: Int8?
    public var source: Source
    public var isConnectable: Bool
    /// The payload came from a scan response rather than the advertisement itself.
    public var isScanResponse: Bool
    /// The raw advertising data (AD structures, Core Spec Supplement Part A).
    public var data: [UInt8]

    public init(address: BluetoothAddress, addressType: AddressType, rssi: Int8?, source: Source,
                isConnectable: Bool, isScanResponse: Bool, data: [UInt8]) {
        self.address = address
        self.addressType = addressType
        self.rssi = rssi
        self.source = source
        self.isConnectable = isConnectable
        self.isScanResponse = isScanResponse
        self.data = data
    }

    public init(_ report: HCILEAdvertisingReport.Report) {
        self.init(address: report.address, addressType: report.addressType, rssi: Self.rssi(report.rssi),
                  source: .legacy(report.eventType), isConnectable: report.eventType.isConnectable,
                  isScanResponse: report.eventType == .scanResponse, data: report.data)
    }

    public init(_ report: HCILEExtendedAdvertisingReport.Report) {
        self.init(address: report.address, addressType: report.addressType, rssi: Self.rssi(report.rssi),
                  source: .extended(report.eventType), isConnectable: report.eventType.isConnectable,
                  isScanResponse: report.eventType.isScanResponse, data: report.data)
    }

    /// Nil for BR/EDR devices, which are not advertisements.
    public init?(_ found: MgmtDeviceFound) {
        guard let type = found.addressType.leAddressType else { return nil }
        self.init(address: found.address, addressType: type, rssi: Self.rssi(found.rssi),
                  source: .management(found.flags), isConnectable: !found.flags.contains(.notConnectable),
                  isScanResponse: found.flags.contains(.scanResponse), data: found.data)
    }

    /// All the advertising reports an HCI event carries (none for other events).
    public static func reports(in event: HCIEvent) -> [AdvertisingReport] {
        switch event {
        case .leAdvertisingReport(let e): e.reports.map(AdvertisingReport.init)
        case .leExtendedAdvertisingReport(let e): e.reports.map(AdvertisingReport.init)
        default: []
        }
    }

    /// Whether this came from an extended advertising PDU (an extended report without the legacy bit).
    public var isExtended: Bool {
        if case .extended(let t) = source { return !t.isLegacy }
        return false
    }

    static func rssi(_ value: Int8) -> Int8? { value == 127 ? nil : value }
}

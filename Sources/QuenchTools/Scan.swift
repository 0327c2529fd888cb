#if os(Linux)
import BluetoothLinux
import BluetoothWire
import QuenchCore
import Threading
import QuenchGateway
import QuenchProfiles

/// `quench scan`: nearby advertisers, with the profile each one fits.
public enum LiveScan {
    public struct Found: Sendable, Hashable {
        public var address: BluetoothAddress
        public var addressType: AddressType
        public var name: String?
        public var rssi: Int8?
        /// Identifiers of the profiles that fit (see `ProfileRegistry`).
        public var profiles: [String]
        public var reports: Int
    }

    /// Scans for `timeout` seconds (or until `until` says enough); with
    /// `all` false only devices a profile fits are kept.
    public static func run(timeout: Double, all: Bool, method: ScanOptions.Method = .automatic, stop: StopSignal,
                           until: (([BluetoothAddress: Found]) -> Bool)? = nil) throws(ToolError) -> [Found] {
        let scan: KernelScan
        do { scan = try KernelScan(ScanOptions(method: method), stop: stop) } catch { throw .live(error) }
        defer { scan.stop() }
        let end = Deadline(seconds: timeout).until
        var found: [BluetoothAddress: Found] = [:]
        while ContinuousClock.now < end {
            let report: AdvertisingReport?
            do { report = try scan.next(until: end) } catch .stopped { break } catch { throw .live(error) }
            guard let report else { break }
            var f = found[report.address] ?? Found(address: report.address, addressType: report.addressType, name: nil,
                                                  rssi: report.rssi, profiles: [], reports: 0)
            f.reports += 1
            f.rssi = report.rssi ?? f.rssi
            f.addressType = report.addressType
            if let ad = try? AdvertisingData(decoding: report.data) {
                if let name = ad.name { f.name = name }
                let matched = DeviceProfile.matching(ad, among: ProfileRegistry.all).map(ProfileRegistry.identifier)
                for m in matched where !f.profiles.contains(m) { f.profiles.append(m) }
            }
            found[report.address] = f
            if let until, until(found) { break }
        }
        return found.values.filter { all || !$0.profiles.isEmpty }.sorted { $0.address < $1.address }
    }

    public static func table(_ found: [Found]) -> String {
        guard !found.isEmpty else { return "no devices found" }
        var lines = ["address            type    rssi  name                  profile"]
        for f in found {
            let rssi = f.rssi.map { "\($0)" } ?? "-"
            lines.append(EventFormat.pad(f.address.description, 19) + EventFormat.pad(f.addressType.description, 8)
                         + EventFormat.leftPad(rssi, 4) + "  " + EventFormat.pad(f.name ?? "-", 22)
                         + (f.profiles.isEmpty ? "-" : f.profiles.joined(separator: ", ")))
        }
        return lines.joined(separator: "\n")
    }

    public static func jsonLine(_ f: Found) -> String {
        var s = "{\"address\":\"\(f.address)\",\"type\":\"\(f.addressType)\""
        if let r = f.rssi { s += ",\"rssi\":\(r)" }
        if let n = f.name { s += ",\"name\":\"\(EventFormat.jsonEscaped(n))\"" }
        s += ",\"profiles\":[" + f.profiles.map { "\"\($0)\"" }.joined(separator: ",") + "],\"reports\":\(f.reports)}"
        return s
    }
}
#endif

#if os(Linux)
import BluetoothWire
import Foundation
import Glibc
import QuenchCore
import QuenchStore
import QuenchTestSupport
import Testing
@testable import BluetoothLinux
@testable import QuenchTools

/// `quench doctor`'s verdicts, each on a machine described by its probes.
@Suite struct DoctorTests {
    static let now = Timestamp(secondsSince1970: 1_795_500_000)

    /// A healthy machine: an adapter up, root, the service running, the clock synchronised.
    static func machine(adapters: Result<[BluetoothAdapterInfo], BluetoothLinuxError> = .success([
                            BluetoothAdapterInfo(index: 0, name: "hci0", address: BluetoothAddress("B8:27:EB:00:00:01")!, isUp: true)]),
                        rfkill: [Doctor.RFKill] = [], capabilities: (Bool, Bool, Bool) = (true, true, true),
                        service: Doctor.ServiceState? = Doctor.ServiceState(loaded: true, enabled: "enabled", active: "active", restarts: 0),
                        clock: Bool? = true) -> Doctor.Probes {
        Doctor.Probes(adapters: { adapters }, rfkill: { rfkill }, bluetoothdRunning: { true },
                      capabilities: { (capabilities.0, capabilities.1, capabilities.2) }, service: { service },
                      clockSynchronized: { clock }, now: { now })
    }

    func check(_ report: Doctor.Report, _ name: String) -> Doctor.Check? { report.checks.first { $0.name == name } }

    @Test func theMQTTBrokerWhenConfigured() {
        var probes = Self.machine()
        #expect(check(Doctor.run(databasePath: "/nonexistent/q.sqlite", probes: probes), "mqtt") == nil, "not configured: not checked")
        probes.mqtt = { ("mqtt://ha.local:1883", nil) }
        #expect(check(Doctor.run(databasePath: "/nonexistent/q.sqlite", probes: probes), "mqtt")?.status == .ok)
        probes.mqtt = { ("mqtt://ha.local:1883", "connect to ha.local:1883: Connection refused (errno 111)") }
        let away = Doctor.run(databasePath: "/nonexistent/q.sqlite", probes: probes)
        #expect(check(away, "mqtt")?.status == .warning && check(away, "mqtt")?.detail.contains("Connection refused") == true)
        #expect(check(away, "mqtt")?.fix?.contains("quench mqtt status") == true)
    }

    @Test func aHealthyMachineIsHealthy() throws {
        let folder = try TemporaryFolder()
        let report = Doctor.run(databasePath: folder.path + "/none.sqlite", probes: Self.machine())
        #expect(report.healthy, "\(report.checks)")
        #expect(report.checks.allSatisfy { $0.status <= .info }, "\(report.checks)")
        #expect(Doctor.text(report).hasSuffix("\nhealthy"))
    }

    @Test func noBluetoothInTheKernelIsAFailWithItsFix() {
        let noKernel = BluetoothLinuxError.system(BluetoothSocketError(operation: "socket(AF_BLUETOOTH)", errno: EAFNOSUPPORT))
        let report = Doctor.run(databasePath: "/nonexistent/q.sqlite", probes: Self.machine(adapters: .failure(noKernel)))
        #expect(!report.healthy)
        #expect(check(report, "bluetooth") == Doctor.Check(name: "bluetooth", status: .problem, detail: "this kernel has no Bluetooth support",
                                                           fix: "sudo modprobe bluetooth (Raspberry Pi OS has it; some cloud and container kernels do not)"))
        #expect(Doctor.text(report).contains("FAIL  bluetooth: this kernel has no Bluetooth support\n      fix: sudo modprobe bluetooth"))
    }

    @Test func adapterDownRFKillAndNoAdapter() {
        let down = Doctor.run(databasePath: "/nonexistent/q.sqlite", probes: Self.machine(
            adapters: .success([BluetoothAdapterInfo(index: 1, name: "hci1", address: BluetoothAddress("00:1A:7D:DA:71:13")!, isUp: false)]),
            rfkill: [Doctor.RFKill(name: "hci1", soft: true, hard: false)]))
        #expect(check(down, "adapter hci1")?.status == .warning && check(down, "adapter hci1")?.fix == "sudo btmgmt --index 1 power on")
        #expect(check(down, "rfkill hci1")?.status == .problem && check(down, "rfkill hci1")?.fix?.hasPrefix("sudo rfkill unblock bluetooth") == true)
        #expect(!down.healthy)
        let none = Doctor.run(databasePath: "/nonexistent/q.sqlite", probes: Self.machine(adapters: .success([])))
        #expect(check(none, "adapters")?.status == .problem && !none.healthy)
    }

    @Test func capabilitiesServiceAndClock() {
        let report = Doctor.run(databasePath: "/nonexistent/q.sqlite", probes: Self.machine(
            capabilities: (false, true, false), service: Doctor.ServiceState(loaded: true, enabled: "enabled", active: "active", restarts: 3),
            clock: false))
        #expect(check(report, "capabilities")?.status == .warning)
        #expect(check(report, "capabilities")?.detail.contains("lacks CAP_NET_ADMIN") == true)
        #expect(check(report, "capabilities")?.fix?.contains("setcap cap_net_admin,cap_net_raw+ep") == true)
        #expect(check(report, "service")?.detail == "quench.service is running (enabled) but restarted 3 times after failing")
        #expect(check(report, "clock")?.status == .warning)
        #expect(report.healthy, "warnings are not failures")
        let stopped = Doctor.run(databasePath: "/nonexistent/q.sqlite", probes: Self.machine(
            service: Doctor.ServiceState(loaded: true, enabled: "disabled", active: "failed", restarts: 0)))
        #expect(check(stopped, "service")?.status == .warning && check(stopped, "service")?.fix?.contains("enable --now quench") == true)
        // The journal's count of the last day, and why: the adapter gave up (exit 75).
        let adapter = Doctor.run(databasePath: "/nonexistent/q.sqlite", probes: Self.machine(
            service: Doctor.ServiceState(loaded: true, enabled: "enabled", active: "active", restarts: 9, restartsLastDay: 2, lastExitStatus: 75)))
        #expect(check(adapter, "service")?.detail.hasPrefix("quench.service is running (enabled) but restarted 2 times in the last day; the last exit was 75") == true)
        #expect(check(adapter, "service")?.fix?.contains("journalctl -u quench") == true)
        let quiet = Doctor.run(databasePath: "/nonexistent/q.sqlite", probes: Self.machine(
            service: Doctor.ServiceState(loaded: true, enabled: "enabled", active: "active", restarts: 4, restartsLastDay: 0, lastExitStatus: 0)))
        #expect(check(quiet, "service")?.status == .ok, "restarts days ago are not today's news")
        let journal = """
            Started quench.service - Quench smart bottle gateway.
            quench.service: Main process exited, code=exited, status=75/TEMPFAIL
            quench.service: Failed with result 'exit-code'.
            quench.service: Scheduled restart job, restart counter is at 1.
            Started quench.service - Quench smart bottle gateway.
            quench.service: Scheduled restart job, restart counter is at 2.
            """
        #expect(Doctor.countRestarts(inJournal: journal) == 2)
        let absent = Doctor.run(databasePath: "/nonexistent/q.sqlite", probes: Self.machine(
            service: Doctor.ServiceState(loaded: false, enabled: "", active: "inactive", restarts: 0)))
        #expect(check(absent, "service")?.detail == "quench.service is not installed")
    }

    @Test func devicesNotHeardFromForADayAndADatabaseOthersCanRead() throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/q.sqlite"
        let store = try IntakeStore(path: path)
        try store.saveDevice(Device(address: "C8:2A:3F:00:3F:2A", name: "desk bottle", profile: "hidrate-spark", addedAt: Self.now,
                                    lastSeenAt: Self.now.adding(-3 * 86_400)))
        try store.saveDevice(Device(address: "F0:F1:F2:F3:F4:F5", profile: "weight-scale", addedAt: Self.now, lastSeenAt: Self.now.adding(-3600)))
        let report = Doctor.run(databasePath: path, probes: Self.machine())
        #expect(check(report, "database")?.status == .ok)
        let quiet = try #require(check(report, "device C8:2A:3F:00:3F:2A (desk bottle)"))
        #expect(quiet.status == .warning && quiet.detail.hasSuffix("72 h ago"), "\(quiet)")
        #expect(check(report, "device F0:F1:F2:F3:F4:F5")?.status == .ok)
        chmod(path, 0o644)
        #expect(check(Doctor.run(databasePath: path, probes: Self.machine()), "database")?.status == .warning)
    }

    @Test func theRealMachineAnswersWithoutCrashing() {
        // Whatever this machine is, every check comes back and the JSON holds them all.
        let report = Doctor.run(databasePath: "/nonexistent/q.sqlite")
        #expect(report.checks.count >= 4)
        #expect(Doctor.json(report).hasPrefix("{\"healthy\":\(report.healthy),\"checks\":[{\"name\":"))
    }
}

/// The files Quench obeys or keeps secrets in: each another user could have written is a FAIL with its fix.
@Suite(.enabled(if: geteuid() == 0, "SKIPPED: giving a file to another user needs root (CI runs as root): sudo swift test --filter DoctorTrustTests"))
struct DoctorTrustTests {
    @Test func eachRefusedFileIsAFailWithItsFix() throws {
        let folder = try TemporaryFolder("doctor-trust")
        let (ours, theirs) = (folder.file("quench.toml"), folder.file("web-token"))
        for path in [ours, theirs] { #expect(FileManager.default.createFile(atPath: path, contents: Data("x\n".utf8))) }
        try #require(chown(theirs, 65534, 65534) == 0 && chmod(theirs, 0o600) == 0, "cannot chown \(theirs)")
        let checks = Doctor.trust([Doctor.TrustedFile(name: "config file (system)", path: ours),
                                   Doctor.TrustedFile(name: "web token file", path: theirs, isData: true)])
        #expect(checks[0] == Doctor.Check(name: "config file (system)", status: .ok, detail: "\(ours): only root or this user can write it", fix: nil))
        #expect(checks[1].status == .problem && checks[1].fix == "chown root '\(theirs)'"
                && checks[1].detail.hasPrefix("\(theirs): refused: it is owned by nobody (uid 65534), mode 0600"), "\(checks[1])")
        // A file not made yet is not said to be there.
        let missing = Doctor.trust([Doctor.TrustedFile(name: "web token file", path: folder.file("none-yet"), isData: true)])
        #expect(missing == [Doctor.Check(name: "web token file", status: .ok,
                                         detail: "\(folder.file("none-yet")): not there yet; only root or this user can write the folders it would be made in", fix: nil)])
        let text = Doctor.text(Doctor.report(checks))
        #expect(text.contains("FAIL  web token file: \(theirs): refused:") && text.contains("      fix: chown root '\(theirs)'\n"), "\(text)")
        #expect(!Doctor.report(checks).healthy)
    }
}
#endif

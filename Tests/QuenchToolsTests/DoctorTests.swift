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

    @Test func theReminderTimerAndTheCarersAlerts() {
        var probes = Self.machine()
        func reminders() -> Doctor.Check? { check(Doctor.run(databasePath: "/nonexistent/q.sqlite", probes: probes), "reminders") }
        #expect(reminders() == nil, "no systemd: not checked")
        // Read from what `systemctl show` prints for the two units, a blank line between, as the probe reads it.
        @Sendable func shown(_ timer: String, _ carer: String) -> Doctor.RemindersState {
            SystemProbes.remindersState(fromShow: "Id=quench-remind.timer\n" + timer + "\n\nId=quench-carer.service\n" + carer + "\n")
        }
        let healthy = "LoadState=loaded\nActiveState=active\nUnitFileState=enabled"
        let ran = "LoadState=loaded\nActiveState=inactive\nUnitFileState=static\nResult=success\nExecMainStatus=0\nExecMainStartTimestampMonotonic=812345678"
        probes.reminders = { shown("LoadState=not-found\nActiveState=inactive\nUnitFileState=", "LoadState=not-found") }
        #expect(reminders() == nil, "not installed: not checked")
        probes.reminders = { shown(healthy, ran) }
        #expect(reminders() == Doctor.Check(name: "reminders", status: .ok, detail: "quench-remind.timer is running; the carers' alerts' last run went well", fix: nil))
        probes.reminders = { shown(healthy, "LoadState=loaded\nResult=success\nExecMainStatus=0\nExecMainStartTimestampMonotonic=0") }
        #expect(reminders()?.detail == "quench-remind.timer is running; the carers' alerts have not run since boot")
        // Stopped by someone tired of the reminders, or masked, or not to start at boot: the carers' alerts stop with them.
        probes.reminders = { shown("LoadState=loaded\nActiveState=inactive\nUnitFileState=disabled", ran) }
        let stopped = reminders()
        #expect(stopped?.status == .warning && stopped?.detail == "quench-remind.timer is inactive (disabled): no reminder and no carer's alert is sent", "\(String(describing: stopped))")
        #expect(stopped?.fix?.contains("quench remind set --mode off") == true)
        probes.reminders = { shown("LoadState=masked\nActiveState=inactive\nUnitFileState=masked", ran) }
        #expect(reminders()?.detail == "quench-remind.timer is masked: no reminder and no carer's alert is sent" && reminders()?.fix?.hasPrefix("sudo systemctl unmask") == true)
        probes.reminders = { shown("LoadState=loaded\nActiveState=active\nUnitFileState=disabled", ran) }
        #expect(reminders()?.detail == "quench-remind.timer runs but is disabled: after the next reboot no reminder and no carer's alert is sent")
        // A push refused (a token gone stale), or one that hung past the unit's time limit: the unit failed, and the carer hears nothing of it.
        for (result, status, said) in [("exit-code", 1, " (exit 1)"), ("signal", 15, " (killed by signal 15)"), ("timeout", 15, " (it took too long and was stopped)")] {
            probes.reminders = { shown(healthy, "LoadState=loaded\nResult=\(result)\nExecMainStatus=\(status)\nExecMainStartTimestampMonotonic=812345678") }
            let failed = reminders()
            #expect(failed?.status == .warning && failed?.detail.hasPrefix("the carers' alerts' last run failed\(said):") == true, "\(String(describing: failed))")
            #expect(failed?.fix?.hasPrefix("journalctl -u quench-carer") == true)
        }
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

/// A database that is there but unusable: every FAIL with a fix; one behind a closed folder says how to read it.
@Suite struct DoctorDatabaseTests {
    @Test func aFileThatIsNotADatabaseOrIsNotQuenchsHasAFix() throws {
        let folder = try TemporaryFolder("doctor-db")
        let path = folder.file("q.sqlite")
        try Data(String(repeating: "not sqlite ", count: 20).utf8).write(to: URL(fileURLWithPath: path))
        let checks = Doctor.database(path, now: DoctorTests.now)
        #expect(checks.count == 1 && checks[0].status == .problem, "\(checks)")
        #expect(checks[0].fix?.contains("mv \"\(path)\" \"\(path)\".not-quench") == true, "\(checks)")
        // Every code a database can fail with gets a fix line.
        for code in [StoreError.Code.notADatabase, .emptyFile, .corrupt, .schemaTooNew, .needsMigration, .untrusted, .busy, .diskFull,
                     .readOnly, .cannotOpen, .io, .other] {
            let check = Doctor.databaseProblem(StoreError(code, path: path, "x"), path: path)
            #expect(check.status == .problem && !(check.fix ?? "").isEmpty, "\(code)")
        }
    }
}

/// A Pi trial: drinks stored while the clock ran ahead head `quench log` for good, and nothing said so;
/// a stale read-only -shm kept the database unwritable after a chmod, and doctor said "ok".
@Suite struct DoctorHistoryTests {
    @Test func eventsDatedAfterNowAndAReadOnlyShmAreSaid() throws {
        let folder = try TemporaryFolder("doctor-ahead")
        let path = folder.file("q.sqlite")
        do {
            let store = try IntakeStore(path: path)
            _ = try store.addManual(ml: 250, at: DoctorTests.now.adding(-3600), note: nil, identity: "before")
            _ = try store.addManual(ml: 300, at: DoctorTests.now.adding(86_400 * 30), note: nil, identity: "ahead")
        }
        let checks = Doctor.database(path, now: DoctorTests.now)
        let ahead = try #require(checks.first { $0.name == "events" }, "\(checks)")
        #expect(ahead.status == .warning && ahead.detail.hasPrefix("1 event is dated after now (from ")
                && ahead.fix?.contains("quench delete ID") == true, "\(ahead)")
        #expect(!Doctor.database(path, now: DoctorTests.now.adding(86_400 * 31)).contains { $0.name == "events" })

        // The database file writable, its -shm not (left so by a run while the file was 0400).
        let shm = path + "-shm"
        try Data(count: 32768).write(to: URL(fileURLWithPath: shm))
        chmod(shm, 0o400)
        if geteuid() != 0 {  // root writes whatever the mode says
            let database = try #require(Doctor.database(path, now: DoctorTests.now).first { $0.name == "database" })
            #expect(database.status == .problem && database.detail.contains("\(shm) cannot be written"), "\(database)")
        }
        #expect(StoreError.readOnlyCause(path) == (geteuid() == 0 ? .permissions : .sideFiles([shm])))
    }
}

/// Run as a user who may not enter the service's state folder (mode 0700): `doctor` and
/// `today` say the database is there but closed to them, and how to read it.
@Suite(.enabled(if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/runuser"),
                "SKIPPED: running as another user needs root and runuser (CI runs as root): sudo swift test --filter ClosedDatabaseTests"))
struct ClosedDatabaseTests {
    @Test(.enabled(if: quenchBinary != nil, "SKIPPED: quench is not built (swift build)"))
    func doctorAndTodaySayHowToReadIt() throws {
        let folder = try TemporaryFolder("closed-db")
        chmod(folder.path, 0o755)
        let state = folder.file("state")
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: false)
        chmod(state, 0o700)
        let db = state + "/quench.sqlite"
        #expect(try runQuench(["add", "250ml", "--db", db]).status == 0)
        // The test binary's folder must be open to nobody for it to run quench at all.
        let asNobody = { (arguments: [String]) throws -> ProcessResult in
            try runProgram("/usr/sbin/runuser", ["-u", "nobody", "--", quenchBinary!] + arguments)
        }
        let today = try asNobody(["today", "--db", db])
        try #require(!today.stderr.contains("Permission denied") || today.stderr.contains("cannot be read"), "quench cannot run as nobody here: \(today.stderr)")
        #expect(today.status != 0 && today.stderr.contains("the database \(db) cannot be read by this user (uid 65534): the folder \(state) (owner root, mode 0700) is closed to it")
                && today.stderr.contains("(run the command with sudo, e.g. `sudo quench today --db \(db)`)"), "\(today.stderr)")
        let doctor = try asNobody(["doctor", "--db", db])
        #expect(doctor.stdout.contains("warn  database: the database \(db) cannot be read by this user")
                && doctor.stdout.contains("fix: sudo quench doctor") && !doctor.stdout.contains("none yet"), "\(doctor.stdout)")
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

#if os(Linux)
import BluetoothLinux
import Glibc
import QuenchGateway
import QuenchCore
import QuenchStore
import Threading

/// `quench doctor`: what stands between this machine and logged sips, each
/// problem with a command to fix it. The checks read the system through
/// `Probes`, so each verdict is tested without the machine it describes.
public enum Doctor {
    public enum Status: String, Sendable, Encodable, Comparable {
        case ok, info, warning, problem
        public static func < (a: Status, b: Status) -> Bool { a.rank < b.rank }
        var rank: Int { switch self { case .ok: 0; case .info: 1; case .warning: 2; case .problem: 3 } }
    }

    public struct Check: Sendable, Encodable, Equatable {
        public var name: String
        public var status: Status
        public var detail: String
        /// A command or step that fixes it.
        public var fix: String?
    }

    public struct Report: Sendable, Encodable {
        /// No check found a problem (warnings allowed).
        public var healthy: Bool
        public var checks: [Check]
    }

    /// The systemd service as `systemctl show` reports it.
    public struct ServiceState: Sendable, Equatable {
        public var loaded: Bool
        public var enabled: String
        public var active: String
        /// Restarts after failing since the unit was loaded (NRestarts).
        public var restarts: Int
        /// Restarts the journal shows in the last 24 hours; nil when the journal cannot be read.
        public var restartsLastDay: Int?
        /// The main process's last exit status (ExecMainStatus).
        public var lastExitStatus: Int?

        public init(loaded: Bool, enabled: String, active: String, restarts: Int, restartsLastDay: Int? = nil, lastExitStatus: Int? = nil) {
            self.loaded = loaded
            self.enabled = enabled
            self.active = active
            self.restarts = restarts
            self.restartsLastDay = restartsLastDay
            self.lastExitStatus = lastExitStatus
        }
    }

    /// The reminder timer and the carers' alerts it starts, as `systemctl show` reports them.
    public struct RemindersState: Sendable, Equatable {
        /// `quench-remind.timer`: its LoadState (`loaded`, `masked`, `not-found`), ActiveState and UnitFileState.
        public var timerLoad: String
        public var timerActive: String
        public var timerEnabled: String
        /// `quench-carer.service`'s last run: its Result (`success`, `exit-code`, `signal`, `timeout`, …) and
        /// ExecMainStatus (an exit status, or a signal's number); nil when not installed. `carerRan`: whether it
        /// ran since boot (a Result of `success` says nothing before it has).
        public var carerResult: String?
        public var carerExitStatus: Int?
        public var carerRan: Bool

        public init(timerLoad: String, timerActive: String, timerEnabled: String, carerResult: String?, carerExitStatus: Int? = nil,
                    carerRan: Bool = true) {
            self.timerLoad = timerLoad
            self.timerActive = timerActive
            self.timerEnabled = timerEnabled
            self.carerResult = carerResult
            self.carerExitStatus = carerExitStatus
            self.carerRan = carerRan
        }
    }

    public struct RFKill: Sendable, Equatable {
        public var name: String
        public var soft: Bool
        public var hard: Bool
    }

    /// How the checks see the machine.
    public struct Probes: Sendable {
        public var adapters: @Sendable () -> Result<[BluetoothAdapterInfo], BluetoothLinuxError>
        public var rfkill: @Sendable () -> [RFKill]
        public var bluetoothdRunning: @Sendable () -> Bool
        /// Effective CAP_NET_ADMIN and CAP_NET_RAW, and whether this is root.
        public var capabilities: @Sendable () -> (netAdmin: Bool, netRaw: Bool, root: Bool)
        public var service: @Sendable () -> ServiceState?
        /// nil when it cannot be told.
        public var clockSynchronized: @Sendable () -> Bool?
        public var now: @Sendable () -> Timestamp
        /// The MQTT broker, when one is configured: its URL and nil when it answers, else why not.
        public var mqtt: @Sendable () -> (broker: String, problem: String?)? = { nil }
        /// The reminder timer and the carers' alerts; nil without systemd.
        public var reminders: @Sendable () -> RemindersState? = { nil }

        public init(adapters: @escaping @Sendable () -> Result<[BluetoothAdapterInfo], BluetoothLinuxError>,
                    rfkill: @escaping @Sendable () -> [RFKill], bluetoothdRunning: @escaping @Sendable () -> Bool,
                    capabilities: @escaping @Sendable () -> (netAdmin: Bool, netRaw: Bool, root: Bool),
                    service: @escaping @Sendable () -> ServiceState?, clockSynchronized: @escaping @Sendable () -> Bool?,
                    now: @escaping @Sendable () -> Timestamp) {
            self.adapters = adapters
            self.rfkill = rfkill
            self.bluetoothdRunning = bluetoothdRunning
            self.capabilities = capabilities
            self.service = service
            self.clockSynchronized = clockSynchronized
            self.now = now
        }
    }

    /// A file Quench obeys or keeps secrets in, for the check that nobody else could have written it.
    public struct TrustedFile: Sendable, Equatable {
        /// What it is: "config file (system)", "web token file", "database file".
        public var name: String
        public var path: String
        /// Data rather than instructions: root also trusts its folder's owner (`FileTrust`).
        public var isData: Bool

        public init(name: String, path: String, isData: Bool = false) {
            self.name = name
            self.path = path
            self.isData = isData
        }
    }

    /// Each file refused (`FileTrust`), with the command that fixes it; the others, ok.
    public static func trust(_ files: [TrustedFile]) -> [Check] {
        files.map { file in
            guard let problem = FileTrust.check(file.path, folderOwnersData: file.isData) else {
                // A file not made yet is judged by the folders it would be made in: say so, not that it is there.
                let seen = access(file.path, F_OK) == 0
                if !seen, errno == EACCES {
                    return Check(name: file.name, status: .info, detail: "\(file.path): this user cannot look into its folder (`sudo quench doctor` can)", fix: nil)
                }
                let detail = seen ? "only root or this user can write it"
                    : "not there yet; only root or this user can write the folders it would be made in"
                return Check(name: file.name, status: .ok, detail: "\(file.path): \(detail)", fix: nil)
            }
            return Check(name: file.name, status: .problem, detail: problem.fact, fix: problem.fix)
        }
    }

    /// A device not heard from for this long is worth a word.
    static let quietDevice = 86_400.0

    /// `files`: what `trust(_:)` checks, reported after the rest.
    public static func run(databasePath: String, files: [TrustedFile] = [], probes: Probes = .system) -> Report {
        var checks: [Check] = []
        checks += bluetooth(probes)
        let caps = probes.capabilities()
        if caps.root || (caps.netAdmin && caps.netRaw) {
            checks.append(Check(name: "capabilities", status: .ok, detail: caps.root ? "running as root" : "CAP_NET_ADMIN and CAP_NET_RAW", fix: nil))
        } else {
            let missing = [caps.netAdmin ? nil : "CAP_NET_ADMIN", caps.netRaw ? nil : "CAP_NET_RAW"].compactMap { $0 }.joined(separator: " and ")
            checks.append(Check(name: "capabilities", status: .warning,
                                detail: "this quench lacks \(missing): scan, pair and run need them (the service has its own)",
                                fix: "sudo setcap cap_net_admin,cap_net_raw+ep \"$(command -v quench)\"  (or run it with sudo)"))
        }
        checks += database(databasePath, now: probes.now())
        checks.append(service(probes.service()))
        if let check = reminders(probes.reminders()) { checks.append(check) }
        switch probes.clockSynchronized() {
        case true?: checks.append(Check(name: "clock", status: .ok, detail: "synchronised", fix: nil))
        case false?:
            checks.append(Check(name: "clock", status: .warning,
                                detail: "the system clock is not synchronised (a Pi without a real-time clock keeps the last shutdown's time until NTP answers)",
                                fix: "sudo timedatectl set-ntp true, and check the network; `timedatectl` shows when it is synchronised"))
        case nil: checks.append(Check(name: "clock", status: .info, detail: "cannot tell whether it is synchronised", fix: nil))
        }
        if let mqtt = probes.mqtt() {
            // A broker away is not the gateway's failure: the outbox keeps what it would have sent.
            checks.append(mqtt.problem.map {
                Check(name: "mqtt", status: .warning, detail: "\(mqtt.broker): \($0)",
                      fix: "check the broker and [mqtt] in the config (`quench config show`); `quench mqtt status` shows what waits")
            } ?? Check(name: "mqtt", status: .ok, detail: "\(mqtt.broker) accepts the connection", fix: nil))
        }
        checks += trust(files)
        return report(checks)
    }

    /// Healthy when no check found a problem.
    public static func report(_ checks: [Check]) -> Report {
        Report(healthy: !checks.contains { $0.status == .problem }, checks: checks)
    }

    static func bluetooth(_ probes: Probes) -> [Check] {
        var checks: [Check] = []
        switch probes.adapters() {
        case .failure(let error) where error.errno == EAFNOSUPPORT:
            return [Check(name: "bluetooth", status: .problem, detail: "this kernel has no Bluetooth support",
                          fix: "sudo modprobe bluetooth (Raspberry Pi OS has it; some cloud and container kernels do not)")]
        case .failure(let error) where error.errno == EPERM || error.errno == EACCES:
            checks.append(Check(name: "adapters", status: .warning,
                                detail: "cannot list the adapters without CAP_NET_RAW (\(error))", fix: "run `sudo quench doctor`"))
        case .failure(let error):
            checks.append(Check(name: "adapters", status: .problem, detail: "cannot list the adapters: \(error)", fix: adapterListFix))
        case .success(let adapters) where adapters.isEmpty:
            checks.append(Check(name: "adapters", status: .problem, detail: "no Bluetooth adapter",
                                fix: "plug in a USB adapter; on a Pi, `dmesg | grep -i -e bluetooth -e hci` says whether the on-board one came up"))
        case .success(let adapters):
            for a in adapters {
                checks.append(a.isUp
                    ? Check(name: "adapter \(a.name)", status: .ok, detail: "\(a.address), up", fix: nil)
                    : Check(name: "adapter \(a.name)", status: .warning,
                            detail: "\(a.address), down: Quench powers it up itself when it has CAP_NET_ADMIN",
                            fix: "sudo btmgmt --index \(a.index) power on"))
            }
        }
        for r in probes.rfkill() {
            if r.hard {
                checks.append(Check(name: "rfkill \(r.name)", status: .problem, detail: "blocked by a hardware switch", fix: "turn the radio switch on"))
            } else if r.soft {
                checks.append(Check(name: "rfkill \(r.name)", status: .problem, detail: "blocked (soft)",
                                    fix: "sudo rfkill unblock bluetooth  (udev/71-quench-rfkill-unblock.rules does it at boot, if you choose)"))
            }
        }
        checks.append(probes.bluetoothdRunning()
            ? Check(name: "bluetoothd", status: .info, detail: "running: Quench shares the adapter with it (it owns discovery; Quench scans through it)", fix: nil)
            : Check(name: "bluetoothd", status: .info, detail: "not running: Quench needs none", fix: nil))
        return checks
    }

    static func database(_ path: String, now: Timestamp) -> [Check] {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == EACCES { return [unreadableDatabase(path)] }
            return [Check(name: "database", status: .info, detail: "\(path): none yet (`quench pair` or `quench add` creates it)", fix: nil)]
        }
        // Only read: a check leaves the file as it found it (opened to write, a damaged one's log was merged into
        // it at close, and the -wal a restore's advice named was gone).
        let store: IntakeStore
        do { store = try IntakeStore(path: path, mode: .existing, onlyReading: true) } catch {
            return [databaseProblem(error, path: path)]
        }
        // A damaged file answers most reads: only its pages tell (a Pi trial's said "ok" here, and its backups failed).
        if let damage = try? store.damage() {
            return [databaseProblem(StoreError(.corrupt, path: path, "\(path) is damaged (\(damage))"), path: path)]
        }
        var checks: [Check] = []
        // Each way a database cannot be written; a side file's even when the database itself can be (a -shm left
        // read-only by a run while the file was 0400 kept every write failing, and this said "ok").
        let cause = StoreError.readOnlyCause(path)
        if !IntakeStore.isWritable(path) || cause != .permissions {
            switch cause {
            case .mountedReadOnly:
                checks.append(Check(name: "database", status: .problem,
                                    detail: "\(path) is on a file system mounted read-only: the kernel does that to a failing SD card",
                                    fix: "take a backup now (quench backup --dir /media/usb), then `dmesg | grep -i -e mmc -e ext4` says why; replace the card"))
            case .sideFiles(let sides):
                // Each side file this user cannot write, in one fix (SQLite made both with the database's mode).
                let side = sides[0]
                var owner = stat()
                let mine = sides.allSatisfy { (file: String) in stat(file, &owner) == 0 && owner.st_uid == geteuid() }
                let files = sides.map { $0.quotedForShell }.joined(separator: " ")
                checks.append(Check(name: "database", status: .problem, detail: "\(side) cannot be written by this user (uid \(getuid())), "
                                    + "so neither can the database", fix: mine ? "chmod 600 \(files)" : "sudo chown \(getuid()): \(files)"))
            case .permissions:
                checks.append(Check(name: "database", status: .warning, detail: "\(path) is read-only for this user (uid \(getuid()))",
                                    fix: info.st_uid == getuid() ? "chmod u+w \"\(path)\" and its folder" : "sudo chown \(getuid()): \"\(path)\"*  (or run as the user who owns it)"))
            }
        } else if info.st_mode & 0o077 != 0 {
            checks.append(Check(name: "database", status: .warning,
                                detail: "\(path) is readable by others (mode \(String(info.st_mode & 0o777, radix: 8))): intake is health data",
                                fix: "chmod 600 \"\(path)\"*"))
        } else {
            checks.append(Check(name: "database", status: .ok, detail: path, fix: nil))
        }
        // Stored while a clock ran ahead: they head `quench log` for good and count for a day still to come (a Pi trial).
        if let ahead = try? store.events(EventQuery(since: now.adding(Self.clockSlack), limit: 1000)), let earliest = ahead.last {
            let count = ahead.count == 1000 ? "1,000 or more events are" : ahead.count == 1 ? "1 event is" : "\(ahead.count) events are"
            let people = Set(ahead.compactMap(\.person)).count > 1 ? ", with --person NAME for each" : ""
            checks.append(Check(name: "events", status: .warning,
                                detail: "\(count) dated after now (from \(earliest.time.iso8601)): stored while a clock ran ahead?",
                                fix: "quench log --db \(path.quotedForShell) --since \(earliest.time.iso8601)\(people) "
                                    + "lists them; quench edit ID --at TIME moves one, quench delete ID removes it"))
        }
        guard let devices = try? store.listDevices() else { return checks }
        if devices.isEmpty {
            checks.append(Check(name: "devices", status: .info, detail: "none paired", fix: "quench scan, then quench pair ADDRESS"))
        }
        for d in devices {
            let newest = (try? store.events(EventQuery(device: d.address, limit: 1)).first?.time) ?? nil
            let heard = [d.lastSeenAt, newest].compactMap { $0 }.max()
            let label = "device \(d.address)" + (d.name.map { " (\($0.shownSafely(limit: 30)))" } ?? "")
            guard let heard else {
                checks.append(Check(name: label, status: .info, detail: "never heard from since pairing", fix: nil))
                continue
            }
            let ago = now.secondsSince1970 - heard.secondsSince1970
            let when = "last heard \(heard.iso8601)" + (d.batteryPercent.map { ", battery \($0) %" } ?? "")
            checks.append(ago > quietDevice
                ? Check(name: label, status: .warning, detail: "\(when), \(Int(saturating: ago / 3600)) h ago",
                        fix: "is it in range and charged? `quench watch \(d.address)` shows what arrives")
                : Check(name: label, status: .ok, detail: when, fix: nil))
        }
        return checks
    }

    static func service(_ state: ServiceState?) -> Check {
        guard let state else {
            return Check(name: "service", status: .info, detail: "systemd is not here to ask", fix: nil)
        }
        guard state.loaded else {
            return Check(name: "service", status: .info, detail: "quench.service is not installed", fix: "docs/service.md, \"Install\"")
        }
        if state.active != "active" {
            return Check(name: "service", status: .warning, detail: "quench.service is \(state.active) (\(state.enabled))",
                         fix: "sudo systemctl enable --now quench; journalctl -u quench -b says why it stopped")
        }
        // The journal's count is for the last day; NRestarts (since boot) where it cannot be read.
        let (restarts, when) = state.restartsLastDay.map { ($0, " in the last day") } ?? (state.restarts, " after failing")
        if restarts > 0 {
            let why = state.lastExitStatus == 75
                ? "; the last exit was 75: the Bluetooth adapter stayed stuck through a discovery restart and a power cycle"
                : ""
            let fix = state.lastExitStatus == 75
                ? "journalctl -u quench -b -p warning; if it keeps happening, the adapter needs a reboot (sudo reboot) or, on a Pi, a USB adapter"
                : "journalctl -u quench -b -p warning"
            return Check(name: "service", status: .warning,
                         detail: "quench.service is running (\(state.enabled)) but restarted \(restarts) time\(restarts == 1 ? "" : "s")\(when)\(why)",
                         fix: fix)
        }
        return Check(name: "service", status: .ok, detail: "quench.service is running (\(state.enabled))", fix: nil)
    }

    /// The timer that sends reminders and starts the carers' alerts: stopped, neither goes out; the
    /// alerts' last run failed, an alert may not have reached its carer, who is not told (a carer trial).
    static func reminders(_ state: RemindersState?) -> Check? {
        guard let state, state.timerLoad != "not-found" else { return nil }
        let enable = "sudo systemctl enable --now quench-remind.timer (`quench remind set --mode off` stops only the reminders)"
        // Masked (a common way to silence something for good), stopped, or running but not to start at boot.
        if state.timerLoad == "masked" {
            return Check(name: "reminders", status: .warning, detail: "quench-remind.timer is masked: no reminder and no carer's alert is sent",
                         fix: "sudo systemctl unmask quench-remind.timer; " + enable)
        }
        if state.timerActive != "active" {
            return Check(name: "reminders", status: .warning,
                         detail: "quench-remind.timer is \(state.timerActive) (\(state.timerEnabled)): no reminder and no carer's alert is sent",
                         fix: enable)
        }
        if !["enabled", "enabled-runtime", "static", "alias", "indirect", "generated"].contains(state.timerEnabled) {
            return Check(name: "reminders", status: .warning,
                         detail: "quench-remind.timer runs but is \(state.timerEnabled): after the next reboot no reminder and no carer's alert is sent",
                         fix: enable)
        }
        if let result = state.carerResult, result != "success" {
            let how = switch result {
            case "exit-code": state.carerExitStatus.map { " (exit \($0))" } ?? ""
            case "signal", "core-dump": state.carerExitStatus.map { " (killed by signal \($0))" } ?? " (killed by a signal)"
            case "timeout": " (it took too long and was stopped)"
            default: " (\(result))"
            }
            return Check(name: "reminders", status: .warning,
                         detail: "the carers' alerts' last run failed\(how): an alert it had to send may not have reached its carer (the next run sends it again)",
                         fix: "journalctl -u quench-carer -n 20 says why (a push refused or too slow, [notify] wrong)")
        }
        let carer = state.carerResult == nil ? "" : state.carerRan ? "; the carers' alerts' last run went well" : "; the carers' alerts have not run since boot"
        return Check(name: "reminders", status: .ok, detail: "quench-remind.timer is running" + carer, fix: nil)
    }

    /// A configuration file that does not read (a typo, a wrong type): a FAIL in its own words, so the
    /// checklist still comes (it stopped at the error), the rest checked as if there were no file.
    public static func unreadableConfiguration(_ problem: String) -> Check {
        Check(name: "config file", status: .problem, detail: problem,
              fix: "correct what it names; `quench config show` then says where each value comes from")
    }

    /// Restarts in `journalctl -u quench -o cat` text (systemd's words since v236).
    public static func countRestarts(inJournal text: String) -> Int {
        text.split(separator: "\n").filter { $0.contains("Scheduled restart job") }.count
    }

    /// The report as one JSON object: `healthy` and `checks` (`name`, `status`, `detail`, `fix`).
    public static func json(_ report: Report) -> String {
        let checks = report.checks.map { c in
            "{\"name\":\"\(EventFormat.jsonEscaped(c.name))\",\"status\":\"\(c.status.rawValue)\",\"detail\":\"\(EventFormat.jsonEscaped(c.detail))\""
                + (c.fix.map { ",\"fix\":\"\(EventFormat.jsonEscaped($0))\"" } ?? "") + "}"
        }
        return "{\"healthy\":\(report.healthy),\"checks\":[\(checks.joined(separator: ","))]}"
    }

    /// The report as lines a person reads: a mark, the check, what it found, the fix.
    public static func text(_ report: Report) -> String {
        var lines: [String] = []
        for c in report.checks {
            let mark = switch c.status { case .ok: "ok  "; case .info: "    "; case .warning: "warn"; case .problem: "FAIL" }
            lines.append("\(mark)  \(c.name): \(c.detail)")
            if let fix = c.fix, c.status != .ok { lines.append("      fix: \(fix)") }
        }
        lines.append(report.healthy ? "healthy" : "not healthy: fix the FAIL lines first")
        return lines.joined(separator: "\n")
    }
}

extension Doctor.Probes {
    /// This machine.
    public static var system: Doctor.Probes {
        var probes = Doctor.Probes(
            adapters: { Result { () throws(BluetoothLinuxError) in try BluetoothAdapter.list() } },
            rfkill: { SystemProbes.rfkill() },
            bluetoothdRunning: { SystemProbes.processRunning("bluetoothd") },
            capabilities: { SystemProbes.capabilities() },
            service: { SystemProbes.service() },
            clockSynchronized: { SystemProbes.clockSynchronized() },
            now: { .wallClockNow })
        probes.reminders = { SystemProbes.reminders() }
        return probes
    }
}

/// Reading the machine: /sys, /proc, adjtimex, systemctl.
enum SystemProbes {
    static func read(_ path: String, limit: Int = 4096) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: limit)
        let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, limit) }
        return n >= 0 ? String(decoding: buffer.prefix(n), as: UTF8.self) : nil
    }

    static func entries(_ folder: String) -> [String] {
        guard let dir = opendir(folder) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != ".", name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    static func rfkill() -> [Doctor.RFKill] {
        entries("/sys/class/rfkill").compactMap { name in
            let base = "/sys/class/rfkill/\(name)/"
            guard read(base + "type")?.trimmingWhitespace == "bluetooth" else { return nil }
            return Doctor.RFKill(name: read(base + "name").map { String($0.trimmingWhitespace) } ?? name,
                                 soft: read(base + "soft")?.trimmingWhitespace == "1", hard: read(base + "hard")?.trimmingWhitespace == "1")
        }
    }

    static func processRunning(_ command: String) -> Bool {
        entries("/proc").contains { pid in pid.allSatisfy(\.isNumber) && read("/proc/\(pid)/comm").map { $0.trimmingWhitespace == command } == true }
    }

    /// CapEff from /proc/self/status: bit 12 CAP_NET_ADMIN, bit 13 CAP_NET_RAW.
    static func capabilities() -> (netAdmin: Bool, netRaw: Bool, root: Bool) {
        let line = read("/proc/self/status", limit: 1 << 16)?.split(separator: "\n").first { $0.hasPrefix("CapEff:") }
        let mask = line.flatMap { UInt64($0.dropFirst(7).trimmingWhitespace, radix: 16) } ?? 0
        return (mask & (1 << 12) != 0, mask & (1 << 13) != 0, geteuid() == 0)
    }

    /// Whether the kernel's clock is synchronised (adjtimex), as `timedatectl` reports it;
    /// timesyncd's flag file where timedatectl is missing.
    static func clockSynchronized() -> Bool? {
        if let timedatectl = executable(["/usr/bin/timedatectl", "/bin/timedatectl"]),
           access("/run/systemd/system", F_OK) == 0,
           let out = run(timedatectl, ["show", "--property=NTPSynchronized", "--value"])?.trimmingWhitespace {
            if out == "yes" { return true }
            if out == "no" { return false }
        }
        return access("/run/systemd/timesync/synchronized", F_OK) == 0 ? true : nil
    }

    static func service() -> Doctor.ServiceState? {
        let systemctl = executable(["/usr/bin/systemctl", "/bin/systemctl"])
        guard let systemctl, access("/run/systemd/system", F_OK) == 0,
              let out = run(systemctl, ["show", "quench.service", "--property=LoadState,ActiveState,UnitFileState,NRestarts,ExecMainStatus"]) else { return nil }
        let values = properties(out)
        return Doctor.ServiceState(loaded: values["LoadState"] == "loaded", enabled: values["UnitFileState"] ?? "?",
                                   active: values["ActiveState"] ?? "?", restarts: Int(values["NRestarts"] ?? "") ?? 0,
                                   restartsLastDay: restartsLastDay(), lastExitStatus: values["ExecMainStatus"].flatMap { Int($0) })
    }

    /// `systemctl show`'s NAME=VALUE lines.
    static func properties(_ text: some StringProtocol) -> [String: String] {
        var values: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { values[String(parts[0])] = String(parts[1]) }
        }
        return values
    }

    static func reminders() -> Doctor.RemindersState? {
        guard let systemctl = executable(["/usr/bin/systemctl", "/bin/systemctl"]), access("/run/systemd/system", F_OK) == 0,
              let out = run(systemctl, ["show", "quench-remind.timer", "quench-carer.service",
                                        "--property=Id,LoadState,ActiveState,UnitFileState,Result,ExecMainStatus,ExecMainStartTimestampMonotonic"])
        else { return nil }
        return remindersState(fromShow: out)
    }

    /// `systemctl show quench-remind.timer quench-carer.service --property=…`: one block per unit, a blank
    /// line between (a unit that is not there is `LoadState=not-found`).
    static func remindersState(fromShow out: String) -> Doctor.RemindersState {
        var units: [String: [String: String]] = [:]
        for block in out.split(separator: "\n\n") {
            let values = properties(block)
            if let id = values["Id"] { units[id] = values }
        }
        let timer = units["quench-remind.timer"] ?? [:], carer = units["quench-carer.service"] ?? [:]
        let carerLoaded = carer["LoadState"] == "loaded"
        return Doctor.RemindersState(timerLoad: timer["LoadState"] ?? "not-found", timerActive: timer["ActiveState"] ?? "?",
                                     timerEnabled: timer["UnitFileState"] ?? "?", carerResult: carerLoaded ? carer["Result"] : nil,
                                     carerExitStatus: carerLoaded ? carer["ExecMainStatus"].flatMap { Int($0) } : nil,
                                     carerRan: (Int(carer["ExecMainStartTimestampMonotonic"] ?? "") ?? 0) > 0)
    }

    /// systemd's "Scheduled restart job" lines for the unit in the last day; nil
    /// when the journal cannot be read (a user outside systemd-journal/adm).
    static func restartsLastDay() -> Int? {
        guard let journalctl = executable(["/usr/bin/journalctl", "/bin/journalctl"]),
              let out = run(journalctl, ["--unit=quench.service", "--since=-1d", "--quiet", "--output=cat", "--no-pager"]) else { return nil }
        return Doctor.countRestarts(inJournal: out)
    }

    static func executable(_ candidates: [String]) -> String? {
        candidates.first { (path: String) in access(path, X_OK) == 0 }
    }

    /// A program's standard output, nil when it cannot run, fails or takes more than 5 s.
    static func run(_ path: String, _ arguments: [String]) -> String? {
        guard case .exited(0, let output) = ChildProcess.run(path, arguments, captureOutput: true, timeout: 5) else { return nil }
        return output
    }
}
#endif

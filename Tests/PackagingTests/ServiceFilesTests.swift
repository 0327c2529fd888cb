import Foundation
import QuenchTestSupport
import Testing

/// The service files shipped in `systemd/` and `udev/`: systemd's own
/// verifier where it is installed, and a parser for what it cannot check.
@Suite struct ServiceFilesTests {
    static let root = TestPackage.root
    static let unitPath = root.appendingPathComponent("systemd/quench.service").path
    static let rulesPath = root.appendingPathComponent("udev/70-quench.rules").path
    static let rfkillRulesPath = root.appendingPathComponent("udev/71-quench-rfkill-unblock.rules").path
    static let systemdAnalyze = ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// `[section] -> [(key, value)]`, in file order; keys may repeat.
    static func parseUnit(_ text: String) throws -> [String: [(String, String)]] {
        var sections: [String: [(String, String)]] = [:]
        var current: String?
        for (n, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") {
                try #require(line.hasSuffix("]"), "line \(n + 1): bad section header")
                current = String(line.dropFirst().dropLast())
                continue
            }
            let section = try #require(current, "line \(n + 1): a setting before any section")
            let eq = try #require(line.firstIndex(of: "="), "line \(n + 1): not key=value: \(line)")
            sections[section, default: []].append((String(line[..<eq]), String(line[line.index(after: eq)...])))
        }
        return sections
    }

    static func values(_ unit: [String: [(String, String)]], _ section: String, _ key: String) -> [String] {
        (unit[section] ?? []).filter { $0.0 == key }.map(\.1)
    }

    @Test func unitHasTheSandboxAndCapabilities() throws {
        let unit = try Self.parseUnit(String(contentsOfFile: Self.unitPath, encoding: .utf8))
        func one(_ section: String, _ key: String) -> String? {
            let v = Self.values(unit, section, key)
            return v.count == 1 ? v[0] : nil
        }
        #expect(one("Service", "ExecStart") == "/usr/local/bin/quenchd")
        #expect(one("Service", "User") == "quench")
        #expect(one("Service", "StateDirectory") == "quench")
        #expect(Self.values(unit, "Service", "Environment").contains("QUENCH_DB=/var/lib/quench/quench.sqlite"))
        let capabilities: Set<Substring> = ["CAP_NET_RAW", "CAP_NET_ADMIN"]
        #expect(one("Service", "AmbientCapabilities").map { Set($0.split(separator: " ")) } == capabilities)
        #expect(one("Service", "CapabilityBoundingSet").map { Set($0.split(separator: " ")) } == capabilities)
        #expect(one("Service", "NoNewPrivileges") == "yes")
        #expect(one("Service", "ProtectSystem") == "strict")
        #expect(one("Service", "ProtectHome") == "yes")
        #expect(one("Service", "PrivateTmp") == "yes")
        #expect(one("Service", "RestrictAddressFamilies").map { Set($0.split(separator: " ")) } == ["AF_BLUETOOTH", "AF_UNIX"])
        #expect(one("Service", "Restart") == "on-failure")
        #expect(one("Service", "Type") == "notify" && one("Service", "WatchdogSec") == "60s" && one("Service", "NotifyAccess") == "main")
        // Bluetooth sockets exist only in the host's network namespace.
        #expect(one("Service", "PrivateNetwork") == nil)
        #expect(Self.values(unit, "Unit", "After").joined(separator: " ").split(separator: " ").contains("bluetooth.service"))
        // The hardening that fits a Bluetooth gateway (issue 13): calls, memory, /proc, IPC, IP.
        #expect(Self.values(unit, "Service", "SystemCallFilter") == ["@system-service", "~@privileged"])
        #expect(one("Service", "SystemCallErrorNumber") == "EPERM")
        #expect(one("Service", "MemoryDenyWriteExecute") == "yes")
        #expect(one("Service", "ProtectProc") == "invisible")
        #expect(one("Service", "ProcSubset") == "pid")
        #expect(one("Service", "PrivateMounts") == "yes")
        #expect(one("Service", "RemoveIPC") == "yes")
        #expect(one("Service", "IPAddressDeny") == "any")
        // Capabilities must act on the host's Bluetooth: no user namespace.
        #expect(one("Service", "PrivateUsers") == nil)
        #expect(one("Install", "WantedBy") == "multi-user.target")
    }

    /// `systemd-analyze verify` on the unit with ExecStart pointed at a binary
    /// that exists here (it refuses a missing one); any warning fails.
    @Test(.enabled(if: systemdAnalyze != nil, "SKIPPED: systemd-analyze is not installed (apt install systemd)"))
    func systemdAnalyzeVerify() throws {
        let folder = try TemporaryFolder.create("quench-unit")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let text = try String(contentsOfFile: Self.unitPath, encoding: .utf8)
        try #require(text.contains("ExecStart=/usr/local/bin/quenchd"))
        let unit = folder + "/quench.service"
        try text.replacingOccurrences(of: "ExecStart=/usr/local/bin/quenchd", with: "ExecStart=/bin/true")
            .write(toFile: unit, atomically: true, encoding: .utf8)

        let (status, said) = try Self.verify([unit])
        #expect(status == 0, "systemd-analyze verify: \(said)")
        // verify exits 0 on unknown keys and unparsable values, only warning: those count too.
        #expect(!said.contains("quench.service"), "systemd-analyze verify: \(said)")
    }

    /// The MQTT publisher's unit verifies, runs `quench mqtt run` as the quench user with no capabilities.
    @Test(.enabled(if: systemdAnalyze != nil, "SKIPPED: systemd-analyze is not installed (apt install systemd)"))
    func mqttUnitVerifies() throws {
        let folder = try TemporaryFolder.create("quench-unit")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let text = try String(contentsOf: TestPackage.root.appendingPathComponent("systemd/quench-mqtt.service"), encoding: .utf8)
        try #require(text.contains("ExecStart=/usr/local/bin/quench mqtt run\n"))
        #expect(text.contains("User=quench") && text.contains("CapabilityBoundingSet=\n") && text.contains("RestartPreventExitStatus=64 78"))
        try text.replacingOccurrences(of: "ExecStart=/usr/local/bin/quench mqtt run", with: "ExecStart=/bin/true")
            .write(toFile: folder + "/quench-mqtt.service", atomically: true, encoding: .utf8)
        let (status, said) = try Self.verify([folder + "/quench-mqtt.service"])
        #expect(status == 0 && !said.contains("quench-mqtt"), "systemd-analyze verify: \(said)")
    }

    /// The hub's unit verifies: `quench hub run` on a database of its own, with the MQTT unit's sandbox.
    @Test(.enabled(if: systemdAnalyze != nil, "SKIPPED: systemd-analyze is not installed (apt install systemd)"))
    func hubUnitVerifies() throws {
        let folder = try TemporaryFolder.create("quench-unit")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let text = try String(contentsOf: TestPackage.root.appendingPathComponent("systemd/quench-hub.service"), encoding: .utf8)
        try #require(text.contains("ExecStart=/usr/local/bin/quench hub run\n"))
        let unit = try Self.parseUnit(text)
        #expect(Self.values(unit, "Service", "Environment") == ["QUENCH_DB=/var/lib/quench/hub.sqlite"], "not the gateway's database")
        let mqtt = try Self.parseUnit(String(contentsOf: TestPackage.root.appendingPathComponent("systemd/quench-mqtt.service"), encoding: .utf8))
        for (key, _) in mqtt["Service"] ?? [] where !["ExecStart", "Environment"].contains(key) {
            #expect(Self.values(unit, "Service", key) == Self.values(mqtt, "Service", key), "\(key)")
        }
        try text.replacingOccurrences(of: "ExecStart=/usr/local/bin/quench hub run", with: "ExecStart=/bin/true")
            .write(toFile: folder + "/quench-hub.service", atomically: true, encoding: .utf8)
        let (status, said) = try Self.verify([folder + "/quench-hub.service"])
        #expect(status == 0 && !said.contains("quench-hub"), "systemd-analyze verify: \(said)")
    }

    /// The web page's unit verifies, runs `quench-web` (`quench serve` alone) as the quench user on the
    /// gateway's database (its token beside it), with no capabilities and no Bluetooth.
    @Test(.enabled(if: systemdAnalyze != nil, "SKIPPED: systemd-analyze is not installed (apt install systemd)"))
    func webUnitVerifies() throws {
        let folder = try TemporaryFolder.create("quench-unit")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let text = try String(contentsOf: TestPackage.root.appendingPathComponent("systemd/quench-web.service"), encoding: .utf8)
        let unit = try Self.parseUnit(text)
        func one(_ key: String) -> String? {
            let v = Self.values(unit, "Service", key)
            return v.count == 1 ? v[0] : nil
        }
        #expect(one("ExecStart") == "/usr/local/bin/quench-web")
        #expect(one("User") == "quench" && one("Group") == "quench" && one("StateDirectory") == "quench")
        // The same database as quench.service; the token's default place is beside it.
        let gateway = try Self.parseUnit(String(contentsOfFile: Self.unitPath, encoding: .utf8))
        #expect(Self.values(unit, "Service", "Environment") == Self.values(gateway, "Service", "Environment"))
        #expect(one("Restart") == "on-failure" && one("RestartPreventExitStatus") == "64 78")
        #expect(one("Type") == "notify" && one("NotifyAccess") == "main")
        #expect(one("CapabilityBoundingSet") == "" && one("AmbientCapabilities") == nil && one("NoNewPrivileges") == "yes")
        let families = Set((one("RestrictAddressFamilies") ?? "").split(separator: " "))
        #expect(families == ["AF_UNIX", "AF_INET", "AF_INET6"], "IP to listen, no AF_BLUETOOTH")
        #expect(one("PrivateNetwork") == nil, "it listens on the host's network")
        #expect(one("IPAddressDeny") == "any" && one("IPAddressAllow")?.split(separator: " ").contains("localhost") == true)
        // At least the MQTT unit's sandbox: every setting it has, with the same value.
        let mqtt = try Self.parseUnit(String(contentsOf: TestPackage.root.appendingPathComponent("systemd/quench-mqtt.service"), encoding: .utf8))
        let own: Set<String> = ["Type", "ExecStart", "RestartSec"]
        for (key, _) in mqtt["Service"] ?? [] where !own.contains(key) {
            #expect(Self.values(unit, "Service", key) == Self.values(mqtt, "Service", key), "\(key)")
        }
        #expect(Self.values(unit, "Install", "WantedBy") == ["multi-user.target"])

        try #require(text.contains("ExecStart=/usr/local/bin/quench-web\n"))
        try text.replacingOccurrences(of: "ExecStart=/usr/local/bin/quench-web", with: "ExecStart=/bin/true")
            .write(toFile: folder + "/quench-web.service", atomically: true, encoding: .utf8)
        let (status, said) = try Self.verify([folder + "/quench-web.service"])
        #expect(status == 0 && !said.contains("quench-web"), "systemd-analyze verify: \(said)")
        // Exposure no higher than the MQTT unit's (1.4; this one 1.1 with systemd 252).
        let web = try runProgram(Self.systemdAnalyze!, ["security", "--offline=true", "--no-pager",
                                                        TestPackage.root.appendingPathComponent("systemd/quench-web.service").path])
        let mqttScore = try runProgram(Self.systemdAnalyze!, ["security", "--offline=true", "--no-pager",
                                                              TestPackage.root.appendingPathComponent("systemd/quench-mqtt.service").path])
        let a = try #require(Self.exposure(web.stdout + web.stderr), "\(web.stdout)\(web.stderr)")
        let b = try #require(Self.exposure(mqttScore.stdout + mqttScore.stderr), "\(mqttScore.stdout)\(mqttScore.stderr)")
        #expect(a <= b, "web \(a), mqtt \(b)")
    }

    /// "→ Overall exposure level for x.service: 1.1 OK": the figure.
    static func exposure(_ said: String) -> Double? {
        guard let line = said.split(separator: "\n").last(where: { $0.contains("Overall exposure level") }),
              let colon = line.lastIndex(of: ":") else { return nil }
        return Double(line[line.index(after: colon)...].split(separator: " ").first ?? "")
    }

    /// The reminder timer and its service verify too (the service's quench pointed at a binary that exists).
    @Test(.enabled(if: systemdAnalyze != nil, "SKIPPED: systemd-analyze is not installed (apt install systemd)"))
    func reminderTimerVerifies() throws {
        let folder = try TemporaryFolder.create("quench-unit")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let root = TestPackage.root.appendingPathComponent("systemd")
        let service = try String(contentsOf: root.appendingPathComponent("quench-remind.service"), encoding: .utf8)
        let carer = try String(contentsOf: root.appendingPathComponent("quench-carer.service"), encoding: .utf8)
        try #require(service.contains("ExecStart=/usr/local/bin/quench remind --notify"))
        try #require(carer.contains("ExecStart=/usr/local/bin/quench carer --notify"))
        // The carers' alerts in a unit of their own, started with each check and before the reminders: as a
        // second ExecStart= of a one-shot, a push that failed for them skipped the reminders after them.
        #expect(service.components(separatedBy: "ExecStart=").count == 2, "one job in the reminder unit")
        #expect(service.contains("\nWants=quench-carer.service\n") && service.contains("\nAfter=quench-carer.service\n"))
        try service.replacingOccurrences(of: "ExecStart=/usr/local/bin/quench remind --notify", with: "ExecStart=/bin/true")
            .write(toFile: folder + "/quench-remind.service", atomically: true, encoding: .utf8)
        try carer.replacingOccurrences(of: "ExecStart=/usr/local/bin/quench carer --notify", with: "ExecStart=/bin/true")
            .write(toFile: folder + "/quench-carer.service", atomically: true, encoding: .utf8)
        try String(contentsOf: root.appendingPathComponent("quench-remind.timer"), encoding: .utf8)
            .write(toFile: folder + "/quench-remind.timer", atomically: true, encoding: .utf8)
        let (status, said) = try Self.verify([folder + "/quench-remind.timer", folder + "/quench-remind.service", folder + "/quench-carer.service"])
        #expect(status == 0 && !said.contains("quench-remind") && !said.contains("quench-carer"), "systemd-analyze verify: \(said)")
    }

    /// The daily backup: a timer and a one-shot service as the gateway's user on its database, with
    /// no capabilities and no network, the rest of the file system read-only; it verifies, and its
    /// exposure is no higher than the reminder unit's (0.3 and 0.8 with systemd 252).
    @Test func backupTimerAndServiceAreSandboxed() throws {
        let root = TestPackage.root.appendingPathComponent("systemd")
        let text = try String(contentsOf: root.appendingPathComponent("quench-backup.service"), encoding: .utf8)
        let unit = try Self.parseUnit(text)
        func one(_ key: String) -> String? {
            let v = Self.values(unit, "Service", key)
            return v.count == 1 ? v[0] : nil
        }
        #expect(one("Type") == "oneshot" && one("ExecStart") == "/usr/local/bin/quench backup")
        #expect(one("User") == "quench" && one("StateDirectory") == "quench")
        let gateway = try Self.parseUnit(String(contentsOfFile: Self.unitPath, encoding: .utf8))
        #expect(Self.values(unit, "Service", "Environment") == Self.values(gateway, "Service", "Environment"), "the gateway's database")
        #expect(one("CapabilityBoundingSet") == "" && one("NoNewPrivileges") == "yes")
        #expect(one("PrivateNetwork") == "yes" && one("RestrictAddressFamilies") == "AF_UNIX" && one("IPAddressDeny") == "any")
        #expect(one("ProtectSystem") == "strict" && one("ProtectHome") == "yes" && one("UMask") == "0077")
        // Nothing writable besides the state directory until a backup folder elsewhere is added (`systemctl edit`).
        #expect(Self.values(unit, "Service", "ReadWritePaths").isEmpty && one("StateDirectory") == "quench")
        let timer = try Self.parseUnit(String(contentsOf: root.appendingPathComponent("quench-backup.timer"), encoding: .utf8))
        #expect(Self.values(timer, "Timer", "OnCalendar").count == 1 && Self.values(timer, "Timer", "Persistent") == ["true"])
        #expect(Self.values(timer, "Install", "WantedBy") == ["timers.target"])
        guard let analyze = Self.systemdAnalyze else { return }
        let folder = try TemporaryFolder.create("quench-unit")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try text.replacingOccurrences(of: "ExecStart=/usr/local/bin/quench backup", with: "ExecStart=/bin/true")
            .write(toFile: folder + "/quench-backup.service", atomically: true, encoding: .utf8)
        try String(contentsOf: root.appendingPathComponent("quench-backup.timer"), encoding: .utf8)
            .write(toFile: folder + "/quench-backup.timer", atomically: true, encoding: .utf8)
        let (status, said) = try Self.verify([folder + "/quench-backup.timer", folder + "/quench-backup.service"])
        #expect(status == 0 && !said.contains("quench-backup"), "systemd-analyze verify: \(said)")
        let backup = try runProgram(analyze, ["security", "--offline=true", "--no-pager", folder + "/quench-backup.service"])
        let remind = try runProgram(analyze, ["security", "--offline=true", "--no-pager", root.appendingPathComponent("quench-remind.service").path])
        let a = try #require(Self.exposure(backup.stdout + backup.stderr), "\(backup.stdout)\(backup.stderr)")
        let b = try #require(Self.exposure(remind.stdout + remind.stderr), "\(remind.stdout)\(remind.stderr)")
        #expect(a <= b, "backup \(a), remind \(b)")
    }

    /// `systemd-analyze verify --man=no` on unit files: its exit status and what it said.
    static func verify(_ units: [String]) throws -> (status: Int32, said: String) {
        let r = try runProgram(systemdAnalyze!, ["verify", "--man=no"] + units)
        return (r.status, r.stdout + r.stderr)
    }

    /// One udev rule: `KEY[{attr}] OP "value"` pairs separated by commas (udev(7)).
    struct RuleToken: Equatable {
        var key: String
        var attribute: String? = nil
        var op: String
        var value: String
    }

    static let matchKeys: Set<String> = ["ACTION", "DEVPATH", "KERNEL", "KERNELS", "NAME", "SYMLINK", "SUBSYSTEM", "SUBSYSTEMS",
                                         "DRIVER", "DRIVERS", "ATTR", "ATTRS", "SYSCTL", "ENV", "CONST", "TAG", "TAGS", "TEST",
                                         "PROGRAM", "RESULT"]
    static let assignKeys: Set<String> = ["NAME", "SYMLINK", "OWNER", "GROUP", "MODE", "SECLABEL", "ATTR", "SYSCTL", "ENV", "TAG",
                                          "RUN", "LABEL", "GOTO", "IMPORT", "OPTIONS"]

    struct RuleError: Error, CustomStringConvertible {
        var description: String
    }

    static func need(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        if !condition { throw RuleError(description: message()) }
    }

    /// Parses a rules file the way udev reads it, failing on anything it would reject or ignore.
    static func parseRules(_ text: String) throws -> [[RuleToken]] {
        var rules: [[RuleToken]] = []
        var logical = ""
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if logical.isEmpty && (line.isEmpty || line.hasPrefix("#")) { continue }
            if line.hasSuffix("\\") { logical += line.dropLast() + " "; continue }
            logical += line
            rules.append(try parseRule(logical))
            logical = ""
        }
        try need(logical.isEmpty, "a continuation line ends the file")
        return rules
    }

    static func parseRule(_ line: String) throws -> [RuleToken] {
        var tokens: [RuleToken] = []
        var rest = Substring(line)
        while true {
            rest = rest.drop { $0 == " " || $0 == "\t" }
            guard !rest.isEmpty else { break }
            let key = rest.prefix { $0.isUppercase || $0 == "_" }
            rest = rest.dropFirst(key.count)
            var attribute: String?
            if rest.first == "{" {
                guard let end = rest.firstIndex(of: "}") else { throw RuleError(description: "unclosed { in \(line)") }
                attribute = String(rest[rest.index(after: rest.startIndex)..<end])
                rest = rest[rest.index(after: end)...]
            }
            rest = rest.drop { $0 == " " }
            let op = ["==", "!=", "+=", "-=", ":=", "="].first { rest.hasPrefix($0) }
            guard let foundOp = op else { throw RuleError(description: "no operator after \(key) in \(line)") }
            rest = rest.dropFirst(foundOp.count).drop { $0 == " " }
            try need(rest.first == "\"", "value of \(key) is not quoted in \(line)")
            rest = rest.dropFirst()
            guard let close = rest.firstIndex(of: "\"") else { throw RuleError(description: "unterminated value of \(key) in \(line)") }
            let token = RuleToken(key: String(key), attribute: attribute, op: foundOp, value: String(rest[..<close]))
            let isMatch = token.op == "==" || token.op == "!="
            try need((isMatch ? matchKeys : assignKeys).contains(token.key), "\(token.key) cannot be used with \(token.op)")
            if ["ATTR", "ATTRS", "ENV", "SYSCTL"].contains(token.key) { try need(token.attribute != nil, "\(token.key) needs {name}") }
            tokens.append(token)
            rest = rest[rest.index(after: close)...].drop { $0 == " " }
            guard !rest.isEmpty else { break }
            try need(rest.first == ",", "expected , between pairs in \(line)")
            rest = rest.dropFirst()
        }
        try need(!tokens.isEmpty, "empty rule")
        return tokens
    }

    @Test func udevRulesParseAndStartTheServiceForAdapters() throws {
        let rules = try Self.parseRules(String(contentsOfFile: Self.rulesPath, encoding: .utf8))
        let adapter = try #require(rules.first { $0.contains(RuleToken(key: "SUBSYSTEM", op: "==", value: "bluetooth")) })
        #expect(adapter.contains(RuleToken(key: "ACTION", op: "==", value: "add")))
        #expect(adapter.contains(RuleToken(key: "ENV", attribute: "DEVTYPE", op: "==", value: "host")))
        #expect(adapter.contains(RuleToken(key: "TAG", op: "+=", value: "systemd")))
        #expect(adapter.contains(RuleToken(key: "ENV", attribute: "SYSTEMD_WANTS", op: "+=", value: "quench.service")))
        // Unblocking rfkill overrides a person's choice: not in the default rules, only in the opt-in file.
        #expect(!rules.contains { $0.contains(RuleToken(key: "SUBSYSTEM", op: "==", value: "rfkill")) })
        let optIn = try Self.parseRules(String(contentsOfFile: Self.rfkillRulesPath, encoding: .utf8))
        let rfkill = try #require(optIn.first { $0.contains(RuleToken(key: "SUBSYSTEM", op: "==", value: "rfkill")) })
        #expect(rfkill.contains(RuleToken(key: "ATTR", attribute: "type", op: "==", value: "bluetooth")))
        #expect(rfkill.contains(RuleToken(key: "ATTR", attribute: "soft", op: "=", value: "0")))
        // The unit the rule wants is the one shipped.
        #expect(FileManager.default.fileExists(atPath: Self.unitPath))
    }

    /// The parser is strict enough to catch the mistakes that udev only logs.
    @Test func udevParserRejectsMistakes() {
        for bad in ["SUBSYSTEM=\"bluetooth\", RUN==\"x\"", "SUBSYSTEM==bluetooth", "ENV=\"x\"", "KERNEL==\"hci*\" TAG+=\"systemd\"",
                    "FOO==\"x\""] {
            #expect(throws: (any Error).self, "\(bad)") { _ = try Self.parseRule(bad) }
        }
    }
}

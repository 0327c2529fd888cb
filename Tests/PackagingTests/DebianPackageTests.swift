import Foundation
import QuenchTestSupport
import Testing

/// The Debian package installed as a Pi gets it: with dpkg, in a chroot of this machine's Debian
/// (an overlay over `/` in a mount namespace of its own, so nothing here changes), as an image
/// build (pi-gen) installs it with no systemd running, and with "systemd running" (a
/// `/run/systemd/system` folder and a `systemctl` that logs each call before running the real one,
/// which in a chroot only reads and writes unit files): enabled once, a disabled unit kept so,
/// restarted on upgrade, the history kept on remove and gone on purge.
@Suite("the Debian package installed, upgraded, removed and purged", .serialized)
struct DebianPackageTests {
    static let helperTools = ["/usr/bin/deb-systemd-helper", "/usr/bin/deb-systemd-invoke", "/usr/sbin/adduser", "/usr/bin/systemctl",
                              "/usr/bin/unshare", "/usr/sbin/chroot", "/usr/bin/dpkg-shlibdeps"]
    /// Why a chroot cannot be made here, or nil.
    static let unavailable: String? = {
        if getuid() != 0 { return "not root (dpkg, mount and chroot need it)" }
        if let missing = helperTools.first(where: { !FileManager.default.isExecutableFile(atPath: $0) }) {
            return "no \(missing) (apt-get install -y init-system-helpers adduser systemd util-linux dpkg-dev; .ci/run installs them)"
        }
        let filesystems = (try? String(contentsOfFile: "/proc/filesystems", encoding: .utf8)) ?? ""
        if !filesystems.contains("\toverlay\n") { return "the kernel has no overlay file system (modprobe overlay)" }
        return nil
    }()
    static let enabled = unavailable == nil
    static let skipped = "SKIPPED: cannot install into a chroot here: \(unavailable ?? "")"

    /// This version and an older one, built once from the debug binaries (a static release build
    /// is DebianStaticPackageTests' business).
    static let packages: Result<(previous: String, current: String), PackagingError> = {
        guard let quenchd = builtExecutable("quenchd") else { return .failure(PackagingError("quench, quenchd and quench-web are not built (swift build)")) }
        let binDir = URL(fileURLWithPath: quenchd).deletingLastPathComponent().path
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("quench-packaging-tests").path
        try? FileManager.default.removeItem(atPath: out)
        var built: [String] = []
        for version in [version + "~previous", version] {
            guard let r = try? InstallTests.run("build-deb.sh", ["--no-build", "--bin-dir", binDir, "--out", out, "--fast", "--no-lintian",
                                                                 "--dynamic-for-tests", "--version", version]),
                  r.status == 0 else { return .failure(PackagingError("build-deb.sh --version \(version) failed")) }
            built.append("\(out)/quench_\(version)_\(architecture).deb")
        }
        return .success((built[0], built[1]))
    }()
    static let version = (try? String(contentsOf: TestPackage.root.appendingPathComponent("Sources/QuenchCore/Version.swift"), encoding: .utf8))
        .flatMap { $0.firstMatch(of: /static let string = "([^"]+)"/).map { String($0.1) } } ?? "0"
    static let architecture = ((try? runProgram("/usr/bin/dpkg", ["--print-architecture"]).stdout) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)

    struct PackagingError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// Deb-systemd-helper's record of what it enabled, and where the units' links go.
    static let state = "/var/lib/systemd/deb-systemd-helper-enabled"
    static let gatewayLink = "/etc/systemd/system/multi-user.target.wants/quench.service"
    static let timerLink = "/etc/systemd/system/timers.target.wants/quench-remind.timer"
    static let webLink = "/etc/systemd/system/multi-user.target.wants/quench-web.service"

    @Test(.enabled(if: enabled, "\(skipped)"))
    func anImageBuildEnablesOnceAndAnUpgradeKeepsTheAdministratorsChoicesAndTheHistory() throws {
        let (previous, current) = try Self.packages.get()
        let root = try Chroot(systemdRunning: false)
        let installed = try root.sh("dpkg -i \(root.copyIn(previous))")
        #expect(installed.status == 0, "\(installed.stdout)\(installed.stderr)")
        // Enabled by deb-systemd-helper itself (no systemd to ask), recorded so that it happens once.
        #expect(try root.isLink(Self.gatewayLink) && root.isLink(Self.timerLink))
        #expect(try !root.exists(Self.webLink) && !root.exists("/etc/systemd/system/multi-user.target.wants/quench-mqtt.service"),
                "installed, not enabled: they need settings first")
        for unit in ["quench.service", "quench-remind.timer", "quench-web.service", "quench-mqtt.service", "quench-hub.service"] {
            #expect(try root.exists("\(Self.state)/\(unit).dsh-also"), "\(unit)")
        }
        #expect(try root.exists("/usr/lib/systemd/system/quench.service") && root.exists("/usr/lib/udev/rules.d/70-quench.rules"))
        #expect(try root.sh("getent passwd quench").stdout.contains(":/var/lib/quench:/usr/sbin/nologin"))
        // The state folder is there before any service starts, as systemd would make it: `quench pair` writes into it.
        #expect(try root.sh("stat -c '%U:%G %a' /var/lib/quench").stdout == "quench:quench 700\n")
        #expect(try root.sh("cat /quench-systemctl.log").status != 0, "no systemctl call to a systemd that does not run")

        // A history, and an administrator's choices: the timer off, the web page on, an edited configuration.
        let added = try root.sh("quench add 250ml --db /var/lib/quench/quench.sqlite")
        #expect(added.status == 0, "\(added.stdout)\(added.stderr)")
        #expect(try root.sh("systemctl disable quench-remind.timer && systemctl enable quench-web.service && sed -i '1i log_level = \"debug\"' /etc/quench/quench.toml").status == 0)
        #expect(try !root.exists(Self.timerLink) && root.isLink(Self.webLink))

        let upgraded = try root.sh("dpkg -i \(root.copyIn(current))")
        #expect(upgraded.status == 0, "\(upgraded.stdout)\(upgraded.stderr)")
        #expect(try root.sh("dpkg-query -W -f '${Version}' quench").stdout == Self.version)
        #expect(try root.isLink(Self.gatewayLink), "still enabled")
        #expect(try !root.exists(Self.timerLink), "the administrator disabled it: it stays disabled")
        #expect(try root.isLink(Self.webLink), "the administrator enabled it: it stays enabled")
        #expect(try root.sh("head -n 1 /etc/quench/quench.toml").stdout == "log_level = \"debug\"\n", "the edit is kept")
        let today = try root.sh("quench log --db /var/lib/quench/quench.sqlite")
        #expect(today.status == 0 && today.stdout.contains("250"), "\(today.stdout)\(today.stderr)")

        // Remove: the programs and units go; the history, the configuration and the enabled state stay.
        let removed = try root.sh("dpkg -r quench")
        #expect(removed.status == 0, "\(removed.stdout)\(removed.stderr)")
        #expect(try !root.exists("/usr/bin/quench") && !root.exists("/usr/lib/systemd/system/quench.service"))
        #expect(try root.exists("/var/lib/quench/quench.sqlite") && root.exists("/etc/quench/quench.toml") && root.exists("\(Self.state)/quench.service.dsh-also"))
        // Reinstalled after a remove: as it was left (the timer still off).
        #expect(try root.sh("dpkg -i \(root.copyIn(current))").status == 0)
        #expect(try root.isLink(Self.gatewayLink) && !root.exists(Self.timerLink) && root.isLink(Self.webLink))

        // Purge: the history, the configuration, the links, deb-systemd-helper's record and the user go.
        let purged = try root.sh("dpkg -P quench")
        #expect(purged.status == 0, "\(purged.stdout)\(purged.stderr)")
        #expect(try !root.exists("/var/lib/quench") && !root.exists("/etc/quench"))
        let left = try root.sh("find /etc/systemd /var/lib/systemd/deb-systemd-helper-enabled -name 'quench*'; getent passwd quench")
        #expect(left.stdout.isEmpty, "left behind: \(left.stdout)")
    }

    @Test(.enabled(if: enabled, "\(skipped)"))
    func withSystemdRunningTheFirstInstallStartsTheTimerAndAnUpgradeRestartsWhatRuns() throws {
        let (previous, current) = try Self.packages.get()
        let root = try Chroot(systemdRunning: true)
        #expect(try root.sh("dpkg -i \(root.copyIn(previous))").status == 0)
        let first = try root.systemctlCalls()
        // deb-systemd-invoke starts the timer (enabled); not the gateway: nothing is paired yet.
        #expect(first.contains("--quiet --system start quench-backup.timer quench-remind.timer"), "\(first)")
        #expect(!first.contains { $0.contains("start") && $0.contains("quench.service") }, "\(first)")
        #expect(try root.isLink(Self.gatewayLink) && root.isLink(Self.timerLink))

        try root.clearSystemctlCalls()
        #expect(try root.sh("dpkg -i \(root.copyIn(current))").status == 0)
        let upgrade = try root.systemctlCalls()
        #expect(upgrade.contains("try-restart quench-backup.timer quench-remind.timer quench.service quench-hub.service quench-mqtt.service quench-web.service"), "\(upgrade)")
        #expect(!upgrade.contains { $0.hasPrefix("stop") || $0.contains(" start ") || $0.hasPrefix("enable") }, "\(upgrade)")

        try root.clearSystemctlCalls()
        #expect(try root.sh("dpkg -r quench").status == 0)
        let removal = try root.systemctlCalls()
        #expect(removal.contains("stop quench-backup.timer quench-remind.timer quench-backup.service quench-carer.service quench-hub.service quench-mqtt.service quench-remind.service quench-web.service quench.service"), "\(removal)")
        #expect(removal.contains("--system daemon-reload"), "\(removal)")
        #expect(try root.sh("dpkg -P quench").status == 0)
        #expect(try !root.exists("/var/lib/quench") && !root.exists(Self.gatewayLink))
    }

    /// From 0.5.0's package (units under /lib, enabled with `systemctl enable --now` on a Pi where
    /// systemd runs; its scripts in Tests/Fixtures/deb-0.5.0): no unit file is lost to the /lib →
    /// /usr/lib alias, and a timer the administrator disabled stays disabled from then on.
    @Test(.enabled(if: enabled, "\(skipped)"))
    func anUpgradeFromThe050PackageKeepsItsUnitsTheirStateAndTheHistory() throws {
        let (_, current) = try Self.packages.get()
        let legacy = try Self.legacyPackage(from: current)
        let root = try Chroot(systemdRunning: true)
        let old = try root.sh("dpkg -i \(root.copyIn(legacy))")
        #expect(old.status == 0, "\(old.stdout)\(old.stderr)")
        #expect(try root.isLink(Self.gatewayLink) && root.isLink(Self.timerLink), "0.5.0 enabled both with systemctl")
        #expect(try root.exists("/lib/systemd/system/quench.service") && !root.exists("\(Self.state)/quench.service.dsh-also"))
        let prepared = try root.sh("systemctl disable quench-remind.timer && mkdir -p /var/lib/quench && quench add 300ml --db /var/lib/quench/quench.sqlite")
        #expect(prepared.status == 0, "\(prepared.stdout)\(prepared.stderr)")

        let upgraded = try root.sh("dpkg -i \(root.copyIn(current))")
        #expect(upgraded.status == 0, "\(upgraded.stdout)\(upgraded.stderr)")
        let listed = try root.sh("dpkg -L quench").stdout
        for unit in try FileManager.default.contentsOfDirectory(atPath: TestPackage.root.appendingPathComponent("systemd").path) {
            #expect(try root.exists("/usr/lib/systemd/system/" + unit), "\(unit) lost in the move from /lib")
            #expect(listed.contains("/usr/lib/systemd/system/" + unit + "\n"), "\(listed)")
        }
        #expect(try root.exists("/usr/lib/udev/rules.d/70-quench.rules"))
        #expect(try root.isLink(Self.gatewayLink), "still enabled")
        #expect(try !root.exists(Self.timerLink), "disabled under 0.5.0: stays disabled")
        #expect(try root.sh("quench log --db /var/lib/quench/quench.sqlite").stdout.contains("300"))
        // From now on deb-systemd-helper's record says so: another upgrade keeps the timer off.
        #expect(try root.sh("dpkg -i \(root.copyIn(current))").status == 0)
        #expect(try root.isLink(Self.gatewayLink) && !root.exists(Self.timerLink))
    }

    /// The package as 0.5.0 made it: this one's files with the units and rules under /lib, and
    /// 0.5.0's maintainer scripts.
    static func legacyPackage(from deb: String) throws -> String {
        let folder = URL(fileURLWithPath: deb).deletingLastPathComponent().path
        let legacy = "\(folder)/quench_\(version)~legacy_\(architecture).deb"
        let fixtures = TestPackage.fixtures.appendingPathComponent("deb-0.5.0").path
        let script = """
            set -e; tree="$1/legacy"; rm -rf "$tree"; dpkg-deb -R "$2" "$tree"
            mkdir "$tree/lib"; mv "$tree/usr/lib/systemd" "$tree/usr/lib/udev" "$tree/lib/"; rmdir "$tree/usr/lib"
            for s in postinst prerm postrm; do install -m 755 "$3/$s" "$tree/DEBIAN/$s"; done
            sed -i "s/^Version: .*/Version: $4/" "$tree/DEBIAN/control"
            dpkg-deb --root-owner-group -Zgzip -z1 --build "$tree" "$5" >/dev/null; rm -rf "$tree"
            """
        let r = try runProgram("/bin/sh", ["-c", script, "legacy", folder, deb, fixtures, version + "~legacy", legacy])
        guard r.status == 0 else { throw PackagingError("making 0.5.0's package: \(r.stderr)") }
        return legacy
    }

    /// scripts/install.sh from a checkout, on a system where systemd runs: it enables what it
    /// installs for the first time and only then, restarts what runs on a second run, and
    /// uninstall.sh --purge takes it all away again.
    @Test(.enabled(if: enabled, "\(skipped)"))
    func installShEnablesOnlyWhatItInstallsFirstAndRestartsWhatRuns() throws {
        let binDir = try #require(InstallTests.binDir, "quench, quenchd and quench-web are built (swift build)")
        let root = try Chroot(systemdRunning: true)
        let source = root.upper + "/tmp/quench-src"
        for folder in ["scripts", "systemd", "udev", "config"] {
            try FileManager.default.copyItem(atPath: TestPackage.root.appendingPathComponent(folder).path, toPath: source + "/" + folder)
        }
        try FileManager.default.createDirectory(atPath: source + "/bin", withIntermediateDirectories: true)
        for name in ["quench", "quenchd", "quench-web"] {
            try FileManager.default.copyItem(atPath: binDir + "/" + name, toPath: source + "/bin/" + name)
        }
        let first = try root.sh("/tmp/quench-src/scripts/install.sh --no-build --bin-dir /tmp/quench-src/bin")
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        #expect(try root.exists("/usr/local/bin/quenchd") && root.sh("getent passwd quench").status == 0)
        #expect(try root.sh("stat -c '%U:%G %a' /var/lib/quench").stdout == "quench:quench 700\n")
        #expect(try root.isLink(Self.gatewayLink) && root.isLink(Self.timerLink) && !root.exists(Self.webLink))
        let calls = try root.systemctlCalls()
        #expect(calls.contains("enable --now quench-remind.timer") && calls.contains("enable quench.service"), "\(calls)")

        try root.clearSystemctlCalls()
        #expect(try root.sh("systemctl disable quench-remind.timer").status == 0)
        let second = try root.sh("/tmp/quench-src/scripts/install.sh --no-build --bin-dir /tmp/quench-src/bin")
        #expect(second.status == 0, "\(second.stdout)\(second.stderr)")
        #expect(try !root.exists(Self.timerLink) && root.isLink(Self.gatewayLink), "disabled stays disabled")
        let again = try root.systemctlCalls()
        #expect(again.contains("try-restart quench-backup.timer quench-remind.timer quench.service quench-hub.service quench-mqtt.service quench-web.service"), "\(again)")
        #expect(!again.contains { $0.hasPrefix("enable") }, "\(again)")

        let purged = try root.sh("/tmp/quench-src/scripts/uninstall.sh --purge")
        #expect(purged.status == 0, "\(purged.stdout)\(purged.stderr)")
        let left = try root.sh("ls /usr/local/bin; find /etc/systemd /etc/udev /etc/quench -name '*quench*'; getent passwd quench")
        #expect(!left.stdout.contains("quench"), "left behind: \(left.stdout)")
    }

    /// build-deb.sh packs only what runs without a toolchain, for the architecture it names.
    @Test(.enabled(if: enabled, "\(skipped)"))
    func buildDebRefusesBinariesThatNeedTheToolchainAndTheWrongArchitecture() throws {
        let (_, current) = try Self.packages.get()
        let binDir = try #require(InstallTests.binDir, "quench, quenchd and quench-web are built (swift build)")
        let out = try TemporaryFolder()
        let refused = try InstallTests.run("build-deb.sh", ["--no-build", "--bin-dir", binDir, "--out", out.path, "--no-lintian"])
        #expect(refused.status == 1 && refused.output.contains("/quench loads the Swift runtime from a toolchain")
                && refused.output.contains("libswiftCore.so") && refused.output.contains("--static-swift-stdlib"), "\(refused.output)")
        let other = Self.architecture == "arm64" ? "amd64" : "arm64"
        let wrong = try InstallTests.run("build-deb.sh", ["--no-build", "--bin-dir", binDir, "--out", out.path, "--arch", other, "--dynamic-for-tests"])
        #expect(wrong.status == 1 && wrong.output.contains("/quench is built for ") && wrong.output.contains("not \(other)"), "\(wrong.output)")
        #expect(try InstallTests.run("build-deb.sh", ["--arch", "sparc"]).status == 64)
        #expect(try InstallTests.run("build-deb.sh", ["--no-build", "--version", "v1"]).status == 64)
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).isEmpty, "nothing written")
        // Why: without the toolchain (here hidden under an empty /opt) such a package's programs do not start.
        let root = try Chroot(systemdRunning: false)
        #expect(try root.sh("dpkg -i \(root.copyIn(current)) >/dev/null && quench --version").status == 0)
        let without = try root.sh("quench --version", hidingToolchain: true)
        #expect(without.status != 0 && without.stderr.contains("libswift"), "\(without.stdout)\(without.stderr)")
    }
}

/// A static release build, when one is in .build/release (CI does not build one: minutes on two
/// cores; `scripts/install.sh --build-only` makes it): packed without --dynamic-for-tests, lintian
/// finds no errors, and its programs run in a chroot with no Swift toolchain.
@Suite("the Debian package of a static release build")
struct DebianStaticPackageTests {
    static let releaseDir = TestPackage.root.appendingPathComponent(".build/release").path
    static let isStatic: Bool = {
        ["quench", "quenchd", "quench-web"].allSatisfy { name in
            let path = releaseDir + "/" + name
            guard FileManager.default.isExecutableFile(atPath: path),
                  let dynamic = try? runProgram("/usr/bin/readelf", ["-d", path]) else { return false }
            return !dynamic.stdout.contains("libswiftCore") && !dynamic.stdout.contains("libFoundation")
        }
    }()
    static let enabled = isStatic && DebianPackageTests.enabled
    static let skipped = isStatic ? DebianPackageTests.skipped
        : "SKIPPED: no static release build in .build/release (scripts/install.sh --build-only, minutes on two cores)"

    @Test(.enabled(if: enabled, "\(skipped)"))
    func aStaticBuildPacksLintianCleanAndRunsWithoutTheToolchain() throws {
        let out = try TemporaryFolder()
        let built = try InstallTests.run("build-deb.sh", ["--no-build", "--bin-dir", Self.releaseDir, "--out", out.path, "--fast"])
        #expect(built.status == 0, "\(built.output)")
        let errors = built.output.split(separator: "\n").filter { $0.hasPrefix("E: ") }
        #expect(errors.isEmpty, "lintian errors: \(errors)")
        let deb = try #require(try FileManager.default.contentsOfDirectory(atPath: out.path).first { $0.hasSuffix(".deb") })
        let root = try Chroot(systemdRunning: false)
        let ran = try root.sh("dpkg -i \(root.copyIn(out.path + "/" + deb)) >/dev/null && quench --version && quenchd --help && quench-web --help", hidingToolchain: true)
        #expect(ran.status == 0 && ran.stdout.hasPrefix(DebianPackageTests.version), "\(ran.stdout)\(ran.stderr)")
    }
}

/// This machine's Debian as a chroot: an overlay over `/` whose changes land in a folder of the
/// test's, mounted in a private mount namespace for each command (with /proc, an empty /run, and
/// with `systemdRunning` the folder that says systemd runs and a logging `systemctl` first on the PATH).
final class Chroot {
    let folder: TemporaryFolder
    let systemdRunning: Bool
    var upper: String { folder.path + "/upper" }

    init(systemdRunning: Bool) throws {
        folder = try TemporaryFolder("quench-chroot")
        self.systemdRunning = systemdRunning
        for dir in ["upper", "work", "merged", "upper/tmp/quench-debs"] {
            try FileManager.default.createDirectory(atPath: folder.path + "/" + dir, withIntermediateDirectories: true)
        }
        if systemdRunning {
            let shim = upper + "/usr/local/sbin/systemctl"
            try FileManager.default.createDirectory(atPath: upper + "/usr/local/sbin", withIntermediateDirectories: true)
            try Self.systemctl.write(toFile: shim, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: shim)
            // A Pi has no policy-rc.d (a container image's forbids starting anything): an overlay whiteout hides this one's.
            try hide("/usr/sbin/policy-rc.d")
        }
        // man-db's trigger re-indexed every manual page of this machine after each install (about 25 CPU-s
        // a test run, CI's two cores busy); without its auto-update file it skips that. Quench's page is still installed.
        try hide("/var/lib/man-db/auto-update")
        try leaveOutHostsQuenchUser()
    }

    /// The image starts without the host's own `quench` user (a developer's installed gateway, or one a trial
    /// made with another home): the package must make its own, and it kept the host's, home and all.
    private func leaveOutHostsQuenchUser() throws {
        for file in ["/etc/passwd", "/etc/group", "/etc/shadow", "/etc/gshadow"] {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { continue }
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            guard lines.contains(where: { $0.hasPrefix("quench:") }) else { continue }
            let copy = upper + file
            try FileManager.default.createDirectory(atPath: (copy as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try lines.filter { !$0.hasPrefix("quench:") }.joined(separator: "\n").write(toFile: copy, atomically: false, encoding: .utf8)
            let host = try FileManager.default.attributesOfItem(atPath: file)
            try FileManager.default.setAttributes(host.filter { [.posixPermissions, .ownerAccountID, .groupOwnerAccountID].contains($0.key) },
                                                  ofItemAtPath: copy)
        }
    }

    /// Hides the host's `path` inside: an overlay whiteout (a 0/0 character device) in the upper layer.
    private func hide(_ path: String) throws {
        let hidden = upper + path
        try FileManager.default.createDirectory(atPath: (hidden as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let whiteout = try runProgram("/usr/bin/mknod", [hidden, "c", "0", "0"])
        guard whiteout.status == 0 else { throw DebianPackageTests.PackagingError("mknod \(path): \(whiteout.stderr)") }
    }

    /// systemctl as a manager with nothing running answers, for what needs the running manager
    /// (logged: the test reads what was asked); what works on unit files (enable, disable, preset,
    /// is-enabled) runs for real, offline (unit names hold no spaces: the words are split as such).
    static let systemctl = """
        #!/bin/sh
        echo "$*" >> /quench-systemctl.log
        case " $* " in
            # enable --now, disable --now: the links offline; the start or stop is the manager's.
            *" --now "*) arguments=""; for a in "$@"; do [ "$a" = --now ] || arguments="$arguments $a"; done; set -- $arguments ;;
        esac
        for argument in "$@"; do
            case "$argument" in
                -*) ;;
                daemon-reload|daemon-reexec|start|stop|restart|try-restart|reload|reload-or-restart) exit 0 ;;
                is-active) exit 3 ;;
                *) break ;;
            esac
        done
        SYSTEMD_OFFLINE=1 exec /usr/bin/systemctl "$@"

        """

    /// A package copied in: its path inside.
    func copyIn(_ deb: String) throws -> String {
        let name = URL(fileURLWithPath: deb).lastPathComponent
        let inside = "/tmp/quench-debs/" + name
        if !FileManager.default.fileExists(atPath: upper + inside) { try FileManager.default.copyItem(atPath: deb, toPath: upper + inside) }
        return inside
    }

    /// A shell command run inside, as root, with a clean environment.
    func sh(_ command: String, hidingToolchain: Bool = false) throws -> ProcessResult {
        let setup = """
            set -e; m=$1/merged
            mount -t overlay overlay -o lowerdir=/,upperdir=$1/upper,workdir=$1/work "$m"
            mount -t proc proc "$m/proc"; mount -t tmpfs tmpfs "$m/run"
            if [ "$2" = yes ]; then mkdir -p "$m/run/systemd/system"; fi
            if [ "$3" = yes ]; then mount -t tmpfs tmpfs "$m/opt"; fi
            exec chroot "$m" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 TZ=UTC /bin/sh -c "$4"
            """
        return try runProgram("/usr/bin/unshare", ["--mount", "--propagation", "private", "/bin/sh", "-c", setup, "chroot", folder.path,
                                                   systemdRunning ? "yes" : "no", hidingToolchain ? "yes" : "no", command])
    }

    func exists(_ path: String) throws -> Bool { try sh("test -e '\(path)'").status == 0 }
    func isLink(_ path: String) throws -> Bool { try sh("test -L '\(path)'").status == 0 }

    /// What was asked of systemctl since the last clear, one call a line.
    func systemctlCalls() throws -> [String] {
        (try? String(contentsOfFile: upper + "/quench-systemctl.log", encoding: .utf8))?.split(separator: "\n").map(String.init) ?? []
    }
    func clearSystemctlCalls() throws { try? FileManager.default.removeItem(atPath: upper + "/quench-systemctl.log") }
}

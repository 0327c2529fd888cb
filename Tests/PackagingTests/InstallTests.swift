import Foundation
import QuenchTestSupport
import Testing

/// scripts/install.sh, uninstall.sh and build-deb.sh, run into scratch roots
/// with the binaries this test run built.
@Suite("install, uninstall and the Debian package", .serialized)
struct InstallTests {
    static let scripts = TestPackage.root.appendingPathComponent("scripts").path
    static var binDir: String? {
        builtExecutable("quenchd").map { URL(fileURLWithPath: $0).deletingLastPathComponent().path }
    }

    /// Runs a script with `DESTDIR` (when given); its status and what it printed.
    static func run(_ script: String, _ arguments: [String], destdir: String? = nil) throws -> (status: Int32, output: String) {
        let r = try runProgram("/bin/bash", [scripts + "/" + script] + arguments, environment: destdir.map { ["DESTDIR": $0] } ?? [:])
        return (r.status, r.stdout + r.stderr)
    }

    /// Every file under `root`: relative path → mode and contents.
    static func tree(_ root: String) throws -> [String: String] {
        var out: [String: String] = [:]
        let enumerator = FileManager.default.enumerator(atPath: root)
        while let path = enumerator?.nextObject() as? String {
            let full = root + "/" + path
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            let attributes = try FileManager.default.attributesOfItem(atPath: full)
            let mode = String((attributes[.posixPermissions] as? Int) ?? 0, radix: 8)
            let data = try Data(contentsOf: URL(fileURLWithPath: full))
            out[path] = "\(mode) \(data.count) \(data.hashValue)"
        }
        return out
    }

    /// The carers' alerts left quench-remind.service for quench-carer.service: a drop-in an administrator made
    /// for the old unit (a hub's database, as hub.md said to) is copied to the new one, once; one that changes
    /// ExecStart= is not (it would run the reminders there), and the install says so.
    @Test func dropInsForTheReminderUnitReachTheCarersUnit() throws {
        let binDir = try #require(Self.binDir, "quench, quenchd and quench-web are built (swift build)")
        for (conf, copied) in [("[Service]\nEnvironment=QUENCH_DB=/var/lib/quench/hub.sqlite\n", true),
                               ("[Service]\nExecStart=\nExecStart=/usr/local/bin/quench remind --notify --command /opt/x\n", false)] {
            let root = try TemporaryFolder()
            let remind = root.path + "/etc/systemd/system/quench-remind.service.d"
            try FileManager.default.createDirectory(atPath: remind, withIntermediateDirectories: true)
            try conf.write(toFile: remind + "/override.conf", atomically: true, encoding: .utf8)
            let first = try Self.run("install.sh", ["--no-build", "--bin-dir", binDir], destdir: root.path)
            #expect(first.status == 0, "\(first.output)")
            let carer = root.path + "/etc/systemd/system/quench-carer.service.d/override.conf"
            #expect(((try? String(contentsOfFile: carer, encoding: .utf8)) == conf) == copied, "\(conf)")
            #expect(first.output.contains(copied ? "now apply to quench-carer.service too" : "changes ExecStart=; the carers' alerts now run in quench-carer.service"),
                    "\(first.output)")
            // Once: a second install leaves the new unit's drop-ins to the administrator.
            let again = try Self.run("install.sh", ["--no-build", "--bin-dir", binDir], destdir: root.path)
            #expect(again.status == 0 && !again.output.contains("quench-carer.service too"), "\(again.output)")
        }
    }

    @Test func installIntoAScratchRootTwiceChangesNothingAndUninstallKeepsOnlyTheHistoryAndConfiguration() throws {
        let binDir = try #require(Self.binDir, "quench, quenchd and quench-web are built (swift build)")
        let root = try TemporaryFolder()
        let first = try Self.run("install.sh", ["--no-build", "--bin-dir", binDir], destdir: root.path)
        #expect(first.status == 0, "\(first.output)")
        let installed = try Self.tree(root.path)
        #expect(Set(installed.keys) == ["usr/local/bin/quench", "usr/local/bin/quenchd", "usr/local/bin/quench-web", "etc/systemd/system/quench.service",
                                         "etc/systemd/system/quench-remind.service", "etc/systemd/system/quench-remind.timer", "etc/systemd/system/quench-carer.service",
                                         "etc/systemd/system/quench-backup.service", "etc/systemd/system/quench-backup.timer",
                                         "etc/systemd/system/quench-mqtt.service", "etc/systemd/system/quench-web.service",
                                         "etc/systemd/system/quench-hub.service", "etc/udev/rules.d/70-quench.rules", "etc/quench/quench.toml"], "\(installed.keys.sorted())")
        #expect(installed["usr/local/bin/quenchd"]?.hasPrefix("755 ") == true && installed["etc/udev/rules.d/70-quench.rules"]?.hasPrefix("644 ") == true)
        let unit = try String(contentsOfFile: root.path + "/etc/systemd/system/quench.service", encoding: .utf8)
        #expect(unit.contains("ExecStart=/usr/local/bin/quenchd\n"))
        let config = root.path + "/etc/quench/quench.toml"
        #expect(installed["etc/quench/quench.toml"]?.hasPrefix("644 ") == true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: config)) == Data(contentsOf: TestPackage.root.appendingPathComponent("config/quench.toml")))
        // Twice: the same files, modes and bytes.
        #expect(try Self.run("install.sh", ["--no-build", "--bin-dir", binDir], destdir: root.path).status == 0)
        #expect(try Self.tree(root.path) == installed)
        // A configuration someone edited stays as they left it.
        let edited = "log_level = \"debug\"\n"
        try edited.write(toFile: config, atomically: true, encoding: .utf8)
        let again = try Self.run("install.sh", ["--no-build", "--bin-dir", binDir], destdir: root.path)
        #expect(again.status == 0 && again.output.contains("kept \(config)"), "\(again.output)")
        #expect(try String(contentsOfFile: config, encoding: .utf8) == edited)
        // Another prefix: the units name the binaries there.
        let usr = try TemporaryFolder()
        #expect(try Self.run("install.sh", ["--no-build", "--bin-dir", binDir, "--prefix", "/usr"], destdir: usr.path).status == 0)
        let remind = try String(contentsOfFile: usr.path + "/etc/systemd/system/quench-remind.service", encoding: .utf8)
        #expect(remind.contains("ExecStart=/usr/bin/quench remind --notify\n") && FileManager.default.fileExists(atPath: usr.path + "/usr/bin/quenchd"))
        let web = try String(contentsOfFile: usr.path + "/etc/systemd/system/quench-web.service", encoding: .utf8)
        #expect(web.contains("ExecStart=/usr/bin/quench-web\n"))

        // The history stays through an uninstall; --purge takes it too.
        try FileManager.default.createDirectory(atPath: root.path + "/var/lib/quench", withIntermediateDirectories: true)
        try Data("history".utf8).write(to: URL(fileURLWithPath: root.path + "/var/lib/quench/quench.sqlite"))
        let removed = try Self.run("uninstall.sh", [], destdir: root.path)
        #expect(removed.status == 0 && removed.output.contains("stay") && removed.output.contains("quench.toml"), "\(removed.output)")
        #expect(Set(try Self.tree(root.path).keys) == ["var/lib/quench/quench.sqlite", "etc/quench/quench.toml"])
        #expect(try String(contentsOfFile: config, encoding: .utf8) == edited)
        // --purge: the history, the configuration, and the web page's access token (a secret), beside
        // the database or wherever [web] token_file put it.
        #expect(try Self.run("install.sh", ["--no-build", "--bin-dir", binDir], destdir: root.path).status == 0)
        try (edited + "[web]\ntoken_file = \"/etc/quench/web-token\"\n").write(toFile: config, atomically: true, encoding: .utf8)
        try Data("secret\n".utf8).write(to: URL(fileURLWithPath: root.path + "/etc/quench/web-token"))
        try Data("secret\n".utf8).write(to: URL(fileURLWithPath: root.path + "/var/lib/quench/web-token"))
        let purged = try Self.run("uninstall.sh", ["--purge"], destdir: root.path)
        #expect(purged.status == 0 && purged.output.contains(root.path + "/etc/quench/web-token"), "\(purged.output)")
        let left = try Self.tree(root.path)
        #expect(left.isEmpty, "\(left.keys.sorted())")
        #expect(!FileManager.default.fileExists(atPath: root.path + "/etc/quench"), "the folder goes too")
        #expect(try Self.run("install.sh", ["--bogus"], destdir: root.path).status == 64)
    }

    static let lintian = ["/usr/bin/lintian"].first { FileManager.default.isExecutableFile(atPath: $0) }

    @Test func theDebianPackageHoldsTheSameFilesAndItsScriptsDoWhatInstallDoes() throws {
        let binDir = try #require(Self.binDir, "quench, quenchd and quench-web are built (swift build)")
        let out = try TemporaryFolder()
        let built = try Self.run("build-deb.sh", ["--no-build", "--bin-dir", binDir, "--out", out.path, "--fast", "--dynamic-for-tests", "--no-lintian"])
        #expect(built.status == 0, "\(built.output)")
        let deb = try #require(try FileManager.default.contentsOfDirectory(atPath: out.path).first { $0.hasSuffix(".deb") })
        let path = out.path + "/" + deb
        func dpkgDeb(_ arguments: [String]) throws -> String { try runProgram("/usr/bin/dpkg-deb", arguments).stdout }
        let info = try dpkgDeb(["--info", path])
        // The libraries dpkg-shlibdeps found the binaries load, with versions; the maintainer scripts' tools.
        let depends = try #require(info.split(separator: "\n").first { $0.hasPrefix(" Depends: ") }, "\(info)")
        for library in ["libc6 (>= ", "libbluetooth3 (>= ", "libsqlite3-0 (>= ", "libmosquitto1 (>= ", "libcurl4 (>= ", "zlib1g (>= ", "adduser", "init-system-helpers (>= "] {
            #expect(depends.contains(library), "\(library): \(depends)")
        }
        #expect(info.contains("Package: quench") && info.contains("Version: \(DebianPackageTests.version)"), "\(info)")
        let contents = try dpkgDeb(["--contents", path])
        // Every unit in systemd/, whatever its name.
        let units = try FileManager.default.contentsOfDirectory(atPath: TestPackage.root.appendingPathComponent("systemd").path)
        #expect(units.count >= 5)
        for file in ["./usr/bin/quench", "./usr/bin/quenchd", "./usr/bin/quench-web", "./usr/lib/udev/rules.d/70-quench.rules",
                     "./usr/share/man/man1/quench.1.gz", "./usr/share/man/man1/quenchd.1.gz", "./usr/share/man/man1/quench-web.1.gz",
                     "./usr/share/doc/quench/copyright", "./etc/quench/quench.toml"] + units.map({ "./usr/lib/systemd/system/" + $0 }) {
            #expect(contents.contains(file), "\(file) missing: \(contents)")
        }
        #expect(contents.contains("root/root"), "files owned by root")
        let scripts = try TemporaryFolder()
        _ = try dpkgDeb(["--control", path, scripts.path])
        // What the scripts do is DebianPackageTests' business (they run them); here, what they were written from.
        let postinst = try String(contentsOfFile: scripts.path + "/postinst", encoding: .utf8)
        #expect(postinst.contains("adduser --system --group") && postinst.contains("for unit in quench-backup.timer quench-remind.timer quench.service; do"))
        #expect(postinst.contains("for unit in quench-hub.service quench-mqtt.service quench-web.service; do"), "installed, not enabled: \(postinst)")
        #expect(!postinst.contains("systemctl enable"), "deb-systemd-helper enables, once")
        let prerm = try String(contentsOfFile: scripts.path + "/prerm", encoding: .utf8)
        #expect(prerm.contains("deb-systemd-invoke stop quench-backup.timer quench-remind.timer quench-backup.service quench-carer.service quench-hub.service quench-mqtt.service"), "stopped on remove: \(prerm)")
        // A conffile: dpkg keeps a person's edits on upgrade and removes it on purge only.
        #expect(try String(contentsOfFile: scripts.path + "/conffiles", encoding: .utf8) == "/etc/quench/quench.toml\n")
        #expect(!contents.contains("./etc/systemd") && !contents.contains("./etc/udev") && !contents.contains(" ./lib/"),
                "units and rules under /usr/lib")
        let postrm = try String(contentsOfFile: scripts.path + "/postrm", encoding: .utf8)
        #expect(postrm.contains("\"$1\" = purge") && postrm.contains("rm -rf /var/lib/quench"))
    }

    /// lintian: no errors, but the Swift runtime's RUNPATH of a debug build (a --static-swift-stdlib release has none:
    /// DebianStaticPackageTests checks one for no errors at all, when there is one).
    @Test(.enabled(if: lintian != nil, "SKIPPED: lintian is not installed (apt-get install -y lintian; .ci/run installs it)"))
    func lintianFindsNoErrors() throws {
        let binDir = try #require(Self.binDir, "quench, quenchd and quench-web are built (swift build)")
        let out = try TemporaryFolder()
        let built = try Self.run("build-deb.sh", ["--no-build", "--bin-dir", binDir, "--out", out.path, "--fast", "--dynamic-for-tests"])
        #expect(built.status == 0, "\(built.output)")
        let errors = built.output.split(separator: "\n").filter { $0.hasPrefix("E: ") && !$0.contains("custom-library-search-path") }
        #expect(errors.isEmpty, "lintian errors: \(errors)")
        // lintian ran (the debug build's RUNPATH is what it finds), and with a manual page for each
        // binary (man/) its no-manual-page warnings are gone.
        #expect(built.output.contains("custom-library-search-path"), "lintian ran: \(built.output)")
        #expect(!built.output.contains("no-manual-page"), "\(built.output)")
    }
}

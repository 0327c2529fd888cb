import Foundation
import QuenchTestSupport
import Testing

/// Every door refuses a file another user could have written (FileTrust), names
/// it with its owner, mode and fix, and the services stop with 78 (EX_CONFIG),
/// which their units do not restart on. The files are made `nobody`'s or
/// world-writable in a temporary folder, which needs root.
@Suite(.serialized, .enabled(if: geteuid() == 0 && quenchBinary != nil,
                             "SKIPPED: giving files to another user needs root and the built binaries: sudo swift test --filter UntrustedFileTests"))
struct UntrustedFileTests {
    static let nobody: uid_t = 65534
    static let quenchd = builtExecutable("quenchd")
    static let quenchWeb = builtExecutable("quench-web")

    /// A folder with a config file naming a database there; the environment that uses them.
    struct Setup {
        let folder: TemporaryFolder
        var config: String { folder.file("quench.toml") }
        var database: String { folder.file("q.sqlite") }
        var environment: [String: String] { ["QUENCH_CONFIG": config, "HOME": folder.path, "QUENCH_LOG": ""] }

        init(_ extra: String = "") throws {
            folder = try TemporaryFolder("quench-trust")
            try ("database = \"\(folder.path)/q.sqlite\"\n" + extra).write(toFile: folder.file("quench.toml"), atomically: true, encoding: .utf8)
        }

        func give(_ path: String, mode: mode_t, to owner: uid_t = UntrustedFileTests.nobody) throws {
            try #require(chown(path, owner, owner) == 0 && chmod(path, mode) == 0, "cannot chown/chmod \(path): errno \(errno)")
        }
    }

    @Test func aConfigFileOthersCanWriteStopsAllThreePrograms() throws {
        let setup = try Setup("[reminders]\ncommand = \"/bin/true\"\n")
        try setup.give(setup.config, mode: 0o666, to: 0)
        let expected = "\(setup.config): refused: it is owned by root (uid 0), mode 0666, so a user other than its owner could have written it "
            + "(fix: chmod go-w '\(setup.config)')"
        let today = try runQuench(["today"], environment: setup.environment)
        #expect(today.status != 0 && today.stderr == "quench: error: \(expected)\n", "\(today.stderr)")
        for (name, executable, arguments) in [("quench", quenchBinary, ["serve"]), ("quench", quenchBinary, ["remind", "--notify"]),
                                              ("quenchd", Self.quenchd, ["--config", setup.config, "--seconds", "0.1"]),
                                              ("quench-web", Self.quenchWeb, [])] {
            let r = try runQuench(arguments, environment: setup.environment, executable: try #require(executable))
            #expect(r.status == 78 && r.stderr.contains(expected), "\(name) \(arguments): \(r.status) \(r.stderr)")
        }
        // Another user's file, even one only they can write.
        try setup.give(setup.config, mode: 0o644)
        let theirs = try runQuench(["config", "show"], environment: setup.environment)
        #expect(theirs.status != 0 && theirs.stderr.contains("it is owned by nobody (uid 65534), mode 0644")
                && theirs.stderr.contains("(fix: chown root '\(setup.config)')"), "\(theirs.stderr)")
        #expect(!FileManager.default.fileExists(atPath: setup.database), "nothing was done")
    }

    @Test func aConfigFileInAFolderOthersCanWriteIsRefused() throws {
        let setup = try Setup()
        let open = setup.folder.file("open")
        try FileManager.default.createDirectory(atPath: open, withIntermediateDirectories: false)
        try setup.give(open, mode: 0o777, to: 0)
        try "units = \"oz\"\n".write(toFile: open + "/quench.toml", atomically: true, encoding: .utf8)
        let r = try runQuench(["config", "show"], environment: ["QUENCH_CONFIG": open + "/quench.toml", "HOME": setup.folder.path])
        #expect(r.status != 0 && r.stderr.contains("its folder \(open) is owned by root (uid 0), mode 0777") && r.stderr.contains("chmod go-w '\(open)'"),
                "\(r.stderr)")
    }

    /// The command `quench remind --notify` runs (as root from the timer): not run, exit 78.
    @Test func aReminderCommandAnotherUserOwnsIsNotRun() throws {
        let setup = try Setup()
        let ran = setup.folder.file("ran")
        let command = setup.folder.file("notify")
        try "#!/bin/sh\ntouch \(ran)\n".write(toFile: command, atomically: true, encoding: .utf8)
        try setup.give(command, mode: 0o755)
        try ("database = \"\(setup.database)\"\n[reminders]\ncommand = \"\(command)\"\n").write(toFile: setup.config, atomically: true, encoding: .utf8)
        #expect(try runQuench(["remind", "set", "--mode", "hourly", "--window", "00:00-24:00", "--every", "60min"], environment: setup.environment).status == 0)
        let r = try runQuench(["remind", "--notify"], environment: setup.environment)
        #expect(r.status == 78 && r.stderr.contains("\(command): refused: it is owned by nobody (uid 65534), mode 0755")
                && r.stderr.contains("chown root '\(command)'"), "\(r.status) \(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: ran), "the command ran")
        // Given back to root, it runs.
        try setup.give(command, mode: 0o755, to: 0)
        let ok = try runQuench(["remind", "--notify"], environment: setup.environment)
        #expect(ok.status == 0 && FileManager.default.fileExists(atPath: ran), "\(ok.status) \(ok.stderr)")
    }

    /// A token planted by another user (so they know it) is not served nor shown.
    @Test func aPlantedTokenFileIsRefused() throws {
        let setup = try Setup()
        let token = setup.folder.file("web-token")
        let planted = String(repeating: "ab", count: 32)
        try (planted + "\n").write(toFile: token, atomically: true, encoding: .utf8)
        try setup.give(token, mode: 0o600)
        let shown = try runQuench(["serve", "token"], environment: setup.environment)
        #expect(shown.status != 0 && !shown.stdout.contains(planted) && shown.stderr.contains("the access token \(token): refused: it is owned by nobody"),
                "\(shown.stdout)\(shown.stderr)")
        // Not loopback, so a token is needed; an address not on this machine, so a server that wrongly
        // started would fail to bind rather than listen.
        for (arguments, executable) in [(["serve", "--listen", "192.0.2.1:8080"], quenchBinary), (["--listen", "192.0.2.1:8080"], Self.quenchWeb)] {
            let r = try runQuench(arguments, environment: setup.environment, executable: try #require(executable))
            #expect(r.status == 78 && r.stderr.contains("refused: it is owned by nobody") && r.stderr.contains("chown root '\(token)'"),
                    "\(arguments): \(r.status) \(r.stderr)")
        }
    }

    /// Another user's database that all can write: neither read nor written, and quenchd stops with 78.
    @Test func aDatabaseOthersCanWriteIsNotWrittenInto() throws {
        let setup = try Setup()
        #expect(try runQuench(["add", "250ml"], environment: setup.environment).status == 0)
        try setup.give(setup.database, mode: 0o666)
        let before = try Data(contentsOf: URL(fileURLWithPath: setup.database))
        let add = try runQuench(["add", "100ml"], environment: setup.environment)
        #expect(add.status != 0 && add.stderr.contains("the database \(setup.database): refused: it is owned by nobody (uid 65534), mode 0666")
                && add.stderr.contains("(fix: chown root '\(setup.database)' && chmod go-w '\(setup.database)')"), "\(add.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: setup.database)) == before, "written into")
        let d = try runQuench(["--config", setup.config, "--seconds", "0.1"], environment: setup.environment, executable: try #require(Self.quenchd))
        #expect(d.status == 78 && d.stderr.contains("refused: it is owned by nobody"), "\(d.status) \(d.stderr)")
    }

    /// SQLite would apply another user's `-wal` beside a trusted database: refused, nothing read or written.
    @Test func anotherUsersWALBesideTheDatabaseIsRefused() throws {
        let setup = try Setup()
        #expect(try runQuench(["add", "250ml"], environment: setup.environment).status == 0)
        let wal = setup.database + "-wal"
        if !FileManager.default.fileExists(atPath: wal) { try Data("not a journal".utf8).write(to: URL(fileURLWithPath: wal)) }
        try setup.give(wal, mode: 0o666)
        let before = try [setup.database, wal].map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
        for arguments in [["add", "100ml"], ["log"]] {
            let r = try runQuench(arguments, environment: setup.environment)
            #expect(r.status != 0 && r.stderr.contains("the database's side file \(wal): refused: it is owned by nobody (uid 65534), mode 0666")
                    && r.stderr.contains("chown root '\(wal)' && chmod go-w '\(wal)'"), "\(arguments): \(r.status) \(r.stderr)")
        }
        #expect(try [setup.database, wal].map { try Data(contentsOf: URL(fileURLWithPath: $0)) } == before, "read or written")
        // Made ours again: used.
        #expect(chown(wal, 0, 0) == 0 && chmod(wal, 0o600) == 0)
        #expect(try runQuench(["log"], environment: setup.environment).status == 0)
    }

    @Test func anMQTTPasswordFileAnotherUserOwnsStopsThePublisher() throws {
        let setup = try Setup()
        let password = setup.folder.file("mqtt-password")
        try "secret\n".write(toFile: password, atomically: true, encoding: .utf8)
        try setup.give(password, mode: 0o600)
        try ("database = \"\(setup.database)\"\n[mqtt]\nbroker = \"mqtt://quench@127.0.0.1:1\"\npassword_file = \"\(password)\"\n")
            .write(toFile: setup.config, atomically: true, encoding: .utf8)
        let r = try runQuench(["mqtt", "run", "--seconds", "1"], environment: setup.environment)
        #expect(r.status == 78 && r.stderr.contains("\(password): refused: it is owned by nobody") && r.stderr.contains("chown root '\(password)'"),
                "\(r.status) \(r.stderr)")
    }

    /// `quench doctor` names each refused file and the command that fixes it.
    @Test func doctorNamesEachRefusedFileAndItsFix() throws {
        let setup = try Setup()
        #expect(try runQuench(["add", "250ml"], environment: setup.environment).status == 0)
        let (token, password, command) = (setup.folder.file("web-token"), setup.folder.file("pw"), setup.folder.file("notify"))
        for path in [token, password, command] { try "x\n".write(toFile: path, atomically: true, encoding: .utf8) }
        try ("database = \"\(setup.database)\"\n[reminders]\ncommand = \"\(command)\"\n[mqtt]\npassword_file = \"\(password)\"\n")
            .write(toFile: setup.config, atomically: true, encoding: .utf8)
        try setup.give(setup.database, mode: 0o666)
        try setup.give(token, mode: 0o600)
        try setup.give(password, mode: 0o644, to: 0)
        try setup.give(command, mode: 0o777, to: 0)
        let r = try runQuench(["doctor"], environment: setup.environment)
        #expect(r.status == 1, "\(r.stdout)\(r.stderr)")
        for (name, path, fix) in [("database file", setup.database, "chown root '\(setup.database)' && chmod go-w '\(setup.database)'"),
                                  ("web token file", token, "chown root '\(token)'"), ("reminders command", command, "chmod go-w '\(command)'")] {
            #expect(r.stdout.contains("FAIL  \(name): \(path): refused:") && r.stdout.contains("      fix: \(fix)\n"), "\(name): \(r.stdout)")
        }
        #expect(r.stdout.contains("ok    mqtt password file") || r.stdout.contains("mqtt password file: \(password): only root"), "\(r.stdout)")
        // A refused configuration file: doctor names it, and its fix, before anything else.
        try setup.give(setup.config, mode: 0o646, to: 0)
        let config = try runQuench(["doctor"], environment: setup.environment)
        #expect(config.status == 1 && config.stdout.contains("FAIL  config file: \(setup.config): refused:")
                && config.stdout.contains("      fix: chmod go-w '\(setup.config)'"), "\(config.stdout)\(config.stderr)")
        // One with a typo: said as a FAIL at its line, and the checklist goes on (it stopped at the error, exit 1, nothing else).
        try "databse = \"\(setup.database)\"\n".write(toFile: setup.config, atomically: true, encoding: .utf8)
        try setup.give(setup.config, mode: 0o644, to: 0)
        let typo = try runQuench(["doctor"], environment: setup.environment)
        #expect(typo.status == 1 && typo.stdout.contains("FAIL  config file: \(setup.config):1: databse: unknown key (did you mean database?)"),
                "\(typo.stdout)\(typo.stderr)")
        #expect(typo.stdout.contains("clock") && typo.stdout.contains("database"), "the rest still checked: \(typo.stdout)")
    }
}

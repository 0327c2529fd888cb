import Foundation
import QuenchCore
import QuenchTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What a new user runs into first, as processes: the demo kept apart from
/// real intake, files that are not databases, folders that do not exist, one
/// error style, `--version`, `--db` before the command, amounts without a unit.
@Suite("first run: the findings of trying Quench as a new user")
struct FirstRunTests {
    static func folder() throws -> String {
        try TemporaryFolder.create("quench-first")
    }

    @Test("the demo never writes into the person's history, and two demos do not add up")
    func demoHasItsOwnDatabase() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let env = ["XDG_DATA_HOME": dir, "HOME": dir]
        let real = dir + "/quench/quench.sqlite"
        let demo = dir + "/quench/demo.sqlite"
        _ = try runQuench(["add", "300ml"], environment: env)
        var counts: [String] = []
        for _ in 0..<2 {
            let run = try runQuench(["demo", "--hours", "2"], environment: env)
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stdout.contains("stored in \(demo) (the demo's own database; your history is untouched)"), "\(run.stdout)")
            // The hint names the simulated day (which need not be today) and the demo's database.
            #expect(run.stdout.range(of: #"quench today --date \d{4}-\d{2}-\d{2} --db "# + demo, options: .regularExpression) != nil, "\(run.stdout)")
            let log = try runQuench(["log", "--csv", "--db", demo], environment: env)
            counts.append(String(log.stdout.split(separator: "\n").count))
        }
        #expect(counts[0] == counts[1], "the second demo replaced the first: \(counts)")
        #expect(Int(counts[0])! > 2)
        // The real history holds only the person's own drink.
        let today = try runQuench(["log", "--csv"], environment: env)
        #expect(today.stdout.split(separator: "\n").count == 2, "\(today.stdout)")
        #expect(FileManager.default.fileExists(atPath: real))
    }

    @Test("a file that is not a database is named as such and left untouched")
    func notADatabase() throws {
        let proc = try runQuench(["today", "--db", "/proc/version"])
        #expect(proc.status == 1)
        #expect(proc.stderr == "quench: error: /proc/version is not a Quench database (not an SQLite database); nothing was changed\n")

        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Someone's empty file, reached through a symlink: not turned into a database.
        let theirs = dir + "/notes.txt"
        #expect(FileManager.default.createFile(atPath: theirs, contents: nil, attributes: [.posixPermissions: 0o644]))
        try FileManager.default.createSymbolicLink(atPath: dir + "/q.sqlite", withDestinationPath: theirs)
        let add = try runQuench(["add", "250ml", "--db", dir + "/q.sqlite"])
        #expect(add.status == 1)
        #expect(add.stderr.contains("is an empty file, not a Quench database"), "\(add.stderr)")
        let attributes = try FileManager.default.attributesOfItem(atPath: theirs)
        #expect((attributes[.size] as? Int) == 0)
        #expect((attributes[.posixPermissions] as? Int) == 0o644)
    }

    @Test("a database Quench creates is owner-only; a folder the person named must exist")
    func foldersAndModes() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let missing = try runQuench(["add", "250ml", "--db", dir + "/nowhere/x.sqlite"])
        #expect(missing.status == 1)
        #expect(missing.stderr == "quench: error: cannot create the database \(dir)/nowhere/x.sqlite: the folder \(dir)/nowhere does not exist\n")
        #expect(!FileManager.default.fileExists(atPath: dir + "/nowhere"))

        let made = try runQuench(["add", "250ml", "--db", dir + "/x.sqlite"])
        #expect(made.status == 0, "\(made.stderr)")
        let mode = try FileManager.default.attributesOfItem(atPath: dir + "/x.sqlite")[.posixPermissions] as? Int
        #expect(mode == 0o600)

        // `--db :memory:` is a file of that name (SQLite's in-memory database said "Added" and kept nothing).
        let memory = try runProgram("/bin/sh", ["-c", "cd \"$0\" && \"$1\" add 250ml --db :memory: >/dev/null && exec \"$1\" today --db :memory:",
                                                dir, quenchBinary!])
        #expect(memory.status == 0 && memory.stdout.contains("Intake    250 mL of"), "kept for the next command: \(memory.stdout) \(memory.stderr)")
        #expect(FileManager.default.fileExists(atPath: dir + "/:memory:"))

        // Quench's own default folder is created.
        let home = try runQuench(["add", "250ml"], environment: ["XDG_DATA_HOME": dir + "/data"])
        #expect(home.status == 0, "\(home.stderr)")
        #expect(FileManager.default.fileExists(atPath: dir + "/data/quench/quench.sqlite"))
    }

    @Test("one error style, --version, --db before the command, an amount without a unit")
    func commandLine() throws {
        let version = try runQuench(["--version"])
        #expect(version.status == 0 && version.stdout == QuenchVersion.string + "\n")

        let unknown = try runQuench(["today", "--frobnicate"])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.hasPrefix("quench: error: Unknown option '--frobnicate'"), "\(unknown.stderr)")
        #expect(!unknown.stderr.contains("Error:"))

        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let db = dir + "/q.sqlite"
        let bare = try runQuench(["add", "250", "--db", db])
        #expect(bare.status == 1)
        #expect(bare.stderr == "quench: error: invalid amount '250': give a unit: 250ml\n")
        #expect(!FileManager.default.fileExists(atPath: db), "a refused amount creates no database")
        // Said as people say it, the unit apart (it was "Unexpected argument 'ml'").
        let apart = try runQuench(["add", "150", "ml", "--db", db + ".apart"])
        #expect(apart.status == 0 && apart.stdout.hasPrefix("Added #1: sip 150 mL at "), "\(apart.stdout)\(apart.stderr)")
        // Two numbers are not one amount: "1 50ml" is no 150 mL.
        let two = try runQuench(["add", "1", "50ml", "--db", db + ".apart"])
        #expect(two.status == 1 && two.stderr.contains("unknown unit '50ml'"), "\(two.stderr)")

        _ = try runQuench(["add", "250ml", "--db", db])
        let before = try runQuench(["--db", db, "log", "--csv"])
        let after = try runQuench(["log", "--csv", "--db", db])
        #expect(before.status == 0 && before.stdout.contains(",250.0,"), "\(before.stderr)")
        #expect(before.stdout == after.stdout)
    }

    @Test("scan on a kernel without Bluetooth says what is missing")
    func scanWithoutBluetooth() throws {
        let probe = socket(31 /* AF_BLUETOOTH */, Int32(SOCK_RAW.rawValue), 1)
        if probe >= 0 {
            close(probe)
            try Test.cancel("this kernel has Bluetooth; the message for one without it cannot be seen here")
        }
        let scan = try runQuench(["scan", "--timeout", "1"])
        #expect(scan.status == 1)
        #expect(scan.stderr.hasPrefix("quench: error: this kernel has no Bluetooth support"), "\(scan.stderr)")
        #expect(scan.stderr.contains("modprobe bluetooth"))
    }
}

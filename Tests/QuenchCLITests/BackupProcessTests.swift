import Foundation
import QuenchCore
import QuenchStore
import QuenchTestSupport
import Testing

/// `quench backup` and `quench restore FILE` as processes, while `quench
/// replay --store` processes write into the same database.
@Suite(.enabled(if: quenchBinary != nil, "SKIPPED: quench is not built (swift build)"))
struct BackupProcessTests {
    static let start = Timestamp(iso8601: "2026-11-20T06:00:00Z")!

    /// Event times of trace `i` (simulated from `start + 2i h`, half an hour long) fall in its own two hours.
    static func trace(of time: Double) -> Int { Int((time - start.secondsSince1970) / 7200) }

    /// (time, identity) of every event in a database, read without changing the file.
    static func events(_ path: String) throws -> [Double] {
        let r = try runQuench(["export", "--format", "csv", "--db", path])
        try #require(r.status == 0, "\(r.stderr)")
        return r.stdout.split(separator: "\n").dropFirst().compactMap { line in
            Double(line.split(separator: ",", omittingEmptySubsequences: false).dropFirst(2).first ?? "")
        }
    }

    /// The copy of a file, so that opening it (which sets WAL mode) leaves the original as it was.
    static func copied(_ path: String, to folder: TemporaryFolder, as name: String) throws -> String {
        let copy = folder.file(name)
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        return copy
    }

    @Test func aBackupTakenWhileReplaysWriteHoldsWholeReplaysAndRestoresTheSame() throws {
        let folder = try TemporaryFolder("backup-process")
        let db = folder.file("quench.sqlite")
        let backups = folder.file("backups")
        try FileManager.default.createDirectory(atPath: backups, withIntermediateDirectories: false)
        let traces = 8
        for i in 0..<traces {
            let started = Self.start.adding(Double(i) * 7200).iso8601
            let r = try runQuench(["simulate", "--hours", "0.5", "--seed", "\(i + 1)", "--started", started, "--out", folder.file("t\(i).trace")])
            try #require(r.status == 0, "\(r.stderr)")
        }
        // Each replay stores its trace in one transaction, one after the other.
        let script = "for i in $(seq 0 \(traces - 1)); do \"$QUENCH\" replay \"$DIR/t$i.trace\" --store --db \"$DIR/quench.sqlite\" > /dev/null || exit 1; done"
        let writer = try startQuench(["-c", script], environment: ["QUENCH": quenchBinary!, "DIR": folder.path], executable: "/bin/sh")
        var taken: [String] = []
        var lastPath = ""
        while writer.isRunning || taken.isEmpty {
            if FileManager.default.fileExists(atPath: db) {
                let r = try runQuench(["backup", "--dir", backups, "--keep-daily", "1000", "--db", db, "--json"])
                try #require(r.status == 0, "\(r.stderr)")
                let report = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
                let path = try #require(report?["backup"] as? String)
                // Kept aside at once: the next backup of the same day replaces it (the newest of a day is kept).
                taken.append(try Self.copied(path, to: folder, as: "taken-\(taken.count).sqlite"))
                // The one before, of the same day (unless the test crossed midnight UTC), is the one removed.
                let removed = report?["removed"] as? [String] ?? ["?"]
                #expect(removed == [] || removed == [lastPath], "\(removed)")
                lastPath = path
            }
            usleep(100_000)
        }
        writer.waitUntilExit()
        try #require(writer.terminationStatus == 0)
        #expect(taken.count >= 2, "backups taken while the replays wrote")
        let whole = try Self.events(db)
        let perTrace = Dictionary(grouping: whole, by: Self.trace(of:)).mapValues(\.count)
        #expect(perTrace.count == traces)

        var grew: [Int] = []
        for (n, backup) in taken.enumerated() {
            let copy = try Self.copied(backup, to: folder, as: "check-\(n).sqlite")  // opening sets WAL mode: not on the one restored below
            let inBackup = Dictionary(grouping: try Self.events(copy), by: Self.trace(of:)).mapValues(\.count)
            // One instant of the history: whole replays, the first few, never part of one.
            #expect(inBackup.keys.sorted() == Array(0..<inBackup.count), "backup \(n): the first replays: \(inBackup.keys.sorted())")
            for (trace, count) in inBackup { #expect(count == perTrace[trace], "backup \(n): all of replay \(trace) or none of it") }
            grew.append(inBackup.count)
        }
        #expect(grew == grew.sorted(), "each backup holds at least what the one before held")

        // Restore the one taken midway, and compare: the database is now what the backup holds.
        let chosen = taken[taken.count / 2]
        let expected = try runQuench(["export", "--format", "csv", "--db", try Self.copied(chosen, to: folder, as: "expected.sqlite")]).stdout
        let r = try runQuench(["restore", chosen, "--db", db])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("Restored \(chosen) (schema v\(IntakeStore.schemaVersion)"), "\(r.stdout)")
        #expect(try runQuench(["export", "--format", "csv", "--db", db]).stdout == expected)
        // The history it replaced, every replay of it, is kept beside the database.
        let kept = try #require(try FileManager.default.contentsOfDirectory(atPath: folder.path).first { $0.hasPrefix("quench-replaced-") })
        #expect(try Self.events(Self.copied(folder.file(kept), to: folder, as: "kept.sqlite")).count == whole.count)
    }

    @Test func restoreRefusesAndReplacesNothing() throws {
        let folder = try TemporaryFolder("restore-refused")
        let db = folder.file("quench.sqlite")
        #expect(try runQuench(["add", "250ml", "--db", db]).status == 0)
        let before = try runQuench(["export", "--format", "csv", "--db", db]).stdout
        let text = folder.file("notes.sqlite")
        try Data("not a database at all".utf8).write(to: URL(fileURLWithPath: text))
        let r = try runQuench(["restore", text, "--db", db])
        #expect(r.status == 1)
        #expect(r.stderr == "quench: error: \(text) is not an SQLite database (an export goes back in with `quench import`); nothing was replaced\n")
        #expect(r.stdout.isEmpty)
        #expect(try runQuench(["export", "--format", "csv", "--db", db]).stdout == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).allSatisfy { !$0.contains("replaced") && !$0.hasPrefix(".") })
        // On a new machine, where nothing was recorded yet, the backup becomes the history in Quench's
        // own folder (made, owner-only, as the first `add` there would make it); any other --db's folder is not made.
        let backup = try runQuench(["backup", "--dir", folder.path, "--db", db])
        #expect(backup.status == 0, "\(backup.stderr)")
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: folder.path).first { $0.hasPrefix("quench-") && $0.hasSuffix(".sqlite") })
        let home = folder.file("new-pi")
        let fresh = try runQuench(["restore", folder.file(file)], environment: ["HOME": home, "XDG_DATA_HOME": "", "QUENCH_DB": ""])
        #expect(fresh.status == 0 && fresh.stdout.contains("into \(home)/.local/share/quench/quench.sqlite"), "\(fresh.stdout)\(fresh.stderr)")
        let made = try FileManager.default.attributesOfItem(atPath: home + "/.local/share/quench")
        #expect((made[.posixPermissions] as? Int) == 0o700)
        // The demo's simulated day is no one's history.
        let demoHome = ["HOME": home, "XDG_DATA_HOME": "", "QUENCH_DB": "", "QUENCH_NOW": "2026-11-26T12:00:00Z"]
        #expect(try runQuench(["demo"], environment: demoHome).status == 0)
        let demo = try runQuench(["restore", home + "/.local/share/quench/demo.sqlite"], environment: demoHome)
        #expect(demo.status == 1 && demo.stderr.contains("is the demo's database (a simulated day), not a backup; nothing was replaced"), "\(demo.stderr)")
        let elsewhere = try runQuench(["restore", folder.file(file), "--db", folder.file("no-such-folder/q.sqlite")])
        #expect(elsewhere.status == 1 && elsewhere.stderr.contains("the folder \(folder.file("no-such-folder")) does not exist"), "\(elsewhere.stderr)")
        // A number is still an event's id.
        let undelete = try runQuench(["restore", "1", "--db", db])
        #expect(undelete.stderr.contains("event 1 is not deleted"), "\(undelete.stderr)")
    }

    @Test func backupFolderAndPolicyComeFromTheConfigurationAndAreChecked() throws {
        let folder = try TemporaryFolder("backup-config")
        let db = folder.file("quench.sqlite")
        #expect(try runQuench(["add", "250ml", "--db", db]).status == 0)
        // The default: `backups` beside the database, made when missing.
        let first = try runQuench(["backup", "--db", db])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.hasPrefix("Backed up \(db) (schema v\(IntakeStore.schemaVersion), 1 event, "), "\(first.stdout)")
        #expect(first.stdout.contains(" to \(folder.path)/backups/quench-"))
        // A folder named in the configuration must exist.
        let config = folder.file("quench.toml")
        try "[backup]\ndir = \"\(folder.path)/usb\"\nkeep_daily = 2\n".write(toFile: config, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: config)
        let missing = try runQuench(["backup", "--db", db], environment: ["QUENCH_CONFIG": config])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("the backup folder \(folder.path)/usb does not exist (is the disk mounted?)"), "\(missing.stderr)")
        try FileManager.default.createDirectory(atPath: folder.file("usb"), withIntermediateDirectories: false)
        let ok = try runQuench(["backup", "--db", db], environment: ["QUENCH_CONFIG": config])
        #expect(ok.status == 0 && ok.stdout.contains("(2 daily, 4 weekly)"), "\(ok.stdout)\(ok.stderr)")
        // Bad values name the key or the option.
        try "[backup]\nkeep_daily = 0\n".write(toFile: config, atomically: true, encoding: .utf8)
        let bad = try runQuench(["backup", "--db", db], environment: ["QUENCH_CONFIG": config])
        #expect(bad.status == 1 && bad.stderr.contains("\(config):2: backup.keep_daily: expected a whole number from 1 to 1000, got 0"), "\(bad.stderr)")
        let option = try runQuench(["backup", "--db", db, "--keep-weekly", "-1"])
        #expect(option.status != 0 && option.stderr.contains("--keep-weekly"), "\(option.stderr)")
    }
    /// A command that upgrades an older Quench's database says so, with where the copy of the old
    /// file is, as the services log it (it used to say nothing, and the copy was found later).
    @Test func aCommandThatUpgradesTheDatabaseSaysSoOnce() throws {
        let folder = try TemporaryFolder("cli-upgrade")
        let db = folder.file("quench.sqlite")
        try FileManager.default.copyItem(atPath: TestPackage.fixtures.appendingPathComponent("schemas/v8.sqlite").path, toPath: db)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: db)
        let first = try runQuench(["log", "--db", db, "--person", "me"])
        #expect(first.status == 0, "\(first.stderr)")
        let copies = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix("quench-schema-v8-") && $0.hasSuffix(".sqlite") }
        try #require(copies.count == 1, "\(copies)")
        #expect(first.stderr == "quench: upgraded the database \(db) from schema v8 to v\(IntakeStore.schemaVersion); "
                + "the copy as it was is \(folder.file(copies[0]))\n", "\(first.stderr)")
        #expect(first.stdout.contains("ml") || first.stdout.contains("oz"), "the command's own output, on stdout: \(first.stdout)")
        let again = try runQuench(["log", "--db", db, "--person", "me"])
        #expect(again.status == 0 && again.stderr.isEmpty, "\(again.stderr)")
    }

    /// quenchd too, in its log (the journal): it upgraded without a word of where the copy went (the service trial).
    @Test func theGatewayLogsTheUpgrade() throws {
        let folder = try TemporaryFolder("quenchd-upgrade")
        let db = folder.file("quench.sqlite")
        try FileManager.default.copyItem(atPath: TestPackage.fixtures.appendingPathComponent("schemas/v8.sqlite").path, toPath: db)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: db)
        let quenchd = try #require(builtExecutable("quenchd"), "quenchd is built with quench (swift build)")
        let run = try runProgram(quenchd, ["--db", db, "--seconds", "1"])
        #expect(run.status == 0, "\(run.stderr)")
        let copies = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix("quench-schema-v8-") && $0.hasSuffix(".sqlite") }
        try #require(copies.count == 1, "\(copies)")
        #expect(run.stderr.contains("upgraded the database \(db) from schema v8 to v\(IntakeStore.schemaVersion); "
                                    + "the copy as it was is \(folder.file(copies[0]))"), "\(run.stderr)")
    }
}

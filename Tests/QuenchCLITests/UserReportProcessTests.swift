import Foundation
import QuenchCore
import QuenchGateway
import QuenchStore
import QuenchTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What a new user found wrong (issue 24), as processes.
@Suite("what a new user found wrong, as processes")
struct UserReportProcessTests {
    static func folder() throws -> String { try TemporaryFolder.create("quench-report") }

    func trace(_ dir: String, started: Timestamp?) throws -> String {
        let path = dir + "/t\(started == nil ? "-unstarted" : "").csv"
        _ = try Simulate.write(configuration: Simulate.configuration(hours: 0.3, preset: nil, started: started), seed: 7,
                               tracePath: path, truthPath: nil)
        return path
    }

    func count(_ db: String) throws -> Int {
        try runQuench(["log", "--csv", "--db", db]).stdout.split(separator: "\n").count - 1
    }

    @Test("a trace stored once with --device and once without is stored once, in either order")
    func aTraceWithAndWithoutItsDeviceIsOneTrace() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let t = try trace(dir, started: Timestamp(iso8601: "2026-03-02T07:30:00Z"))
        for (i, order) in [[nil, "AA:BB:CC:DD:EE:01"], ["AA:BB:CC:DD:EE:01", nil]].enumerated() {
            let db = dir + "/q\(i).sqlite"
            var stored: [String] = []
            for device in order {
                let run = try runQuench(["replay", t, "--store", "--db", db] + (device.map { ["--device", $0] } ?? []))
                #expect(run.status == 0, "\(run.stderr)")
                stored.append(run.stdout.split(separator: "\n").last.map(String.init) ?? "")
            }
            #expect(stored == ["stored: 2 new, 0 already there", "stored: 0 new, 2 already there"], "\(order)")
            #expect(try count(db) == 2)
        }
    }

    /// An address in another spelling is the same device: each spelling stored every drink again (a day read
    /// three times its intake), and `log --device` in lower case found none of them.
    @Test("a trace stored under one address in three spellings is stored once, and log --device finds it in any")
    func anAddressInAnotherSpellingIsTheSameDevice() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let t = try trace(dir, started: Timestamp(iso8601: "2026-03-02T07:30:00Z"))
        let db = dir + "/q.sqlite"
        var stored: [String] = []
        for device in ["AA:BB:CC:DD:EE:09", "aa:bb:cc:dd:ee:09", "AA-BB-CC-DD-EE-09"] {
            let run = try runQuench(["replay", t, "--store", "--db", db, "--device", device])
            #expect(run.status == 0, "\(run.stderr)")
            stored.append(run.stdout.split(separator: "\n").last.map(String.init) ?? "")
        }
        #expect(stored == ["stored: 2 new, 0 already there", "stored: 0 new, 2 already there", "stored: 0 new, 2 already there"], "\(stored)")
        #expect(try count(db) == 2)
        let lower = try runQuench(["log", "--device", "aa-bb-cc-dd-ee-09", "--csv", "--db", db])
        #expect(lower.stdout.split(separator: "\n").count == 3 && lower.stdout.contains("AA:BB:CC:DD:EE:09"), "\(lower.stdout)\(lower.stderr)")

        // Stored before addresses were written one way, a spelling that holds events keeps them: not doubled either.
        let old = dir + "/old.sqlite"
        #expect(try runQuench(["replay", t, "--store", "--db", old, "--device", "kitchen"]).status == 0)
        let store = try IntakeStore(path: old)
        let legacy = try store.events().map { e in
            var copy = e
            (copy.id, copy.device) = (nil, "aa:bb:cc:dd:ee:09")
            copy.identity = e.identity.replacingOccurrences(of: "kitchen", with: "aa:bb:cc:dd:ee:09")
            return copy
        }
        #expect(try store.insert(legacy).inserted == 2)
        for spelling in ["aa:bb:cc:dd:ee:09", "AA-BB-CC-DD-EE-09", "AA:BB:CC:DD:EE:09"] {
            let again = try runQuench(["replay", t, "--store", "--db", old, "--device", spelling])
            #expect(again.stdout.hasSuffix("stored: 0 new, 2 already there\n"), "\(spelling): \(again.stdout)\(again.stderr)")
        }
        let legacyLog = try runQuench(["log", "--device", "AA:BB:CC:DD:EE:09", "--csv", "--db", old])
        #expect(legacyLog.stdout.split(separator: "\n").count == 3 && legacyLog.stdout.contains("aa:bb:cc:dd:ee:09"), "\(legacyLog.stdout)")
    }

    /// Cut off mid-line (a recording killed while it wrote, a file cut at a byte count), the last reading
    /// may be cut too: `19602.903,3` of `19602.903,301.5`. Read as written, and said.
    @Test("a trace that ends without its line end is replayed, and the line is named")
    func aTraceCutOffMidLineIsSaid() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let t = try trace(dir, started: nil)
        let whole = try runQuench(["replay", t])
        #expect(whole.status == 0 && !whole.stderr.contains("line end"), "\(whole.stderr)")
        var text = try String(contentsOfFile: t, encoding: .utf8)
        let lines = text.split(separator: "\n").count
        text.removeLast(4)
        try text.write(toFile: t, atomically: true, encoding: .utf8)
        let cut = try runQuench(["replay", t])
        #expect(cut.status == 0 && cut.stderr.contains("t-unstarted.csv:\(lines): the file ends without a line end after this reading: "
                                                     + "if the recording was cut off there, the reading may be cut too"), "\(cut.stderr)")
    }

    @Test("replay --store in a household says whose the events became: the person named, the device's owner, else the first person")
    func aStoredReplaySaysWhose() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let t = try trace(dir, started: Timestamp(iso8601: "2026-03-02T07:30:00Z"))
        let db = dir + "/q.sqlite"
        let alone = try runQuench(["replay", t, "--store", "--db", db])
        #expect(alone.stdout.hasSuffix("stored: 2 new, 0 already there\n"), "one person: nothing to say: \(alone.stdout)")
        #expect(try runQuench(["person", "add", "Ann", "--db", db]).status == 0)
        let household = try runQuench(["replay", t, "--store", "--db", db, "--device", "AA:BB:CC:DD:EE:09"])
        #expect(household.stdout.hasSuffix("stored: 0 new, 2 already there, me's (the household's first person: the device is nobody's; "
                                           + "--person NAME stores a trace as someone's, `quench edit ID --to NAME` gives one drink to who drank it)\n"),
                "\(household.stdout)")
        // A trace of Ann's bottle stored as hers (a simulated bottle each: the way was an edit a drink).
        let ann = try trace(dir, started: Timestamp(iso8601: "2026-03-03T07:30:00Z"))
        let hers = try runQuench(["replay", ann, "--store", "--person", "ann", "--db", db])
        #expect(hers.status == 0 && hers.stdout.hasSuffix("stored: 2 new, 0 already there, Ann's\n"), "\(hers.stdout)\(hers.stderr)")
        let annLog = try runQuench(["log", "--person", "Ann", "--since", "2026-03-03", "--until", "2026-03-03", "--csv", "--db", db])
        #expect(annLog.stdout.split(separator: "\n").count == 3, "Ann's two events: \(annLog.stdout)")
        // Again as me's: nothing new, and not said to be mine (they stayed Ann's).
        let again = try runQuench(["replay", ann, "--store", "--person", "me", "--db", db])
        #expect(again.stdout.hasSuffix("stored: 0 new, 2 already there (those already there stay whose they were: `quench edit ID --to NAME` gives one to someone else)\n"),
                "\(again.stdout)")
        // Nobody by that name: refused before anything is stored (also when all of it is there already).
        let nobody = try runQuench(["replay", ann, "--store", "--person", "Bob", "--db", db])
        #expect(nobody.status == 1 && nobody.stderr.contains("nobody is called 'Bob' (people: me, Ann); nothing was stored"), "\(nobody.stderr)")
        let notStored = try runQuench(["replay", ann, "--person", "Ann"])
        #expect(notStored.status == 64 && notStored.stderr.contains("--person says whose the stored events are: give --store too"), "\(notStored.stderr)")
    }

    @Test("a trace without '# started:' fails before it is replayed, and leaves no database")
    func aTraceWithoutAStartFailsFirst() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let t = try trace(dir, started: nil)
        let run = try runQuench(["replay", t, "--store", "--db", dir + "/q.sqlite"])
        #expect(run.status == 1)
        #expect(run.stderr.contains("the trace has no '# started:' time; give --started"), "\(run.stderr)")
        // Nothing replayed: no event row, no summary.
        #expect(!run.stdout.contains("sip") && !run.stdout.contains("readings over"), "\(run.stdout)")
        // And no empty database left behind.
        #expect(!FileManager.default.fileExists(atPath: dir + "/q.sqlite"))
    }

    /// A developer's trial: these failed as the events were stored, after the whole table, and left an empty database.
    @Test("a device no history holds, or a person nobody is called, fails before the replay and leaves no database")
    func aBadDeviceOrPersonFailsFirst() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let t = try trace(dir, started: Timestamp(iso8601: "2026-03-02T07:30:00Z"))
        let text = try String(contentsOfFile: t, encoding: .utf8)
        let escaped = dir + "/escaped.csv"
        try text.replacingOccurrences(of: "# quench trace v1\n", with: "# quench trace v1\n# device: kit\u{1B}[31mchen\n")
            .write(toFile: escaped, atomically: true, encoding: .utf8)
        let db = dir + "/q.sqlite"
        for (arguments, message) in [
            ([escaped], "escaped.csv: '# device:' in its header: device holds the control character U+001B; nothing was stored"),
            ([t, "--device", String(repeating: "d", count: 65)], "t.csv: --device: device has 65 characters, at most 64; nothing was stored"),
            ([t, "--person", "Bob"], "nobody is called 'Bob' (people: me); nothing was stored"),
        ] {
            let run = try runQuench(["replay"] + arguments + ["--store", "--db", db])
            #expect(run.status == 1 && run.stderr.contains(message), "\(arguments): \(run.stderr)")
            #expect(!run.stdout.contains("readings over"), "not replayed: \(run.stdout)")
            #expect(!FileManager.default.fileExists(atPath: db), "\(arguments): no database")
        }
        // An empty device is none, as the store takes it (a review: it was refused as "device is empty").
        let none = try runQuench(["replay", t, "--store", "--device", "", "--db", db])
        #expect(none.status == 0 && none.stdout.hasSuffix("stored: 2 new, 0 already there\n"), "\(none.stdout)\(none.stderr)")
        try FileManager.default.removeItem(atPath: db)
        // The first person's name, in any case, is a new history's.
        let mine = try runQuench(["replay", t, "--store", "--person", "ME", "--db", db])
        #expect(mine.status == 0 && mine.stdout.hasSuffix("stored: 2 new, 0 already there\n"), "\(mine.stdout)\(mine.stderr)")
    }

    @Test("the demo's day is a fixed day from 08:00 local, whole in its database, and today shows its bottle")
    func theDemoDay() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let env = ["XDG_DATA_HOME": dir, "HOME": dir]
        let first = try runQuench(["demo"], environment: env)
        #expect(first.status == 0, "\(first.stderr)")
        let rows = first.stdout.split(separator: "\n").filter { $0.hasPrefix("  20") }
        // The README's sample: 101 sips from 08:09 to 23:52, 220 mL left, every run (seed 7).
        #expect(rows.first?.dropFirst(13).hasPrefix("08:09:50.103  sip        22.6") == true, "\(rows.first ?? "")")
        #expect(rows.last?.dropFirst(13).hasPrefix("23:52:") == true, "\(rows.last ?? "")")
        #expect(first.stdout.contains("intake  2726.3 mL in 101 sips"), "\(first.stdout)")
        #expect(first.stdout.contains("left in the bottle: 220 mL"))
        let second = try runQuench(["demo", "--json"], environment: env)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(second.stdout.utf8)) as? [String: Any])
        #expect((json["events"] as? [Any])?.count == rows.count)
        #expect((json["summary"] as? [String: Any])?["remaining_ml"] as? Double == 219.7)  // "220 mL" in the text
        #expect((json["stored"] as? [String: Any])?["inserted"] as? Int == 107)
        let demo = dir + "/quench/demo.sqlite"
        // The whole day is in the history: stored at once, all of it over.
        let log = try runQuench(["log", "--json", "--db", demo, "--limit", "1000"], environment: env)
        let lines = log.stdout.split(separator: "\n")
        #expect(lines.count == 107, "\(lines.count)")
        let today = try runQuench(["today", "--db", demo], environment: env)
        #expect(today.stdout.contains("Left      220 mL in demo-bottle"), "\(today.stdout)")
        #expect(!today.stdout.contains("no bottle reported"))
    }

    @Test("QUENCH_NOW sets the demo's day, and its hint `today --date DAY` shows that day's intake")
    func theDemoDayByQuenchNowAndItsTodayHint() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Noon on the 26th: the 16 h from 08:00 are over on the 25th, not yet today.
        let env = ["XDG_DATA_HOME": dir, "HOME": dir, "TZ": "Europe/London", "QUENCH_NOW": "2026-11-26T12:00:00Z"]
        let demo = try runQuench(["demo"], environment: env)
        #expect(demo.status == 0, "\(demo.stderr)")
        #expect(demo.stdout.hasPrefix("Simulated 16 h of a bottle on a kitchen scale (seed 7), Wednesday 25 November 2026 from 08:00 (Europe/London).\n"),
                "\(demo.stdout)")
        #expect(demo.stdout.contains("\n  2026-11-25 08:09:50.103  sip        22.6"), "\(demo.stdout)")
        #expect(demo.stdout.contains("intake  2726.3 mL in 101 sips"))
        // Part of an hour is said as the summary says it, not rounded to an hour.
        let half = try runQuench(["demo", "--hours", "0.5", "--no-store"], environment: env)
        #expect(half.stdout.hasPrefix("Simulated 30 min of a bottle") && half.stdout.contains(" readings over 30 min\n"), "\(half.stdout)")
        // The hint, run as printed (the path has no spaces).
        let hint = try #require(demo.stdout.split(separator: "\n").first { $0.hasPrefix("try: ") })
        let words = hint.dropFirst("try: quench ".count).split(separator: " ").map(String.init)
        #expect(words.prefix(3) == ["today", "--date", "2026-11-25"], "\(hint)")
        let today = try runQuench(words, environment: env)
        #expect(today.status == 0, "\(today.stderr)")
        #expect(today.stdout.hasPrefix("Wednesday 25 November 2026 (day starts 04:00, Europe/London)\n"), "\(today.stdout)")
        #expect(today.stdout.contains("Intake    2,726 mL of 2,000 mL"), "\(today.stdout)")
        #expect(today.stdout.contains("Sips      101, "), "\(today.stdout)")
        let json = try runQuench(words + ["--json"], environment: env)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        // The demo's "intake  2726.3 mL in 101 sips", to its rounding.
        #expect(abs((report["intake_ml"] as? Double ?? 0) - 2726.3) <= 0.0501, "\(report)")
        #expect(report["sips"] as? Int == 101)
        // A clock that is not one is refused, naming the variable.
        let bad = try runQuench(["demo", "--no-store"], environment: env.merging(["QUENCH_NOW": "tomorrow"]) { $1 })
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("QUENCH_NOW"), "\(bad.stderr)")
        #expect(!bad.stdout.contains("Simulated"))
        // Nor one no history can hold (year 0 reached the database's CHECK in SQLite's words).
        let yearZero = try runQuench(["goal", "set", "2l"], environment: env.merging(["QUENCH_NOW": "0000-01-01T00:00:00Z"]) { $1 })
        #expect(yearZero.status != 0 && yearZero.stderr.contains("$QUENCH_NOW: expected an ISO 8601 time with a zone, from 1970 to 9999"),
                "\(yearZero.stderr)")
    }

    @Test("--json where the output is data: demo, evaluate, serve token")
    func jsonWhereTheOutputIsData() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let t = dir + "/t.csv", truth = dir + "/t.truth"
        _ = try Simulate.write(configuration: Simulate.configuration(hours: 0.3, preset: nil, started: nil), seed: 7, tracePath: t, truthPath: truth)
        let evaluate = try runQuench(["evaluate", t, truth, "--json"])
        #expect(evaluate.status == 0, "\(evaluate.stderr)")
        let scores = try #require(try JSONSerialization.jsonObject(with: Data(evaluate.stdout.utf8)) as? [String: Any])
        #expect((scores["sip"] as? [String: Any])?["truth"] as? Int == 2)
        let token = try runQuench(["serve", "token", "--json", "--db", dir + "/q.sqlite"])
        #expect(token.status == 0, "\(token.stderr)")
        let links = try #require(try JSONSerialization.jsonObject(with: Data(token.stdout.utf8)) as? [String: Any])
        #expect(links["links"] as? [String] == ["http://127.0.0.1:8080/"])
        #expect(links["loopback"] as? Bool == true)
    }

    @Test("serve token on loopback gives the loopback link and says the token is only needed off loopback")
    func tokenLinkForTheListenAddress() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let loopback = try runQuench(["serve", "token", "--db", dir + "/q.sqlite"])
        #expect(loopback.stdout.hasPrefix("The server listens on 127.0.0.1:8080, this machine only: open http://127.0.0.1:8080/ (no token is needed on loopback)."),
                "\(loopback.stdout)")
        #expect(loopback.stdout.contains("The token is only needed off loopback"))
        let one = try runQuench(["serve", "token", "--db", dir + "/q.sqlite", "--listen", "192.0.2.7:8081"])
        #expect(one.stdout.contains("  http://192.0.2.7:8081/?token="), "\(one.stdout)")
        // Asked first on a new machine, before the database's folder exists: it is made, owner-only.
        let fresh = dir + "/new/quench"
        let first = try runQuench(["serve", "token", "--db", fresh + "/q.sqlite", "--listen", "192.0.2.7:8081"])
        #expect(first.status == 0 && first.stdout.contains("?token="), "\(first.stderr)")
        var info = stat()
        #expect(stat(fresh, &info) == 0 && info.st_mode & 0o777 == 0o700, "the folder \(fresh): mode \(String(info.st_mode & 0o777, radix: 8))")
        #expect(stat(fresh + "/web-token", &info) == 0 && info.st_mode & 0o777 == 0o600)
    }

    @Test("a port in use is said in words, with a non-zero status that is not the configuration's 78")
    func portInUse() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Hold a loopback port.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = listen(fd, 1)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        let port = Int(UInt16(bigEndian: address.sin_port))
        let run = try runQuench(["serve", "--db", dir + "/q.sqlite", "--listen", "127.0.0.1:\(port)"])
        #expect(run.status != 0 && run.status != 78)
        #expect(run.stderr.contains("127.0.0.1:\(port) is already in use (another quench serve?)"), "\(run.stderr)")
        #expect(!run.stderr.contains("errno"))
    }

    @Test("reminders run at once (a timer's and a person's) give each reminder once: each judged it due, and two or three were sent")
    func overlappingReminderRunsSendOnce() throws {
        for round in 0..<6 {
            let dir = try TemporaryFolder.create("quench-remind-race")
            let db = dir + "/q.sqlite"
            let early = ["QUENCH_NOW": "2026-11-26T08:00:00Z"], later = ["QUENCH_NOW": "2026-11-26T09:30:00Z"]
            #expect(try runQuench(["add", "100ml", "--db", db], environment: early).status == 0)
            #expect(try runQuench(["person", "add", "Gran", "--db", db], environment: early).status == 0)
            var environment = ProcessInfo.processInfo.environment.merging(later) { $1 }
            environment["TZ"] = "Europe/London"
            // With the carer's timer beside them, as on a Pi: its writes stretch each run's window.
            let runs = try (0..<6).map { i in
                let out = Pipe()
                let p = Process()
                p.executableURL = URL(fileURLWithPath: quenchBinary!)
                p.arguments = [i % 2 == 0 ? "remind" : "carer", "--notify", "--db", db]
                p.environment = environment
                p.standardOutput = out
                p.standardError = FileHandle.nullDevice
                try p.run()
                return (p, out)
            }
            var said = ""
            for (p, out) in runs {
                said += String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                p.waitUntilExit()
            }
            #expect(said.components(separatedBy: "reminder (Gran)").count - 1 == 1, "round \(round): \(said)")
        }
    }

    @Test("a reminder command that cannot run is an error naming it and why")
    func reminderCommandThatCannotRun() throws {
        let f = try HistoryFixture()
        let run = try runQuench(["remind", "--notify", "--command", "/nonexistent/hook", "--db", f.path])
        #expect(run.status == 1)
        #expect(run.stderr.contains("reminder command: cannot run /nonexistent/hook: No such file or directory"), "\(run.stderr)")
    }

    @Test("an unknown command or help topic exits non-zero with the nearest name")
    func unknownCommands() throws {
        let typo = try runQuench(["todya"])
        #expect(typo.status == 64)
        #expect(typo.stderr.contains("unknown command 'todya'; did you mean `today`?"), "\(typo.stderr)")
        let help = try runQuench(["help", "nosuch"])
        #expect(help.status == 64 && help.stderr.contains("unknown command 'nosuch'"), "\(help.stderr)")
        let known = try runQuench(["help", "today"])
        #expect(known.status == 0 && known.stdout.contains("OVERVIEW: Intake so far today"))
        // A group's commands too (`mqtt snyc` said only "Unexpected argument 'snyc'"), with or without a default one.
        for (words, said) in [(["mqtt", "snyc"], "unknown command 'mqtt snyc'; did you mean `mqtt sync`?"),
                              (["person", "ad", "Bob"], "unknown command 'person ad'; did you mean `person add`?")] {
            let run = try runQuench(words)
            #expect(run.status == 64 && run.stderr.contains(said), "\(run.stderr)")
        }
    }

    @Test("restore of a live event fails, naming it, and changes nothing")
    func restoreOfALiveEvent() throws {
        let f = try HistoryFixture()
        let run = try runQuench(["restore", "3", "--db", f.path])
        #expect(run.status == 1)
        #expect(run.stderr.contains("event 3 is not deleted"), "\(run.stderr)")
    }

    @Test("a failed pair and a run with nothing paired leave no database behind")
    func noEmptyDatabaseLeftBehind() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let pair = try runQuench(["pair", "AA:BB:CC:DD:EE:FF", "--db", dir + "/p.sqlite", "--timeout", "1"])
        #expect(pair.status != 0)
        #expect(!FileManager.default.fileExists(atPath: dir + "/p.sqlite"), "\(pair.stderr)")
        let run = try runQuench(["run", "--db", dir + "/r.sqlite", "--seconds", "1"])
        #expect(run.status == 1)
        #expect(run.stderr.contains("no paired devices"), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir + "/r.sqlite"))
        // A folder that does not exist still fails before any wait.
        let missing = try runQuench(["pair", "AA:BB:CC:DD:EE:FF", "--db", dir + "/nowhere/p.sqlite", "--timeout", "1"])
        #expect(missing.stderr.contains("the folder \(dir)/nowhere does not exist"), "\(missing.stderr)")
        #expect(!missing.stdout.contains("looking for"))
    }
}

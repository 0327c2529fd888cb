import Foundation
import Synchronization
import QuenchHistory
import QuenchTestSupport
import Testing

/// `quench chart` and `quench share` as a person runs them, against the history fixture.
@Suite(.serialized, .enabled(if: quenchBinary != nil, "SKIPPED: the quench executable is not built next to the tests (run `swift build` first)"))
struct ChartCommandTests {
    static let rsvgMissing = "SKIPPED: rsvg-convert is not installed: \(SVGRasterizer.installCommand) (the CI's .ci/run does)"

    @Test func chartsToFilesAndToStandardOutput() throws {
        let f = try HistoryFixture()
        let out = f.directory + "/week.svg"
        let week = try runQuench(["chart", "week", "--date", "2026-03-04", "--db", f.path, "--out", out])
        #expect(week.status == 0, "\(week.stderr)")
        #expect(week.stdout == "Wrote \(out): Daily intake, 7 days, 26 February to 4 March 2026: 12,380 mL in 7 days, "
                + "1,769 mL a day on average; goal met on 5 of 7 days.\n")
        let written = try String(contentsOfFile: out, encoding: .utf8)
        #expect(written.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 800 380\" width=\"100%\" role=\"img\""))
        // The same chart the library draws, byte for byte (the process runs with TZ=Europe/London, as the fixture).
        #expect(written == (try History.intakeBars(f.environment(), days: 7, endingOn: "2026-03-04")).svg)

        let day = try runQuench(["chart", "day", "--date", "2026-03-03", "--db", f.path, "--out", "-"])
        #expect(day.status == 0, "\(day.stderr)")
        #expect(day.stdout.hasPrefix("<svg ") && day.stdout.hasSuffix("</svg>\n"))
        #expect(day.stdout.contains("<title>08:30: 1,300 mL</title>"))

        let month = try runQuench(["chart", "month", "--date", "2026-03-04", "--units", "oz", "--db", f.path, "--out", "-"])
        #expect(month.status == 0, "\(month.stderr)")
        #expect(month.stdout.contains("<text class=\"qc-heading\" x=\"16\" y=\"28\">March 2026</text>"))
        #expect(month.stdout.contains("80.5 oz of the 67.6 oz goal"), "the 2nd's 2,380 mL in oz")

        let thirty = try runQuench(["chart", "30days", "--date", "2026-03-04", "--db", f.path, "--out", "-"])
        #expect(thirty.status == 0 && thirty.stdout.contains("30 days, 3 February to 4 March 2026"), "\(thirty.stderr)")
    }

    /// `--out` through a link writes the file it names, and into a FIFO (or a device, /dev/null)
    /// writes into it; neither is replaced by a file (as root, /dev/null was).
    /// `simulate --out t.csv --truth t.csv` wrote the truth over the trace and said
    /// "wrote t.csv: 360 readings"; `--out -` made a file called `-`.
    @Test func simulateKeepsTheTraceAndTheTruthApartAndWritesToStandardOutput() throws {
        let f = try HistoryFixture()
        let trace = f.directory + "/t.csv"
        for truth in [trace, f.directory + "/./t.csv"] {
            let same = try runQuench(["simulate", "--hours", "0.01", "--out", trace, "--truth", truth])
            #expect(same.status == 64 && same.stderr.contains("is where the trace goes (--out \(trace)): give each its own file"), "\(same.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: trace), "nothing written")
        let apart = try runQuench(["simulate", "--hours", "0.01", "--seed", "3", "--out", trace, "--truth", f.directory + "/truth.csv"])
        #expect(apart.status == 0 && apart.stdout == "wrote \(trace): 360 readings; truth: 0 sips (0 mL), 0 refills, 0 pours\n", "\(apart.stdout)")
        let piped = try runQuench(["simulate", "--hours", "0.01", "--seed", "3", "--out", "-"])
        let written = try String(contentsOfFile: trace, encoding: .utf8)
        #expect(piped.status == 0 && piped.stdout == written, "the same trace, on standard output")
        #expect(piped.stderr == "wrote the trace: 360 readings; truth: 0 sips (0 mL), 0 refills, 0 pours\n", "\(piped.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "-"), "no file called '-' where quench ran")
        // Standard output redirected to a file is appended to, not replaced (as /dev/stdout was).
        let all = f.directory + "/all.csv"
        try "kept\n".write(toFile: all, atomically: true, encoding: .utf8)
        let quench = try #require(quenchBinary)
        let appended = try runProgram("/bin/sh", ["-c", "\"$0\" simulate --hours 0.01 --seed 3 --out - >> \"$1\"", quench, all])
        #expect(appended.status == 0, "\(appended.stderr)")
        #expect(try String(contentsOfFile: all, encoding: .utf8) == "kept\n" + written, "the earlier contents stay, the trace after them")
    }

    @Test func outWritesThroughALinkAndIntoAFIFO() throws {
        let f = try HistoryFixture()
        let real = f.directory + "/real.svg", link = f.directory + "/link.svg", fifo = f.directory + "/fifo.svg"
        try "old".write(toFile: real, atomically: false, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: real)
        #expect(mkfifo(fifo, 0o600) == 0)
        let viaLink = try runQuench(["chart", "week", "--date", "2026-03-04", "--db", f.path, "--out", link])
        #expect(viaLink.status == 0, "\(viaLink.stderr)")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == real, "the link is still a link")
        #expect(try String(contentsOfFile: real, encoding: .utf8).hasPrefix("<svg "), "the file it names has the chart")
        // A reader on the FIFO, as a pipe into another program would be.
        let read = Mutex("")
        let reader = Thread {
            // Plain POSIX: open blocks until the writer comes, then read to its end.
            let fd = open(fifo, O_RDONLY)
            guard fd >= 0 else { return }
            defer { close(fd) }
            var bytes: [UInt8] = [], chunk = [UInt8](repeating: 0, count: 4096)
            while case let n = Glibc.read(fd, &chunk, chunk.count), n > 0 { bytes += chunk.prefix(n) }
            read.withLock { $0 = String(decoding: bytes, as: UTF8.self) }
        }
        reader.start()
        let intoFIFO = try runQuench(["chart", "week", "--date", "2026-03-04", "--db", f.path, "--out", fifo])
        #expect(intoFIFO.status == 0, "\(intoFIFO.stderr)")
        let end = Date().addingTimeInterval(5)
        while read.withLock({ $0.isEmpty }), Date() < end { Thread.sleep(forTimeInterval: 0.05) }
        #expect(read.withLock { $0.hasPrefix("<svg ") && $0.hasSuffix("</svg>\n") }, "the reader got the chart")
        var info = stat()
        #expect(lstat(fifo, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO, "still a FIFO")
        let simulated = try runQuench(["simulate", "--hours", "0.01", "--out", link])
        let trace = try String(contentsOfFile: real, encoding: .utf8)
        #expect(simulated.status == 0 && trace.hasPrefix("# quench trace"), "\(simulated.stderr)")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link)) == real, "simulate too writes through the link")
        try FileManager.default.createDirectory(atPath: f.directory + "/charts.svg", withIntermediateDirectories: false)
        let folder = try runQuench(["chart", "week", "--db", f.path, "--out", f.directory + "/charts.svg"])
        #expect(folder.status != 0 && folder.stderr.contains("is a folder, not a file to write"), "\(folder.stderr)")
        // A device or a FIFO is written into whatever its name (docs/history.md's example, /dev/null, was refused for it).
        let discarded = try runQuench(["chart", "week", "--date", "2026-03-04", "--db", f.path, "--out", "/dev/null"])
        #expect(discarded.status == 0 && discarded.stdout.hasPrefix("Wrote /dev/null: "), "\(discarded.stdout)\(discarded.stderr)")
        var null = stat()
        #expect(stat("/dev/null", &null) == 0 && null.st_mode & S_IFMT == S_IFCHR, "still the device")
        let named = try runQuench(["chart", "week", "--db", f.path, "--out", f.directory + "/w.png"])
        #expect(named.status == 1 && named.stderr.contains("quench chart writes SVG: give --out FILE.svg"), "a file's name still says its format")
    }

    @Test func aHouseholdChartsEachPersonsOwn() throws {
        let f = try HistoryFixture()
        #expect(try runQuench(["person", "add", "Ben", "--goal", "1500ml", "--db", f.path]).status == 0)
        #expect(try runQuench(["add", "600ml", "--at", "2026-03-04 10:00", "--person", "Ben", "--db", f.path]).status == 0)
        let anyone = try runQuench(["chart", "week", "--date", "2026-03-04", "--db", f.path, "--out", "-"])
        #expect(anyone.status != 0 && anyone.stderr.contains("several people share this history"), "\(anyone.stderr)")
        let ben = try runQuench(["chart", "week", "--date", "2026-03-04", "--person", "Ben", "--db", f.path, "--out", "-"])
        #expect(ben.status == 0, "\(ben.stderr)")
        #expect(ben.stdout.contains("600 mL in 1 day,") && ben.stdout.contains("goal 1,500 mL"), "Ben's week (his history began today), Ben's goal")
        let me = try runQuench(["chart", "week", "--date", "2026-03-04", "--person", "me", "--db", f.path, "--out", "-"])
        #expect(me.stdout.contains("12,380 mL in 7 days"), "the fixture's history stays with its first person")
        let card = f.directory + "/ben.svg"
        let share = try runQuench(["share", "--person", "Ben", "--db", f.path, "--out", card])
        #expect(share.status == 0, "\(share.stderr)")
        #expect(try String(contentsOfFile: card, encoding: .utf8).contains("Ben"), "a household's card says whose it is")
    }

    @Test func chartRefusesWhatItCannotDo() throws {
        let f = try HistoryFixture()
        for (args, message) in [
            (["chart", "week", "--out", f.directory + "/w.png"], "quench chart writes SVG: give --out FILE.svg"),
            (["chart", "year", "--out", "-"], "year"),
            (["chart", "day", "--date", "2026-02-30", "--out", "-"], "invalid date '2026-02-30'"),
            (["chart", "week"], "--out"),
            (["share", "--out", f.directory + "/card.jpg"], "quench share writes a .png or an .svg file, by its extension"),
            (["share", "--day", "--week", "--out", f.directory + "/card.svg"], "choose one of --day and --week"),
            (["share", "--out", "/nonexistent-dir/card.svg"], "/nonexistent-dir/card.svg: No such file or directory (errno 2)"),
            (["chart", "day", "--out", "/nonexistent-dir/day.svg"], "/nonexistent-dir/day.svg: No such file or directory (errno 2)"),
        ] {
            let result = try runQuench(args + ["--db", f.path])
            #expect(result.status != 0, "\(args)")
            #expect(result.stderr.contains(message), "\(args): \(result.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: f.directory).filter { !$0.hasPrefix("quench.sqlite") }.isEmpty)
    }

    @Test func shareWritesAnSVGCard() throws {
        let f = try HistoryFixture()
        let out = f.directory + "/card.svg"
        let result = try runQuench(["share", "--week", "--name", "<Ann & \"Bo\">", "--db", f.path, "--out", out])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("Wrote \(out) (1200 × 630): <Ann & \"Bo\">’s week, "), "\(result.stdout)")
        let svg = try String(contentsOfFile: out, encoding: .utf8)
        #expect(svg.contains("<title>&lt;Ann &amp; &quot;Bo&quot;&gt;’s week</title>"))
    }

    @Test(.enabled(if: SVGRasterizer.find().executable != nil, Comment(rawValue: rsvgMissing)))
    func shareWritesAPNGCard() throws {
        let f = try HistoryFixture()
        let out = f.directory + "/card.png"
        let result = try runQuench(["share", "--db", f.path, "--out", out])
        #expect(result.status == 0, "\(result.stderr)")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)).prefix(24))
        #expect(bytes.prefix(8) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        #expect(Array(bytes[12..<24]) == Array("IHDR".utf8) + [0, 0, 0x04, 0xB0, 0, 0, 0x02, 0x76])  // 1200 × 630
        // A device whatever its name says (docs/history.md's /dev/null): the card in PNG; it was refused for
        // its name, while the same device through a link called null.png was written into.
        let discarded = try runQuench(["share", "--db", f.path, "--out", "/dev/null"])
        #expect(discarded.status == 0 && discarded.stdout.hasPrefix("Wrote /dev/null (1200 × 630)"), "\(discarded.stdout)\(discarded.stderr)")
        let quench = try #require(quenchBinary)
        let piped = try runProgram("/bin/sh", ["-c", "\"$0\" share --db \"$1\" --out /dev/stdout | head -c 8 | od -An -tx1", quench, f.path])
        #expect(piped.stdout.split(separator: " ").joined(separator: " ").hasPrefix("89 50 4e 47 0d 0a 1a 0a"), "\(piped.stdout)\(piped.stderr)")
    }

    @Test func shareWithoutRsvgConvertSaysWhatToInstall() throws {
        let f = try HistoryFixture()
        let result = try runQuench(["share", "--db", f.path, "--out", f.directory + "/card.png"], environment: ["PATH": "/nonexistent"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("rsvg-convert is not installed (Debian: apt-get install -y librsvg2-bin fonts-dejavu-core)"),
                "\(result.stderr)")
    }
}

import Foundation
import QuenchCore
import QuenchTestSupport
import Testing

/// An argument that is not UTF-8 (a file named in Latin-1) is refused before anything is done, by
/// each program. Swift's `CommandLine.arguments` gave U+FFFD in its place: `import` said a file that
/// was there was missing, `add --db` and `chart --out` wrote files of another name (exit 0), and a
/// note lost its byte (the trial of the history's outputs).
@Suite struct ArgumentBytesTests {
    @Test func saysWhichArgumentAndWhichByte() {
        #expect(ArgumentBytes.firstNotUTF8([Array("add".utf8), Array("250ml".utf8)]) == nil)
        #expect(ArgumentBytes.firstNotUTF8([Array("Zoë 李 💧".utf8)]) == nil)
        let latin1 = ArgumentBytes.firstNotUTF8([Array("import".utf8), [0x66, 0xFF, 0x2E, 0x63, 0x73, 0x76]])
        #expect(latin1?.hasPrefix("argument 2 ('f\\xFF.csv') is not UTF-8 text (byte 0xFF at offset 1)") == true, "\(latin1 ?? "")")
        // A sequence cut short, an overlong form, a surrogate: each named where it starts.
        for (bytes, offset) in [([0x61, 0x62, 0xC3] as [UInt8], 2), ([0xC0, 0xAF], 0), ([0x61, 0xED, 0xA0, 0x80], 1)] {
            #expect(ArgumentBytes.firstNotUTF8([bytes])?.contains("at offset \(offset))") == true, "\(bytes)")
        }
        let long = ArgumentBytes.firstNotUTF8([Array(repeating: 0x61, count: 200) + [0xFF]])
        #expect(long?.contains("'" + String(repeating: "a", count: 80) + "…'") == true, "\(long ?? "")")
    }

    @Test(.enabled(if: quenchBinary != nil, "SKIPPED: quench is not built (swift build)"))
    func eachProgramRefusesItAndWritesNothing() throws {
        let f = try HistoryFixture()
        let quench = try #require(quenchBinary)
        let before = try runQuench(["export", "--db", f.path])
        // Made by the shell, which passes the bytes as they are (a Swift String cannot hold them).
        let script = """
            cd "$1" && printf 'kind,ml,at\\nsip,250,2026-03-04T09:00:00Z\\n' > "$(printf 'f\\377.csv')"
            "$0" import "$(printf 'f\\377.csv')" --db "$2"; echo "import=$?"
            "$0" add 250ml --db "$(printf 'd\\376.sqlite')"; echo "add=$?"
            "$0" add 250ml --note "$(printf 'caf\\351')" --db "$2"; echo "note=$?"
            "$0" chart week --db "$2" --out "$(printf 'c\\375.svg')"; echo "chart=$?"
            ls
            """
        let r = try runProgram("/bin/sh", ["-c", script, quench, f.directory, f.path])
        for command in ["import", "add", "note", "chart"] {
            #expect(r.stdout.contains("\(command)=64"), "\(command): \(r.stdout)\n\(r.stderr)")
        }
        #expect(r.stderr.contains("quench: error: argument 2 ('f\\xFF.csv') is not UTF-8 text (byte 0xFF at offset 1)"), "\(r.stderr)")
        #expect(r.stderr.contains("argument 4 ('caf\\xE9') is not UTF-8 text (byte 0xE9 at offset 3)"), "\(r.stderr)")
        // Nothing written under the name repaired (d\u{FFFD}.sqlite, c\u{FFFD}.svg) or any other; the history untouched.
        let files = r.stdout.split(separator: "\n").filter { !$0.contains("=") }.map(String.init)
        #expect(!files.contains { $0.hasPrefix("d") || $0.hasPrefix("c") }, "\(files)")
        let after = try runQuench(["export", "--db", f.path])
        #expect(before.status == 0 && after.stdout == before.stdout, "nothing imported or added")
        for program in ["quenchd", "quench-web"] {
            let binary = try #require(builtExecutable(program), "\(program) is built with quench (swift build)")
            // Bounded: before, each ran as asked (the gateway on a simulated bottle, the page on port 8080).
            let other = try runProgram("/bin/sh", ["-c", "timeout 10 \"$0\" --db \"$(printf 'q\\377.sqlite')\"; echo \"status=$?\"", binary])
            #expect(other.stdout.contains("status=64") && other.stderr.contains("argument 2 ('q\\xFF.sqlite') is not UTF-8 text"),
                    "\(program): \(other.stdout)\(other.stderr)")
        }
    }
}

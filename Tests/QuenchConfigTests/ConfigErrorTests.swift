import Foundation
import QuenchConfig
import QuenchTestSupport
import Testing

/// Every refusal names the file, the line and the key; nothing unknown is ignored.
@Suite struct ConfigErrorTests {
    @Test func anUnknownKeyIsRefusedWithTheNearestKnownOne() {
        #expect(Machine.refusal("# x\n[gateway]\nconect_timeout = 5\n")
                == "/q.toml:3: gateway.conect_timeout: unknown key (did you mean gateway.connect_timeout?)")
        #expect(Machine.refusal("log-level = \"info\"") == "/q.toml:1: log-level: unknown key (did you mean log_level?)")
        // In the wrong section: the key where it belongs.
        #expect(Machine.refusal("devices = []") == "/q.toml:1: devices: unknown key (did you mean gateway.devices?)")
        #expect(Machine.refusal("[reminders]\n\ntimeout = 3") == "/q.toml:3: reminders.timeout: unknown key (did you mean gateway.connect_timeout?)"
                || Machine.refusal("[reminders]\n\ntimeout = 3")?.hasPrefix("/q.toml:3: reminders.timeout: unknown key") == true)
        #expect(Machine.refusal("colour = true") == "/q.toml:1: colour: unknown key (`quench config show` lists the keys)")
    }

    @Test func anUnknownSectionIsRefused() {
        #expect(Machine.refusal("\n[gatewy]\ndevices = []") == "/q.toml:2: [gatewy]: unknown key (did you mean [gateway]?)"
                || Machine.refusal("\n[gatewy]\ndevices = []")?.hasPrefix("/q.toml:2: gatewy: unknown key (did you mean [gateway]?)") == true)
        #expect(Machine.refusal("[gateway.extra]\nx = 1") == "/q.toml:1: gateway.extra: unknown key (`quench config show` lists the keys)")
        #expect(Machine.refusal("[[gateway]]\ndevices = []")
                == "/q.toml:1: gateway: expected a table ([gateway]), got [a table]")
    }

    @Test func mqttKeysAreChecked() {
        #expect(Machine.refusal("units = \"ml\"\n\n[mqtt]\nbroker = \"localhost\"\n")
                == "/q.toml:4: mqtt.broker: expected a broker URL, \"mqtt://[USER@]HOST[:PORT]\" or \"mqtts://…\", got \"localhost\"")
        #expect(Machine.refusal("[mqtt]\npassword_file = \"secret\"")?.hasPrefix("/q.toml:2: mqtt.password_file: expected an absolute path") == true)
        #expect(Machine.refusal("[mqtt]\nbrokr = \"mqtt://h\"")?.contains("did you mean mqtt.broker?") == true)
        #expect(Machine.refusal("[mqtt]\nbroker = \"mqtts://ha@broker:8883\"\nca_file = \"/etc/ssl/ca.crt\"\nnode = \"kitchen\"") == nil)
    }

    /// `[web]`: `listen` in the form `quench serve --listen` takes (the same parser), `token_file` an absolute path.
    @Test func webKeysAreCheckedLikeServesOptions() throws {
        for good in ["127.0.0.1:8080", "0.0.0.0:8080", "[::1]:9000", "[::]:80", "pi.local:0", "192.168.1.5:65535"] {
            #expect(Machine.refusal("[web]\nlisten = \"\(good)\"") == nil, "\(good)")
        }
        #expect(Machine.refusal("[web]") == nil, "an empty section is the defaults")
        #expect(Machine.refusal("[web]\ntoken_file = \"/etc/quench/web-token\"") == nil)
        let expected = "HOST:PORT, e.g. 127.0.0.1:8080 or 0.0.0.0:8080"
        let bad: [(String, String)] = [
            ("\"0.0.0.0\"", "\"0.0.0.0\" (no port)"),
            ("\":8080\"", "\":8080\" (no host (0.0.0.0 for every interface))"),
            ("\"0.0.0.0:http\"", "\"0.0.0.0:http\" (the port must be a number from 0 to 65535)"),
            ("\"h:80808\"", "\"h:80808\" (the port must be a number from 0 to 65535)"),
            ("\"::1:80\"", "\"::1:80\" (an IPv6 address goes in brackets, [::1]:8080)"),
            ("\"[::1]8080\"", "\"[::1]8080\" (no port after ])"),
            ("\"[::1:8080\"", "\"[::1:8080\" (no closing ])"),
            ("8080", "8080"),
        ]
        for (value, got) in bad {
            #expect(Machine.refusal("# the page\n\n[web]\nlisten = \(value)\n") == "/q.toml:4: web.listen: expected \(expected), got \(got)", "\(value)")
        }
        #expect(Machine.refusal("[web]\ntoken_file = \"web-token\"")
                == "/q.toml:2: web.token_file: expected an absolute path (a string starting with /), got \"web-token\"")
        #expect(Machine.refusal("[web]\nlisen = \"0.0.0.0:8080\"") == "/q.toml:2: web.lisen: unknown key (did you mean web.listen?)")
        #expect(Machine.refusal("[wb]\nlisten = \"0.0.0.0:8080\"")?.contains("did you mean [web]?") == true)
        do {
            _ = try Machine(variables: ["QUENCH_WEB_LISTEN": "0.0.0.0"]).resolve()
            Issue.record("a bad $QUENCH_WEB_LISTEN was taken")
        } catch {
            #expect(error.description == "$QUENCH_WEB_LISTEN: expected \(expected), got \"0.0.0.0\" (no port)")
        }
    }

    @Test func aWrongValueSaysWhatWasExpected() {
        let cases: [(String, String)] = [
            ("\n\n\n\n\n[gateway]\nconnect_timeout = \"ten\"", "/q.toml:7: gateway.connect_timeout: expected a number of seconds > 0, a year at most, got \"ten\""),
            ("[gateway]\nconnect_timeout = 0", "/q.toml:2: gateway.connect_timeout: expected a number of seconds > 0, a year at most, got 0"),
            ("[gateway]\nconnect_timeout = inf", "/q.toml:2: gateway.connect_timeout: expected a number of seconds > 0, a year at most, got inf"),
            ("[notify]\ntimeout = 1e300", "/q.toml:2: notify.timeout: expected a number of seconds > 0, a year at most, got 1e+300"),
            ("[gateway]\ndrain_every = -5", "/q.toml:2: gateway.drain_every: expected a number of minutes > 0, a year at most, got -5"),
            ("[gateway]\nadapter = \"hci16\"", "/q.toml:2: gateway.adapter: expected a Bluetooth adapter, \"hci0\" to \"hci15\", got \"hci16\""),
            ("[gateway]\nadapter = 1", "/q.toml:2: gateway.adapter: expected a Bluetooth adapter, \"hci0\" to \"hci15\", got 1"),
            ("[gateway]\ndevices = [\"F0:F1:F2:F3:F4:F5\", \"kitchen\"]",
             "/q.toml:2: gateway.devices: expected an array of Bluetooth addresses like \"F0:F1:F2:F3:F4:F5\", got [\"F0:F1:F2:F3:F4:F5\", \"kitchen\"]"),
            ("[gateway]\ndevices = \"F0:F1:F2:F3:F4:F5\"",
             "/q.toml:2: gateway.devices: expected an array of Bluetooth addresses like \"F0:F1:F2:F3:F4:F5\", got \"F0:F1:F2:F3:F4:F5\""),
            ("log_level = \"loud\"", "/q.toml:1: log_level: expected one of trace, debug, info, notice, warning, error, critical, got \"loud\""),
            ("units = \"cups\"", "/q.toml:1: units: expected \"ml\" or \"oz\" (or \"fl oz\", \"millilitres\"), got \"cups\""),
            ("database = \"quench.sqlite\"", "/q.toml:1: database: expected an absolute path (a string starting with /), got \"quench.sqlite\""),
            ("database = 1979-05-27", "/q.toml:1: database: expected an absolute path (a string starting with /), got a date"),
            ("[reminders]\ncommand = \"notify-send\"",
             "/q.toml:2: reminders.command: expected an absolute program path (a string starting with /), got \"notify-send\""),
            ("gateway = 5", "/q.toml:1: gateway: expected a table ([gateway]), got 5"),
        ]
        for (text, message) in cases {
            #expect(Machine.refusal(text) == message, "\(text)")
        }
    }

    @Test func badSyntaxSaysLineAndColumn() throws {
        let message = try #require(Machine.refusal("units = \"ml\"\n[gateway]\nconnect_timeout = = 3\n"))
        #expect(message.hasPrefix("/q.toml:3:"), "\(message)")
        let column = message.split(separator: ":")[2]
        #expect(Int(column) != nil && Int(column)! > 1, "\(message)")
        #expect(try #require(Machine.refusal("units = \"ml\"\nunits = \"oz\"\n")).hasPrefix("/q.toml:2:"), "a key given twice")
        #expect(try #require(Machine.refusal("[gateway\n")).hasPrefix("/q.toml:1:"))
    }

    /// What stopped toml++ 3.4.0 (TOMLKit) with a failed assertion, exit 134, is a syntax error with its place.
    @Test func textThatAbortedTheOldParserIsASyntaxError() {
        #expect(Machine.refusal("units = \"ml\"\n[\n[gateway]") == "/q.toml:2:2: expected the table's name after '[', found a newline")
        #expect(Machine.refusal("[[[gateway]]]") == "/q.toml:1:3: expected the table's name after '[[', found '['")
        #expect(Machine.refusal("[[ [") == "/q.toml:1:4: expected the table's name after '[[', found '['")
        #expect(Machine.refusal("[gateway]\ndevices = [\"F0:F1:F2:F3:F4:F5\",\n }") == "/q.toml:3:2: gateway.devices: expected a value or ']' in an array, found '}'")
        #expect(Machine.refusal("units = 1979-05-27T:") == "/q.toml:1:20: units: expected an hour from 00 to 23")
        #expect(Machine.refusal("units = 1979-05-27t/07:32") == "/q.toml:1:20: units: expected an hour from 00 to 23")
        #expect(Machine.refusal("x = 2026-11-27 1") == "/q.toml:1:16: x: expected an hour from 00 to 23")
        #expect(Machine.refusal("x = 2026-11-27 12:3") == "/q.toml:1:19: x: expected minutes from 00 to 59")
        #expect(Machine.refusal("x = 2026-02-30") == "/q.toml:1:13: x: expected a day from 01 to 28")
        // The same characters in comments and strings are text.
        #expect(Machine.refusal("# [\n[reminders] # [#\ncommand = \"/bin/x [#} 1979-05-27T:\"") == nil)
        #expect(Machine.refusal("[reminders]\ncommand = '''\n[\n/x}'''\n[gateway]")?
                    .hasPrefix("/q.toml:2: reminders.command: expected an absolute program path") == true)
        #expect(Machine.refusal("[reminders]\ncommand = \"\"\"\\\n[\n}\"\"\"\"\n[gateway]\nconnect_timeout = 0")?
                    .hasPrefix("/q.toml:2: reminders.command:") == true, "a line continuation and a closing with four quotes")
    }

    @Test func textThatIsNotUTF8OrHoldsANULIsRefusedWithItsLine() {
        func refusal(_ bytes: [UInt8]) -> String? {
            let machine = Machine(variables: ["QUENCH_CONFIG": "/q.toml"])
            let inputs = ConfigInputs(variables: machine.variables) { _ in .contents(bytes) }
            do {
                _ = try Configuration.resolve(commandLine: ConfigValues(), for: .quench, defaultDatabase: "/d", inputs: inputs)
                return nil
            } catch { return error.description }
        }
        #expect(refusal(Array("units = \"ml\"\n# caf".utf8) + [0xE9] + Array("\n".utf8)) == "/q.toml:2: not UTF-8 text (byte 19 of the file)")
        #expect(refusal(Array("\n\nunits = \"ml\"".utf8) + [0]) == "/q.toml:3: a NUL byte, which a configuration file cannot hold")
        #expect(refusal(Array("\n[gateway]\n\"a\\u0000b\" = 1".utf8))
                == "/q.toml:3: \\u0000 (a NUL character), which Quench does not take in a key or a value")
    }

    @Test func theFirstProblemByLineIsTheOneReported() {
        // Several problems: the refusal is the earliest line's.
        #expect(Machine.refusal("zzz = 1\n\n[gateway]\naaa = 2")?.hasPrefix("/q.toml:1: zzz:") == true)
    }

    @Test func keysAreFoundWhereverTOMLAllowsThemToBe() {
        #expect(Machine.refusal("[ gateway ]\n  \"connect_timeout\"   =  \"x\"")?.hasPrefix("/q.toml:2: gateway.connect_timeout:") == true)
        #expect(Machine.refusal("gateway . connect_timeout = \"x\"")?.hasPrefix("/q.toml:1: gateway.connect_timeout:") == true)
        #expect(Machine.refusal("gateway = {\n devices = [] , connect_timeout = \"x\" }")?.hasPrefix("/q.toml:1:") == true,
                "a multi-line inline table is not TOML 1.0; the parser says so")
        #expect(Machine.refusal("[reminders]\ncommand = \"\"\"\nconnect_timeout = \"x\"\n\"\"\"\n[gateway]\nconnect_timeout = \"y\"")
                == "/q.toml:2: reminders.command: expected an absolute program path (a string starting with /), got \"connect_timeout = \"x\"\\u{A}\"",
                "a key inside a multi-line string is text, not a key")
        #expect(Machine.refusal("[gateway]\r\ndrain_every = 0\r\n")?.hasPrefix("/q.toml:2: gateway.drain_every:") == true, "CRLF")
    }

    @Test func environmentAndFileProblemsNameTheirOrigin() {
        #expect(throws: ConfigError.self) { try Machine(variables: ["QUENCH_LOG": "loud"]).resolve() }
        do {
            _ = try Machine(variables: ["QUENCH_LOG": "loud"]).resolve()
        } catch {
            #expect(error.description == "$QUENCH_LOG: expected one of trace, debug, info, notice, warning, error, critical, got \"loud\"")
        }
        let unreadable = ConfigInputs(variables: [:]) { _ in .problem(.errno(13)) }
        do {
            _ = try Configuration.resolve(commandLine: ConfigValues(), for: .quenchd, defaultDatabase: "/d", inputs: unreadable)
            Issue.record("an unreadable file was taken")
        } catch {
            #expect(error.description == "/etc/quench/quench.toml: cannot read it: Permission denied (errno 13)")
        }
    }

    @Test func theRealReaderTellsAbsentFromUnreadable() throws {
        let folder = try TemporaryFolder()
        let read = ConfigInputs.process().read
        #expect(read(folder.file("none.toml")) == .absent)
        #expect(read(folder.file("none/deeper.toml")) == .absent)
        #expect(read(folder.path) == .problem(.notAFile))
        // A FIFO: refused at once, not read when something writes to it (it hung quenchd).
        #expect(mkfifo(folder.file("fifo.toml"), 0o600) == 0)
        let writer = Thread {
            Thread.sleep(forTimeInterval: 5)
            let fd = open(folder.file("fifo.toml"), O_WRONLY | O_NONBLOCK)
            if fd >= 0 { close(fd) }
        }
        writer.start()
        let started = Date()
        #expect(read(folder.file("fifo.toml")) == .problem(.notAFile))
        #expect(Date().timeIntervalSince(started) < 2, "the read waited for a writer")
        try "units = \"oz\"\n".write(toFile: folder.file("q.toml"), atomically: true, encoding: .utf8)
        #expect(read(folder.file("q.toml")) == .contents(Array("units = \"oz\"\n".utf8)))
        #expect(ConfigInputs.process().variables["PATH"] != nil)
    }

    /// 2,000 seeded mutations of a full file: each loads, or is refused with a
    /// message naming the file and a line. Never a crash.
    @Test func mutatedFilesLoadOrAreRefusedWithFileAndLine() throws {
        let valid = """
            # Quench
            database = "/var/lib/quench/quench.sqlite"
            log_level = "info"
            units = "ml"

            [gateway]
            devices = ["F0:F1:F2:F3:F4:F5", "C4:7C:8D:6A:12:34"]
            connect_timeout = 10
            drain_every = 15.5

            [reminders]
            command = "/usr/local/bin/notify"

            """
        #expect(Machine.refusal(valid) == nil)
        let alphabet = Array("[]{}=\"'.,#\\ \n\tu0x_-:/+aeiz19".utf8) + [0, 0xC3, 0xFF]
        var rng = FuzzRandom(seed: 0x746F_6D6C)
        var (loaded, refused) = (0, 0)
        let path = "/etc/quench/quench.toml"
        for i in 0..<2_000 {
            let bytes = rng.mutate(Array(valid.utf8), alphabet: alphabet, edits: 1...4, cutting: true)
            let inputs = ConfigInputs(variables: [:]) { _ in .contents(bytes) }
            do {
                _ = try Configuration.resolve(commandLine: ConfigValues(), for: .quenchd, defaultDatabase: "/d", inputs: inputs)
                loaded += 1
            } catch {
                refused += 1
                let message = error.description
                let line = message.dropFirst(path.count + 1).prefix { $0.isNumber }
                #expect(message.hasPrefix(path + ":") && !line.isEmpty, "mutation \(i): \(message) from \(String(decoding: bytes, as: UTF8.self).debugDescription)")
            }
        }
        // Both sides were reached.
        #expect(loaded > 100 && refused > 100, "loaded \(loaded), refused \(refused)")
    }
}

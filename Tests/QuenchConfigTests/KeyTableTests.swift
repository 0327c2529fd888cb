import Foundation
import QuenchConfig
import QuenchTestSupport
import Testing

/// The key table drives everything else: the committed sample file and the
/// documentation's table are its output, the environment is checked with the
/// file's parsers, and `config show` lists its keys.
@Suite struct KeyTableTests {
    /// config/quench.toml is `quench config sample`'s output, byte for byte:
    /// regenerate it with `swift run quench config sample > config/quench.toml`.
    @Test func theCommittedSampleFileIsGenerated() throws {
        let committed = try String(contentsOf: TestPackage.root.appendingPathComponent("config/quench.toml"), encoding: .utf8)
        #expect(committed == KeySpec.sampleFile, "regenerate: swift run quench config sample > config/quench.toml")
    }

    /// docs/service.md's table between `<!-- config-keys -->` and `<!-- /config-keys -->` is
    /// `quench config keys --markdown`'s output, so a key added to the table and not to the docs fails.
    @Test func theDocumentedTableIsGenerated() throws {
        let docs = try String(contentsOf: TestPackage.root.appendingPathComponent("docs/service.md"), encoding: .utf8)
        let (open, close) = ("<!-- config-keys -->\n", "<!-- /config-keys -->")
        let start = try #require(docs.range(of: open), "docs/service.md has no \(open)")
        let end = try #require(docs.range(of: close, range: start.upperBound..<docs.endIndex), "docs/service.md has no \(close)")
        #expect(String(docs[start.upperBound..<end.lowerBound]) == KeySpec.markdownTable,
                "regenerate the table in docs/service.md with `quench config keys --markdown`")
        #expect(KeySpec.all.allSatisfy { KeySpec.markdownTable.contains("`\($0.key.name)`") })
    }

    /// Each key with a variable: any text the file takes (as a string), the variable takes
    /// with the same value; any the file refuses, the variable refuses in the same words, naming itself.
    @Test(arguments: KeySpec.all.filter { $0.environment != nil }.map(\.key))
    func anEnvironmentVariableIsCheckedAsTheFileIs(key: ConfigKey) throws {
        let spec = try #require(KeySpec.all.first { $0.key == key })
        let name = try #require(spec.environment)
        let probes = ["relative/path", "/an/absolute/path", "mqtt://host:1883", "debug", "0.0.0.0", "0.0.0.0:8080", "oz", " "]
        var refused = 0
        for probe in probes {
            let fileText = (key.section.map { "[\($0)]\n" } ?? "") + "\(key.name) = \"\(probe)\"\n"
            let file = Machine(files: ["/q.toml": fileText], variables: ["QUENCH_CONFIG": "/q.toml"])
            let variable = Machine(variables: [name: probe])
            do {
                let fromFile = try file.resolve().row(key)
                let fromVariable = try variable.resolve().row(key)
                #expect(fromVariable?.value == fromFile?.value, "\(name)=\(probe)")
                #expect(fromVariable?.source == "$" + name, "\(name)=\(probe)")
            } catch {
                refused += 1
                let fileWords = try #require(Machine.refusal(fileText), "the file took \(probe) and resolution still failed: \(error)")
                #expect(throws: ConfigError.self, "$\(name) took \(probe), which the file refuses") { try variable.resolve() }
                do {
                    _ = try variable.resolve()
                } catch {
                    let prefix = "/q.toml:\(key.section == nil ? 1 : 2): \(key): "
                    #expect(fileWords.hasPrefix(prefix), "\(fileWords)")
                    #expect(error.description == "$\(name): " + fileWords.dropFirst(prefix.count), "\(name)=\(probe)")
                }
            }
        }
        // Only a name (`person`) takes every probe; every other key refuses some.
        #expect((refused == 0) == (key == .person), "\(name) refused \(refused) of \(probes.count)")
    }

    /// `config show` lists exactly the table's keys, in its order (the documented order).
    @Test func configShowListsTheTablesKeysInOrder() throws {
        let shown = try Machine().resolve().report(abbreviatingHome: false).settings.map(\.key)
        #expect(shown == KeySpec.all.map(\.key.description))
        #expect(shown == ["database", "log_level", "units", "person", "gateway.devices", "gateway.connect_timeout", "gateway.adapter", "gateway.drain_every", "gateway.hand_over",
                          "reminders.command", "mqtt.broker", "mqtt.password_file", "mqtt.client_id", "mqtt.ca_file", "mqtt.cert_file",
                          "mqtt.key_file", "mqtt.node", "mqtt.node_id", "mqtt.discovery", "mqtt.discovery_prefix", "mqtt.topic_prefix",
                          "web.listen", "web.token_file", "backup.dir", "backup.keep_daily", "backup.keep_weekly",
                          "notify.url", "notify.format", "notify.token_file", "notify.ca_file", "notify.timeout"])
        #expect(Set(KeySpec.all.map(\.key)).count == KeySpec.all.count, "a key twice in the table")
    }

    /// Each key's sample value is one the key takes, and its sample lines are commented out.
    @Test func eachSampleValueLoads() throws {
        for spec in KeySpec.all {
            let text = (spec.key.section.map { "[\($0)]\n" } ?? "") + "\(spec.key.name) = \(spec.example)\n"
            #expect(Machine.refusal(text) == nil, "\(spec.key): \(spec.example)")
        }
        let lines = KeySpec.sampleFile.split(separator: "\n")
        #expect(lines.allSatisfy { $0.hasPrefix("#") || $0.hasPrefix("[") }, "a line not commented out")
    }
}

/// A path in a `QUENCH_*` variable is relative to the working directory, as one on
/// the command line is; in a file it must be absolute.
@Suite struct EnvironmentPathTests {
    @Test func aRelativePathFromTheEnvironmentIsFromTheWorkingDirectory() throws {
        let inputs = ConfigInputs(variables: ["QUENCH_DB": "day.sqlite", "QUENCH_MQTT_PASSWORD_FILE": "secret/pw"],
                                  workingDirectory: "/home/p/work") { _ in .absent }
        let configuration = try Configuration.resolve(commandLine: ConfigValues(), for: .quench, defaultDatabase: "/default.sqlite", inputs: inputs)
        #expect(configuration.database.value == "/home/p/work/day.sqlite")
        #expect(configuration.database.source == .environment("QUENCH_DB"))
        #expect(configuration.mqttPasswordFile.value == "/home/p/work/secret/pw")
        // And the command line's, as the absolute path it means (`config show` said `day.sqlite`: a Pi trial).
        var given = ConfigValues()
        given.database = "other.sqlite"
        let option = try Configuration.resolve(commandLine: given, for: .quenchd, defaultDatabase: "/default.sqlite", inputs: inputs)
        #expect(option.database.value == "/home/p/work/other.sqlite" && option.database.source == .commandLine)

        let file = ConfigInputs(variables: ["QUENCH_CONFIG": "/q.toml"], workingDirectory: "/home/p/work") { path in
            path == "/q.toml" ? .contents(Array("database = \"day.sqlite\"\n".utf8)) : .absent
        }
        #expect(throws: ConfigError.self, "a file's relative path stays refused") {
            try Configuration.resolve(commandLine: ConfigValues(), for: .quench, defaultDatabase: "/default.sqlite", inputs: file)
        }
    }
}

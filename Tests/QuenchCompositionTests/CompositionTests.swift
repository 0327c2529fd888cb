import Foundation
import QuenchComposition
import QuenchConfig
import QuenchCore
import QuenchHistory
import Testing

/// The executables' layer: a resolved configuration becomes the history's
/// environment and `config show`'s text, with nothing lost on the way.
@Suite struct CompositionTests {
    static let userFile = "/home/p/.config/quench/quench.toml"

    /// A configuration resolved from a user file in memory, with the command line over it.
    static func resolved(_ commandLine: ConfigValues = ConfigValues()) throws -> Configuration {
        let file = "database = \"/srv/q.sqlite\"\nunits = \"oz\"\nperson = \"Ann Lee\"\n"
        let inputs = ConfigInputs(variables: ["HOME": "/home/p"]) { path in
            path == userFile ? .contents(Array(file.utf8)) : .absent
        }
        return try Configuration.resolve(commandLine: commandLine, for: .quench, defaultDatabase: "/default.sqlite", inputs: inputs)
    }

    @Test func historyEnvironmentTakesTheConfigurationsDatabaseUnitsAndPerson() throws {
        let environment = HistoryEnvironment.process(try Self.resolved())
        #expect(environment.databasePath == "/srv/q.sqlite")
        #expect(environment.units == .usFluidOunce)
        #expect(environment.person == "Ann Lee")

        let overridden = HistoryEnvironment.process(try Self.resolved(ConfigValues(database: "/tmp/other.sqlite", units: .ml)))
        #expect(overridden.databasePath == "/tmp/other.sqlite")
        #expect(overridden.units == .ml)
    }

    @Test func configShowTextNamesEachKeyItsValueAndTheFileLine() throws {
        let text = try Self.resolved().shown(json: false)
        let lines = text.split(separator: "\n").map(String.init)
        let database = try #require(lines.first { $0.hasPrefix("database ") })
        #expect(database.contains("/srv/q.sqlite"))
        #expect(database.hasSuffix("~/.config/quench/quench.toml:1"))
        let person = try #require(lines.first { $0.hasPrefix("person ") })
        #expect(person.contains("Ann Lee") && person.hasSuffix(":3"))
        #expect(lines.contains { $0.hasPrefix("connect_timeout") || $0.hasPrefix("gateway.connect_timeout") })
        #expect(text.contains("files (the first that sets a key wins):"))
        #expect(lines.contains { $0.hasPrefix("~/.config/quench/quench.toml") && $0.contains("read") })
        #expect(lines.contains { $0.hasPrefix("/etc/quench/quench.toml") && $0.contains("not present") })
    }

    @Test func configShowJSONIsTheReportUnabbreviated() throws {
        let json = try Self.resolved().shown(json: true)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let settings = try #require(object["settings"] as? [[String: Any]])
        let database = try #require(settings.first { $0["key"] as? String == "database" })
        #expect(database["value"] as? String == "/srv/q.sqlite")
        #expect(database["source"] as? String == "\(Self.userFile):1")
        let drain = try #require(settings.first { $0["key"] as? String == "gateway.drain_every" })
        #expect(drain["value"] is NSNull)
    }
}

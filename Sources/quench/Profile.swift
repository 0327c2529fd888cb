import ArgumentParser
import QuenchProfiles

/// `quench profile FILE`: a profile file read as pairing and replay read it, said back in words;
/// or its problem, by field. A developer checks it before any device is there.
struct ProfileCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "profile", abstract: "Check a profile file (docs/profiles.md) without a device: what it reads and from where, or what is wrong.")

    @Argument(help: "The profile file (or the name of a profile Quench knows).") var file: String

    func run() throws {
        try runReporting {
            let profile = try ProfileRegistry.standard.resolve(file).profile
            // The DIY level bottle is built in as a profile file's twin: said the same way.
            guard let custom = profile.definition as? CustomProfile else {
                return emit("\(file) is built in: \(profile.displayName) (docs/profiles.md)")
            }
            emit(custom.summary.joined(separator: "\n"))
        }
    }
}

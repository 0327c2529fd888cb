/// Where the database lives when nobody says otherwise.
public enum StoreLocation {
    /// `--db PATH` wins, then `$QUENCH_DB`, then `$XDG_DATA_HOME/quench/quench.sqlite`,
    /// then `$HOME/.local/share/quench/quench.sqlite` (XDG Base Directory
    /// Specification 0.8: `$XDG_DATA_HOME` defaults to `$HOME/.local/share`, and a
    /// relative value is ignored). The service uses `/var/lib/quench/quench.sqlite`
    /// through `QUENCH_DB` or `--db`. The commands resolve through QuenchConfig,
    /// which puts the configuration files between `$QUENCH_DB` and `defaultPath`;
    /// this is the same order without them.
    public static func resolve(explicit: String?, environment: [String: String]) -> String {
        if let explicit, !explicit.isEmpty { return explicit }
        if let fromEnv = environment["QUENCH_DB"], !fromEnv.isEmpty { return fromEnv }
        return defaultPath(environment: environment)
    }

    /// Quench's own place for a file, when nobody named one: the only place
    /// whose folder Quench creates.
    public static func defaultPath(environment: [String: String], file: String = "quench.sqlite") -> String {
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            return xdg + "/quench/" + file
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? "."
        return home + "/.local/share/quench/" + file
    }

    /// The demo's own database, beside the default one and never the same:
    /// a simulated day must not count as anyone's intake.
    public static func demoPath(environment: [String: String]) -> String {
        defaultPath(environment: environment, file: "demo.sqlite")
    }

    /// How to open `path` for writing: Quench creates the folder of its own
    /// default locations only.
    public static func creationMode(for path: String, environment: [String: String]) -> IntakeStore.OpenMode {
        path == defaultPath(environment: environment) || path == demoPath(environment: environment) ? .createWithFolder : .create
    }
}

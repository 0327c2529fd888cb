/// Where the database lives when nobody says otherwise.
public enum StoreLocation {
    /// `--db PATH` wins, then `$QUENCH_DB`, then `$XDG_DATA_HOME/quench/quench.sqlite`,
    /// then `$HOME/.local/share/quench/quench.sqlite` (XDG Base Directory
    /// Specification 0.8: `$XDG_DATA_HOME` defaults to `$HOME/.local/share`, and a
    /// relative value is ignored). The service uses `/var/lib/quench/quench.sqlite`
    /// through `QUENCH_DB` or `--db`.
    public static func resolve(explicit: String?, environment: [String: String]) -> String {
        if let explicit, !explicit.isEmpty { return explicit }
        if let fromEnv = environment["QUENCH_DB"], !fromEnv.isEmpty { return fromEnv }
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            return xdg + "/quench/quench.sqlite"
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? "."
        return home + "/.local/share/quench/quench.sqlite"
    }
}

/// Quench's version, printed by `quench --version` and `quenchd --version`.
public enum QuenchVersion {
    public static let string = "0.5.0"
}

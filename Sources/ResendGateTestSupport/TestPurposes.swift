/// The purposes the test suites name besides `default`. A gate decides only configured
/// purposes (`--purposes`, `PolicySet.plainPurposes`), so the fixtures that start gates
/// configure these explicitly instead of the gate's default allowing any.
public enum TestPurposes {
    public static let names: Set<String> = ["login", "signup", "reset", "reset-password", "premium", "short", "other"]

    /// `--purposes` with every name, for a `resendgate` command line.
    public static var arguments: [String] { ["--purposes", names.sorted().joined(separator: ",")] }
}

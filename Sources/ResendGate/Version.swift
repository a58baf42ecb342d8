/// The version of this build: the one the top section of docs/changelog.md names (a test
/// compares them). `resendgate --version` prints it and `/metrics` reports it as
/// `resendgate_build_info{version="..."}`. What a minor or patch version may change:
/// docs/changelog.md, "Versions".
public enum ResendGateVersion {
    public static let current = "0.11.0"
}

/// The version of this build, read from docs/changelog.md (a test compares them): the last
/// release it descends from (the newest section with a date) and, past that release, the
/// one being made (the "Unreleased" section on top). `resendgate --version` prints
/// `description`; `/metrics` reports `current` as `resendgate_build_info{version="..."}`.
/// What a minor or patch version may change: docs/changelog.md, "Versions".
public enum ResendGateVersion {
    /// The newest release in this build's history: the changelog's top dated section.
    public static let lastRelease = "0.10.0"
    /// The release being made, which the changelog's "Unreleased (X.Y.Z)" section names;
    /// nil in the build of a release itself.
    public static let upcoming: String? = "0.11.0"

    /// `0.11.0-dev` for a build past the last release (a pre-release, in semantic
    /// versioning's terms, of the one being made), else the release: `0.10.0`.
    public static var current: String { upcoming.map { "\($0)-dev" } ?? lastRelease }

    /// What `--version` prints: `0.11.0-dev (unreleased, after 0.10.0)`, or `0.10.0`.
    public static var description: String {
        upcoming == nil ? lastRelease : "\(current) (unreleased, after \(lastRelease))"
    }
}

import Foundation
import ResendGate
import ResendGateTestSupport
import Testing

/// `resendgate --version` says which release the build is, or which release it comes after
/// and which it is being made into, as docs/changelog.md's sections do: a build cannot call
/// itself a release the changelog has not dated, nor the changelog name a release the code
/// does not.
@Suite("resendgate --version")
struct VersionTests {
    private static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The changelog's sections after "Versions": the top one's version and whether it is
    /// "Unreleased", and the newest release (a `## X.Y.Z — YYYY-MM-DD` heading).
    static func changelogVersions() throws -> (top: String, unreleased: Bool, lastRelease: String) {
        let changelog = try String(contentsOf: root.appendingPathComponent("docs/changelog.md"), encoding: .utf8)
        let headings = changelog.split(separator: "\n").filter { $0.hasPrefix("## ") && $0 != "## Versions" }
        let top = try #require(headings.first)
        let released = try #require(headings.lazy.compactMap { $0.firstMatch(of: /^## (\d+\.\d+\.\d+) — \d{4}-\d{2}-\d{2}$/) }.first,
                                    "no dated release in the changelog")
        if let match = top.firstMatch(of: /^## Unreleased \((\d+\.\d+\.\d+)\)$/) {
            return (String(match.output.1), true, String(released.output.1))
        }
        let match = try #require(top.firstMatch(of: /^## (\d+\.\d+\.\d+) — \d{4}-\d{2}-\d{2}$/),
                                 "the top section is neither `## Unreleased (X.Y.Z)` nor a dated release: \(top)")
        return (String(match.output.1), false, String(released.output.1))
    }

    @Test func versionIsTheChangelogsTopSection() throws {
        let changelog = try Self.changelogVersions()
        #expect(ResendGateVersion.lastRelease == changelog.lastRelease)
        if changelog.unreleased {
            #expect(ResendGateVersion.upcoming == changelog.top)
            #expect(ResendGateVersion.current == "\(changelog.top)-dev")
        } else {
            #expect(ResendGateVersion.upcoming == nil)
            #expect(ResendGateVersion.current == changelog.top)
        }
        let printed = changelog.unreleased
            ? "resendgate \(changelog.top)-dev (unreleased, after \(changelog.lastRelease))\n"
            : "resendgate \(changelog.top)\n"
        for argument in ["--version", "version"] {
            let result = try CommandRunner.run(try BuiltProducts.executable(named: "resendgate"), [argument], timeout: .seconds(10))
            #expect(result.status == .exited(0), "\(result)")
            #expect(result.stdout == printed)
        }
    }
}

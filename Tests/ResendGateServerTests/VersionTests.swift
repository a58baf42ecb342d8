import Foundation
import ResendGate
import ResendGateTestSupport
import Testing

/// `resendgate --version` prints the version that the top section of docs/changelog.md
/// names, so a release cannot ship with the changelog and the binary disagreeing.
@Suite("resendgate --version")
struct VersionTests {
    private static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The version in the changelog's first `## X.Y.Z` heading.
    static func changelogVersion() throws -> String {
        let changelog = try String(contentsOf: root.appendingPathComponent("docs/changelog.md"), encoding: .utf8)
        let heading = try #require(changelog.split(separator: "\n").first { $0.hasPrefix("## ") && $0.dropFirst(3).first?.isNumber == true })
        let match = try #require(heading.firstMatch(of: /^## (\d+\.\d+\.\d+)( |$)/), "not a version heading: \(heading)")
        return String(match.output.1)
    }

    @Test func versionIsTheChangelogsTopSection() throws {
        let version = try Self.changelogVersion()
        #expect(version == ResendGateVersion.current)
        for argument in ["--version", "version"] {
            let result = try CommandRunner.run(try BuiltProducts.executable(named: "resendgate"), [argument], timeout: .seconds(10))
            #expect(result.status == .exited(0), "\(result)")
            #expect(result.stdout == "resendgate \(version)\n")
        }
    }
}

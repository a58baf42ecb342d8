import Foundation
import Testing

/// The README's module table says what each target holds: it names every target of
/// Package.swift and nothing else.
@Suite("README module table")
struct ModuleTableTests {
    private static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Target names in Package.swift: `name: "X"` inside a `.target`, `.systemLibrary`, ... call.
    static func packageTargets() throws -> Set<String> {
        let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let targets = try #require(manifest.range(of: "targets: [\n"))
        let pattern = /\.(?:target|systemLibrary|executableTarget|testTarget|plugin)\(\s*name: "([A-Za-z0-9]+)"/
        return Set(manifest[targets.upperBound...].matches(of: pattern).map { String($0.output.1) })
    }

    /// The names in backticks in the first column of the table under "| module |".
    static func readmeModules() throws -> Set<String> {
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false)
        let header = try #require(lines.firstIndex { $0.hasPrefix("| module |") })
        var names: Set<String> = []
        for line in lines[(header + 2)...] {
            guard line.hasPrefix("|") else { break }
            let firstColumn = line.split(separator: "|", omittingEmptySubsequences: true).first ?? ""
            for match in firstColumn.matches(of: /`([A-Za-z][A-Za-z0-9]*)`/) { names.insert(String(match.output.1)) }
        }
        return names
    }

    @Test func namesEveryTargetOfPackageSwift() throws {
        let targets = try Self.packageTargets()
        #expect(targets.contains("ResendGate") && targets.contains("CHiredis") && targets.count > 10, "\(targets)")
        let modules = try Self.readmeModules()
        #expect(targets.subtracting(modules).isEmpty, "targets missing from the README's module table")
        #expect(modules.subtracting(targets).isEmpty, "README module table rows that are no target")
    }
}

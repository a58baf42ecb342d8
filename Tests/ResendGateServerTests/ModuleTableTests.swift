import Foundation
import Testing

/// docs/internals.md's module table says what each target holds: it names every target of
/// Package.swift and nothing else.
@Suite("Module table")
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

    /// The names in backticks in the first column of docs/internals.md's table under "| module |".
    static func tableModules() throws -> Set<String> {
        let internals = try String(contentsOf: root.appendingPathComponent("docs/internals.md"), encoding: .utf8)
        let lines = internals.split(separator: "\n", omittingEmptySubsequences: false)
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
        let modules = try Self.tableModules()
        #expect(targets.subtracting(modules).isEmpty, "targets missing from docs/internals.md's module table")
        #expect(modules.subtracting(targets).isEmpty, "docs/internals.md's module table rows that are no target")
    }

    /// Each Swift target's dependencies in Package.swift (C modules and the app side left out).
    static func packageDependencies() throws -> [String: Set<String>] {
        let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        var found: [String: Set<String>] = [:]
        for match in manifest.matches(of: /name: "([A-Za-z0-9]+)",\s*dependencies: \[([^\]]*)\]/) {
            found[String(match.output.1)] = Set(match.output.2.matches(of: /"([A-Za-z0-9]+)"/).map { String($0.output.1) })
        }
        return found
    }

    /// docs/internals.md's drawing of the layers, bottom layer first: the names before the
    /// description, split at " · ".
    static func drawnLayers() throws -> [[String]] {
        let text = try String(contentsOf: root.appendingPathComponent("docs/internals.md"), encoding: .utf8)
        let section = try #require(text.range(of: "\n## Layers\n"))
        let open = try #require(text.range(of: "```\n", range: section.upperBound..<text.endIndex))
        let close = try #require(text.range(of: "```\n", range: open.upperBound..<text.endIndex))
        return text[open.upperBound..<close.lowerBound].split(separator: "\n").map { line in
            let names = line.split(separator: "  ", maxSplits: 1).first ?? ""
            return names.split(separator: "·").map { $0.trimmingCharacters(in: .whitespaces) }
        }.reversed()
    }

    /// Each module of the drawing uses only modules of the rows below it, the C modules and
    /// the app side; and every layered target of Package.swift is drawn.
    @Test func theDrawingOfTheLayersIsPackageSwifts() throws {
        let layers = try Self.drawnLayers()
        let dependencies = try Self.packageDependencies()
        #expect(layers.count >= 4, "\(layers)")
        let appSide: Set<String> = ["Countdown", "ResendGateClient"]
        var below: Set<String> = []
        for layer in layers {
            for module in layer {
                let uses = try #require(dependencies[module], "\(module) has no dependencies in Package.swift")
                let layered = uses.filter { !$0.hasPrefix("C") || $0 == "Countdown" }.subtracting(appSide)
                #expect(layered.isSubset(of: below), "\(module) uses \(layered.subtracting(below)) from its own layer or above")
            }
            below.formUnion(layer)
        }
        for module in ["GateRuntime", "GateEventLoop", "PhoneNumbers", "Policies", "RedisClient", "ResendGate", "ResendGateServer", "resendgate"] {
            #expect(below.contains(module), "\(module) is not drawn")
        }
        for module in appSide { #expect(dependencies[module].map { $0.isDisjoint(with: below) } ?? true, "\(module) uses a layered module") }
    }

    /// Each drawn module imports every Swift module it depends on in Package.swift (the C
    /// modules left out: one may serve another's headers): a dependency nothing imports, as
    /// `ResendGate`'s on `Countdown` was, is a layer link the drawing does not show.
    @Test func everySwiftDependencyOfADrawnModuleIsImported() throws {
        let dependencies = try Self.packageDependencies()
        for module in try Self.drawnLayers().joined() {
            let folder = Self.root.appendingPathComponent("Sources/\(module)")
            let walker = try #require(FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil))
            var imported: Set<String> = []
            for case let file as URL in walker where file.pathExtension == "swift" {
                let text = try String(contentsOf: file, encoding: .utf8)
                imported.formUnion(text.matches(of: /(?m)^\s*(?:@\w+ )?(?:public )?import (\w+)/).map { String($0.output.1) })
            }
            let swiftModules = try #require(dependencies[module], "\(module)").filter { !$0.hasPrefix("C") || $0 == "Countdown" }
            #expect(swiftModules.isSubset(of: imported), "\(module) depends on \(swiftModules.subtracting(imported)) without importing it")
        }
    }

    /// Phone numbers and policies link neither hiredis nor libevent, nor anything of Redis:
    /// every module they use, and every module those use, in Package.swift.
    @Test func phoneNumbersAndPoliciesLinkNeitherRedisNorLibevent() throws {
        let dependencies = try Self.packageDependencies()
        for module in ["PhoneNumbers", "Policies", "GateRuntime"] {
            var reached: Set<String> = []
            var next = [module]
            while let current = next.popLast() {
                for used in dependencies[current] ?? [] where reached.insert(used).inserted { next.append(used) }
            }
            #expect(reached.isDisjoint(with: ["CHiredis", "CLibevent", "CRedisEvents", "RedisClient", "GateEventLoop"]), "\(module) reaches \(reached)")
        }
        #expect(dependencies["Policies"]?.contains("PhoneNumbers") == true)
        #expect(dependencies["GateEventLoop"]?.contains("CLibevent") == true)
    }

    /// Small files: no source file in Sources (Swift, C, C++, Lua) is over 300 lines, so
    /// a file holds one concern a reader can take in whole.
    @Test func noSourceFileIsOver300Lines() throws {
        let sources = Self.root.appendingPathComponent("Sources")
        let walker = try #require(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
        var read = 0
        for case let file as URL in walker where ["swift", "c", "h", "cpp", "lua"].contains(file.pathExtension) {
            let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).count - 1
            #expect(lines <= 300, "\(file.path) has \(lines) lines")
            read += 1
        }
        #expect(read > 100)
    }
}

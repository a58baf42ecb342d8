import Foundation
import PackagePlugin

/// Compiles data files (the OpenAPI document, the demo page, scripts) into the module
/// that uses them, so the `resendgate` binary stays one self-contained file and every
/// reader (server, tests, scripts) reads the same file from the repository.
///
/// A target that uses this plugin holds one `EmbeddedFiles.txt` (see
/// `Plugins/EmbedFilesTool/EmbedFilesTool.swift` for its format); `EmbedFilesTool` turns the files
/// it lists into `EmbeddedFiles.<name>: [UInt8]`, rebuilt whenever a listed file changes.
@main
struct EmbedFiles: BuildToolPlugin {
    static let manifestName = "EmbeddedFiles.txt"

    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let manifests = (target as? SourceModuleTarget)?.sourceFiles.filter { $0.url.lastPathComponent == Self.manifestName } ?? []
        guard manifests.count == 1, let manifest = manifests.first?.url else {
            throw EmbedFilesError("target \(target.name) uses EmbedFiles and must hold one \(Self.manifestName), not \(manifests.count)")
        }
        let root = context.package.directoryURL
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedFiles.swift")
        return [
            .buildCommand(
                displayName: "Embedding the files of \(manifest.lastPathComponent) into \(target.name)",
                executable: try context.tool(named: "EmbedFilesTool").url,
                arguments: [manifest.path, root.path, output.path],
                inputFiles: [manifest] + (try Self.listedPaths(manifest)).map { root.appending(path: $0) },
                outputFiles: [output])
        ]
    }

    /// The second word of every entry line: the files the command depends on (the tool
    /// reads the whole manifest itself, and checks it).
    static func listedPaths(_ manifest: URL) throws -> [String] {
        try String(contentsOf: manifest, encoding: .utf8).split(separator: "\n").compactMap { line in
            let words = line.split(whereSeparator: \.isWhitespace)
            guard words.count == 2, !words[0].hasPrefix("#") else { return nil }
            return String(words[1])
        }
    }
}

struct EmbedFilesError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

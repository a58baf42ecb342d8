import Foundation

/// Finds executables built by SwiftPM next to the running tests, for end-to-end tests.
///
/// Where it looks, in order:
/// 1. `$RESENDGATE_BUILD_DIR/<name>`: an explicit override (for example a release build).
/// 2. The folder holding the running test binary: on Linux `swift test` runs
///    `<scratch>/<triple>/<config>/resendgatePackageTests.xctest`, an executable that sits
///    next to the products of the same build (`Bundle.main.executablePath`, which reads
///    `/proc/self/exe`, so it is absolute and follows `--scratch-path` and `-c release`);
///    on macOS the folder that contains the loaded `.xctest` bundle.
/// 3. `<package root>/.build/{debug,release}/<name>`, the package root derived from `#filePath`
///    (a last resort: it can pick up a stale build from another configuration).
///
/// `swift build --build-tests` builds every product; `swift test` alone may not build
/// executables that no test target depends on, so `deploy/test` runs the former first.
public enum BuiltProducts {
    /// The path of the built executable `name` (for example `"resendgate"`).
    /// Throws `TestSupportError.executableNotFound` listing every place it looked.
    public static func executable(named name: String, filePath: String = #filePath) throws -> String {
        var folders: [String] = []
        if let override = ProcessInfo.processInfo.environment["RESENDGATE_BUILD_DIR"], !override.isEmpty {
            folders.append(override)
        }
        if let bundle = Bundle.allBundles.first(where: { $0.bundlePath.hasSuffix(".xctest") }) {
            folders.append(bundle.bundleURL.deletingLastPathComponent().path)
        }
        if let executable = Bundle.main.executableURL?.resolvingSymlinksInPath() {
            folders.append(executable.deletingLastPathComponent().path)
        }
        // Sources/ResendGateTestSupport/BuiltProducts.swift -> package root
        let root = URL(fileURLWithPath: filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        folders += ["debug", "release"].map { root.appendingPathComponent(".build/\($0)").path }
        var seen = Set<String>()
        let candidates = folders.filter { seen.insert($0).inserted }.map { $0 + "/" + name }
        var isDirectory: ObjCBool = false
        if let found = candidates.first(where: {
            FileManager.default.fileExists(atPath: $0, isDirectory: &isDirectory) && !isDirectory.boolValue
                && FileManager.default.isExecutableFile(atPath: $0)
        }) {
            return found
        }
        throw TestSupportError.executableNotFound.with(
            "built executable '\(name)' not found; run `swift build --build-tests` first. Looked at: "
                + candidates.joined(separator: ", "))
    }
}

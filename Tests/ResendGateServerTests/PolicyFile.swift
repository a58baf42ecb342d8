import Foundation
import ResendGateTestSupport

/// A policy file (`--policy`) in the temp directory, for tests of `resendgate serve`.
struct PolicyFile {
    let path: String

    init(_ json: String) throws {
        path = NSTemporaryDirectory() + "resendgate-policy-\(UUID().uuidString).json"
        try Data(json.utf8).write(to: URL(fileURLWithPath: path))
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// `resendgate serve --policy <a file holding json>` against a Redis that is not there:
    /// what a policy file's start-up check says (the file is removed after).
    static func serve(_ json: String) throws -> CommandResult {
        let file = try PolicyFile(json)
        defer { file.remove() }
        return try CommandRunner.run(try BuiltProducts.executable(named: "resendgate"), [
            "serve", "--port", "0", "--redis", "redis://127.0.0.1:1/0", "--policy", file.path,
        ], timeout: .seconds(20))
    }
}

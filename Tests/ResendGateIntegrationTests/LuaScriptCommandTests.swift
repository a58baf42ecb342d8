import Foundation
@testable import ResendGate
import ResendGateTestSupport
import Testing

/// `resendgate lua-script`, the deploy tools' view of a script (docs/development.md): the
/// built binary prints what the gate's linker makes, from the files compiled in or a folder's.
@Suite("resendgate lua-script", .ownThread)
struct LuaScriptCommandTests {
    @Test func printsTheGatesTextOfAScriptFromItsOwnFilesOrAFolders() throws {
        let executable = try BuiltProducts.executable(named: "resendgate")
        for name in ["reserve", "reserve-guarded", "peek"] {
            let printed = try CommandRunner.run(executable, ["lua-script", name])
            #expect(printed.exitCode == 0, "\(printed)")
            #expect(printed.stdout == GateScripts.text(of: name))
        }
        // A folder's files, as deploy/dev/script-cost exports a revision's: a part changed there
        // shows in what is printed.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lua-script-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var files = GateScripts.files
        files["ip-hold"] = (files["ip-hold"] ?? []) + Array("-- from the folder\n".utf8)
        for (name, bytes) in files { try Data(bytes).write(to: folder.appendingPathComponent(name + ".lua")) }
        let fromFolder = try CommandRunner.run(executable, ["lua-script", "reserve", "--scripts", folder.path])
        #expect(fromFolder.exitCode == 0, "\(fromFolder)")
        #expect(fromFolder.stdout == GateScripts.text(of: "reserve", files: files))
        #expect(fromFolder.stdout.contains("-- from the folder\n") && fromFolder.stdout != GateScripts.text(of: "reserve"))
        let unknown = try CommandRunner.run(executable, ["lua-script", "no-such-script"])
        #expect(unknown.exitCode == 2 && unknown.stdout == "" && unknown.stderr.contains("no script no-such-script"), "\(unknown)")
    }
}

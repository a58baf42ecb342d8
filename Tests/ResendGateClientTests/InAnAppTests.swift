import Foundation
import ResendGateClient
import Testing

/// README.md's "In an app" code is this test's code: the test compares the two, then runs it
/// against a real server.
@MainActor @Suite(.serialized) struct InAnAppTests {
    @Test func readmeSnippetIsTheCodeThisTestRuns() throws {
        let readme = try String(contentsOfFile: Self.root + "/README.md", encoding: .utf8)
        let section = try #require(readme.range(of: "\n## In an app\n"))
        let fence = try #require(readme.range(of: "```swift\n", range: section.upperBound..<readme.endIndex))
        let end = try #require(readme.range(of: "```\n", range: fence.upperBound..<readme.endIndex))
        let documented = String(readme[fence.upperBound..<end.lowerBound])
        let source = try String(contentsOfFile: #filePath, encoding: .utf8)
        let begin = try #require(source.range(of: "// README begin\n"))
        let stop = try #require(source.range(of: "// README end\n", range: begin.upperBound..<source.endIndex))
        let tested = source[begin.upperBound..<stop.lowerBound].split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasPrefix("            ") ? String($0.dropFirst(12)) : String($0) }
            .joined(separator: "\n")
        #expect(documented == tested)
    }

    @Test func readmeSnippetCountsDownFromTheServersAnswer() async throws {
        try await withLiveGate(cooldown: "60s") { gate in
            let backEnd = gate.baseURL
            let label = Label()
            let saved = ResendButtonModel.storageKey(purpose: "login", phone: "+8613800138000")
            UserDefaults.standard.removeObject(forKey: saved)
            defer { UserDefaults.standard.removeObject(forKey: saved) }
            // README begin
            let client = ResendGateClient(baseURL: backEnd)  // your back end: it holds the API key
            let button = ResendButtonModel(client: client, phone: "+8613800138000", purpose: "login")
            button.onChange = { button in label.text = button.title }  // UIKit/AppKit; SwiftUI reads button.title
            await button.send()  // label: "Sending…", then "Resend in 1:00", "Resend in 59s", ... then "Resend"
            // Back in the foreground (scenePhase .active, didBecomeActive): await button.refresh()
            // README end
            #expect(label.history == ["Sending…", "Resend in 1:00"])
            #expect(button.state == .counting(seconds: 60))
            #expect(UserDefaults.standard.data(forKey: button.storageKey) != nil)
        }
    }

    /// The package root, from this file's path.
    static var root: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
    }
}

/// A stand-in for a UILabel or NSTextField.
@MainActor final class Label {
    private(set) var history: [String] = []

    var text: String? {
        get { history.last }
        set { if let newValue { history.append(newValue) } }
    }
}

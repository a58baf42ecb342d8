import Foundation
import ResendGateClient
import Testing

/// docs/clients.md's "In an app" code is this test's code: the test compares the two, then runs it
/// against a real server.
@MainActor @Suite(.serialized) struct InAnAppTests {
    @Test func clientsSnippetIsTheCodeThisTestRuns() throws {
        let readme = try String(contentsOfFile: Self.root + "/docs/clients.md", encoding: .utf8)
        let section = try #require(readme.range(of: "\n## In an app\n"))
        let fence = try #require(readme.range(of: "```swift\n", range: section.upperBound..<readme.endIndex))
        let end = try #require(readme.range(of: "```\n", range: fence.upperBound..<readme.endIndex))
        let documented = String(readme[fence.upperBound..<end.lowerBound])
        let source = try String(contentsOfFile: #filePath, encoding: .utf8)
        let begin = try #require(source.range(of: "// docs/clients.md begin\n"))
        let stop = try #require(source.range(of: "// docs/clients.md end\n", range: begin.upperBound..<source.endIndex))
        #expect(documented == String(source[begin.upperBound..<stop.lowerBound]))
    }

    /// The docs' screen against a real server: its label is right at once, shows the
    /// server's countdown after a tap, and goes on counting (the screen holds the model:
    /// a model freed with its task left the label frozen).
    @Test func readmeScreenCountsDownFromTheServersAnswer() async throws {
        guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *) else { return }  // ResendButtonModel: Observation
        try await withLiveGate(cooldown: "60s") { gate in
            let saved = ResendButtonModel.storageKey(purpose: "login", phone: "+8613800138000")
            UserDefaults.standard.removeObject(forKey: saved)
            defer { UserDefaults.standard.removeObject(forKey: saved) }
            let label = Label()
            let screen = CodeScreen(backEnd: gate.baseURL, phone: "+8613800138000", label: label)
            #expect(label.history == ["Send code"])
            screen.appeared()
            let tapped = ContinuousClock.now
            await screen.sendTapped()
            let tapTook = ContinuousClock.now - tapped
            if tapTook < .milliseconds(900) {
                #expect(label.history == ["Send code", "Sending…", "Resend in 1:00"])
            } else {
                // This process stood frozen (CI) during the tap: the countdown may have
                // ticked before the test looked, but only down from the server's minute.
                #expect(Array(label.history.prefix(2)) == ["Send code", "Sending…"], "\(label.history)")
                let shown = label.history.dropFirst(2).map(Self.secondsLeft)
                let floor = 60 - Int(tapTook.components.seconds) - 1
                #expect(!shown.isEmpty && shown.allSatisfy { $0.map { (floor...60).contains($0) } == true },
                        "\(label.history) after a tap of \(tapTook)")
            }
            #expect(UserDefaults.standard.data(forKey: saved) != nil)
            // The engine's next tick, on the real clock (this test runs the docs' code as is).
            let shown = ContinuousClock.now
            while label.text == "Resend in 1:00" && ContinuousClock.now - shown < .seconds(5) { try await Task.sleep(for: .milliseconds(20)) }
            let waited = ContinuousClock.now - shown
            if waited < .milliseconds(1_800) && tapTook < .milliseconds(900) {
                #expect(label.text == "Resend in 59s")
            } else {  // this process stalled (a CI machine flushing a build froze it for 14 s once)
                let left = label.text.flatMap(Self.secondsLeft)
                let floor = 59 - Int((ContinuousClock.now - tapped).components.seconds) - 1
                #expect(left.map { (floor...59).contains($0) } == true, "\(label.history) after \(waited)")
            }
            screen.disappeared()
        }
    }

    /// The seconds a "Resend in 1:00" or "Resend in 59s" label shows; nil for another label.
    static func secondsLeft(_ label: String) -> Int? {
        guard label.hasPrefix("Resend in ") else { return nil }
        let rest = label.dropFirst("Resend in ".count)
        if rest.hasSuffix("s") { return Int(rest.dropLast()) }
        let parts = rest.split(separator: ":")
        guard parts.count == 2, let minutes = Int(parts[0]), let seconds = Int(parts[1]) else { return nil }
        return minutes * 60 + seconds
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

// docs/clients.md begin
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)  // ResendButtonModel is @Observable
/// A code screen (a view controller, say): it holds the model, so the countdown lives as
/// long as the screen does. SwiftUI reads `button.title` and `button.isEnabled` instead.
@MainActor final class CodeScreen {
    let button: ResendButtonModel
    private let label: Label  // a UILabel or NSTextField

    init(backEnd: URL, phone: String, label: Label) {
        self.label = label
        // Your back end (it holds the API key); docs/clients.md says what it forwards.
        button = ResendButtonModel(client: ResendGateClient(baseURL: backEnd), phone: phone, purpose: "login")
        button.onChange = { [label] button in label.text = button.title }  // at once, then on each change
    }

    func sendTapped() async { await button.send() }  // "Sending…", "Resend in 1:00", "Resend in 59s", ... "Resend"
    func appeared() { button.startLiveUpdates() }  // a refund on the back end ends the countdown
    func disappeared() { button.stopLiveUpdates() }
    func becameActive() async { await button.refresh() }  // back in the foreground
}
// docs/clients.md end

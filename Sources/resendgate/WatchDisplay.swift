import Countdown
import Foundation

/// What the terminal shows.
struct WatchDisplay {
    let isTerminal: Bool
    let strings: CountdownStrings
    let doneText: String
    private var last: String?

    init(isTerminal: Bool, chinese: Bool) {
        self.isTerminal = isTerminal
        strings = chinese ? .chinese : .english
        doneText = chinese ? "现在可以重新发送" : "You can resend now"
    }

    mutating func show(seconds: Int64) {
        draw(CountdownValue(totalSeconds: seconds).resendPrompt(.bySize, strings: strings))
    }

    mutating func showDone() {
        draw(doneText)
        if isTerminal { write("\n") }
    }

    private mutating func draw(_ text: String) {
        guard text != last else { return }
        last = text
        write(isTerminal ? "\r\u{1B}[2K\(text)" : "\(text)\n")
    }

    private func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}

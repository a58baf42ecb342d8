import Foundation
import ResendGateClient

/// One watch: connects, follows the stream, reconnects a few times if it drops early.
struct WatchSession {
    let server: WatchServer
    let path: String
    /// Longer than the server's 15 s heartbeat.
    static let silenceLimit = 40

    func run(_ display: inout WatchDisplay) -> ExitCode {
        var sawTick = false
        var failures = 0
        while true {
            let outcome = follow(&display, sawTick: &sawTick)
            switch outcome {
            case .done:
                display.showDone()
                return .success
            case .notFound where sawTick:
                // The cooldown ended or was released while we were away.
                display.showDone()
                return .success
            case .notFound:
                if display.isTerminal { FileHandle.standardOutput.write(Data("\n".utf8)) }
                printError("unknown or expired countdown token")
                return .badInput
            case .failed(let reason):
                failures += 1
                if failures > 3 || !sawTick {
                    if display.isTerminal && sawTick { FileHandle.standardOutput.write(Data("\n".utf8)) }
                    printError("cannot follow the countdown at \(server.host):\(server.port): \(reason)")
                    return .storeUnavailable
                }
                Thread.sleep(forTimeInterval: 1)
            }
        }
    }

    enum Outcome {
        case done
        case notFound
        case failed(String)
    }

    private func follow(_ display: inout WatchDisplay, sawTick: inout Bool) -> Outcome {
        do {
            let stream = try EventStreamClient(
                host: server.host, port: server.port, path: server.basePath + path, silenceLimit: Self.silenceLimit)
            let status = try stream.readStatus()
            guard status == 200 else { return status == 404 ? .notFound : .failed("HTTP \(status)") }
            while true {
                let event = try stream.nextEvent()
                switch event.event {
                case "tick":
                    if let seconds = Self.integer("retry_after", in: event.data) {
                        sawTick = true
                        display.show(seconds: seconds)
                    }
                case "done":
                    return .done
                default:
                    break
                }
            }
        } catch {
            return .failed("\(error)")
        }
    }

    /// A whole number member of an event's JSON data.
    static func integer(_ field: String, in data: String) -> Int64? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any] else { return nil }
        return (object[field] as? NSNumber)?.int64Value
    }
}

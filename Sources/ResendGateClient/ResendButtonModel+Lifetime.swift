import Countdown
import Foundation

/// SwiftUI's way to follow the stream.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
extension ResendButtonModel {
    /// Follows the event stream until the calling task is cancelled: SwiftUI's
    /// `.task { await button.liveUpdates() }` follows it while the view is on screen and stops
    /// when the view goes, with no `onAppear`/`onDisappear` pair to keep in step.
    public func liveUpdates() async {
        startLiveUpdates()
        while !Task.isCancelled {
            do { try await Task.sleep(for: .seconds(3_600)) } catch { break }
        }
        stopLiveUpdates()
    }
}

/// The kit's own retries of a send.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
extension ResendButtonModel {
    /// How many times the kit itself retries a send that got no answer (a dropped
    /// connection, a timeout) or a gateway's or the store's 502, 503, 504, with the same
    /// `Idempotency-Key`: a retry the server already decided gets the first answer and sends
    /// no second code. Never when offline, nor for an error retrying cannot fix.
    public static let sendRetries = 2

    /// The wait before retry `attempt` (0 for the first): 0.5 s, then 1 s, each up to half
    /// again longer by `jitter` (0 up to 1), so that clients a blip failed together spread out.
    public static func retryDelay(attempt: Int, jitter: Double) -> Duration {
        .milliseconds(500 << min(attempt, 4)) * (1 + min(max(jitter, 0), 1) / 2)
    }

    /// Whether a send that failed so may be sent again at once with its key: no answer (not
    /// offline), or a gateway's or the store's momentary 502, 503, 504.
    static func retriesSend(after error: ResendGateError) -> Bool {
        error.isRetriable && (error.status == nil || [502, 503, 504].contains(error.status ?? 0))
    }
}

/// What a freed model must not leave behind: its countdown's record in the (shared) center
/// and its live task. Its deinit runs when the model's does.
final class ModelCleanup: @unchecked Sendable {
    // @unchecked: `id` and `task` are guarded by `lock`.
    private let lock = NSLock()
    private let center: CountdownCenter
    private var _id: CountdownID?
    private var _task: Task<Void, Never>?

    init(center: CountdownCenter) { self.center = center }

    var id: CountdownID? {
        get { lock.withLock { _id } }
        set { lock.withLock { _id = newValue } }
    }

    var task: Task<Void, Never>? {
        get { lock.withLock { _task } }
        set { lock.withLock { _task = newValue } }
    }

    deinit {
        _task?.cancel()
        if let _id { center.cancel(_id) }
    }
}

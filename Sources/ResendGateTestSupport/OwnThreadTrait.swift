import Foundation
import Testing

// Swift Testing calls even a synchronous `@Test func` from a task on the cooperative pool
// (two threads on a two-core machine), so two tests blocking at once (starting Redis or a
// gate, a blocking read, a usleep poll) stall every other test in the process. This trait
// runs each test of a suite on a thread of its own instead. It lives here, beside
// `onOwnThread`, because both test targets that need it already depend on this module.

/// Runs each test (each case of a parameterized one) on a dedicated thread through
/// `onOwnThread`, so that it may block without holding a cooperative thread; its `#expect`s
/// still count. For suites of synchronous tests that block; not for `@MainActor` suites.
/// At most `OwnThreadTrait.width` such tests run at once: the rest wait without a thread.
public struct OwnThreadTrait: TestTrait, SuiteTrait, TestScoping {
    /// Each test of the suite, and of suites nested in it, gets a thread of its own.
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        await OwnThreadLimit.shared.acquire()
        do {
            try await onOwnThread(named: "t:\(test.name)") { try await function() }
        } catch {
            await OwnThreadLimit.shared.release()
            throw error
        }
        await OwnThreadLimit.shared.release()
    }

    /// How many own-thread tests may run at once: RESENDGATE_TEST_THREADS, else 8. Without
    /// a bound, a parallel pass would start every such test (each with its Redis) at once.
    public static let width: Int = {
        let configured = ProcessInfo.processInfo.environment["RESENDGATE_TEST_THREADS"].flatMap(Int.init)
        return max(1, configured ?? 8)
    }()
}

extension Trait where Self == OwnThreadTrait {
    /// Runs each test of the suite on a thread of its own (see `OwnThreadTrait`).
    public static var ownThread: Self { OwnThreadTrait() }
}

/// A counting semaphore for tasks: waiting for a slot holds no thread.
private actor OwnThreadLimit {
    static let shared = OwnThreadLimit(width: OwnThreadTrait.width)

    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(width: Int) { free = width }

    func acquire() async {
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func release() {
        if waiting.isEmpty {
            free += 1
        } else {
            waiting.removeFirst().resume()
        }
    }
}

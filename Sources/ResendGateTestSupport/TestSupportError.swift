/// Why a test-support helper failed. Compare with the static members
/// (`error == .timeout`); `message` says what happened in words, with log tails where useful.
public struct TestSupportError: Error, Sendable, Equatable, CustomStringConvertible {
    private enum Code: Sendable, Equatable {
        case executableNotFound, didNotStart, timeout, connection, protocolViolation, processFailed, invalidState
    }

    private let code: Code
    /// A one-paragraph explanation for a test failure message.
    public let message: String

    /// A binary (`redis-server`, `resendgate`) could not be found.
    public static let executableNotFound = TestSupportError(code: .executableNotFound, message: "executable not found")
    /// A process started but did not become ready (or exited at once).
    public static let didNotStart = TestSupportError(code: .didNotStart, message: "process did not start")
    /// A socket read/write or a wait ran past its deadline.
    public static let timeout = TestSupportError(code: .timeout, message: "timed out")
    /// A socket could not connect, or the peer closed it.
    public static let connection = TestSupportError(code: .connection, message: "connection failed")
    /// The peer sent bytes that are not RESP.
    public static let protocolViolation = TestSupportError(code: .protocolViolation, message: "protocol violation")
    /// A process could not be launched or a file operation failed.
    public static let processFailed = TestSupportError(code: .processFailed, message: "process failed")
    /// The call does not fit the object's state (for example `restart()` after `stop()`).
    public static let invalidState = TestSupportError(code: .invalidState, message: "invalid state")

    /// The same kind of error with a specific message.
    package func with(_ message: String) -> TestSupportError { TestSupportError(code: code, message: message) }

    /// Errors are equal when their kind is; the message is for humans.
    public static func == (lhs: TestSupportError, rhs: TestSupportError) -> Bool { lhs.code == rhs.code }

    public var description: String { message }
}

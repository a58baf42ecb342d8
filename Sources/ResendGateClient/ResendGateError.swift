/// Every failure of a ``ResendGateClient`` call: the API's own error `code` and HTTP status
/// when the server answered, or one of the client's codes when it did not.
///
/// A refused send is not an error: it is a ``Decision`` with `allowed == false`.
public struct ResendGateError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The API's `error.code` (`invalid_phone`, `not_found`, `unauthorized`,
    /// `store_unavailable`, ...) or one of the client codes below.
    public var code: String
    /// The server's message, or what went wrong on this side.
    public var message: String
    /// The HTTP status of the answer; nil when there was none (``transport``).
    public var status: Int?

    /// Makes an error.
    public init(code: String, message: String, status: Int? = nil) {
        self.code = code
        self.message = message
        self.status = status
    }

    /// No answer: the connection failed or dropped, or the request timed out.
    public static let transport = "transport"
    /// The task that made the call was cancelled (not a failure: nothing to show).
    public static let cancelled = "cancelled"
    /// The server answered something the API does not describe (status, JSON or event stream).
    public static let invalidResponse = "invalid_response"
    /// An event stream line or event was longer than ``ServerSentEventParser/maximumEventBytes``,
    /// or the stream ran too far ahead of its reader.
    public static let streamTooLarge = "stream_too_large"
    /// The API's code for an unknown, expired or released countdown token.
    public static let notFound = "not_found"

    /// `code (HTTP status): message`.
    public var description: String {
        "\(code)\(status.map { " (HTTP \($0))" } ?? ""): \(message)"
    }
}

import ResendGateClient

/// Reads the server-sent events of one response off a `RawHTTPConnection`, one at a time,
/// with the app kit's own parser (`ServerSentEventParser`): the head first, then the
/// chunked (or close-delimited) body as it arrives.
public final class EventStreamReader {
    public let connection: RawHTTPConnection
    /// The response's head, once read.
    public private(set) var head: RawHTTPHead?
    /// Whether the response (or the connection) has ended.
    public private(set) var ended = false
    private var parser = ServerSentEventParser()
    private var pending: [ServerSentEvent] = []

    /// Reads events from `connection`, whose request has been written.
    public init(_ connection: RawHTTPConnection) {
        self.connection = connection
    }

    /// The next event (comments skipped), or nil when the stream ended. Throws past the
    /// connection's timeout.
    public func next() throws -> ServerSentEvent? {
        while pending.isEmpty && !ended {
            if head == nil {
                head = try connection.readHead()
            }
            try readBody()
        }
        return pending.isEmpty ? nil : pending.removeFirst()
    }

    /// Decodes what the buffer holds, or waits for more.
    private func readBody() throws {
        guard let head else { return }
        if !head.isChunked && head.header("Content-Length") != nil {
            // Not a stream (an error answer): its whole body, then the end.
            pending += try parser.feed(try connection.readBody(of: head))
            ended = true
            return
        }
        if head.isChunked {
            guard let decoded = ChunkedBody.decode(connection.buffer) else { throw RawHTTPError.malformed("chunk size") }
            connection.buffer.removeFirst(decoded.consumed)
            pending += try parser.feed(decoded.body)
            if decoded.isComplete { ended = true }
            if !pending.isEmpty || ended { return }
        } else if !connection.buffer.isEmpty {
            pending += try parser.feed(connection.buffer)
            connection.buffer.removeAll()
            if !pending.isEmpty { return }
        }
        let outcome = Result { () throws(RawHTTPError) in try connection.readMore() }
        if case .failure(let error) = outcome {
            guard case .closed = error else { throw error }
            ended = true
        }
    }
}

/// Well-formed requests to a gate on 127.0.0.1, each on a `RawHTTPConnection` of its own.
public struct HTTPTestClient: Sendable {
    public let port: Int
    /// Sent as `Authorization: Bearer <key>` when set.
    public var apiKey: String?
    public var timeout: Duration

    public init(port: Int, apiKey: String? = nil, timeout: Duration = .seconds(10)) {
        self.port = port
        self.apiKey = apiKey
        self.timeout = timeout
    }

    /// The bytes of a request: Host (unless `host` is nil), Content-Length when there is a
    /// body, `Connection: close` unless `keepAlive`, the API key if any, then `headers`.
    public func requestBytes(
        _ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8]? = nil, keepAlive: Bool = false,
        host: String? = "127.0.0.1"
    ) -> [UInt8] {
        var head = "\(method) \(target) HTTP/1.1\r\n"
        if let host { head += "Host: \(host):\(port)\r\n" }
        if let apiKey { head += "Authorization: Bearer \(apiKey)\r\n" }
        if !keepAlive { head += "Connection: close\r\n" }
        if let body { head += "Content-Length: \(body.count)\r\n" }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        return Array((head + "\r\n").utf8) + (body ?? [])
    }

    /// One request on a new connection, and its response.
    public func request(
        _ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8]? = nil, host: String? = "127.0.0.1"
    ) throws -> RawHTTPResponse {
        let connection = try RawHTTPConnection(port: port, timeout: timeout)
        try connection.write(requestBytes(method, target, headers: headers, body: body, host: host))
        return try connection.readResponse(bodyless: method == "HEAD")
    }

    public func request(_ method: String, _ target: String, headers: [(String, String)] = [], body: String?) throws -> RawHTTPResponse {
        try request(method, target, headers: headers, body: body.map { Array($0.utf8) })
    }

    public func get(_ target: String) throws -> RawHTTPResponse {
        try request("GET", target)
    }

    public func delete(_ target: String) throws -> RawHTTPResponse {
        try request("DELETE", target)
    }

    /// `POST /v1/sends` with a JSON body.
    public func send(_ json: String, headers: [(String, String)] = [("Content-Type", "application/json")]) throws -> RawHTTPResponse {
        try request("POST", "/v1/sends", headers: headers, body: Array(json.utf8))
    }

    public func send(phone: String, purpose: String? = nil) throws -> RawHTTPResponse {
        var json = #"{"phone": "\#(phone)""#
        if let purpose { json += #", "purpose": "\#(purpose)""# }
        return try send(json + "}")
    }

    /// Opens `GET target` as an event stream (`Connection: close`, so the connection ends
    /// with the stream) and returns its reader once the request is written.
    public func openStream(_ target: String) throws -> EventStreamReader {
        let connection = try RawHTTPConnection(port: port, timeout: timeout)
        try connection.write(requestBytes("GET", target, headers: [("Accept", "text/event-stream")]))
        return EventStreamReader(connection)
    }

    /// A sample of `/metrics` without labels, as an integer; nil when absent.
    public func metric(_ name: String) throws -> Int? {
        let text = try get("/metrics").text
        let line = text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return line.flatMap { Int($0.split(separator: " ")[1]) }
    }

    /// Polls `/readyz` until it answers 200, for at most `timeout`.
    public func waitUntilReady(timeout: Duration = .seconds(10)) throws {
        let deadline = PatientDeadline(timeout)  // a frozen test process is given its time
        var last = "no answer"
        while true {
            do {
                let response = try get("/readyz")
                if response.status == 200 { return }
                last = "\(response.status)"
            } catch {
                last = "\(error)"
            }
            guard deadline.hasTimeLeft else {
                throw TestSupportError.didNotStart.with("the gate on \(port) never became ready (last: \(last))")
            }
            pauseBriefly(.milliseconds(20))
        }
    }
}

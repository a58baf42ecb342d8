import Foundation
import ResendGateTestSupport
import Testing

@Suite("Countdown tokens and their SSE stream over HTTP", .serialized, .ownThread)
struct CountdownRoutesTests {
    static let key = "test-key-0123456789abcdef"

    static func isToken(_ value: Any?) -> Bool {
        guard let text = value as? String else { return false }
        return (44...128).contains(text.utf8.count) && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
    }

    @Test func everyAllowedSendReturnsItsOwnURLSafeTokenAndADeniedOneTheRunningToken() throws {
        let server = try CountdownTestServer()
        defer { server.stop() }
        let first = try server.send("+8613800138000").json()
        let second = try server.send("+8613800138001").json()
        #expect(Self.isToken(first["countdown_token"]))
        #expect(Self.isToken(second["countdown_token"]))
        #expect(first["countdown_token"] as? String != second["countdown_token"] as? String)
        let denied = try server.send("+86 138 0013 8000")
        #expect(denied.status == 429)
        #expect(try denied.json()["countdown_token"] as? String == first["countdown_token"] as? String)
    }

    @Test func countdownByTokenNeedsNoAPIKeyAndShowsNoNumber() throws {
        let server = try CountdownTestServer(apiKeys: [Self.key])
        defer { server.stop() }
        #expect(try server.send("+8613800138000").status == 401)
        let token = try #require(try server.send("+8613800138000", key: Self.key).json()["countdown_token"] as? String)
        let response = try server.request("GET", "/v1/countdowns/\(token)")
        #expect(response.status == 200)
        #expect(response.header("cache-control") == "no-store")
        let body = try response.json()
        #expect(body["active"] as? Bool == true)
        #expect(body["retry_after"] as? Int == 60)
        let milliseconds = try #require(body["retry_after_ms"] as? Int)
        #expect((58_000...60_000).contains(milliseconds))
        #expect(body["resend_at"] is String && body["server_time"] is String)
        #expect(Set(body.keys) == ["active", "retry_after", "retry_after_ms", "resend_at", "server_time"])
        // The number in no spelling ("138" alone also matched a timestamp's milliseconds).
        for spelling in ["13800138000", "138 0013 8000", "138-0013-8000"] { #expect(!response.text.contains(spelling)) }
        #expect(try server.request("HEAD", "/v1/countdowns/\(token)").status == 200)
        #expect(try server.request("DELETE", "/v1/countdowns/\(token)").status == 405)
    }

    @Test(arguments: [
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",            // well formed, never issued
        "short",
        "AAAAAAAAAAAAAAAAAAAAAAA",           // 23 characters
        "AAAAAAAAAAAAAAAAAAAA.A",            // outside the alphabet
        "AAAAAAAAAAAAAAAAAAAA%2F",
        "AAAAAAAAAAAAAAAAAAAAA=",            // padding
        "",
    ])
    func unknownOrMalformedTokensAreNotFound(token: String) throws {
        let server = try CountdownTestServer()
        defer { server.stop() }
        for path in ["/v1/countdowns/\(token)", "/v1/countdowns/\(token)/events"] {
            let response = try server.request("GET", path)
            #expect(response.status == 404, "\(path)")
            #expect((try response.json()["error"] as? [String: Any])?["code"] as? String == "not_found")
        }
    }

    @Test func releasingTheCooldownMakesItsTokenStale() throws {
        let server = try CountdownTestServer()
        defer { server.stop() }
        let token = try #require(try server.send("+8613800138000").json()["countdown_token"] as? String)
        #expect(try server.request("GET", "/v1/countdowns/\(token)").status == 200)
        #expect(try server.request("DELETE", "/v1/cooldowns/%2B8613800138000").status == 204)
        #expect(try server.request("GET", "/v1/countdowns/\(token)").status == 404)
        #expect(try server.request("GET", "/v1/countdowns/\(token)/events").status == 404)
        // A new cooldown of the same number gets a new token; the old one stays stale.
        let next = try #require(try server.send("+8613800138000").json()["countdown_token"] as? String)
        #expect(next != token)
        #expect(try server.request("GET", "/v1/countdowns/\(token)").status == 404)
        #expect(try server.request("GET", "/v1/countdowns/\(next)").status == 200)
    }

    /// Real time, but bounded: a 1.5 s cooldown streams 2, 1, done. The exact timing is
    /// asserted when this process (the gate's workers run in it) did not stall meanwhile; a
    /// process frozen for seconds (CI) lets Redis's clock run on, so then the stream is
    /// held to what it promises whatever the timing: falling ticks, `done` no earlier than
    /// the deadline, and the end.
    @Test func streamTicksAtOnceThenEachSecondThenSaysDone() throws {
        let server = try CountdownTestServer(cooldown: "1500ms")
        defer { server.stop() }
        let sent = StallWatch.mark()
        let token = try #require(try server.send("+8613800138000").json()["countdown_token"] as? String)
        let opened = ContinuousClock.now
        let reader = try server.openStream("/v1/countdowns/\(token)/events")
        let first = try #require(try reader.next())
        let firstAfter = ContinuousClock.now - opened
        let head = try #require(reader.head)
        #expect(head.statusLine.hasPrefix("HTTP/1.1 200"))
        #expect(head.header("Content-Type")?.hasPrefix("text/event-stream") == true)
        #expect(head.header("Cache-Control") == "no-store")
        var events = [first]
        while events.count < 5, let event = try reader.next() {
            events.append(event)
            if event.event == "done" { break }
        }
        let elapsed = ContinuousClock.now - opened
        #expect(try reader.next() == nil)  // the response ends and the connection closes
        #expect(try server.openStreams() == 0)
        let ticks = try events.filter { $0.event == "tick" }.map { event in
            try #require(try JSONSerialization.jsonObject(with: Data(event.data.utf8)) as? [String: Int])
        }
        #expect(events.last == .init(event: "done", data: "{\"retry_after\": 0, \"retry_after_ms\": 0}"), "\(events)")
        #expect(events.dropLast().allSatisfy { $0.event == "tick" }, "\(events)")
        let stalled = StallWatch.shared.stalled(from: sent)
        if stalled < .milliseconds(100) {
            #expect(firstAfter < .milliseconds(300))
            #expect(ticks.count == 2, "\(events)")
            #expect(ticks.first?["retry_after"] == 2)
            #expect((1_001...1_500).contains(ticks.first?["retry_after_ms"] ?? 0))
            #expect(ticks.dropFirst().first?["retry_after"] == 1)
            #expect((900...1_000).contains(ticks.dropFirst().first?["retry_after_ms"] ?? 0))
            #expect(elapsed > .milliseconds(1_200) && elapsed < .milliseconds(2_500), "\(elapsed)")
        } else {
            #expect(!ticks.isEmpty && ticks.allSatisfy { (1...1_500).contains($0["retry_after_ms"] ?? 0) }, "\(events) after a \(stalled) stall")
            #expect(ticks.allSatisfy { $0["retry_after"] == (($0["retry_after_ms"] ?? 0) + 999) / 1_000 }, "\(events)")
            let remaining = ticks.map { $0["retry_after_ms"] ?? 0 }
            #expect(zip(remaining, remaining.dropFirst()).allSatisfy { $0 > $1 }, "\(events)")
            #expect(ContinuousClock.now - sent > .milliseconds(1_200), "done before the deadline")
        }
    }

    @Test func streamsAreFreedWhenTheirClientsLeave() throws {
        let server = try CountdownTestServer(workers: 2)
        defer { server.stop() }
        let token = try #require(try server.send("+8613800138000").json()["countdown_token"] as? String)
        var readers: [EventStreamReader] = []
        // 4: a worker keeps at most 4 streams of one token (AbuseStreamExhaustionTests),
        // and all of them may land on one worker.
        for _ in 0..<4 {
            let reader = try server.openStream("/v1/countdowns/\(token)/events")
            #expect(try reader.next()?.event == "tick")
            readers.append(reader)
        }
        #expect(try server.openStreams() == 4)
        for reader in readers { reader.connection.close() }
        let deadline = ContinuousClock.now + .seconds(3)
        var open = try server.openStreams()
        while open != 0 && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.02)
            open = try server.openStreams()
        }
        #expect(open == 0)
        // The connections are forgotten too (only the one asking for /metrics is open):
        // streams and the connection cap share each connection's one close callback.
        var connections = try server.gauge("resendgate_http_connections_open")
        while connections != 1 && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.02)
            connections = try server.gauge("resendgate_http_connections_open")
        }
        #expect(connections == 1)
        // The server is unharmed: a new stream still ticks.
        let again = try server.openStream("/v1/countdowns/\(token)/events")
        #expect(try again.next()?.event == "tick")
    }

    @Test func streamAcceptsOnlyGet() throws {
        let server = try CountdownTestServer()
        defer { server.stop() }
        let token = try #require(try server.send("+8613800138000").json()["countdown_token"] as? String)
        let response = try server.request("POST", "/v1/countdowns/\(token)/events", body: "{}")
        #expect(response.status == 405)
        #expect(response.header("allow") == "GET")
    }
}

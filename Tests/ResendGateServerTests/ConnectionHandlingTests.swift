import Foundation
import ResendGate
import ResendGateServer
import ResendGateTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// How a connection is handled around the request it is serving: the server keeps
/// reading it while Redis decides, and writes an answer as soon as it has it (see
/// CHTTPConnection). These pin what that must never change: pipelined requests are
/// answered in order, a client that leaves mid-request is noticed, an answer larger
/// than the socket takes arrives whole, and bytes sent early stay bounded.
@Suite("Connections around the request they serve", .serialized, .ownThread)
struct ConnectionHandlingTests {
    @Test func pipelinedSendsAreAnsweredInOrder() throws {
        try withRunningGate { gate in
            let client = gate.client()
            let phones = ["+8613800200001", "+8613800200002", "+8613800200001", "+8613800200003"]
            var bytes: [UInt8] = []
            for phone in phones {
                bytes += client.requestBytes("POST", "/v1/sends", headers: [("Content-Type", "application/json")],
                                             body: Array(#"{"phone": "\#(phone)"}"#.utf8), keepAlive: true)
            }
            let connection = try RawHTTPConnection(port: gate.port, timeout: .seconds(5))
            try connection.write(bytes)  // one write: the four requests arrive together
            var answers: [(Int, String)] = []
            for _ in phones {
                let response = try connection.readResponse()
                answers.append((response.status, try response.decode(DecisionBody.self).phone))
            }
            #expect(answers.map(\.0) == [200, 200, 429, 200])
            #expect(answers.map(\.1) == phones)
        }
    }

    /// The connection stays readable while its request is served: what arrives then must
    /// wait in the buffer (evhttp's own read callback would take it for a protocol error
    /// in that state), and is read once the first answer is written.
    @Test func aRequestThatArrivesWhileAnotherIsServedWaitsItsTurn() throws {
        try withRunningGate(redisTimeout: .seconds(10)) { gate in
            let peek = gate.client().requestBytes("GET", "/v1/cooldowns/%2B8613800200041", keepAlive: true)
            let send = gate.client().requestBytes("POST", "/v1/sends", headers: [("Content-Type", "application/json")],
                                                  body: Array(#"{"phone": "+8613800200041"}"#.utf8), keepAlive: true)
            let connection = try RawHTTPConnection(port: gate.port, timeout: .seconds(5))
            gate.redis.pause()
            try connection.write(peek)
            try Self.waitFor("the first request to be in flight") { try Self.inFlight(gate) == 1 }
            try connection.write(send)  // arrives while the first waits on Redis
            usleep(100_000)
            #expect(try Self.inFlight(gate) == 1, "the second request must wait for the first's answer")
            gate.redis.resume()
            let first = try connection.readResponse(), second = try connection.readResponse()
            #expect(first.status == 200 && first.text.contains(#""active":false"#), "\(first)")
            #expect(second.status == 200 && second.text.contains(#""allowed":true"#), "\(second)")
        }
    }

    /// The connection timeout is for a silent client, not for one waiting on us: a
    /// request that waits on Redis past it is still answered, and the timeout holds
    /// again once the answer is written.
    @Test func theConnectionTimeoutPausesWhileARequestIsServed() throws {
        let gate = try RunningGate(redisTimeout: .seconds(10), connectionTimeout: .seconds(1))
        defer { gate.stop() }
        #expect(try gate.poll("/readyz", until: 200).status == 200)
        let connection = try RawHTTPConnection(port: gate.port, timeout: .seconds(5))
        let paused = ContinuousClock.now
        gate.redis.pause()
        try Self.send(phone: "+8613800200051", on: connection, to: gate)
        try Self.waitFor("the request to be in flight") { try Self.inFlight(gate) == 1 }
        usleep(3_000_000)  // three connection timeouts while it waits on Redis
        gate.redis.resume()
        let pausedFor = ContinuousClock.now - paused
        let answer = try connection.readResponse()
        // Answered, not closed by the connection timeout: 200, or the Redis timeout's 503
        // when this process (the gate's) stood frozen (CI) until its 10 s could run out.
        #expect(answer.status == 200 || (pausedFor >= .milliseconds(9_500) && answer.errorCode == "store_unavailable"),
                "\(answer) (Redis paused for \(pausedFor))")
        // Idle again: closed after about one timeout (1 s; the bound leaves room for a
        // machine that stalls, and a timeout left paused would never close it).
        #expect(connection.closedByPeer(within: .seconds(10)))
    }

    @Test func aClientThatResetsMidRequestIsNoticedAndTheServerCarriesOn() throws {
        // Redis's timeout is far off: nothing here may wait for it.
        try withRunningGate(redisTimeout: .seconds(10)) { gate in
            let phone = "+8613800200011"
            gate.redis.pause()
            let connection = try RawHTTPConnection(port: gate.port, timeout: .seconds(3))
            try Self.send(phone: phone, on: connection, to: gate)
            // The request waits on the frozen Redis, its connection open.
            try Self.waitFor("the request to be in flight") { try Self.inFlight(gate) == 1 }
            #expect(try Self.openConnections(gate) >= 1)
            connection.reset()
            // The reset is seen while Redis is still frozen, not once an answer is written:
            // no connection is left open (other clients' connections close on their own).
            try Self.waitFor("the reset connection to be forgotten") {
                try Self.openConnections(gate) == 0
            }
            #expect(try Self.inFlight(gate) == 1, "the decision itself still runs")
            gate.redis.resume()
            // The decision completes (the client may retry and meet the cooldown), and
            // nothing is left in flight.
            try Self.waitFor("the request to finish") { try Self.inFlight(gate) == 0 }
            let again = try gate.client().send(phone: phone)
            #expect(again.status == 429, "\(again)")
            #expect(try gate.client().send(phone: "+8613800200012").status == 200)
        }
    }

    @Test func aClientThatHalfClosesAfterItsRequestStillGetsTheAnswer() throws {
        try withRunningGate(redisTimeout: .seconds(10)) { gate in
            let connection = try RawHTTPConnection(port: gate.port, timeout: .seconds(5))
            gate.redis.pause()
            try Self.send(phone: "+8613800200013", on: connection, to: gate)
            try Self.waitFor("the request to be in flight") { try Self.inFlight(gate) == 1 }
            connection.shutdownWrite()  // all it will send: the server reads end of input
            usleep(200_000)
            gate.redis.resume()
            let answer = try connection.readResponse()
            #expect(answer.status == 200 && answer.text.contains(#""allowed":true"#), "\(answer)")
            #expect(connection.closedByPeer(within: .seconds(10)))
        }
    }

    /// A client that pipelines requests and then half-closes gets every answer, in order
    /// (one answered at once, one after Redis, one at once again), and then the close.
    @Test func pipelinedRequestsBeforeAHalfCloseAreAllAnswered() throws {
        try withRunningGate { gate in
            let connection = try RawHTTPConnection(port: gate.port, timeout: .seconds(5))
            let healthz = gate.client().requestBytes("GET", "/healthz", keepAlive: true)
            let send = gate.client().requestBytes(
                "POST", "/v1/sends", headers: [("Content-Type", "application/json")],
                body: Array(#"{"phone": "+8613800200014"}"#.utf8), keepAlive: true)
            try connection.write(healthz + send + healthz)
            connection.shutdownWrite()
            #expect(try connection.readResponse().text.contains("ok"))
            let decision = try connection.readResponse()
            #expect(decision.status == 200 && decision.text.contains(#""allowed":true"#), "\(decision)")
            #expect(try connection.readResponse().text.contains("ok"))
            #expect(connection.closedByPeer(within: .seconds(5)))
        }
    }

    /// Behind answers the client has not read yet, a pipelined request larger than what a
    /// connection reads while an answer waits (4 KiB) is read whole and answered once the
    /// client reads the earlier answers.
    @Test func aLargeRequestPipelinedBehindUnreadAnswersIsAnswered() throws {
        try withRunningGate { gate in
            let connection = try RawHTTPConnection(port: gate.port, timeout: .seconds(5), receiveBuffer: 4096)
            let document = gate.client().requestBytes("GET", "/openapi.yaml", keepAlive: true)
            let padded = #"{"phone": "+8613800200015""# + String(repeating: " ", count: 12_000) + "}"
            let send = gate.client().requestBytes(
                "POST", "/v1/sends", headers: [("Content-Type", "application/json")], body: Array(padded.utf8), keepAlive: true)
            // More answers than the kernel's buffers hold (up to 4 MB for the server's socket
            // on loopback), so that the server writes them as the client reads.
            try connection.write(Array([[UInt8]](repeating: document, count: 400).joined()) + send)
            usleep(300_000)  // the server is stuck writing, with the send partly read
            for index in 0..<400 {
                #expect(try connection.readResponse().status == 200, "answer \(index)")
            }
            let decision = try connection.readResponse()
            #expect(decision.status == 200 && decision.text.contains(#""allowed":true"#), "\(decision)")
        }
    }

    @Test func aStreamIsNeverOpenedForAClientThatResetWhileItWasLookedUp() throws {
        try withRunningGate(redisTimeout: .seconds(10)) { gate in
            let sent = try gate.client().send(phone: "+8613800200014")
            let token = try #require(try sent.decode(DecisionBody.self).countdown_token)
            gate.redis.pause()
            let connection = try RawHTTPConnection(port: gate.port, timeout: .seconds(3))
            try connection.write(gate.client().requestBytes("GET", "/v1/countdowns/\(token)/events", keepAlive: true))
            try Self.waitFor("the lookup to be in flight") { try Self.inFlight(gate) == 1 }
            connection.reset()
            try Self.waitFor("the reset connection to be forgotten") {
                try Self.openConnections(gate) == 0
            }
            gate.redis.resume()
            try Self.waitFor("the lookup to finish") { try Self.inFlight(gate) == 0 }
            #expect(try Self.sample(gate, "resendgate_sse_streams") == 0)
        }
    }

    @Test func afterAnAnswerWaitsForTheSocketTheNextIsWrittenAtOnceAgain() throws {
        try withRunningGate { gate in
            // 400 answers of 16 KB at once to a 4 KB window: many wait for the socket.
            let connection = try RawHTTPConnection(port: gate.port, timeout: .seconds(5), receiveBuffer: 4096)
            let request = gate.client().requestBytes("GET", "/openapi.yaml", keepAlive: true)
            try connection.write(Array([[UInt8]](repeating: request, count: 400).joined()))
            // Nothing is read until an answer has found the socket full: read at once, a
            // slow server (AddressSanitizer) never gets ahead of the reader.
            try Self.waitFor("an answer to wait for the socket") { try Self.queuedAnswers(gate) > 0 }
            for _ in 0..<400 { _ = try connection.readResponse() }
            let queued = try Self.queuedAnswers(gate)
            #expect(queued > 0, "no answer waited for the socket: the test does not test")
            // One at a time now, each read before the next is asked: the socket takes each
            // whole, so none waits (libevent's own writes leave the buffer's front frozen,
            // which a write of ours must undo).
            for _ in 0..<20 {
                try connection.write(gate.client().requestBytes("GET", "/healthz", keepAlive: true))
                #expect(try connection.readResponse().status == 200)
            }
            #expect(try Self.queuedAnswers(gate) == queued)
        }
    }

    /// On SIGTERM past the drain deadline, a request still waiting on Redis is answered
    /// 503 before its connection is closed.
    @Test func aRequestStillWaitingWhenTheDrainEndsGets503() throws {
        let gate = try RunningGate(redisTimeout: .seconds(10), drainTimeout: .milliseconds(300))
        defer { gate.stop() }
        #expect(try gate.poll("/readyz", until: 200).status == 200)
        let connection = try RawHTTPConnection(port: gate.port, timeout: .seconds(5))
        gate.redis.pause()
        try Self.send(phone: "+8613800200015", on: connection, to: gate)
        try Self.waitFor("the request to be in flight") { try Self.inFlight(gate) == 1 }
        gate.httpServer?.shutdown()
        let answer = try connection.readResponse()
        #expect(answer.status == 503 && answer.errorCode == "store_unavailable", "\(answer)")
    }

    @Test func anAnswerLargerThanTheSocketTakesArrivesWhole() throws {
        try withRunningGate { gate in
            let expected = try gate.client().get("/openapi.yaml")
            #expect(expected.status == 200 && expected.body.count > 10_000)
            // A small receive window and 400 answers (6 MiB) asked for at once: more than
            // the kernel buffers on loopback, so the server's writes stop part way, its
            // later answers find the socket full, and all go on as the client reads.
            let count = 400
            let queuedBefore = try Self.queuedAnswers(gate)
            let connection = try RawHTTPConnection(port: gate.port, timeout: .seconds(5), receiveBuffer: 4096)
            let request = gate.client().requestBytes("GET", "/openapi.yaml", keepAlive: true)
            try connection.write(Array([[UInt8]](repeating: request, count: count).joined()))
            // Nothing is read until the server has filled the window and an answer waits.
            try Self.waitFor("an answer to wait for the socket") {
                try Self.queuedAnswers(gate) > queuedBefore
            }
            for index in 0..<count {
                let response = try connection.readResponse()
                #expect(response.status == 200, "answer \(index)")
                #expect(response.body == expected.body, "answer \(index) differs")
            }
            #expect(try gate.client().send(phone: "+8613800200021").status == 200)
        }
    }

    @Test func bytesSentWhileARequestIsServedAreBoundedAndReadAfterItsAnswer() throws {
        try withRunningGate(redisTimeout: .seconds(3)) { gate in
            let phone = "+8613800200031"
            let paused = ContinuousClock.now
            gate.redis.pause()
            // Writes give up after 300 ms without progress; reads use the same limit. A
            // small send buffer, so that what the kernel holds is mostly the server's
            // receive buffer, whose ceiling this machine states.
            let sendBuffer: Int32 = 256 << 10
            let connection = try RawHTTPConnection(port: gate.port, timeout: .milliseconds(300), sendBuffer: sendBuffer)
            try Self.send(phone: phone, on: connection, to: gate)
            try Self.waitFor("the request to be in flight") { try Self.inFlight(gate) == 1 }
            // Far more than that while Redis is frozen. The server takes a bounded amount
            // and stops reading, so the rest backs up and the writes stall; a server that
            // read on would take it all.
            let kernelHolds = try Self.receiveBufferCeiling() + 2 * Int(sendBuffer)
            let bound = kernelHolds + 64 << 10 + 16 << 10 + 1 << 20
            let flood = [UInt8](repeating: UInt8(ascii: "x"), count: bound + 8 << 20)
            let taken = connection.writeSome(flood)
            #expect(taken < bound, "the server took \(taken) bytes while serving a request (bound \(bound))")
            gate.redis.resume()
            let pausedFor = ContinuousClock.now - paused
            let answer = try Self.retrying { try connection.readResponse() }
            if pausedFor < .milliseconds(2_500) {
                #expect(answer.status == 200, "\(answer)")
                #expect(try answer.decode(DecisionBody.self).phone == phone)
            } else {
                // This process (the gate's) stood frozen (CI) until the 3 s Redis timeout
                // could run out: its 503 is the answer then, whole and in its turn.
                #expect(answer.status == 200 || answer.errorCode == "store_unavailable", "\(answer) (Redis paused for \(pausedFor))")
            }
            // What followed is not a request: refused (or cut), and the connection closes.
            if let next = try? Self.retrying({ try connection.readResponse() }) { #expect(next.status == 400, "\(next)") }
            #expect(connection.closedByPeer(within: .seconds(10)))
            if pausedFor < .milliseconds(2_500) {
                #expect(try gate.client().send(phone: "+8613800200032").status == 200)
            } else {
                // After its Redis timeout the gate reconnects first: it serves again soon.
                let serving = PatientDeadline(.seconds(5))
                var status = 0
                var index = 0
                repeat {
                    status = try gate.client().send(phone: "+86138002001\(String(format: "%02d", 40 + index % 60))").status
                    index += 1
                    if status != 200 { usleep(50_000) }
                } while status != 200 && serving.hasTimeLeft
                #expect(status == 200, "not serving again 5 s after Redis was back")
            }
        }
    }

    // MARK: - Helpers

    static func sample(_ gate: RunningGate, _ name: String) throws -> Double? {
        try PrometheusSamples(try gate.client().get("/metrics").text).value(name, "")
    }

    /// Answers so far that the socket could not take at once (-1: no such metric).
    static func queuedAnswers(_ gate: RunningGate) throws -> Double {
        try sample(gate, "resendgate_http_answers_queued_total") ?? -1
    }

    /// Requests in flight, not counting the one that asks.
    static func inFlight(_ gate: RunningGate) throws -> Double {
        (try sample(gate, "resendgate_http_requests_in_flight") ?? -1) - 1
    }

    /// Open connections, not counting the one that asks.
    static func openConnections(_ gate: RunningGate) throws -> Double {
        (try sample(gate, "resendgate_http_connections_open") ?? -1) - 1
    }

    /// `POST /v1/sends` for `phone` on a keep-alive connection.
    static func send(phone: String, on connection: RawHTTPConnection, to gate: RunningGate) throws {
        try connection.write(gate.client().requestBytes(
            "POST", "/v1/sends", headers: [("Content-Type", "application/json")],
            body: Array(#"{"phone": "\#(phone)"}"#.utf8), keepAlive: true))
    }

    /// The most a TCP receive buffer may grow to here (the last of net.ipv4.tcp_rmem).
    static func receiveBufferCeiling() throws -> Int {
        let text = try String(contentsOfFile: "/proc/sys/net/ipv4/tcp_rmem", encoding: .utf8)
        return try #require(text.split(whereSeparator: \.isWhitespace).last.flatMap { Int($0) })
    }

    /// Retries a read that timed out, for up to `timeout` of this process's running time
    /// (a frozen process, CI's, is given its time).
    static func retrying<T>(within timeout: Duration = .seconds(5), _ read: () throws -> T) throws -> T {
        let deadline = PatientDeadline(timeout)
        while true {
            do {
                return try read()
            } catch RawHTTPError.timedOut where deadline.hasTimeLeft {
                continue
            }
        }
    }

    /// Polls `condition` until it holds; records an issue after `timeout` (long enough for a
    /// machine that stalls for seconds: a condition that holds ends the wait at once).
    static func waitFor(_ what: String, within timeout: Duration = .seconds(10), _ condition: () throws -> Bool) throws {
        let deadline = PatientDeadline(timeout)  // running time: the gate runs in this process
        while try !condition() {
            guard deadline.hasTimeLeft else {
                Issue.record("timed out waiting for \(what)")
                return
            }
            usleep(10_000)
        }
    }
}

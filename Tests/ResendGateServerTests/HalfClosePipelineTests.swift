import Foundation
import ResendGate
import ResendGateServer
import ResendGateTestSupport
import Testing

/// A client that writes N pipelined requests at once and then half-closes
/// (`shutdown(SHUT_WR)`) gets every one answered, in order, and then the close: whether
/// each answer is made inside the framing's callback (`/healthz`), waits for Redis
/// (`POST /v1/sends`), or the two alternate. An answer made inside the callback used to
/// requeue the connection, and the end of input then closed it with whole requests still
/// buffered (issue 34, finding 2). Each count is tried many times: the loss was a race
/// between the resume and the end of input.
@Suite("Pipelined requests before a half-close", .serialized, .ownThread)
struct HalfClosePipelineTests {
    enum Kind: String, CaseIterable { case healthz, sends, mixed }

    @Test(arguments: [2, 3, 10, 50, 1000])
    func everyHealthzBeforeTheHalfCloseIsAnswered(count: Int) throws {
        try run(.healthz, count: count)
    }

    @Test(arguments: [2, 3, 10, 50, 1000])
    func everySendBeforeTheHalfCloseIsAnswered(count: Int) throws {
        try run(.sends, count: count)
    }

    /// `[send, /healthz, /healthz, send, ...]`: the shape that lost its last send.
    @Test(arguments: [2, 3, 4, 10, 50, 1000])
    func everyRequestOfAMixedPipelineIsAnswered(count: Int) throws {
        try run(.mixed, count: count)
    }

    /// Enough tries to catch the race (it lost requests in about half of them before).
    private static func tries(_ count: Int) -> Int {
        count <= 10 ? 25 : count <= 50 ? 8 : 2
    }

    private func run(_ kind: Kind, count: Int) throws {
        try withRunningGate(redisTimeout: .seconds(10)) { gate in
            var nextPhone = 0
            for attempt in 0..<Self.tries(count) {
                var expected: [String?] = []  // a send's phone, nil for /healthz
                var bytes: [UInt8] = []
                for index in 0..<count {
                    if Self.isSend(kind, index) {
                        nextPhone += 1
                        let phone = "+86139" + String(format: "%08d", 10_000 * count + nextPhone)
                        expected.append(phone)
                        bytes += gate.client().requestBytes(
                            "POST", "/v1/sends", headers: [("Content-Type", "application/json")],
                            body: Array(#"{"phone": "\#(phone)"}"#.utf8), keepAlive: true)
                    } else {
                        expected.append(nil)
                        bytes += gate.client().requestBytes("GET", "/healthz", keepAlive: true)
                    }
                }
                let connection = try RawHTTPConnection(port: gate.port, timeout: .seconds(10))
                defer { connection.close() }
                try connection.write(bytes)  // one write, then the end of input
                connection.shutdownWrite()
                for (index, phone) in expected.enumerated() {
                    let answer: RawHTTPResponse
                    do {
                        answer = try connection.readResponse()
                    } catch {
                        Issue.record("\(kind) ×\(count), try \(attempt): answer \(index) never came (\(error))")
                        return
                    }
                    if let phone {
                        let decision = try answer.decode(DecisionBody.self)
                        #expect(answer.status == 200 && decision.allowed && decision.phone == phone,
                                "\(kind) ×\(count), try \(attempt): answer \(index) is \(answer)")
                    } else {
                        #expect(answer.status == 200 && answer.text.contains(#""ok""#),
                                "\(kind) ×\(count), try \(attempt): answer \(index) is \(answer)")
                    }
                }
                #expect(connection.closedByPeer(within: .seconds(10)), "\(kind) ×\(count), try \(attempt): no close")
            }
        }
    }

    private static func isSend(_ kind: Kind, _ index: Int) -> Bool {
        switch kind {
        case .healthz: false
        case .sends: true
        case .mixed: index % 3 == 0  // send, /healthz, /healthz, send, ...
        }
    }
}

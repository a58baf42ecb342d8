import Foundation
import Synchronization
import ResendGate
import ResendGateServerTestSupport
import ResendGateTestSupport
import Testing

/// `--ip-max-requests` over HTTP (issue 23, finding 2): refused sends were never counted, so
/// one `client_ip` could ask without bound (14 761 refused requests left its set empty).
/// Now every request with a client address counts, allowed or not, before Redis is asked.
@Suite("Per-client request limit over HTTP", .ownThread)
struct RequestLimitTests {
    @Test func aClientIPPastItsRequestsGets429WithARealWaitAndCostsRedisNothing() throws {
        try TestGate.with({
            try TestGate(workers: 1, ipMaxRequests: RequestRate(count: 3, period: .seconds(600)), waitUntilReady: true)
        }) { gate in
            let client = gate.client()
            func send(_ phone: String, ip: String?) throws -> RawHTTPResponse {
                try client.send(#"{"phone": "\#(phone)"\#(ip.map { #", "client_ip": "\#($0)""# } ?? "")}"#)
            }
            // Three requests, allowed or not (the second and third meet the cooldown).
            #expect(try send("+8613800138000", ip: "203.0.113.7").status == 200)
            #expect(try send("+8613800138000", ip: "203.0.113.7").status == 429)
            let third = try send("+8613800138001", ip: "203.0.113.7")
            #expect(third.status == 200, "\(third)")
            let redisCalls = try Self.calls(gate)
            var refusals: [RawHTTPResponse] = []
            for index in 0..<20 { refusals.append(try send("+86138001381\(String(format: "%02d", index))", ip: "203.0.113.7")) }
            for refusal in refusals {
                let body = try #require(try JSONSerialization.jsonObject(with: Data(refusal.body)) as? [String: Any])
                #expect(refusal.status == 429 && body["reason"] as? String == "too_many_requests", "\(refusal)")
                // One request each 200 s, the burst of three spent: the wait is real.
                #expect((body["retry_after"] as? Int).map { $0 > 190 && $0 <= 200 } == true, "\(body)")
                #expect(refusal.header("RateLimit-Policy") == #""too_many_requests";q=3"#)
                #expect(body["countdown_token"] == nil)
            }
            #expect(try Self.calls(gate) == redisCalls, "the refusals asked Redis nothing")
            // Another address, and a request without one, are not limited by it.
            #expect(try send("+8613800138050", ip: "203.0.113.8").status == 200)
            #expect(try send("+8613800138051", ip: nil).status == 200)
            // The /64 is one client: another host in it shares the limit.
            for _ in 0..<3 { _ = try send("+8613800138060", ip: "2001:db8:1:2::1") }
            #expect(try send("+8613800138061", ip: "2001:db8:1:2::2").status == 429)
            let metrics = try PrometheusSamples(try client.get("/metrics").text)
            #expect(metrics.value("resendgate_decisions_total", #"outcome="denied",reason="too_many_requests""#) == 21)
        }
    }

    /// Issue 34, finding 5: each worker counted on its own, so `--ip-max-requests 20/1m` let
    /// a client make 20 requests a minute per worker (a client's connections are spread over
    /// the workers by the kernel). Now one count per process: 80 requests of one client, each
    /// on a connection of its own, from 4 threads at once, over 2 workers: exactly 20 pass.
    /// (A period of an hour, so that no request is let in again while the test runs.)
    @Test func twoWorkersShareOneCountOverSeparateConnections() throws {
        try TestGate.with({
            try TestGate(workers: 2, ipMaxRequests: RequestRate(count: 20, period: .seconds(3600)), waitUntilReady: true)
        }) { gate in
            let client = gate.client()
            let statuses = Mutex<[Int]>([])
            DispatchQueue.concurrentPerform(iterations: 4) { thread in
                for index in 0..<20 {
                    let phone = "+86138002\(thread)\(String(format: "%04d", index))"
                    let status = (try? client.send(#"{"phone": "\#(phone)", "client_ip": "198.51.100.20"}"#))?.status ?? 0
                    statuses.withLock { $0.append(status) }
                }
            }
            let all = statuses.withLock { $0 }
            #expect(all.count == 80 && all.allSatisfy { $0 == 200 || $0 == 429 }, "\(all)")
            #expect(all.filter { $0 == 200 }.count == 20, "\(all.filter { $0 == 200 }.count) of 80 admitted past a limit of 20")
            let metrics = try PrometheusSamples(try client.get("/metrics").text)
            #expect(metrics.value("resendgate_decisions_total", #"outcome="denied",reason="too_many_requests""#) == 60)
        }
    }

    /// Redis's commands so far (INFO commandstats, without the INFO calls themselves).
    static func calls(_ gate: TestGate) throws -> Int {
        let stats = try gate.redis.client().command("INFO", "commandstats").string ?? ""
        return stats.split(whereSeparator: \.isNewline).filter { !$0.hasPrefix("cmdstat_info") }.reduce(0) { total, line in
            guard let range = line.range(of: "calls=") else { return total }
            return total + (Int(line[range.upperBound...].prefix { $0.isNumber }) ?? 0)
        }
    }
}

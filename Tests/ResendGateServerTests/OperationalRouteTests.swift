import Foundation
import ResendGate
import ResendGateTestSupport
import Testing

/// `/healthz`, `/readyz`, `/metrics` and `/`, and how the gate behaves when Redis
/// freezes (SIGSTOP): 503 within the Redis timeout, never a hang, never an allowed send.
@Suite("Operational routes and a frozen Redis", .ownThread)
struct OperationalRouteTests {
    @Test func healthzAndReadyzAnswer200() throws {
        try withRunningGate { gate in
            let health = try gate.client().get("/healthz")
            #expect(health.statusLine == "HTTP/1.1 200 OK")
            #expect(health.header("Content-Type") == jsonContentType)
            #expect(health.text == #"{"status":"ok"}"#)
            let ready = try gate.client().get("/readyz")
            #expect(ready.statusLine == "HTTP/1.1 200 OK")
            #expect(ready.header("Content-Type") == jsonContentType)
            #expect(ready.text == #"{"status":"ready"}"#)
            let head = try gate.client().request("HEAD", "/healthz")
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
        }
    }

    @Test func theDemoPageIsHTMLServedFromItsFile() throws {
        let file = try OpenAPIDocumentTests.packageFile("Sources/ResendGateServer/Content/DemoPage.html")
        try withRunningGate { gate in
            let page = try gate.client().get("/")
            #expect(page.status == 200)
            #expect(page.header("Content-Type") == "text/html; charset=utf-8")
            #expect(page.text.lowercased().hasPrefix("<!doctype html>"))
            #expect(page.body == Array(file.utf8), "the served page is not Content/DemoPage.html")
        }
    }

    @Test func metricsIsPrometheusTextThatCountsDecisions() throws {
        // A healthy Redis costs no error. (With a 300 ms Redis timeout, a Redis starved on a
        // loaded CI machine once timed a command out here, legitimately: the fixture's
        // default timeout is long for that reason.)
        try withRunningGate { gate in
            let client = gate.client()
            #expect(try client.send(phone: "+8613800138000").status == 200)
            #expect(try client.send(phone: "+8613800138000").status == 429)
            #expect(try client.send(phone: "13800138000").status == 429)
            #expect(try client.send(phone: "+8613800138001").status == 200)
            #expect(try client.send(#"{"phone": "12"}"#).status == 400)
            let response = try client.get("/metrics")
            #expect(response.statusLine == "HTTP/1.1 200 OK")
            #expect(response.header("Content-Type") == "text/plain; version=0.0.4; charset=utf-8")
            let metrics = try PrometheusSamples(response.text)
            #expect(metrics.value("resendgate_decisions_total", #"outcome="allowed",reason="""#) == 2)
            #expect(metrics.value("resendgate_decisions_total", #"outcome="denied",reason="cooldown""#) == 2)
            #expect(metrics.type("resendgate_decisions_total") == "counter")
            #expect(metrics.value("resendgate_build_info", "version=\"\(ResendGateVersion.current)\"") == 1)
            #expect(metrics.type("resendgate_http_request_duration_seconds") == "histogram")
            #expect(metrics.type("resendgate_http_requests_in_flight") == "gauge")
            // The /readyz polls of the fixture and the five sends were answered before this one.
            let count = try #require(metrics.value("resendgate_http_request_duration_seconds_count", ""))
            #expect(count >= 6)
            #expect(metrics.value("resendgate_http_request_duration_seconds_bucket", #"le="+Inf""#) == count)
            #expect(metrics.value("resendgate_http_requests_total", #"class="4xx""#) == 3)
            #expect(metrics.value("resendgate_http_requests_in_flight", "") == 1)  // this very request
            #expect(metrics.value("resendgate_redis_up", "") == 2)  // both workers
            #expect(metrics.value("resendgate_redis_errors_total", "") == 0)
            #expect(metrics.type("resendgate_redis_reconnects_total") == "counter")
            // One Redis: no cluster redirections, each kind shown.
            #expect(metrics.type("resendgate_redis_redirects_total") == "counter")
            for kind in ["moved", "ask", "tryagain"] { #expect(metrics.value("resendgate_redis_redirects_total", "kind=\"\(kind)\"") == 0) }
        }
    }

    @Test func aSendWhileRedisIsFrozenGets503WithinTheTimeoutAndNeverAllows() throws {
        try withRunningGate(redisTimeout: .milliseconds(300)) { gate in
            gate.redis.pause()
            for phone in ["+8613800138000", "+8613800138001", "+8613800138000"] {
                let started = StallWatch.mark()
                let response = try gate.client().send(phone: phone)
                // The 300 ms Redis timeout and slack, in this process's running time (the
                // gate runs in it; a frozen process times nothing out).
                let elapsed = StallWatch.shared.ran(since: started)
                #expect(response.statusLine == "HTTP/1.1 503 Service Unavailable", "\(response)")
                try ErrorResponseTests.expectError(response, code: "store_unavailable", phone)
                #expect(elapsed < .milliseconds(1300), "answered after \(elapsed)")
            }
            let peek = try gate.client().get("/v1/cooldowns/%2B8613800138002")
            #expect(peek.status == 503)
            #expect(peek.errorCode == "store_unavailable")
            let metrics = try PrometheusSamples(try gate.client().get("/metrics").text)
            #expect(metrics.value("resendgate_decisions_total", #"outcome="allowed",reason="""#) == 0)
            #expect((metrics.value("resendgate_redis_errors_total", "") ?? 0) >= 1)
            gate.redis.resume()
            #expect(try gate.poll("/readyz", until: 200).status == 200)
            // Redis answers again: sends are decided again.
            let after = try gate.client().send(phone: "+8613800138003")
            #expect(after.status == 200)
        }
    }

    @Test func readyzIs503WhileRedisIsFrozenAndRecovers() throws {
        try withRunningGate(redisTimeout: .milliseconds(300)) { gate in
            gate.redis.pause()
            // No other traffic: readiness must notice a frozen Redis on its own.
            let frozen = try gate.poll("/readyz", until: 503, timeout: .seconds(3))
            #expect(frozen.statusLine == "HTTP/1.1 503 Service Unavailable", "\(frozen)")
            try ErrorResponseTests.expectError(frozen, code: "store_unavailable", "/readyz")
            #expect(try gate.client().get("/healthz").status == 200)
            gate.redis.resume()
            #expect(try gate.poll("/readyz", until: 200).status == 200)
        }
    }
}

/// The samples of a Prometheus text exposition, checked line by line as it is read.
struct PrometheusSamples {
    private var samples: [String: Double] = [:]
    private var types: [String: String] = [:]

    init(_ text: String) throws {
        var helped = Set<String>()
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.isEmpty { continue }
            if line.hasPrefix("# HELP ") {
                helped.insert(String(line.dropFirst(7).prefix { $0 != " " }))
            } else if line.hasPrefix("# TYPE ") {
                let parts = line.dropFirst(7).split(separator: " ")
                guard parts.count == 2, ["counter", "gauge", "histogram", "summary", "untyped"].contains(parts[1]) else {
                    throw RawHTTPError.malformed("TYPE line: \(line)")
                }
                types[String(parts[0])] = String(parts[1])
            } else if line.hasPrefix("#") {
                continue
            } else {
                guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                    throw RawHTTPError.malformed("sample line: \(line)")
                }
                let series = line[..<space]
                let name = series.prefix { $0 != "{" }
                guard name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == ":" }), !name.isEmpty else {
                    throw RawHTTPError.malformed("metric name: \(line)")
                }
                let family = ["_bucket", "_sum", "_count"].reduce(String(name)) { family, suffix in
                    family.hasSuffix(suffix) && types[String(family.dropLast(suffix.count))] == "histogram"
                        ? String(family.dropLast(suffix.count)) : family
                }
                guard types[family] != nil, helped.contains(family) else {
                    throw RawHTTPError.malformed("sample before its HELP and TYPE: \(line)")
                }
                samples[String(series)] = value
            }
        }
    }

    /// The value of `name{labels}` (`labels` without braces; "" for none).
    func value(_ name: String, _ labels: String) -> Double? {
        samples[labels.isEmpty ? name : "\(name){\(labels)}"]
    }

    func type(_ name: String) -> String? { types[name] }
}

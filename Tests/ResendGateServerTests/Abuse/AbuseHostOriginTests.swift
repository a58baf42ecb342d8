import Foundation
import ResendGateTestSupport
import Testing

/// A page in the user's browser against a gate on their loopback: through DNS
/// rebinding (its own name pointed at 127.0.0.1, so `Host` names it) and cross-origin
/// (`Origin` names it). Every such request is refused before it reaches Redis: 421 for
/// a foreign `Host` on a keyless gate, 403 `forbidden` for a foreign `Origin` on
/// anything but GET and HEAD. The gate's own pages, curl and servers still pass.
@Suite("Abuse: Host and Origin from a browser", .serialized, .ownThread)
struct AbuseHostOriginTests {
    static let phone = "+447911123456"
    static let body = #"{"phone": "+447911123456"}"#
    static let json = ("Content-Type", "application/json")

    @Test func dnsRebindingToAKeylessGateIsMisdirected() throws {
        try withInputAbuseGate { gate in
            let foreignHosts = [
                "attacker.example", "attacker.example:\(gate.port)", "127.0.0.1.nip.io:\(gate.port)", "localhost.attacker.example",
                "127.0.0.2:\(gate.port)", "[::2]:\(gate.port)", "localhost:x", "localhost:", "0.0.0.0:\(gate.port)", "",
            ]
            for host in foreignHosts {
                let send = try gate.rawRequest("POST", "/v1/sends", headers: [("Host", host), Self.json], body: Self.body)
                #expect(send.status == 421, "POST with Host \(host): \(send)")
                #expect(send.errorCode == "misdirected_request")
                #expect(send.header("Content-Type") == jsonContentType)
                for (method, target) in [("GET", "/"), ("GET", "/metrics"), ("GET", "/v1/cooldowns/%2B447911123456")] {
                    let read = try gate.rawRequest(method, target, headers: [("Host", host)])
                    #expect(read.status == 421, "\(method) \(target) with Host \(host): \(read)")
                }
            }
            #expect(try gate.redisKeys() == [], "a misdirected send must write nothing")

            // A real cooldown, then a rebinding page's DELETE and countdown read.
            let allowed = try gate.client().send(Self.body)
            #expect(allowed.status == 200, "\(allowed)")
            let token = try #require(try allowed.decode(DecisionBody.self).countdown_token)
            let release = try gate.rawRequest("DELETE", "/v1/cooldowns/%2B447911123456", headers: [("Host", "attacker.example")])
            #expect(release.status == 421)
            let countdown = try gate.rawRequest("GET", "/v1/countdowns/\(token)", headers: [("Host", "attacker.example")])
            #expect(countdown.status == 421)
            #expect(try gate.pttl(InputAbuseGate.cooldownKey(Self.phone)) > 0, "a misdirected DELETE must not release")

            // Loopback names, in any case, with or without a port; and no Host at all (HTTP/1.0 tools).
            for host in ["localhost", "LocalHost:\(gate.port)", "127.0.0.1", "127.0.0.1:\(gate.port)", "[::1]", "[::1]:\(gate.port)"] {
                #expect(try gate.rawRequest("GET", "/healthz", headers: [("Host", host)]).status == 200, "Host \(host)")
            }
            #expect(try gate.rawRequest("GET", "/healthz", headers: []).status == 200, "no Host")

            // Two Host headers: refused whichever comes first, so the check cannot read the wrong one.
            for pair in [["127.0.0.1", "attacker.example"], ["attacker.example", "127.0.0.1"]] {
                let twice = try gate.rawRequest("GET", "/healthz", headers: pair.map { ("Host", $0) })
                #expect(twice.status == 400, "Host \(pair): \(twice)")
            }
        }
    }

    @Test func aForeignOriginCannotWriteToAKeylessGate() throws {
        try withInputAbuseGate { gate in
            let own = "http://127.0.0.1:\(gate.port)"
            let foreign = ["http://attacker.example", "null", "http://127.0.0.1:\(gate.port + 1)", "https://127.0.0.1:\(gate.port)",
                           "http://localhost:\(gate.port).attacker.example", "http://127.0.0.1:\(gate.port)/x"]
            for origin in foreign {
                let send = try gate.client().send(Self.body, headers: [Self.json, ("Origin", origin)])
                #expect(send.status == 403, "POST from \(origin): \(send)")
                #expect(send.errorCode == "forbidden")
                for method in ["PUT", "PATCH", "OPTIONS"] {
                    #expect(try gate.client().request(method, "/v1/sends", headers: [("Origin", origin)]).status == 403, "\(method) from \(origin)")
                }
            }
            #expect(try gate.redisKeys() == [], "a send from a foreign origin must write nothing")

            // The gate's own pages (the demo page) on the port it bound, by every loopback name.
            for origin in [own, "http://localhost:\(gate.port)", "http://[::1]:\(gate.port)", "HTTP://LOCALHOST:\(gate.port)"] {
                let send = try gate.client().send(Self.body, headers: [Self.json, ("Origin", origin)])
                #expect([200, 429].contains(send.status), "POST from \(origin): \(send)")
            }
            #expect(try gate.pttl(InputAbuseGate.cooldownKey(Self.phone)) > 0)

            // A foreign DELETE does not release; a foreign GET may read (no CORS: the page cannot see the answer).
            let release = try gate.client().request("DELETE", "/v1/cooldowns/%2B447911123456", headers: [("Origin", "http://attacker.example")])
            #expect(release.status == 403)
            #expect(try gate.pttl(InputAbuseGate.cooldownKey(Self.phone)) > 0, "a foreign DELETE must not release")
            let peek = try gate.client().request("GET", "/v1/cooldowns/%2B447911123456", headers: [("Origin", "http://attacker.example")])
            #expect(peek.status == 200)
            // Without Origin (curl, a server) the release goes through.
            #expect(try gate.client().delete("/v1/cooldowns/%2B447911123456").status == 204)
        }
    }

    /// `--allow-origins` (here from RESENDGATE_ALLOW_ORIGINS) replaces the default list.
    @Test func allowOriginsNamesTheOnlyPagesThatMayWrite() throws {
        try withInputAbuseGate(environment: ["RESENDGATE_ALLOW_ORIGINS": "https://App.Example.com:443/, http://127.0.0.1:1"]) { gate in
            #expect(try gate.client().send(Self.body, headers: [Self.json, ("Origin", "https://app.example.com")]).status == 200)
            let own = try gate.client().send(Self.body, headers: [Self.json, ("Origin", "http://127.0.0.1:\(gate.port)")])
            #expect(own.status == 403, "the default list no longer applies: \(own)")
            #expect(try gate.client().send(Self.body, headers: [Self.json, ("Origin", "https://app.example.com:8443")]).status == 403)
        }
        // An origin with a path is a configuration error, not a silent mismatch.
        let refused = try CommandRunner.run(
            try BuiltProducts.executable(named: "resendgate"),
            ["serve", "--port", "0", "--redis", "redis://127.0.0.1:1/0", "--allow-origins", "https://app.example.com/login"],
            timeout: .seconds(10))
        #expect(refused.status == .exited(2), "\(refused)")
        #expect(refused.stderr.contains("allow-origins"), "\(refused.stderr)")
    }

    /// With API keys the Host is not checked (such a gate may be reached by any name),
    /// but a foreign Origin is still refused: a proxy that adds the key for browser
    /// traffic would otherwise let every page write through it.
    @Test func withAPIKeysAForeignOriginIsStillRefused() throws {
        try withInputAbuseGate(apiKey: "abuse-test-key-0123456789") { gate in
            let foreign = try gate.rawRequest("POST", "/v1/sends", headers: [("Host", "gate.internal"), Self.json, ("Origin", "http://attacker.example")],
                                              body: Self.body)
            #expect(foreign.status == 403, "\(foreign)")
            #expect(try gate.redisKeys() == [])
            let named = try gate.rawRequest("POST", "/v1/sends", headers: [("Host", "gate.internal"), Self.json], body: Self.body)
            #expect(named.status == 200, "a keyed gate answers any Host: \(named)")
        }
    }
}

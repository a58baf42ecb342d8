import Foundation
import GateRuntime
import RedisClient
import ResendGate
import ResendGateServer
import ResendGateTestSupport
import Testing

/// API keys: with keys configured, `/v1/sends` and `/v1/cooldowns` need
/// `Authorization: Bearer <key>` with the route's scope; the operational routes do not.
@Suite("API keys", .ownThread)
struct AuthorizationTests {
    static let key = RunningGate.apiKey
    static let otherKey = "second-key-abcdefghijklmnop"
    static let releaseKey = "release-key-abcdefghijklmn"

    @Test func missingAndWrongKeysGet401WithABearerChallenge() throws {
        try withRunningGate(apiKeys: [Self.key, Self.otherKey]) { gate in
            let wrongAuthorizations: [String?] = [
                nil, "Bearer wrong-key-0123456789abcdef", "Bearer \(Self.key.dropLast())", "Bearer \(Self.key)x",
                "Bearer ", "Basic \(Self.key)", Self.key,
            ]
            let phone = "%2B8613800138000"
            for authorization in wrongAuthorizations {
                let headers = authorization.map { [("Authorization", $0)] } ?? []
                let requests: [(String, String, [UInt8]?)] = [
                    ("POST", "/v1/sends", Array(#"{"phone": "+8613800138000"}"#.utf8)),
                    ("GET", "/v1/cooldowns/\(phone)", nil),
                    ("DELETE", "/v1/cooldowns/\(phone)", nil),
                ]
                for (method, target, body) in requests {
                    let response = try gate.client().request(
                        method, target, headers: headers + [("Content-Type", "application/json")], body: body)
                    let context = "\(method) \(target) with \(authorization ?? "no Authorization")"
                    #expect(response.statusLine == "HTTP/1.1 401 Unauthorized", "\(context)")
                    let challenge = try #require(response.header("WWW-Authenticate"), "\(context)")
                    #expect(challenge == "Bearer" || challenge.hasPrefix("Bearer "), "\(context): \(challenge)")
                    try ErrorResponseTests.expectError(response, code: "unauthorized", context)
                }
            }
            // None of the refused requests reserved anything.
            let allowed = try gate.client(apiKey: Self.key).send(phone: "+8613800138000")
            #expect(allowed.status == 200)
        }
    }

    @Test func everyConfiguredKeyWorksAndTheSchemeIsCaseInsensitive() throws {
        try withRunningGate(apiKeys: [Self.key, Self.otherKey]) { gate in
            #expect(try gate.client(apiKey: Self.key).send(phone: "+8613800138000").status == 200)
            #expect(try gate.client(apiKey: Self.otherKey).send(phone: "+8613800138000").status == 429)
            let lowercase = try gate.client().request(
                "GET", "/v1/cooldowns/%2B8613800138000", headers: [("Authorization", "bearer \(Self.key)")])
            #expect(lowercase.status == 200, "\(lowercase)")
            let peek = try gate.client(apiKey: Self.otherKey).get("/v1/cooldowns/%2B8613800138000")
            #expect(peek.status == 200)
            #expect(try peek.decode(CooldownBody.self).active == true)
        }
    }

    /// Each keyed route needs its scope: send for POST /v1/sends, read for peeks,
    /// release for DELETE. A bare key sends and reads; release is granted by name.
    @Test func aKeyWithoutTheRoutesScopeGets403Forbidden() throws {
        let lines = [Self.key, "\(Self.otherKey) read", "\(Self.releaseKey) send, release"]
        try withRunningGate(apiKeys: lines) { gate in
            let bare = gate.client(apiKey: Self.key), reader = gate.client(apiKey: Self.otherKey)
            let releaser = gate.client(apiKey: Self.releaseKey)
            let path = "/v1/cooldowns/%2B8613800138000"
            #expect(try reader.send(phone: "+8613800138000").status == 403)
            try ErrorResponseTests.expectError(try reader.send(phone: "+8613800138000"), code: "forbidden", "read-only key sends")
            #expect(try bare.send(phone: "+8613800138000").status == 200)
            #expect(try reader.get(path).status == 200)
            #expect(try releaser.get(path).status == 403)
            let refused = try bare.delete(path)
            #expect(refused.statusLine == "HTTP/1.1 403 Forbidden")
            try ErrorResponseTests.expectError(refused, code: "forbidden", "bare key releases")
            #expect(try reader.delete(path).status == 403)
            // Nothing was released by the refusals.
            #expect(try bare.send(phone: "+8613800138000").status == 429)
            #expect(try releaser.delete(path).status == 204)
            #expect(try bare.send(phone: "+8613800138000").status == 200)
        }
    }

    @Test func unknownScopesAreRefusedWithTheLineNamed() throws {
        #expect(try APIKey(line: "\(Self.key) send,read,release,verify").scopes == .all)
        #expect(try APIKey(line: Self.key).scopes == [.send, .read, .verify])
        #expect(try APIKey(line: "\(Self.key)\tread").scopes == .read)
        let file = "# keys\n\(Self.key) send\n\n\(Self.otherKey) send,delete\n"
        #expect(throws: ConfigurationError(field: "api-keys-file", message: "line 4: unknown scope \"delete\" (known: send, read, release, verify)")) {
            try APIKey.parseFile(file)
        }
        #expect(throws: ConfigurationError.self) { try APIKey(line: "\(Self.key) send,,read") }
    }

    @Test func operationalRoutesNeedNoKey() throws {
        try withRunningGate(apiKeys: [Self.key]) { gate in
            for path in ["/healthz", "/readyz", "/metrics", "/", "/openapi.yaml"] {
                let response = try gate.client().get(path)
                #expect(response.status == 200, "\(path)")
            }
        }
    }

    @Test func aShortKeyIsRefusedByTheConfiguration() {
        #expect(throws: (any Error).self) { try ServerConfiguration(apiKeys: [APIKey("short")]) }
        #expect(throws: (any Error).self) { try ServerConfiguration(apiKeys: [APIKey("a key with spaces in it")]) }
    }
}

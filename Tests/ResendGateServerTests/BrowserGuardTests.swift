import GateRuntime
import RedisClient
import ResendGate
@testable import ResendGateServer
import Testing

/// The rules behind 421 and 403 `forbidden`, byte by byte (the attacks themselves run in
/// `Abuse/AbuseHostOriginTests` against a real server).
@Suite("Host and Origin rules")
struct BrowserGuardTests {
    static func isLoopback(_ host: String) -> Bool {
        var host = host
        return host.withUTF8 { Worker.isLoopbackHost($0) }
    }

    @Test("loopback names pass, with or without a port, in any case", arguments: [
        "localhost", "LOCALHOST", "localhost:8080", "127.0.0.1", "127.0.0.1:1", "[::1]", "[::1]:65535", "LocalHost:08080",
    ])
    func loopbackHostsPass(_ host: String) {
        #expect(Self.isLoopback(host))
    }

    @Test("any other Host is misdirected", arguments: [
        "", "attacker.example", "localhost.attacker.example", "attacker.localhost", "127.0.0.1.nip.io", "127.0.0.2",
        "0.0.0.0", "[::2]", "::1", "[::1", "localhost:", "localhost:x", "localhost:123456", "localhost :80", " localhost",
        "localhost.", "127.1", "2130706433", "[::ffff:127.0.0.1]", "localhost:80:80", "[::1]80",
    ])
    func otherHostsAreRefused(_ host: String) {
        #expect(!Self.isLoopback(host))
    }

    @Test func originsAreNormalisedAsBrowsersWriteThem() {
        #expect(ServerConfiguration.normalisedOrigin("HTTPS://App.Example.com:443/") == "https://app.example.com")
        #expect(ServerConfiguration.normalisedOrigin("http://127.0.0.1:80") == "http://127.0.0.1")
        #expect(ServerConfiguration.normalisedOrigin("http://[::1]:8080") == "http://[::1]:8080")
        #expect(ServerConfiguration.normalisedOrigin("http://localhost:08080") == "http://localhost:8080")
        for bad in ["app.example.com", "ftp://x", "https://", "https://x/login", "https://x?y", "https://x:0", "https://x:70000",
                    "https://x:", "https://a b", "*", "null", "https://[::1", "https://a]b", "https://[]", "https://[x::1]", "https://a_b"] {
            #expect(ServerConfiguration.normalisedOrigin(bad) == nil, "\(bad)")
        }
    }

    @Test func theDefaultOriginsAreTheGatesOwnOnItsPort() throws {
        #expect(ServerConfiguration.ownOrigins(host: "127.0.0.1", port: 9) == ["http://127.0.0.1:9", "http://localhost:9", "http://[::1]:9"])
        #expect(ServerConfiguration.ownOrigins(host: "0.0.0.0", port: 9).count == 3)
        #expect(ServerConfiguration.ownOrigins(host: "10.0.0.5", port: 9).last == "http://10.0.0.5:9")
        #expect(ServerConfiguration.ownOrigins(host: "fd00::5", port: 9).last == "http://[fd00::5]:9")
        let configured = try ServerConfiguration(allowOrigins: ["https://App.example.com/"])
        #expect(configured.allowedOrigins(port: 9) == ["https://app.example.com"])
        #expect(throws: ConfigurationError.self) { try ServerConfiguration(allowOrigins: ["https://app.example.com/login"]) }
        // Host is checked only without keys on loopback.
        #expect(try ServerConfiguration().checksHost)
        #expect(try !ServerConfiguration(apiKeys: [APIKey("a-key-of-sixteen-chars")]).checksHost)
        #expect(try !ServerConfiguration(host: "0.0.0.0", insecureNoAuth: true).checksHost)
    }
}

/// Security review: `--host` counted as loopback when it started with "127.", so
/// `--host 127.foo.example` (a name that resolves anywhere) ran without API keys.
@Suite("Which --host may run without API keys")
struct LoopbackHostTests {
    @Test("loopback address literals and localhost may run keyless", arguments: [
        "localhost", "127.0.0.1", "127.0.0.2", "127.255.255.254", "::1", "0:0:0:0:0:0:0:1", "::ffff:127.0.0.1",
    ])
    func loopbackHosts(_ host: String) throws {
        #expect(ServerConfiguration.isLoopback(host))
        _ = try ServerConfiguration(host: host)
    }

    @Test("names and other addresses need API keys", arguments: [
        "127.foo.example", "127.0.0.1.nip.io", "127.", "127.1", "0.0.0.0", "10.0.0.1", "128.0.0.1", "::", "::2",
        "::ffff:10.0.0.1", "::ffff:128.0.0.1", "[::1]", "localhost.example", "127.0.0.1 ", "",
    ])
    func nonLoopbackHosts(_ host: String) throws {
        #expect(!ServerConfiguration.isLoopback(host))
        #expect(throws: ConfigurationError.self) { try ServerConfiguration(host: host) }
        _ = try ServerConfiguration(host: host, apiKeys: [APIKey("a-key-of-16-chars-or-more")])
    }
}

@testable import RedisClient
@testable import ResendGate
import GateRuntime
import Testing

@Suite("Times and rounding")
struct DecisionTests {
    @Test("retry_after is the ceiling of the milliseconds", arguments: [
        (Int64(59_001), Int64(60)), (1, 1), (0, 0), (1000, 1), (1001, 2), (60_000, 60), (999, 1), (-5, 0),
    ])
    func roundsRetryAfterUp(milliseconds: Int64, seconds: Int64) {
        #expect(Decision.wholeSeconds(milliseconds) == seconds)
    }
}

@Suite("Configuration")
struct ConfigurationTests {
    @Test func parsesDurations() throws {
        #expect(try DurationParser.parse("60", field: "x") == .seconds(60))
        #expect(try DurationParser.parse("60s", field: "x") == .seconds(60))
        #expect(try DurationParser.parse("5m", field: "x") == .seconds(300))
        #expect(try DurationParser.parse("24h", field: "x") == .seconds(86_400))
        #expect(try DurationParser.parse("250ms", field: "x") == .milliseconds(250))
        for (duration, text) in [(Duration.seconds(86_400), "24h"), (.seconds(3600), "1h"), (.seconds(60), "60s"),
                                 (.seconds(1), "1s"), (.milliseconds(250), "250ms"), (.milliseconds(1500), "1500ms")] {
            #expect(DurationParser.format(duration) == text)
            #expect(try DurationParser.parse(text, field: "x") == duration)
        }
        for bad in ["", "0", "-1", "5x", "s", "1.5s", "99999999999999"] {
            #expect(throws: ConfigurationError.self) { try DurationParser.parse(bad, field: "x") }
        }
    }

    @Test func parsesLadders() throws {
        #expect(try Policy.parseLadder("60,120,300") == [.seconds(60), .seconds(120), .seconds(300)])
        #expect(try Policy.parseLadder("250ms") == [.milliseconds(250)])
        #expect(throws: ConfigurationError.self) { try Policy.parseLadder("60,,300") }
    }

    @Test func parsesRedisURLs() throws {
        let plain = try RedisConfiguration(url: "redis://127.0.0.1:6380/2")
        #expect(plain.endpoint == .tcp(host: "127.0.0.1", port: 6380))
        #expect(plain.database == 2)
        #expect(plain.password == nil)
        let auth = try RedisConfiguration(url: "redis://user:p%40ss@localhost:6379/0")
        #expect(auth.username == "user")
        #expect(auth.password == "p@ss")
        let passwordOnly = try RedisConfiguration(url: "redis://:secret@localhost")
        #expect(passwordOnly.username == nil)
        #expect(passwordOnly.password == "secret")
        #expect(passwordOnly.endpoint == .tcp(host: "localhost", port: 6379))
        let socket = try RedisConfiguration(url: "unix:///run/redis.sock?db=3")
        #expect(socket.endpoint == .unix(path: "/run/redis.sock"))
        #expect(socket.database == 3)
        let encoded = try RedisConfiguration(url: "redis://us%3Aer:p%25s%2Fs@localhost:6379/0")
        #expect(encoded.username == "us:er" && encoded.password == "p%s/s")
        // Malformed percent-encoding in the credentials is refused, not kept as it came
        // (a literal % is written %25): "p%zzw" used to become "p%w".
        for bad in ["redis://:p%zzw@localhost", "redis://u%4:x@localhost", "redis://:%ff@localhost",
                    "http://x", "redis://", "redis://host:99999", "redis://host/x", "unix://", "redis://host:port"] {
            #expect(throws: ConfigurationError.self) { try RedisConfiguration(url: bad) }
        }
        #expect(try RedisConfiguration(url: "redis://[::1]:6390").endpoint == .tcp(host: "::1", port: 6390))
        #expect(try RedisConfiguration(url: "redis://[::1]/1").endpoint == .tcp(host: "::1", port: 6379))
    }

    /// The one address reader: URLs, `--redis-cluster` lists and cluster redirects use it.
    @Test func readsHostAndPort() {
        typealias HostPort = RedisConfiguration.HostPort
        #expect(HostPort(authority: "10.0.0.1:7000") == HostPort(host: "10.0.0.1", port: 7000))
        #expect(HostPort(authority: "[2001:db8::1]:7000") == HostPort(host: "2001:db8::1", port: 7000))
        #expect(HostPort(authority: "redis.internal", defaultPort: 6379) == HostPort(host: "redis.internal", port: 6379))
        #expect(HostPort(authority: "[::1]", defaultPort: 80) == HostPort(host: "::1", port: 80))
        for bad in ["redis.internal", "[::1]", ":7000", "host:", "host:0", "host:65536", "host:x", "[::1", "[::1]x", "[]:80"] {
            #expect(HostPort(authority: Substring(bad)) == nil, "\(bad)")
        }
        #expect(HostPort(authority: "host:", defaultPort: 80) == nil, "an empty port is not the default")
    }

    @Test func validatesPurposes() throws {
        #expect(try Purpose("login_2fa-sms").name == "login_2fa-sms")
        for bad in ["", "Login", "a b", "x{y}", String(repeating: "a", count: 33), "ü"] {
            #expect(throws: GateError.self) { try Purpose(bad) }
        }
    }
}

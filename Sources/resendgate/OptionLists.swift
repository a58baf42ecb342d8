import GateRuntime
import RedisClient
import ResendGate
import ResendGateServer

/// Every option of every command, one entry each: the flag, the field of `Settings` it
/// sets (whose initial value is its default), and the help that `--help` prints and the
/// table in docs/configuration.md shows (`serve --help-markdown` prints that table; a test compares
/// them). Adding an option is one entry here and one field in `Settings`.
extension Settings {
    /// The options of every command that reaches the gate: Redis and the policy.
    static var common: [Option] {
        [
            Option.text("redis", \.redisURL, placeholder: "URL",
                        help: "`redis://[user:password@]host:port/db` or `unix:///path/redis.sock[?db=N]`")
                .with(environmentSuffix: "REDIS_URL"),
            Option.value("redis-cluster", \.redisCluster, placeholder: "H:P,...",
                         help: "a Redis Cluster, found from these nodes; password and timeouts from `--redis` ([Beyond one machine](operations.md#beyond-one-machine))",
                         parse: { text throws(ConfigurationError) in try hostPorts(text, field: "redis-cluster") }),
            Option.value("redis-sentinel", \.redisSentinels, placeholder: "H:P,...",
                         help: "Sentinels that name the master (`--sentinel-master`); password and db from `--redis`",
                         parse: { text throws(ConfigurationError) in try hostPorts(text, field: "redis-sentinel") }),
            .text("sentinel-master", \.sentinelMaster, placeholder: "NAME", help: "the master's name at the Sentinels"),
            .count("wait-replicas", \.waitReplicas, in: GateConfiguration.waitReplicasRange,
                   help: "answer an allowed send only once N replicas have it (`WAIT`), so a failover cannot forget it"),
            .duration("redis-timeout", \.redisTimeout,
                      help: "connect and command timeout; past it the answer is 503 `store_unavailable`"),
            .toggle("allow-evicting-redis", \.allowEvictingRedis,
                    help: "serve from a Redis whose `maxmemory-policy` may evict keys (anything but `noeviction`); without it such a Redis gets 503 `store_evicts_keys` for every send and `/readyz` (RISK: an evicted cooldown lets a code be sent again at once) ([Persistence](operations.md#persistence))"),
            .text("region", \.region, placeholder: "CC", help: "default region (two letters, such as `CN`) for numbers without a country code"),
            Option.value("cooldown", \.policy.ladder, placeholder: "D[,D...]",
                         help: "cooldown, or an escalation ladder (`60,120,300`: 1st send in the window 60 s, 2nd 120 s, then 300 s; at most 64 steps)",
                         parse: { text throws(ConfigurationError) in try Policy.parseLadder(text) },
                         render: { $0.map(DurationParser.format).joined(separator: ",") }),
            .duration("window", \.policy.window,
                      help: "the sliding window in which sends (ladder and `--max-sends`) and refunds (`--max-refunds`) are counted"),
            .count("max-sends", \.policy.maxSends, in: 1...1_000_000,
                   help: "at most N sends per number and purpose in the window: over it, 429 `max_sends`"),
            .count("max-refunds", \.policy.maxRefunds, in: 0...1_000_000,
                   help: "at most N refunds (`DELETE /v1/cooldowns`, `resendgate release`) per number and purpose in `--window`, also with a flat cooldown: over it, 429 `refund_limit`; 0 disables refunds (403 `forbidden`)"),
            .count("max-failed-checks", \.policy.maxFailedChecks, in: 0...1_000_000,
                   help: "wrong codes (`failed` verifications) per sent code before it is locked (`--lockout-scope`); a `failed` with no code sent to the number in `--window` is 409 `no_code_sent`; 0: no lockout"),
            Option.value("lockout-scope", \.policy.lockoutScope, placeholder: "S",
                         help: "what `--max-failed-checks` wrong codes lock: `code` (further checks of that code get 409 `code_locked` until a new code is sent; nobody can lock a number's owner out of codes) or `number` (its sends, refunds and checks get 429 `locked` for `--lockout`) ([the lockout](anti-abuse.md#wrong-codes-and-the-lockout))",
                         parse: { text throws(ConfigurationError) in try LockoutScope.parse(text) }, render: { $0.rawValue }),
            .duration("lockout", \.policy.lockout, help: "how long a `--lockout-scope number` lock lasts (never shorter than the number's running cooldown)"),
            .count("pumping-min-sends", \.policy.pumping.minSends, in: 1...1_000_000_000,
                   help: "turns on the SMS-pumping guard: a destination prefix (`--prefix-digits`) with at least N sends in `--pumping-window` whose conversion (verified outcomes per send) is below `--pumping-min-conversion` gets 429 `suspected_pumping`; off without it, as conversion is only known when the back end reports verifications ([Anti-abuse policies](anti-abuse.md))"),
            .duration("pumping-window", \.policy.pumping.window,
                      help: "the sliding window of a prefix's sends and verifications (ten buckets: exact to a tenth of it)"),
            Option.value("pumping-min-conversion", \.policy.pumping.minConversion, placeholder: "C",
                         help: "the lowest conversion a prefix with `--pumping-min-sends` may have, as a fraction (`0.1`) or a percentage (`10%`)",
                         parse: { text throws(ConfigurationError) in try PumpingGuard.parseConversion(text) },
                         render: PumpingGuard.formatConversion),
            .count("prefix-digits", \.policy.pumping.prefixDigits, in: PumpingGuard.prefixDigitsRange,
                   help: "national digits after the calling code that make a destination prefix for the pumping guard (`+447911` with 4)"),
            .duration("trusted-for", \.policy.pumping.trustedFor,
                      help: "how long a `verified` outcome exempts its number from the pumping guard"),
            .count("ip-max-sends", \.policy.ipMaxSends, in: 1...1_000_000_000,
                   help: "at most N sends per client IP (IPv6: per /64) in `--ip-window`: over it, 429 `ip_limit`"),
            .duration("ip-window", \.policy.ipWindow, help: "the sliding window of `--ip-max-sends`"),
            Option.value("ip-max-requests", \.ipMaxRequests, placeholder: "N/D",
                         help: "at most N send requests per client IP (IPv6: per /64) in any D, allowed or not, counted in the gate process's memory (one count for all its workers) before Redis is asked; an IPv4 address written as IPv6 counts as itself: over it, 429 `too_many_requests` ([What the limits do not cover](anti-abuse.md#what-the-limits-do-not-cover))",
                         parse: { text throws(ConfigurationError) in text.isEmpty ? nil : try RequestRate.parse(text) },
                         render: { $0?.text })
                .with(documentedDefault: "none"),
            Option.value("country-max-sends", \.policy.countryMaxSends, placeholder: "CC=N/D,...",
                         help: "budgets of allowed sends per destination in each budget's window: a region (`CN`: libphonenumber's region of the number, so Guernsey's `GG` numbers are not `GB`'s) or a calling code (`+44`: every region under it); shared by every purpose without its own in `--policy`: over one, 429 `country_limit` ([Budgets](anti-abuse.md#budgets))",
                         parse: { text throws(ConfigurationError) in try SendBudget.parseRegions(text, field: "country-max-sends") })
                .with(documentedDefault: "none"),
            Option.value("max-sends-total", \.policy.maxSendsTotal, placeholder: "N/D",
                         help: "a budget of allowed sends to any number in its window (`100000/24h`), shared like `--country-max-sends`: over it, 429 `global_limit`",
                         parse: { text throws(ConfigurationError) in text.isEmpty ? nil : try SendBudget.parse(text, field: "max-sends-total") })
                .with(documentedDefault: "none"),
            Option.value("limit", \.policy.limits, placeholder: "NAME,per=P,sends=N/D",
                         help: "a counted limit, repeatable: at most N allowed sends in D per `number`, `ip`, `ip+number`, `region`, `calling-code`, `purpose` or `all`; over it, 429 with the reason `reason=` names (by default `max_sends` per number, `ip_limit` per IP, `country_limit` per region or calling code, `global_limit` per purpose or all); `,observe` only reports it; shared like `--country-max-sends` ([Limits as data](anti-abuse.md#limits-as-data))",
                         parse: { text throws(ConfigurationError) in try SendLimit.parseList(text) },
                         render: { $0.isEmpty ? nil : $0.map(\.text).joined(separator: ";") })
                .with(documentedDefault: "none", repeats: true),
        ] + PolicyRules.kinds.map { kind in
            Option.value(kind.name, \.policy.ruleTexts[kind.name], placeholder: kind.placeholder, help: kind.help,
                         parse: { text throws(ConfigurationError) in
                             if text.isEmpty { return nil }
                             _ = try kind.init(parsing: text, field: kind.name)
                             return text
                         }, render: { $0 })
                .with(documentedDefault: "none")
        } + [
            Option.value("observe", \.policy.observe, placeholder: "RULE,...",
                         help: "rules (reason codes such as \(DecisionReason.allCases.filter(\.row.observable).map { "`\($0.rawValue)`" }.joined(separator: ", ")); never `locked`) in observe mode: computed and reported in the answer's `observed` and in `/metrics`, but the send is allowed ([Observe mode](anti-abuse.md#observe-mode))",
                         parse: { text throws(ConfigurationError) in try Policy.parseObserve(text) })
                .with(documentedDefault: "none"),
            Option.value("allow-regions", \.policy.allowedRegions, placeholder: "CC,...",
                         help: "only these regions may receive codes; others get 403 `region_not_allowed`",
                         parse: { text in text.isEmpty ? nil : Policy.parseRegions(text) }, render: { $0.map { $0.sorted().joined(separator: ",") } })
                .with(documentedDefault: "every region"),
            Option.value("allow-number-types", \.policy.allowedNumberTypes, placeholder: "T,...",
                         help: "line types that may receive codes (`premium_rate`, `shared_cost`, `voip`, `toll_free`, `fixed_line`, ...); others get 403 `number_type_not_allowed`",
                         parse: { text throws(ConfigurationError) in try Policy.parseNumberTypes(text) },
                         render: { types in PhoneNumberType.allCases.filter(types.contains).map(\.rawValue).joined(separator: ",") }),
            Option.value("purposes", \.purposes, placeholder: "P,...",
                         help: "the purposes the gate decides besides `default` and those in `--policy`, each under the default policy (the flags, or the policy file's `default`); any other purpose gets 400 `invalid_purpose`, so no caller can give a number fresh limits by naming a new one ([Anti-abuse policies](anti-abuse.md))",
                         parse: { text throws(ConfigurationError) in try Settings.purposeNames(text) },
                         render: { $0.isEmpty ? nil : $0.joined(separator: ",") })
                .with(documentedDefault: "none"),
            .text("policy", \.policyFile, placeholder: "FILE", help: "per-purpose policies in JSON, on top of the flags ([Anti-abuse policies](anti-abuse.md))"),
            .text("key-secret", \.keySecret, placeholder: "S",
                  help: "Redis keys hold an HMAC-SHA256 of each number instead of the number (16 or more characters)"),
            .text("token-secret", \.tokenSecret, placeholder: "S",
                  help: "secret that seals countdown tokens (16 or more characters), the same on every gate; unset: one kept in Redis at `PREFIX:token-secret`, made by the first gate; changing it voids outstanding tokens (404) ([the token format](countdowns.md#the-token-format))"),
            .text("key-prefix", \.keyPrefix, placeholder: "P", help: "prefix of every Redis key"),
            .toggle("cooldowns-in-windows", \.cooldownsInWindows,
                    help: "a purpose with a ladder or `--max-sends` keeps each number's running cooldown in its window key: one key and one write fewer per send. Turn it on once every gate of the deployment runs a version that has this option: older ones fail on such windows ([Upgrading](operations.md#upgrading))"),
            Option.value("test-numbers", \.testNumbers, placeholder: "+N[/D],...",
                         help: "numbers that skip every limit, for CI and QA: answered allowed with `\"test_number\": true` (send no real SMS), nothing recorded; `+15005550000/4` is any number of that length whose digits but the last 4 match ([Anti-abuse policies](anti-abuse.md))",
                         parse: { text throws(ConfigurationError) in try TestNumbers(parsing: text) })
                .with(documentedDefault: "none"),
            .toggle("issue-codes", \.issueCodes,
                    help: "the gate makes each allowed send's code, returns it to the back end in the answer (`code`), keeps it sealed in Redis and checks it (`POST /v1/checks`, `resendgate check`); a purpose of `--policy` turns it on with `issue_codes` ([Issued codes](anti-abuse.md#issued-codes))"),
            .count("code-length", \.codes.length, in: IssuedCodes.lengths, help: "digits in an issued code"),
            .duration("code-lifetime", \.codes.lifetime, help: "how long an issued code may be checked, from the send that issued it (apart from the cooldown)"),
            Option.value("code-on-resend", \.codes.onResend, placeholder: "R",
                         help: "what a send does while the number has a live code: `same` sends it again (a late SMS still works), `fresh` sends a new one and voids it",
                         parse: { text throws(ConfigurationError) in try IssuedCodes.parseResend(text) }, render: { $0.rawValue }),
            Option.text("code-secret", \.codeSecret, placeholder: "S",
                        help: "secret that seals and checks issued codes (16 or more characters), the same on every gate and never kept in Redis, so a dump of Redis reveals no live code; required with issued codes")
                .with(environmentSuffix: "CODE_SECRET"),
            .text("test-code", \.testCode, placeholder: "DIGITS",
                  help: "the fixed code `--test-numbers` get for a purpose that issues codes (app-store review, end-to-end tests): sent in the answer, accepted by checks, nothing recorded"),
        ]
    }

    /// `send`, `status` and `release`: which purpose's cooldown.
    static var perNumber: [Option] {
        [.text("purpose", \.purpose, placeholder: "P", help: "what the code is for: `default`, or a purpose configured with `--purposes` or `--policy`")]
    }

    /// `send` only.
    static var perSend: [Option] {
        [
            .text("client-ip", \.clientIP, placeholder: "IP", help: "the end user's IP address, for `--ip-max-sends`"),
            .text("idempotency-key", \.idempotencyKey, placeholder: "K", help: "retries with the same key get the first answer"),
        ]
    }

    /// `check` only.
    static var perCheck: [Option] {
        [.text("code", \.checkCode, placeholder: "DIGITS", help: "the code the user typed (4 to 10 digits)")]
    }

    /// `serve`: where it listens, who may call it, how it protects itself.
    static var serve: [Option] {
        [
            .text("host", \.host, placeholder: "H", help: "where `serve` listens"),
            .count("port", \.port, in: ServerConfiguration.portRange, help: "the port `serve` listens on (`0` picks a free one)"),
            Option.count("workers", \.workers, in: ServerConfiguration.workersRange,
                         help: "event loops, each with its own listener (`SO_REUSEPORT`) and Redis connection; the default is this machine's number of cores")
                .with(documentedDefault: "cores"),
            .text("api-keys-file", \.apiKeysFile, placeholder: "F",
                  help: "bearer keys, compared in constant time, one a line (`#` starts a comment): `KEY` may send, read and verify; `KEY send,read,release` names its scopes (send: POST /v1/sends, read: GET /v1/cooldowns and /v1/prefixes, release: DELETE /v1/cooldowns, verify: POST /v1/verifications) ([API keys](API.md#authentication))"),
            .list("api-keys", \.apiKeys, placeholder: "K1,K2",
                  help: "bare bearer keys: each may send, read and verify, not release (scopes only in `--api-keys-file`)"),
            .toggle("insecure-no-auth", \.insecureNoAuth,
                    help: "allow a non-loopback `--host` without keys (anyone who reaches it can reserve and release)"),
            Option.list("allow-origins", \.allowOrigins, placeholder: "O,...",
                        help: "web origins (`scheme://host[:port]`) whose pages may send anything but GET and HEAD; any other `Origin` gets 403 `forbidden` ([what the gate refuses from a browser](anti-abuse.md#what-the-gate-refuses-from-a-browser))")
                .with(documentedDefault: "the gate's own origins"),
            .choice("log-level", \.logLevel, placeholder: "L",
                    help: "`debug`, `info`, `warning`, `error`, `off`: access lines and the library's Redis events (reconnects, master switches, slot re-maps, script reloads); no level logs a phone number"),
            Option.value("max-connections", \.maxConnections, placeholder: "N",
                         help: "open connections per worker; past it the oldest idle one is closed. `auto`: the lower of what the open-file limit (`RLIMIT_NOFILE`) leaves after Redis, listeners and logs and what `--max-connection-memory` allows (about 2 KiB an idle connection, for half of it), shared among the workers ([HTTP details](operations.md#http-details))",
                         parse: { text throws(ConfigurationError) in
                             text == "auto" ? nil : try Option.wholeNumber(text, in: 1...ConnectionBudget.maximumPerWorker, field: "max-connections")
                         }, render: { $0.map { "\($0)" } ?? "auto" }),
            Option.value("max-connection-memory", \.maxConnectionMemoryMiB, placeholder: "MIB",
                         help: "MiB that all client connections may make the server hold together (state, headers, bodies, unsent answers), an even share per worker; past it, connections stuck with unsent bytes (most first), then the oldest idle ones, are closed ([HTTP details](operations.md#http-details))",
                         parse: { text throws(ConfigurationError) in try Option.wholeNumber(text, in: 1...65_536, field: "max-connection-memory") },
                         render: { "\($0)" }),
            .duration("connection-timeout", \.connectionTimeout,
                      help: "how long a connection may be silent (sending, reading, or idle) or stuck with an answer or stream its client does not read, and the most a request (line, headers and body) may take to arrive from its first byte"),
            .choice("on-store-failure", \.onStoreFailure, placeholder: "M",
                    help: "what a send gets while Redis cannot record it: `closed` answers 503 `store_unavailable`; `open` allows it unrecorded (RISK: no cooldown or caps while Redis is down)"),
        ]
    }

    /// `watch`: which server to ask, in which language to show the countdown.
    static var watch: [Option] {
        [
            .text("server", \.watchServer, placeholder: "URL", help: "the resendgate server's base URL (http only)"),
            .text("lang", \.language, placeholder: "L", help: "`en` or `zh` (default: from `LANG`)"),
        ]
    }

    /// Every option of any command, for naming a setting's flag in an error.
    static var everyOption: [Option] { common + perNumber + perSend + serve + watch }

    /// `--purposes`: names that match `[a-z0-9_-]{1,32}`; an empty value names none.
    static func purposeNames(_ text: String) throws(ConfigurationError) -> [String] {
        let names = Option.commaSeparated(text)
        for name in names {
            do { _ = try Purpose(name) } catch {
                throw ConfigurationError(field: "purposes", message: "\"\(name)\": a purpose must match [a-z0-9_-]{1,32}")
            }
        }
        return names
    }

    /// `--redis-cluster` and `--redis-sentinel`: an empty value means none.
    private static func hostPorts(_ text: String, field: String) throws(ConfigurationError) -> [RedisConfiguration.HostPort]? {
        text.isEmpty ? nil : try RedisConfiguration.HostPort.parseList(text, field: field)
    }
}

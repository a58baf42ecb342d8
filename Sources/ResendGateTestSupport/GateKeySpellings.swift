import ResendGate

// The gate's Redis keys under the tests' prefix `rg`, spelled by `GateKeys` (the one
// place that knows them), so a test reads the keys the gate writes.

/// The key `kind` of `e164` for `purpose`, as a gate without `--key-secret` names it.
public func gateKey(_ kind: GateKeys.NumberKey, _ e164: String, purpose: String = "default") -> String {
    testKeys.key(kind, purpose: try! Purpose(purpose), number: e164)
}

/// The per-IP sends key of a client address (`ClientAddress.text`).
public func ipSendsKey(_ address: String) -> String { testKeys.ipSends(address: address) }

/// The countdown token secret the first gate on a Redis stores.
public let tokenSecretKey = testKeys.tokenSecret

/// The channel refunds are published on.
public let releasedChannel = testKeys.releasedChannel

/// The tests' key schema: the default prefix `rg`.
public let testKeys = GateKeys(prefix: "rg")

/// One send a number's window holds (`GateKeys.NumberKey.window`, written by `reserve.lua`).
public struct WindowSend: Equatable, Sendable {
    /// When it was sent, in Redis's ms since 1970.
    public let time: Int64
    /// Its nonce (the cooldown it started held the same).
    public let nonce: String

    public init(time: Int64, nonce: String) {
        self.time = time
        self.nonce = nonce
    }
}

/// A number's window key's value: the sends in the policy's window, 29 characters each
/// (the send's time in 13 digits of ms, then its nonce), then maybe `;` and the window's own
/// running cooldown (a cooldown key's layout). reserve.lua's cooldown-write.lua writes it;
/// every script reads it through window-split.lua, which `CooldownValueLayoutTests` holds to
/// this reader, the tests' one.
public struct WindowValue: Equatable, Sendable {
    /// The sends, as the key holds them (stale ones included), oldest first.
    public var sends: [WindowSend]
    /// The running cooldown's value after the sends' `;`, or nil.
    public var own: String?

    public init(sends: [WindowSend], own: String? = nil) {
        self.sends = sends
        self.own = own
    }

    /// A key's value read; nil when its sends are not whole sends.
    public init?(text: String) {
        let parts = text.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)
        let bytes = Array(parts[0].utf8)
        guard bytes.count % 29 == 0 else { return nil }
        var sends: [WindowSend] = []
        for start in stride(from: 0, to: bytes.count, by: 29) {
            guard let time = Int64(String(decoding: bytes[start..<start + 13], as: UTF8.self)) else { return nil }
            sends.append(WindowSend(time: time, nonce: String(decoding: bytes[start + 13..<start + 29], as: UTF8.self)))
        }
        self.init(sends: sends, own: parts.count == 2 ? String(parts[1]) : nil)
    }

    /// The key's value.
    public var text: String {
        let sends = self.sends.map { String(repeating: "0", count: max(0, 13 - String($0.time).count)) + String($0.time) + $0.nonce }
        return sends.joined() + (own.map { ";" + $0 } ?? "")
    }
}

/// A number's running cooldown as Redis holds it: the cooldown key's value (a policy
/// without a window, a lock, a plain cooldown), or the window key's own cooldown, after its
/// sends' `;` (`reserve.lua`).
public struct HeldCooldown: Equatable, Sendable {
    /// Its nonce (the value's first 16 characters; `locked` and the rest for a lock).
    public let nonce: String
    /// Its deadline in Redis's ms since 1970, when its value holds one.
    public let deadline: Int64?
    /// The idempotency record it links to (after a space), or "".
    public let link: String
    /// Which key holds it: `.cooldown` or `.window`.
    public let heldIn: GateKeys.NumberKey

    init(value: String, heldIn: GateKeys.NumberKey) {
        let bytes = Array(value.utf8)
        nonce = String(decoding: bytes.prefix(16), as: UTF8.self)
        deadline = bytes.count >= 28 ? Int64(String(decoding: bytes[16..<28], as: UTF8.self), radix: 16) : nil
        link = value.firstIndex(of: " ").map { String(value[value.index(after: $0)...]) } ?? ""
        self.heldIn = heldIn
    }
}

extension RedisTestClient {
    /// The sends a number's window key holds, oldest first (none when the key is missing);
    /// stale ones included, as the key holds them.
    public func windowSends(_ key: String) throws -> [WindowSend] {
        let reply = try command("GET", key)
        if reply == .null { return [] }
        guard let text = reply.string, let window = WindowValue(text: text) else {
            throw TestSupportError.protocolViolation.with("\(key) holds no window: \(reply)")
        }
        return window.sends
    }

    /// The number's running cooldown, as the gate's scripts find it: the cooldown key's
    /// value while the key exists, else the window's own cooldown until its deadline by
    /// Redis's clock; nil when none runs.
    public func heldCooldown(_ e164: String, purpose: String = "default") throws -> HeldCooldown? {
        if let value = try command("GET", gateKey(.cooldown, e164, purpose: purpose)).string {
            return HeldCooldown(value: value, heldIn: .cooldown)
        }
        guard let window = try command("GET", gateKey(.window, e164, purpose: purpose)).string,
              let own = WindowValue(text: window)?.own else { return nil }
        let held = HeldCooldown(value: own, heldIn: .window)
        guard let deadline = held.deadline, deadline > (try redisTime()) else { return nil }
        return held
    }

    /// The milliseconds the number's running cooldown has left (the cooldown key's PTTL, or
    /// the window's own cooldown's deadline less Redis's clock); nil when none runs.
    public func cooldownLeft(_ e164: String, purpose: String = "default") throws -> Int? {
        let key = gateKey(.cooldown, e164, purpose: purpose)
        if let left = try command("PTTL", key).integer, left != -2 { return left }
        guard let held = try heldCooldown(e164, purpose: purpose), let deadline = held.deadline else { return nil }
        return Int(deadline - (try redisTime()))
    }

    /// Lets the number's running cooldown run out now (see `runOut(_:)`), wherever it is held.
    /// Returns the milliseconds it moved; throws when none runs.
    @discardableResult
    public func runOutCooldown(_ e164: String, purpose: String = "default") throws -> Int {
        guard let left = try cooldownLeft(e164, purpose: purpose), left > 0 else {
            throw TestSupportError.protocolViolation.with("no cooldown of \(e164) for \(purpose) runs")
        }
        try advanceTime(byMilliseconds: left)
        return left
    }

    /// Redis's clock in ms since 1970 (`TIME`).
    public func redisTime() throws -> Int64 {
        guard case .array(let parts) = try command("TIME"), parts.count == 2,
              let seconds = parts[0].string.flatMap({ Int64($0) }), let micros = parts[1].string.flatMap({ Int64($0) })
        else { throw TestSupportError.protocolViolation.with("TIME at \(endpoint) gave no time") }
        return seconds * 1000 + micros / 1000
    }
}

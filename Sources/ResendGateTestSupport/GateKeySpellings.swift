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

import GateRuntime
import RedisClient

/// The secret countdown tokens are sealed with: given (`--token-secret`), or kept in Redis
/// at `<prefix>:token-secret`, where each worker's one `SET key <random> NX GET` creates it
/// atomically or reads it. Calls wait for that reply (bounded); if Redis cannot answer they
/// fail as store unavailable, and the next call asks again.
final class TokenSecret {
    /// Known once given or read.
    private(set) var cipher: CountdownTokenCipher?
    private let reading = SharedRead<CountdownTokenCipher>(
        overflow: .storeUnavailable("too many calls waiting for the token secret from Redis"))
    private let store: any GateStore
    private let key: String

    init(given: String?, store: any GateStore, key: String) {
        cipher = given.map { CountdownTokenCipher(secret: Array($0.utf8)) }
        self.store = store
        self.key = key
    }

    /// For a call that found no `cipher`: runs `retry` once the secret is read, or gives
    /// `completion` the failure.
    func retry<T>(_ retry: @escaping () -> Void, failing completion: @escaping (Result<T, GateError>) -> Void) {
        reading.run({ read in
            if case .failure(let error) = read { return completion(.failure(error)) }
            retry()
        }) { [store, key] answer in
            var fresh = [UInt8](repeating: 0, count: 32)
            fresh.withUnsafeMutableBytes { CountdownTokenSource.fill($0) }
            let candidate = fresh.lowercaseHex
            store.send(slotKey: key, { $0.append("SET", key, candidate, "NX", "GET") }, completion: { [weak self] result in
                let outcome = GateContext.decode(result) { reply throws(GateError) in
                    switch reply {
                    case .null: return CountdownTokenCipher(secret: Array(candidate.utf8))
                    case .bulk(let stored) where !stored.isEmpty: return CountdownTokenCipher(secret: stored)
                    default: throw GateContext.unexpected(reply)
                    }
                }
                if case .success(let cipher) = outcome { self?.cipher = cipher }
                answer(outcome)
            })
        }
    }
}

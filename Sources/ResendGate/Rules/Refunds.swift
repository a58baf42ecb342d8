import RedisClient

/// Refunds: `DELETE /v1/cooldowns/{phone}` and `resendgate release`, and the channel
/// on which every gate hears them (the event streams of a refunded cooldown end).
final class Refunds {
    private let context: GateContext
    /// Releases announced by any gate, once `follow` was called.
    private var releases: (any ChannelFollowing)?

    init(context: GateContext) { self.context = context }

    /// `Gate.release`: the refunded send leaves the window (the ladder step and the count go
    /// back by one), the refund is counted against `maxRefunds`, the send's idempotency
    /// record is voided (a retry is decided afresh), and the cooldown's value is published
    /// so the event streams following it end on every gate (`follow`).
    ///
    /// Where the record lives in a slot of its own (a Redis Cluster: `Placement`), the script
    /// returns its name and a second step deletes it before the answer. Between the two a
    /// replay may still get the refunded "allowed"; a send whose record was not yet stored
    /// when the refund ran (a cluster writes it after the number's script) keeps its record.
    func release(
        _ phone: PhoneNumber, purpose: Purpose, completion: @escaping (Result<Bool, GateError>) -> Void
    ) {
        guard let policy = context.policy(for: purpose, else: completion) else { return }
        let maxRefunds = policy.rules.maxRefunds
        guard maxRefunds > 0 else { return completion(.failure(.refundsDisabled)) }
        let store = context.store
        let recordApart = Placement.apart(on: store)
        let channel = context.keys.releasedChannel
        let call = ScriptCall(
            GateScripts.release, keys: context.keys, purpose: purpose, number: context.number(phone),
            // A purpose that issues codes: the number's code, which the refund voids.
            numberKeys: policy.rules.codes != nil ? [.cooldown, .window, .refunds, .code] : [.cooldown, .window, .refunds],
            arguments: { args in
                args.append(Int(policy.policyWindowMilliseconds), maxRefunds, recordApart ? 0 : 1, channel)
                args.appendRedisNow()
            },
            decode: { reply throws(GateError) in
                guard case .array(let items) = reply, items.count == 3, let code = items[0].integer, let wait = items[1].integer
                else { throw GateContext.unexpected(reply) }
                if code == -1 { throw .refundLimit(retryAfterMilliseconds: Int64(wait), maxRefunds: maxRefunds) }
                if code == -2 { throw .locked(retryAfterMilliseconds: Int64(max(1, wait))) }
                // Refunded or not, and the voided idempotency record's name ("": none or deleted).
                return (released: code == 1, record: items[2].string ?? "")
            })
        store.run(call) { outcome in
            if case .success((true, let record)) = outcome, recordApart, !record.isEmpty {
                return store.send(slotKey: record, { $0.append("DEL", record) }, completion: { _ in completion(.success(true)) })
            }
            completion(outcome.map(\.released))
        }
    }

    /// `GateWorker.followReleases`, through one subscriber connection of the worker's own
    /// (reconnected with the main connection's backoff); the first call's handlers stay.
    func follow(onRelease: @escaping (String) -> Void, onSubscribed: @escaping () -> Void) {
        guard releases == nil else { return }
        releases = context.store.follow(
            channel: context.keys.releasedChannel, onMessage: { onRelease(String(decoding: $0, as: UTF8.self)) },
            onSubscribed: onSubscribed)
    }

    func close() { releases?.close() }
}

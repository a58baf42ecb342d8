import RedisClient

/// A reserve decision as text, as the reserve script answers and an idempotency record holds
/// it: "allowed reason wait sends next now nonce observed" (reason, nonce and observed may
/// be empty), then, in a record, the request's fingerprint (which may hold spaces; an older
/// version's record has no `observed`). One string costs Redis less than a reply of many fields.
struct ReserveAnswer {
    let allowed: Bool
    /// Why the send was refused (nil when allowed).
    let reason: Decision.Reason?
    let waitMilliseconds: Int64
    let sends: Int
    let nextMilliseconds: Int64
    /// Redis's clock when it decided, in ms since 1970.
    let nowMilliseconds: Int64
    /// The nonce field as the answer held it, code and all: what an idempotency record
    /// written apart must hold, so its replay carries the code.
    let nonceField: Substring
    /// The cooldown's nonce the answer's token names ("" : none).
    var nonce: Substring { nonceField.prefix { $0 != "#" } }
    /// An allowed send's code record (`CodeRecord`), after a `#` in the nonce field; or nil.
    var code: Substring? { nonceField.firstIndex(of: "#").map { nonceField[nonceField.index(after: $0)...] } }
    /// The rules in observe mode that would have refused.
    let observed: [Decision.Reason]

    /// A fresh answer of the reserve script (with the fingerprint after it, or without);
    /// nil when it is not one.
    init?(answer text: String) {
        let fields = text.split(separator: " ", maxSplits: 8, omittingEmptySubsequences: false)
        guard fields.count >= 8 else { return nil }
        self.init(fields: fields, observed: fields[7])
    }

    /// What a stored record says about a request with `fingerprint`.
    enum Record {
        /// The record is this request's: its answer is replayed.
        case answer(ReserveAnswer)
        /// The record is another request's (the key was reused).
        case otherRequest
        /// The record cannot be read.
        case unreadable
    }

    /// Reads a stored record for the request with `fingerprint`.
    static func record(_ text: String, fingerprint: String) -> Record {
        let fields = text.split(separator: " ", maxSplits: 8, omittingEmptySubsequences: false)
        if fields.count == 9, fields[8] == fingerprint {
            return Self(fields: fields, observed: fields[7]).map(Record.answer) ?? .unreadable
        }
        // An older version's record: no `observed` before the fingerprint.
        let older = text.split(separator: " ", maxSplits: 7, omittingEmptySubsequences: false)
        if older.count == 8, older[7] == fingerprint {
            return Self(fields: older, observed: "").map(Record.answer) ?? .unreadable
        }
        return fields.count >= 8 ? .otherRequest : .unreadable
    }

    /// The record of `decision` for the request with `fingerprint`, as reserve.lua writes it
    /// (`nonce`: the answer's nonce field, `nonceField`), for `record(_:fingerprint:)` to read.
    static func record(of decision: Decision, nonce: String, fingerprint: String) -> String {
        "\(decision.allowed ? 1 : 0) \(decision.reason?.rawValue ?? "") \(decision.retryAfterMilliseconds) \(decision.sendsInWindow) "
            + "\(decision.nextRetryAfterMilliseconds) \(decision.serverTimeMilliseconds) \(nonce) "
            + "\(decision.observed.map(\.rawValue).joined(separator: ",")) \(fingerprint)"
    }

    private init?(fields: [Substring], observed: Substring) {
        guard fields[0] == "1" || fields[0] == "0",
              let wait = Int64(fields[2]), let sends = Int(fields[3]), let next = Int64(fields[4]), let now = Int64(fields[5])
        else { return nil }
        allowed = fields[0] == "1"
        // A refusal is never read as allowed: one whose reason this gate does not know is the cooldown's.
        reason = allowed ? nil : Decision.Reason(rawValue: String(fields[1])) ?? .cooldown
        waitMilliseconds = wait
        self.sends = sends
        nextMilliseconds = next
        nowMilliseconds = now
        nonceField = fields[6]
        self.observed = observed.split(separator: ",").compactMap { Decision.Reason(rawValue: String($0)) }
    }

    /// A reserve script's reply as a decision, with the nonce its token names ("" : none):
    /// the answer's text, or `{record}` when an idempotency record was already stored
    /// (replayed when it holds `fingerprint`, else the key was reused: 422).
    static func decision(
        from reply: RedisReply, fingerprint: String?, send: StepSend, sealer: CodeSealer?, offeredCode: String?
    ) throws(GateError) -> (decision: Decision, nonce: Substring) {
        let answer: ReserveAnswer
        var replayed = false
        switch reply {
        case .bulk(let bytes):
            guard let fresh = ReserveAnswer(answer: String(decoding: bytes, as: UTF8.self)) else { throw GateContext.unexpected(reply) }
            answer = fresh
        case .array(let items) where items.count == 1:
            guard case .bulk(let record) = items[0], let fingerprint else { throw GateContext.unexpected(reply) }
            answer = try stored(record, fingerprint: fingerprint)
            replayed = true
        default:
            throw GateContext.unexpected(reply)
        }
        let decision = try decision(answer, replayed: replayed, send: send, sealer: sealer, offeredCode: replayed ? nil : offeredCode)
        return (decision, answer.nonceField)
    }

    /// A stored idempotency record's answer, to replay, when it holds `fingerprint`;
    /// another request's record (or one that cannot be read) is a reused key: 422.
    static func stored(_ record: [UInt8], fingerprint: String) throws(GateError) -> ReserveAnswer {
        guard case .answer(let answer) = ReserveAnswer.record(String(decoding: record, as: UTF8.self), fingerprint: fingerprint)
        else { throw .idempotencyKeyReused }
        return answer
    }

    /// A reserve answer as the request's decision: its token seals the nonce; an allowed send's
    /// code is opened (`offeredCode`: the request's new one, so a live one sent instead is `resent`).
    static func decision(
        _ answer: ReserveAnswer, replayed: Bool, send: StepSend, sealer: CodeSealer?, offeredCode: String?
    ) throws(GateError) -> Decision {
        let request = send.request, number = send.number, cipher = send.cipher
        var decision = Decision(
            request, refusedBy: answer.reason, wait: answer.waitMilliseconds, now: answer.nowMilliseconds,
            next: answer.nextMilliseconds, sendsInWindow: answer.sends,
            sendsLeft: send.policy.rules.maxSends.map { max(0, $0 - answer.sends) },
            token: (CooldownValue(text: answer.nonce)?.nonce).map { cipher.seal(purpose: request.purpose, number: number, nonce: $0) },
            observed: answer.observed, replayed: replayed)
        if let code = answer.code, answer.allowed {
            guard let issued = sealer?.issued(
                code, purpose: request.purpose, number: number, offered: offeredCode, cipher: cipher)
            else { throw .unreadableCode }
            decision.issuedCode = issued
        }
        return decision
    }
}

/// Test numbers (`GateConfiguration.testNumbers`): answered without asking Redis.
extension GateWorker {
    /// Allowed, with the cooldown the policy's first step would start (for the client's
    /// display only), no token, nothing recorded: no cooldown, no count, no idempotency
    /// record. `server_time` is the gate's clock, as for any answer Redis did not stamp.
    func testNumberDecision(_ request: SendRequest, _ policy: CompiledPolicy) -> Decision {
        let step = policy.ladderMilliseconds[0]
        return Decision(
            allowed: true, reason: nil, phone: request.phone, purpose: request.purpose, retryAfterMilliseconds: step,
            serverTimeMilliseconds: Self.wallClockMilliseconds(), sendsInWindow: 0, sendsLeft: nil,
            nextRetryAfterMilliseconds: step, testNumber: true)
    }

    /// The refusal of a request over `--ip-max-requests`: decided in memory, so its
    /// `server_time` is the gate's clock; no countdown token (no cooldown was met).
    func tooManyRequests(_ request: SendRequest, _ policy: CompiledPolicy, wait: Int64, quota: Int?) -> Decision {
        var decision = Decision(
            allowed: false, reason: .tooManyRequests, phone: request.phone, purpose: request.purpose,
            retryAfterMilliseconds: max(1, wait), serverTimeMilliseconds: Self.wallClockMilliseconds(), sendsInWindow: 0,
            nextRetryAfterMilliseconds: policy.ladderMilliseconds[0])
        decision.budgetLimit = quota
        return decision
    }
}

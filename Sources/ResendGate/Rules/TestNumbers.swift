/// Test numbers (`GateConfiguration.testNumbers`): answered without asking Redis.
extension Decision {
    /// Allowed, with the cooldown the policy's first step would start (for the client's
    /// display only), no token, nothing recorded: no cooldown, no count, no idempotency
    /// record. `server_time` is the gate's clock, as for any answer Redis did not stamp.
    static func testNumber(_ request: SendRequest, _ policy: CompiledPolicy) -> Decision {
        let step = policy.ladderMilliseconds[0]
        return Decision(request, wait: step, now: wallClockMilliseconds(), next: step, testNumber: true)
    }
}

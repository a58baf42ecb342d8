/// Test numbers (`GateConfiguration.testNumbers`): answered without asking Redis.
extension Decision {
    /// Allowed, with the policy's first cooldown (for display only) and the gate's clock;
    /// no token, nothing recorded.
    static func testNumber(_ request: SendRequest, _ policy: CompiledPolicy) -> Decision {
        let step = policy.ladderMilliseconds[0]
        return Decision(request, wait: step, now: wallClockMilliseconds(), next: step, testNumber: true)
    }
}

/// A rule whose keys live outside the number's slot, as a step of its own around the number's
/// script: the idempotency record, the send budgets, the pumping guard, the per-IP cap on a
/// Redis Cluster (`Placement` decides; on one Redis they are parts of that script).
protocol SlotStep {
    /// Before the number decides, in the rule's own slot: the send's answer (a refusal, a
    /// replay: the number is not asked), or the share taken and how to unwind it.
    func take(_ send: StepSend, completion: @escaping (Result<SlotShare, GateError>) -> Void)
}

/// What a step took, unwound by `SlotSteps.run` once the number (or a later step) answered.
struct SlotShare {
    /// The send's answer without asking the number; what this step took is given back already.
    var answer: Decision? = nil
    /// Undoes the share; run unless the answer is a new send (a limit counts allowed sends only).
    var giveBack: (() -> Void)? = nil
    /// An allowed send waits at least this long (the send that filled an enforced limit).
    var waitAfter: Int64 = 0
    /// The observed rules that would have refused.
    var observed: [Decision.Reason] = []
    /// Runs with the answer once adjusted (a count forced, the answer stored).
    var then: ((Decision) -> Void)? = nil
}

/// One send on its way through its steps and the number's script.
final class StepSend {
    let request: SendRequest
    let policy: CompiledPolicy
    let cipher: CountdownTokenCipher
    /// The number's text in its keys.
    let number: String
    /// For the number's script: a wait decided outside its slot (the IP cap's; 0: none), and
    /// the idempotency record an allowed send links in its cooldown so a refund can void it.
    var outsideWaitMilliseconds: Int64 = 0
    var linkedRecord: String?
    /// The cooldown's value the number's script answered (nil: the number was not asked).
    var cooldownValue: Substring?

    init(_ request: SendRequest, policy: CompiledPolicy, cipher: CountdownTokenCipher, number: String) {
        self.request = request
        self.policy = policy
        self.cipher = cipher
        self.number = number
    }
}

enum SlotSteps {
    typealias Completion = (Result<Decision, GateError>) -> Void

    /// Takes `steps` in order, then `number` (the number's script), then unwinds them in
    /// reverse: each gives its share back unless the answer is a new send, and adjusts the
    /// answer. Not one transaction: a refused send briefly holds its shares.
    static func run(
        _ steps: ArraySlice<any SlotStep>, _ send: StepSend, number: @escaping (@escaping Completion) -> Void,
        completion: @escaping Completion
    ) {
        guard let step = steps.first else { return number(completion) }
        step.take(send) { taken in
            // A failure, or the step's answer: the send goes no further.
            guard case .success(let share) = taken, share.answer == nil else { return completion(taken.map { $0.answer! }) }
            run(steps.dropFirst(), send, number: number) { outcome in
                if (try? outcome.get())?.isNewSend != true { share.giveBack?() }
                let adjusted = outcome.map { $0.waiting(atLeast: $0.allowed ? share.waitAfter : 0).observing(share.observed) }
                if case .success(let decision) = adjusted { share.then?(decision) }
                completion(adjusted)
            }
        }
    }
}

/// Where each rule of a send runs, decided here for every rule: a rule whose keys share the
/// number's slot is a part of the number's script. On one Redis every key does (it has no
/// slots), so every rule decides in one atomic call; on a Redis Cluster the idempotency
/// record, the budgets, the pumping guard and the per-IP cap live in slots of their own and
/// are steps of their own around it (`SlotSteps`), in that order.
struct Placement {
    /// The steps of their own, in order (none on one Redis).
    private(set) var steps: [any SlotStep] = []
    /// The number's script names the number's keys only: the rules above are steps.
    let numberSlotOnly: Bool
    /// Parts of the number's script: the budgets and the pumping guard, the client's address
    /// whose cap it counts, the idempotency record it keeps.
    private(set) var fraudGuard: FraudGuard?
    private(set) var ipInScript: String?
    private(set) var recordInScript: (key: String, fingerprint: String)?
    /// A step holds shares other numbers' sends count (a budget, a prefix): a number's sends
    /// take their steps one at a time (`SameNumberQueue`).
    private(set) var sharesAcrossNumbers = false

    /// Whether the rules outside the number's slot are steps of their own on `store`.
    static func apart(on store: any GateStore) -> Bool { store.isCluster }

    init(_ send: StepSend, in worker: GateWorker) {
        let request = send.request, policy = send.policy.rules, context = worker.context
        numberSlotOnly = Self.apart(on: context.store)
        let ip = policy.ipMaxSends != nil ? context.addressKeyText(request) : nil
        if numberSlotOnly {
            if request.idempotencyKey != nil { steps.append(worker.idempotency) }
            if policy.hasBudgets { steps.append(worker.budgets) }
            if policy.pumping.isOn { steps.append(worker.prefixGuard) }
            sharesAcrossNumbers = policy.hasBudgets || policy.pumping.isOn
            if ip != nil { steps.append(worker.ipCap) }
        } else {
            if policy.hasBudgets || policy.pumping.isOn { fraudGuard = FraudGuard(request, policy: policy, context: context) }
            ipInScript = ip
            recordInScript = worker.idempotency.recordKey(request).map { ($0, context.fingerprint(request, number: send.number)) }
        }
    }
}

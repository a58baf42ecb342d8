import RedisClient

/// One script call as one value (as RediStack's `RedisCommand<Result>`), so a reply is read
/// where its call is written (`GateStore.run`), never by position somewhere else.
struct ScriptCall<Reply> {
    let script: RedisScript
    /// The key whose cluster slot the call runs in.
    let slotKey: String
    /// Writes the key count, the keys and the arguments.
    let arguments: (inout RedisArguments) -> Void
    /// Reads the reply; one the script never makes is `GateContext.unexpected`.
    let decode: (RedisReply) throws(GateError) -> Reply
}

extension ScriptCall {
    /// A call on keys of one number: its `numberKeys` (KEYS, in order), then `arguments`.
    init(
        _ script: RedisScript, keys: GateKeys, purpose: Purpose, number: String, numberKeys: [GateKeys.NumberKey],
        arguments: @escaping (inout RedisArguments) -> Void, decode: @escaping (RedisReply) throws(GateError) -> Reply
    ) {
        self.init(script: script, slotKey: keys.slotKey(purpose: purpose, number: number), arguments: { args in
            args.append(numberKeys.count)
            for key in numberKeys { keys.append(key, purpose: purpose, number: number, to: &args) }
            arguments(&args)
        }, decode: decode)
    }
}

extension RedisReply {
    /// `{code, value}` (verify.lua, check.lua; `{ms, Redis time ms}` of peek.lua and the
    /// countdown scripts), or `unexpected`.
    func integerPair() throws(GateError) -> (Int, Int) {
        guard case .array(let items) = self, items.count == 2, let code = items[0].integer, let value = items[1].integer
        else { throw GateContext.unexpected(self) }
        return (code, value)
    }
}

extension GateStore {
    /// Runs `call` where its slot lives; a failed call is a store failure.
    func run<Reply>(_ call: ScriptCall<Reply>, completion: @escaping (Result<Reply, GateError>) -> Void) {
        evaluate(call.script, slotKey: call.slotKey, call.arguments) { completion(GateContext.decode($0, call.decode)) }
    }
}

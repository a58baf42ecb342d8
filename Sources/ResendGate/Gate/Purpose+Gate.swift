/// A purpose as the gate reads it from a request: a malformed or unconfigured one is
/// `invalid_purpose` (`Purpose` and `PolicySet` themselves live in Policies, which knows
/// nothing of the gate's errors).
extension Purpose {
    public init(_ name: String) throws(GateError) {
        guard let purpose = Purpose(validating: name) else { throw .invalidPurpose("purpose must match [a-z0-9_-]{1,32}") }
        self = purpose
    }
}

extension PolicySet {
    /// `name` as a configured purpose: `invalid_purpose` when it is not `[a-z0-9_-]{1,32}`
    /// or not configured.
    public func purpose(named name: String) throws(GateError) -> Purpose {
        let purpose = try Purpose(name)
        guard isConfigured(purpose) else { throw .unconfiguredPurpose(purpose) }
        return purpose
    }
}

/// One request to send a code: the number, what for, and the facts policies use.
public struct SendRequest: Sendable {
    public var phone: PhoneNumber
    public var purpose: Purpose
    /// The end user's address, for the per-IP limit.
    public var clientAddress: ClientAddress?
    /// A caller's key for retries: the same key and request get the first answer again.
    public var idempotencyKey: String?
    /// Who asks (the server sets ``callerIdentity(apiKey:)``; "" without keys): idempotency
    /// keys are scoped to it, so no caller can replay or spoil another's answer.
    public var caller: String

    public init(
        phone: PhoneNumber, purpose: Purpose, clientAddress: ClientAddress? = nil, idempotencyKey: String? = nil,
        caller: String = ""
    ) {
        self.phone = phone
        self.purpose = purpose
        self.clientAddress = clientAddress
        self.idempotencyKey = idempotencyKey
        self.caller = caller
    }

    /// A request with the client's address and `Idempotency-Key` as written, checked in
    /// that order: `invalid_field` for a malformed one.
    package init(
        phone: PhoneNumber, purpose: Purpose, caller: String, clientIP: String?, idempotencyKey: String?
    ) throws(GateError) {
        self.init(phone: phone, purpose: purpose, idempotencyKey: idempotencyKey, caller: caller)
        if let clientIP {
            guard let address = ClientAddress(clientIP) else { throw .invalidField("client_ip must be an IPv4 or IPv6 address") }
            clientAddress = address
        }
        if let idempotencyKey { try Self.validateIdempotencyKey(idempotencyKey) }
    }

    /// A short, stable name of an API key for ``caller`` (16 hex digits of an HMAC-SHA256),
    /// so the idempotency records in Redis never hold the key itself.
    public static func callerIdentity(apiKey: String) -> String {
        String(NumberKeyHasher.hmacSHA256Hex(key: Array("resendgate idempotency caller".utf8), message: Array(apiKey.utf8)).prefix(16))
    }

    /// Idempotency keys: 1 to 255 visible ASCII characters.
    public static func validateIdempotencyKey(_ key: String) throws(GateError) {
        guard (1...255).contains(key.utf8.count), key.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw .invalidField("Idempotency-Key must be 1 to 255 visible ASCII characters")
        }
    }
}

/// The paths the kit calls, so an app's back end may keep its own API and forward these to
/// the gate (docs/clients.md): by default the gate's own (``gate``). Each closure gets its
/// values already percent-encoded.
public struct ClientRoutes: Sendable {
    /// `POST`: ask to send a code (the body `{"phone", "purpose"}`, `Idempotency-Key` header).
    public var sends: String
    /// `GET` (status) and `DELETE` (refund) of a number's cooldown: path and query.
    public var cooldown: @Sendable (_ phone: String, _ purpose: String) -> String
    /// `GET`: a countdown by its token.
    public var countdown: @Sendable (_ token: String) -> String
    /// `GET`: a countdown's event stream (server-sent events).
    public var countdownEvents: @Sendable (_ token: String) -> String
    /// `POST`: a checked code's outcome (`{"phone", "purpose", "outcome"}`).
    public var verifications: String
    /// `POST`: check a typed code against the issued one (`{"phone", "purpose", "code"}`).
    public var checks: String

    /// Makes the routes of a back end with its own paths.
    public init(
        sends: String, cooldown: @escaping @Sendable (_ phone: String, _ purpose: String) -> String,
        countdown: @escaping @Sendable (_ token: String) -> String,
        countdownEvents: @escaping @Sendable (_ token: String) -> String, verifications: String,
        checks: String = "/v1/checks"
    ) {
        self.sends = sends
        self.cooldown = cooldown
        self.countdown = countdown
        self.countdownEvents = countdownEvents
        self.verifications = verifications
        self.checks = checks
    }

    /// The gate's API (`/v1/...`): for a back end that forwards these paths as they are.
    public static let gate = ClientRoutes(
        sends: "/v1/sends", cooldown: { "/v1/cooldowns/\($0)?purpose=\($1)" }, countdown: { "/v1/countdowns/\($0)" },
        countdownEvents: { "/v1/countdowns/\($0)/events" }, verifications: "/v1/verifications")
}

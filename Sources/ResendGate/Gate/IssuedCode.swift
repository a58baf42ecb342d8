/// The code an allowed send of a purpose that issues codes (`Policy.codes`) carries: the
/// digits the back end sends by SMS, and how long they may be checked. Only a back end is
/// ever shown it (`POST /v1/sends` leaves it out for a browser); Redis keeps it sealed.
public struct IssuedCode: Sendable, Equatable {
    /// The digits to send.
    public let code: String
    /// When the code stops being accepted, in ms since 1970 (Redis's clock).
    public let expiresAtMilliseconds: Int64
    /// True when a live code is sent again (`IssuedCodes.Resend.same`): its lifetime and checks carry on.
    public let resent: Bool
    /// Follows the code's lifetime without the code ("code expires in 4:32"), like a
    /// cooldown's token: `Gate.countdown(_:)`, `GET /v1/countdowns/{token}`.
    public let countdownToken: CountdownToken?

    public init(code: String, expiresAtMilliseconds: Int64, resent: Bool, countdownToken: CountdownToken?) {
        self.code = code
        self.expiresAtMilliseconds = expiresAtMilliseconds
        self.resent = resent
        self.countdownToken = countdownToken
    }
}

/// What a check of a typed code found (`Gate.check`): a right code, used up by this check.
/// Every other outcome is a `GateError`: `wrong_code` (with the checks left), `code_locked`,
/// `locked`, `code_expired`, `code_used`, `code_voided`, `codes_not_issued`.
public struct CodeCheck: Sendable, Equatable {
    public let phone: PhoneNumber
    public let purpose: Purpose
    /// True for a test number's fixed code (`GateConfiguration.testCode`): nothing recorded.
    public let testNumber: Bool
}
